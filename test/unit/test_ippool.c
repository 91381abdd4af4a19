/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ippool: the ipam.ippool config, the conversion of nv-ipam's IPPool and
 * CIDRPool objects (shaped as the API server serves them) into this node's
 * block, the cache, and resolve() without an API server.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ipam_conf.h"
#include "ippool.h"
#include "ippool_cache.h"
#include "ippool_convert.h"
#include "ippool_resolve.h"
#include "state.h"

static char root[64];

static const char *fmt(const struct ipam_addr *a)
{
	static char buf[8][IPAM_ADDR_STRLEN];
	static int i;

	i = (i + 1) % 8;
	ipam_addr_format(a, buf[i], sizeof(buf[i]));
	return buf[i];
}

static const char *pfx(const struct ipam_prefix *p)
{
	static char buf[4][IPAM_ADDR_STRLEN + 8];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%d", fmt(&p->addr), p->len);
	return buf[i];
}

/* ---- config ---- */

static int parse(const char *ipam_json, struct ippool_conf *pools, int *n, struct cni_error *err)
{
	cJSON *j = cJSON_Parse(ipam_json);
	int ret;

	memset(err, 0, sizeof(*err));
	if (!j) {
		fprintf(stderr, "  bad test JSON: %s\n", ipam_json);
		return -100;
	}
	ret = ippool_conf_parse(j, pools, n, err);
	cJSON_Delete(j);
	return ret;
}

static void test_conf_defaults(void)
{
	struct ippool_conf p[IPPOOL_MAX];
	struct cni_error err;
	char path[512];
	int n;

	CHECK_INT(parse("{\"ippool\":{\"name\":\"pool1\"}}", p, &n, &err), 0);
	CHECK_INT(n, 1);
	CHECK_STR(p[0].name, "pool1");
	CHECK_STR(p[0].ns, "kube-system");
	CHECK_INT(p[0].kind, IPPOOL_KIND_IPPOOL);
	CHECK_STR(p[0].kubeconfig, "/etc/cni/net.d/multus.d/multus.kubeconfig");
	CHECK_INT(p[0].max_age, 60);
	CHECK_INT(p[0].timeout, 2);
	CHECK_INT(ippool_api_path(&p[0], path, sizeof(path)), 0);
	CHECK_STR(path, "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/kube-system/ippools/pool1");
}

static void test_conf_full(void)
{
	struct ippool_conf p[IPPOOL_MAX];
	struct cni_error err;
	char path[512];
	int n;

	CHECK_INT(parse("{\"ippool\":[{\"name\":\"v4.rdma-a\",\"namespace\":\"nvidia-network-operator\","
			"\"kind\":\"cidrpool\",\"kubeconfig\":\"/etc/kubernetes/kubelet.conf\","
			"\"cacheMaxAge\":0,\"apiTimeout\":30},{\"name\":\"v6\",\"kind\":\"IPPool\"}]}",
			p, &n, &err), 0);
	CHECK_INT(n, 2);
	CHECK_INT(p[0].kind, IPPOOL_KIND_CIDRPOOL);
	CHECK_STR(p[0].ns, "nvidia-network-operator");
	CHECK_STR(p[0].kubeconfig, "/etc/kubernetes/kubelet.conf");
	CHECK_INT(p[0].max_age, 0);
	CHECK_INT(p[0].timeout, 30);
	CHECK_INT(p[1].kind, IPPOOL_KIND_IPPOOL);
	CHECK_INT(ippool_api_path(&p[0], path, sizeof(path)), 0);
	CHECK_STR(path,
		  "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/nvidia-network-operator/cidrpools/v4.rdma-a");
}

/* Every bad key is code 7 and names the field. */
static void test_conf_errors(void)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{ "{}", "ipam.ippool: missing" },
		{ "{\"ippool\":\"pool1\"}", "ipam.ippool: want an object" },
		{ "{\"ippool\":[]}", "one or two" },
		{ "{\"ippool\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}", "one or two" },
		{ "{\"ippool\":{}}", "ipam.ippool.name" },
		{ "{\"ippool\":{\"name\":\"Pool1\"}}", "ipam.ippool.name: \"Pool1\" is not a Kubernetes object name" },
		{ "{\"ippool\":{\"name\":\"../../etc\"}}", "ipam.ippool.name" },
		{ "{\"ippool\":{\"name\":\"a/b\"}}", "ipam.ippool.name" },
		{ "{\"ippool\":{\"name\":\"-a\"}}", "ipam.ippool.name" },
		{ "{\"ippool\":{\"name\":\"a..b\"}}", "ipam.ippool.name" },
		{ "{\"ippool\":{\"name\":\"p\",\"namespace\":\"kube.system\"}}", "ipam.ippool.namespace" },
		{ "{\"ippool\":{\"name\":\"p\",\"namespace\":\"\"}}", "ipam.ippool.namespace" },
		{ "{\"ippool\":{\"name\":\"p\",\"kind\":\"Pool\"}}", "ipam.ippool.kind" },
		{ "{\"ippool\":{\"name\":\"p\",\"kubeconfig\":\"multus.kubeconfig\"}}", "ipam.ippool.kubeconfig: want an absolute path" },
		{ "{\"ippool\":{\"name\":\"p\",\"kubeconfig\":\"/etc/../root/kc\"}}", "ipam.ippool.kubeconfig" },
		{ "{\"ippool\":{\"name\":\"p\",\"cacheMaxAge\":-1}}", "ipam.ippool.cacheMaxAge" },
		{ "{\"ippool\":{\"name\":\"p\",\"apiTimeout\":0}}", "ipam.ippool.apiTimeout" },
		{ "{\"ippool\":{\"name\":\"p\",\"apiTimeout\":31}}", "ipam.ippool.apiTimeout" },
		{ "{\"ippool\":{\"name\":\"p\",\"namspace\":\"x\"}}", "did you mean \"namespace\"" },
		{ "{\"ippool\":[{\"name\":\"p\"},{\"name\":\"p\",\"kind\":\"ippool\"}]}", "ipam.ippool[1]: IPPool kube-system/p is already ipam.ippool[0]" },
		{ "{\"ippool\":[{\"name\":\"p\"},7]}", "ipam.ippool[1]: want an object" },
	};
	struct ippool_conf p[IPPOOL_MAX];
	struct cni_error err;
	char longname[300];
	size_t i;
	int n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(parse(cases[i].json, p, &n, &err), -EINVAL);
		CHECK_INT(err.code, 7);
		CHECK_HAS(err.msg, cases[i].msg);
	}
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "{\"ippool\":{\"name\":\"", 19);
	strcpy(longname + 19 + 254, "\"}}");
	CHECK_INT(parse(longname, p, &n, &err), -EINVAL);
	CHECK_HAS(err.msg, "at most 253 bytes");
	CHECK(ippool_valid_name("a.b-c.d0"));
	CHECK(!ippool_valid_name("a_b"));
	CHECK(!ippool_valid_name("a."));
	CHECK(ippool_valid_namespace("kube-system"));
	CHECK(!ippool_valid_namespace("a.b"));
}

/* ---- conversion ---- */

/* An IPPool as `kubectl get ippool -o json` shows it. */
static const char ippool_obj[] =
	"{\"apiVersion\":\"nv-ipam.nvidia.com/v1alpha1\",\"kind\":\"IPPool\","
	"\"metadata\":{\"creationTimestamp\":\"2026-03-02T10:11:12Z\",\"generation\":3,"
	"\"name\":\"pool1\",\"namespace\":\"kube-system\",\"resourceVersion\":\"918273\","
	"\"uid\":\"2b0f1c3e-2f55-4d5c-9a51-0f7d3c1a6b11\"},"
	"\"spec\":{\"subnet\":\"192.168.0.0/16\",\"perNodeBlockSize\":100,\"gateway\":\"192.168.0.1\","
	"\"exclusions\":[{\"startIP\":\"192.168.0.150\",\"endIP\":\"192.168.0.160\"},"
	"{\"startIP\":\"192.168.0.199\",\"endIP\":\"192.168.1.20\"},"
	"{\"startIP\":\"192.168.5.1\",\"endIP\":\"192.168.5.9\"}],"
	"\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":1},{\"startIndex\":98,\"endIndex\":120},"
	"{\"startIndex\":500,\"endIndex\":600}],"
	"\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"node-role.kubernetes.io/worker\","
	"\"operator\":\"Exists\"}]}]},"
	"\"defaultGateway\":true,\"routes\":[{\"dst\":\"10.200.0.0/16\"},{\"dst\":\"0.0.0.0/0\"}]},"
	"\"status\":{\"allocations\":[{\"nodeName\":\"node-a\",\"startIP\":\"192.168.0.1\",\"endIP\":\"192.168.0.100\"},"
	"{\"nodeName\":\"node-b\",\"startIP\":\"192.168.0.101\",\"endIP\":\"192.168.0.200\"}]}}";

static void conf_of(const char *name, enum ippool_kind kind, struct ippool_conf *pc)
{
	memset(pc, 0, sizeof(*pc));
	snprintf(pc->name, sizeof(pc->name), "%s", name);
	snprintf(pc->ns, sizeof(pc->ns), "kube-system");
	pc->kind = kind;
	snprintf(pc->kubeconfig, sizeof(pc->kubeconfig), "%s/no-such-kubeconfig", root);
	pc->max_age = 60;
	pc->timeout = 1;
}

static int convert(const char *obj, enum ippool_kind kind, const char *node, struct ippool_block *b,
		   char *msg, size_t len)
{
	struct ippool_conf pc;

	conf_of(kind == IPPOOL_KIND_IPPOOL ? "pool1" : "cpool", kind, &pc);
	msg[0] = '\0';
	return ippool_convert(&pc, node, obj, strlen(obj), b, msg, len);
}

static void test_ippool_convert(void)
{
	struct ippool_block b;
	char msg[512];

	CHECK_INT(convert(ippool_obj, IPPOOL_KIND_IPPOOL, "node-b", &b, msg, sizeof(msg)), 0);
	CHECK_STR(pfx(&b.subnet), "192.168.0.0/16");
	CHECK_STR(fmt(&b.start), "192.168.0.101");
	CHECK_STR(fmt(&b.end), "192.168.0.200");
	CHECK(b.has_gw);
	CHECK_STR(fmt(&b.gw), "192.168.0.1");
	CHECK_STR(b.resource_version, "918273");
	/* Pool exclusions clipped to the block, the one elsewhere dropped; per-node by index from startIP. */
	CHECK_INT(b.n_exclude, 4);
	CHECK_STR(fmt(&b.exclude[0].start), "192.168.0.150");
	CHECK_STR(fmt(&b.exclude[0].end), "192.168.0.160");
	CHECK_STR(fmt(&b.exclude[1].start), "192.168.0.199");
	CHECK_STR(fmt(&b.exclude[1].end), "192.168.0.200");
	CHECK_STR(fmt(&b.exclude[2].start), "192.168.0.101");
	CHECK_STR(fmt(&b.exclude[2].end), "192.168.0.102");
	CHECK_STR(fmt(&b.exclude[3].start), "192.168.0.199");
	CHECK_STR(fmt(&b.exclude[3].end), "192.168.0.200");
	/* routes via the gateway; defaultGateway's 0.0.0.0/0 is already there once. */
	CHECK_INT(b.n_routes, 2);
	CHECK_STR(pfx(&b.routes[0]), "10.200.0.0/16");
	CHECK_STR(pfx(&b.routes[1]), "0.0.0.0/0");

	CHECK_INT(convert(ippool_obj, IPPOOL_KIND_IPPOOL, "node-a", &b, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&b.start), "192.168.0.1");
	CHECK_STR(fmt(&b.end), "192.168.0.100");
	CHECK_INT(b.n_exclude, 2);	/* per-node 0-1, and 98-120 clamped to the block */
	CHECK_STR(fmt(&b.exclude[1].start), "192.168.0.99");
	CHECK_STR(fmt(&b.exclude[1].end), "192.168.0.100");
}

static void test_ippool_no_gateway(void)
{
	const char *obj =
		"{\"apiVersion\":\"nv-ipam.nvidia.com/v1alpha1\",\"kind\":\"IPPool\","
		"\"metadata\":{\"name\":\"pool1\",\"namespace\":\"kube-system\",\"resourceVersion\":\"5\"},"
		"\"spec\":{\"subnet\":\"fd00:10::/64\",\"perNodeBlockSize\":1000,\"defaultGateway\":true,"
		"\"routes\":[{\"dst\":\"fd00:20::/64\"}]},"
		"\"status\":{\"allocations\":[{\"nodeName\":\"node-a\",\"startIP\":\"fd00:10::1\",\"endIP\":\"fd00:10::3e8\"}]}}";
	struct ippool_block b;
	char msg[512];

	CHECK_INT(convert(obj, IPPOOL_KIND_IPPOOL, "node-a", &b, msg, sizeof(msg)), 0);
	CHECK(!b.has_gw);
	CHECK_INT(b.n_routes, 0);	/* nv-ipam gives no route without a gateway */
	CHECK_STR(fmt(&b.end), "fd00:10::3e8");
}

static void test_ippool_node_missing(void)
{
	struct ippool_block b;
	char msg[512];

	CHECK_INT(convert(ippool_obj, IPPOOL_KIND_IPPOOL, "node-c", &b, msg, sizeof(msg)), -ENOENT);
	CHECK_HAS(msg, "IPPool kube-system/pool1 has no block for node \"node-c\"");
	CHECK_HAS(msg, "it lists node-a, node-b");
	CHECK_HAS(msg, "nodeSelector");
	CHECK_INT(convert("{\"kind\":\"IPPool\",\"spec\":{\"subnet\":\"10.0.0.0/8\"},\"status\":{}}",
			  IPPOOL_KIND_IPPOOL, "node-a", &b, msg, sizeof(msg)), -ENOENT);
	CHECK_HAS(msg, "it lists none");
}

static void test_ippool_bad_objects(void)
{
#define ALLOC(s, e) "\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"startIP\":\"" s "\",\"endIP\":\"" e "\"}]}"
	static const struct {
		const char *obj, *msg;
	} cases[] = {
		{ "not json", "not a JSON object" },
		{ "{\"kind\":\"CIDRPool\",\"spec\":{}}", "answered with a CIDRPool" },
		{ "{\"kind\":\"IPPool\"," ALLOC("10.0.0.1", "10.0.0.9") "}", "spec: missing" },
		{ "{\"spec\":{}," ALLOC("10.0.0.1", "10.0.0.9") "}", "spec.subnet: missing" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.1/24\"}," ALLOC("10.0.0.1", "10.0.0.9") "}", "host bits set" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.0/24\"}," ALLOC("10.0.0.x", "10.0.0.9") "}",
		  "status.allocations[0].startIP: not an IP address (got 10.0.0.x)" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.0/24\"},\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"startIP\":\"10.0.0.1\"}]}}",
		  "status.allocations[0].endIP: missing" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.0/24\"}," ALLOC("10.0.0.1", "10.0.1.9") "}", "outside spec.subnet" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.0/24\"}," ALLOC("10.0.0.9", "10.0.0.1") "}", "startIP 10.0.0.9 is after endIP" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.0/24\",\"gateway\":\"10.9.0.1\"}," ALLOC("10.0.0.1", "10.0.0.9") "}",
		  "spec.gateway: 10.9.0.1 is outside" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.0/24\",\"exclusions\":[{\"startIP\":\"10.0.0.5\",\"endIP\":\"10.0.0.4\"}]},"
		  ALLOC("10.0.0.1", "10.0.0.9") "}", "spec.exclusions[0]: startIP 10.0.0.5 is after endIP 10.0.0.4" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.0/24\",\"perNodeExclusions\":[{\"startIndex\":-1,\"endIndex\":2}]},"
		  ALLOC("10.0.0.1", "10.0.0.9") "}", "spec.perNodeExclusions[0]: want 0 <= startIndex <= endIndex" },
		{ "{\"spec\":{\"subnet\":\"10.0.0.0/24\",\"gateway\":\"10.0.0.1\",\"routes\":[{\"dst\":\"fd00::/8\"}]},"
		  ALLOC("10.0.0.1", "10.0.0.9") "}", "spec.routes[0].dst: fd00::/8 is not of the pool's address family" },
	};
#undef ALLOC
	struct ippool_block b;
	char msg[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(convert(cases[i].obj, IPPOOL_KIND_IPPOOL, "n", &b, msg, sizeof(msg)), -EBADMSG);
		CHECK_HAS(msg, "IPPool kube-system/pool1: ");
		CHECK_HAS(msg, cases[i].msg);
	}
}

/* A CIDRPool as the API server serves it, with its controller's status. */
static const char cidrpool_obj[] =
	"{\"apiVersion\":\"nv-ipam.nvidia.com/v1alpha1\",\"kind\":\"CIDRPool\","
	"\"metadata\":{\"name\":\"cpool\",\"namespace\":\"kube-system\",\"resourceVersion\":\"77\",\"generation\":1},"
	"\"spec\":{\"cidr\":\"10.10.0.0/16\",\"gatewayIndex\":1,\"perNodeNetworkPrefix\":24,"
	"\"exclusions\":[{\"startIP\":\"10.10.1.250\",\"endIP\":\"10.10.2.3\"}],"
	"\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":3}],"
	"\"staticAllocations\":[{\"nodeName\":\"node-b\",\"prefix\":\"10.10.2.0/24\",\"gateway\":\"10.10.2.10\"}],"
	"\"defaultGateway\":true,\"routes\":[{\"dst\":\"10.20.0.0/16\"}]},"
	"\"status\":{\"allocations\":[{\"nodeName\":\"node-a\",\"prefix\":\"10.10.1.0/24\",\"gateway\":\"10.10.1.1\"},"
	"{\"nodeName\":\"node-b\",\"prefix\":\"10.10.2.0/24\",\"gateway\":\"10.10.2.10\"}]}}";

static void test_cidrpool_convert(void)
{
	struct ippool_block b;
	char msg[512];

	CHECK_INT(convert(cidrpool_obj, IPPOOL_KIND_CIDRPOOL, "node-a", &b, msg, sizeof(msg)), 0);
	CHECK_STR(pfx(&b.subnet), "10.10.1.0/24");
	CHECK_STR(fmt(&b.start), "10.10.1.1");
	CHECK_STR(fmt(&b.end), "10.10.1.254");
	CHECK_STR(fmt(&b.gw), "10.10.1.1");
	CHECK_STR(b.resource_version, "77");
	CHECK_INT(b.n_exclude, 2);
	CHECK_STR(fmt(&b.exclude[0].start), "10.10.1.250");
	CHECK_STR(fmt(&b.exclude[0].end), "10.10.1.254");
	/* Per-node indexes count from the network address, as gatewayIndex does. */
	CHECK_STR(fmt(&b.exclude[1].start), "10.10.1.1");
	CHECK_STR(fmt(&b.exclude[1].end), "10.10.1.3");
	CHECK_INT(b.n_routes, 2);
	CHECK_STR(pfx(&b.routes[0]), "10.20.0.0/16");
	CHECK_STR(pfx(&b.routes[1]), "0.0.0.0/0");

	CHECK_INT(convert(cidrpool_obj, IPPOOL_KIND_CIDRPOOL, "node-b", &b, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&b.gw), "10.10.2.10");
	CHECK_STR(fmt(&b.exclude[0].start), "10.10.2.1");
	CHECK_STR(fmt(&b.exclude[0].end), "10.10.2.3");
}

/* /31 and /32 prefixes hand out every address (nv-ipam PR #57); IPv6 keeps its last. */
static void test_cidrpool_small_prefixes(void)
{
	const char *p31 =
		"{\"kind\":\"CIDRPool\",\"metadata\":{\"resourceVersion\":\"1\"},"
		"\"spec\":{\"cidr\":\"10.0.0.0/24\",\"perNodeNetworkPrefix\":31,\"gatewayIndex\":0},"
		"\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"prefix\":\"10.0.0.6/31\",\"gateway\":\"10.0.0.6\"}]}}";
	const char *p32 =
		"{\"kind\":\"CIDRPool\",\"spec\":{\"cidr\":\"10.1.0.0/24\",\"perNodeNetworkPrefix\":32},"
		"\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"prefix\":\"10.1.0.9/32\"}]}}";
	const char *v6 =
		"{\"kind\":\"CIDRPool\",\"spec\":{\"cidr\":\"fd00::/48\",\"perNodeNetworkPrefix\":120},"
		"\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"prefix\":\"fd00::100/120\"}]}}";
	struct ippool_block b;
	char msg[512];

	CHECK_INT(convert(p31, IPPOOL_KIND_CIDRPOOL, "n", &b, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&b.start), "10.0.0.6");
	CHECK_STR(fmt(&b.end), "10.0.0.7");
	CHECK_STR(fmt(&b.gw), "10.0.0.6");
	CHECK_INT(convert(p32, IPPOOL_KIND_CIDRPOOL, "n", &b, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&b.start), "10.1.0.9");
	CHECK_STR(fmt(&b.end), "10.1.0.9");
	CHECK(!b.has_gw);
	CHECK_INT(convert(v6, IPPOOL_KIND_CIDRPOOL, "n", &b, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&b.start), "fd00::101");
	CHECK_STR(fmt(&b.end), "fd00::1ff");
}

static void test_cidrpool_bad_objects(void)
{
	static const struct {
		const char *obj, *msg;
	} cases[] = {
		{ "{\"spec\":{\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24},"
		  "\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"prefix\":\"10.1.0.0/24\"}]}}",
		  "status.allocations[0].prefix: 10.1.0.0/24 is not inside spec.cidr 10.0.0.0/16" },
		{ "{\"spec\":{\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24},"
		  "\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"prefix\":\"10.0.0.0/25\"}]}}",
		  "is not a /24 (spec.perNodeNetworkPrefix)" },
		{ "{\"spec\":{\"cidr\":\"10.0.0.0/16\"},"
		  "\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"prefix\":\"10.0.0.0/24\",\"gateway\":\"10.0.1.1\"}]}}",
		  "status.allocations[0].gateway: 10.0.1.1 is outside the node's prefix" },
		{ "{\"spec\":{\"cidr\":\"10.0.0.0/16\"},"
		  "\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"prefix\":\"10.0.0.5/24\"}]}}",
		  "host bits set" },
		{ "{\"spec\":{},\"status\":{\"allocations\":[{\"nodeName\":\"n\",\"prefix\":\"10.0.0.0/24\"}]}}",
		  "spec.cidr: missing" },
	};
	struct ippool_block b;
	char msg[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(convert(cases[i].obj, IPPOOL_KIND_CIDRPOOL, "n", &b, msg, sizeof(msg)), -EBADMSG);
		CHECK_HAS(msg, "CIDRPool kube-system/cpool: ");
		CHECK_HAS(msg, cases[i].msg);
	}
}

/* ---- into the ipam config ---- */

static int cluster_conf(struct ipam_conf *c, const char *node)
{
	struct cni_error err = { 0 };
	char json[512];
	cJSON *j;
	int ret;

	snprintf(json, sizeof(json),
		 "{\"type\":\"pool-ipam\",\"dataDir\":\"%s/data\",\"nodeName\":\"%s\",\"ippool\":{\"name\":\"pool1\"}}",
		 root, node);
	j = cJSON_Parse(json);
	ret = ipam_conf_parse(j, c, &err);
	if (ret < 0)
		fprintf(stderr, "  ipam_conf_parse: %s\n", err.msg);
	cJSON_Delete(j);
	return ret;
}

/* The block, its exclusions and gateway drive the allocator: nothing outside, nothing excluded. */
static void test_apply(void)
{
	static struct ipam_conf c;
	struct cni_error err = { 0 };
	struct ippool_block b;
	struct ipam_addr a, first, lo, hi;
	char msg[512];
	int i;

	CHECK_INT(convert(ippool_obj, IPPOOL_KIND_IPPOOL, "node-b", &b, msg, sizeof(msg)), 0);
	CHECK_INT(cluster_conf(&c, "node-b"), 0);
	CHECK(c.cluster);
	CHECK_INT(c.n_sets, 1);
	CHECK_INT(ippool_apply(&b, &c, 0, msg, sizeof(msg)), 0);
	CHECK_INT(ipam_conf_finish(&c, &err), 0);
	CHECK_INT(c.n_routes, 2);
	CHECK_STR(c.routes[1].dst, "0.0.0.0/0");
	CHECK_STR(c.routes[1].gw, "192.168.0.1");
	/* .101-.200 = 100, minus .101-.102, .150-.160, .199-.200 */
	CHECK(ipam_capacity(&c, 0) == 100 - 2 - 11 - 2);
	ipam_addr_parse("192.168.0.1", &a);
	CHECK(!ipam_usable(&c, 0, &a));
	ipam_addr_parse("192.168.0.100", &a);
	CHECK(!ipam_usable(&c, 0, &a));
	ipam_addr_parse("192.168.0.155", &a);
	CHECK(!ipam_usable(&c, 0, &a));
	ipam_addr_parse("192.168.0.103", &first);
	CHECK(ipam_usable(&c, 0, &first));
	ipam_addr_parse("192.168.0.101", &lo);
	ipam_addr_parse("192.168.0.198", &hi);
	memset(&a, 0, sizeof(a));
	CHECK_INT(ipam_next(&c, 0, &a, &a), 0);
	CHECK_STR(fmt(&a), "192.168.0.103");
	/* Three times round the block: never outside it, never excluded. */
	for (i = 0; i < 3 * 85; i++) {
		CHECK_INT(ipam_next(&c, 0, &a, &a), 0);
		CHECK(ipam_usable(&c, 0, &a));
		CHECK(ipam_addr_cmp(&a, &lo) >= 0 && ipam_addr_cmp(&a, &hi) <= 0);
		CHECK(a.v < first.v + 47 || a.v > first.v + 57);
	}
}

/* ---- the cache ---- */

static int store_open(int *fd)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/data/net1", root);
	return state_dir_open(path, fd);
}

static void test_cache_roundtrip(void)
{
	struct ippool_block b, r;
	struct ippool_conf pc;
	char msg[512], path[160];
	struct stat st;
	int fd = -1;

	CHECK_INT(store_open(&fd), 0);
	CHECK_INT(convert(cidrpool_obj, IPPOOL_KIND_CIDRPOOL, "node-a", &b, msg, sizeof(msg)), 0);
	b.fetched = 1700000000;
	conf_of("cpool", IPPOOL_KIND_CIDRPOOL, &pc);
	CHECK_INT(ippool_cache_write(fd, 1, &pc, "node-a", &b), 0);
	snprintf(path, sizeof(path), "%s/data/net1/ippool.1", root);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	memset(&r, 0x5a, sizeof(r));
	CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-a", &r), 0);
	CHECK_STR(pfx(&r.subnet), "10.10.1.0/24");
	CHECK_STR(fmt(&r.start), "10.10.1.1");
	CHECK_STR(fmt(&r.end), "10.10.1.254");
	CHECK(r.has_gw);
	CHECK_STR(fmt(&r.gw), "10.10.1.1");
	CHECK_STR(r.resource_version, "77");
	CHECK_INT(r.fetched, 1700000000);
	CHECK_INT(r.n_exclude, 2);
	CHECK_STR(fmt(&r.exclude[1].end), "10.10.1.3");
	CHECK_INT(r.n_routes, 2);
	CHECK_STR(pfx(&r.routes[1]), "0.0.0.0/0");
	/* A fetch time beyond any integer (a damaged cache): unreadable, not converted. */
	{
		cJSON *j = NULL;

		CHECK_INT(state_read_json(fd, "ippool.1", &j), 0);
		cJSON_ReplaceItemInObjectCaseSensitive(j, "fetched", cJSON_CreateNumber(1e300));
		CHECK_INT(state_write_json(fd, "ippool.1", j, false), 0);
		CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-a", &r), -EBADMSG);
		cJSON_ReplaceItemInObjectCaseSensitive(j, "fetched", cJSON_CreateNumber(1700000000));
		/* docs/upgrading.md: it says its version; a newer release's is no cache to this one. */
		CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "version")), 1);
		CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "writtenBy")),
			  "sriov-rdma-cni " PROJECT_VERSION);
		cJSON_AddObjectToObject(j, "futureMember");
		CHECK_INT(state_write_json(fd, "ippool.1", j, false), 0);
		CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-a", &r), 0);
		cJSON_ReplaceItemInObjectCaseSensitive(j, "version", cJSON_CreateNumber(2));
		CHECK_INT(state_write_json(fd, "ippool.1", j, false), 0);
		CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-a", &r), -ENOENT);
		cJSON_ReplaceItemInObjectCaseSensitive(j, "version", cJSON_CreateNumber(1));
		CHECK_INT(state_write_json(fd, "ippool.1", j, false), 0);
		cJSON_Delete(j);
	}

	/* Another node, pool, namespace or kind never inherits the block. */
	CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-b", &r), -ENOENT);
	snprintf(pc.name, sizeof(pc.name), "other");
	CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-a", &r), -ENOENT);
	conf_of("cpool", IPPOOL_KIND_IPPOOL, &pc);
	CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-a", &r), -ENOENT);
	conf_of("cpool", IPPOOL_KIND_CIDRPOOL, &pc);
	snprintf(pc.ns, sizeof(pc.ns), "default");
	CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-a", &r), -ENOENT);
	conf_of("cpool", IPPOOL_KIND_CIDRPOOL, &pc);
	CHECK_INT(ippool_cache_read(fd, 0, &pc, "node-a", &r), -ENOENT);

	CHECK_INT(ippool_cache_remove(fd, 1), 0);
	CHECK_INT(ippool_cache_read(fd, 1, &pc, "node-a", &r), -ENOENT);
	CHECK_INT(ippool_cache_remove(fd, 1), 0);
	close(fd);
}

static void test_cache_corrupt(void)
{
	struct ippool_block b, r;
	struct ippool_conf pc;
	char msg[512], path[160];
	int fd = -1, f;

	CHECK_INT(store_open(&fd), 0);
	CHECK_INT(convert(ippool_obj, IPPOOL_KIND_IPPOOL, "node-a", &b, msg, sizeof(msg)), 0);
	conf_of("pool1", IPPOOL_KIND_IPPOOL, &pc);
	CHECK_INT(ippool_cache_write(fd, 0, &pc, "node-a", &b), 0);
	snprintf(path, sizeof(path), "%s/data/net1/ippool.0", root);
	f = open(path, O_WRONLY);
	CHECK(f >= 0);
	CHECK_INT(pwrite(f, "X", 1, 20), 1);
	close(f);
	CHECK_INT(ippool_cache_read(fd, 0, &pc, "node-a", &r), -EBADMSG);
	close(fd);
}

/* ---- resolve without an API server ---- */

static void test_resolve_fresh_cache_sends_nothing(void)
{
	struct cni_error err = { 0 };
	enum ippool_source src = -1;
	struct ippool_block b, r;
	struct ippool_conf pc;
	char msg[512];
	int fd = -1;

	CHECK_INT(store_open(&fd), 0);
	CHECK_INT(convert(ippool_obj, IPPOOL_KIND_IPPOOL, "node-a", &b, msg, sizeof(msg)), 0);
	conf_of("pool1", IPPOOL_KIND_IPPOOL, &pc);
	b.fetched = 1000;
	CHECK_INT(ippool_cache_write(fd, 0, &pc, "node-a", &b), 0);
	/* The kubeconfig does not exist: a fresh cache must not even read it. */
	CHECK_INT(ippool_resolve(&pc, 0, "node-a", fd, 1059, &r, &src, &err), 0);
	CHECK_INT(src, IPPOOL_FROM_CACHE);
	CHECK_STR(fmt(&r.start), "192.168.0.1");
	CHECK_INT(err.code, 0);
	close(fd);
}

static void test_resolve_stale_cache_falls_back(void)
{
	struct cni_error err = { 0 };
	enum ippool_source src = -1;
	struct ippool_block b, r;
	struct ippool_conf pc;
	char msg[512];
	int fd = -1;

	CHECK_INT(store_open(&fd), 0);
	CHECK_INT(convert(ippool_obj, IPPOOL_KIND_IPPOOL, "node-a", &b, msg, sizeof(msg)), 0);
	conf_of("pool1", IPPOOL_KIND_IPPOOL, &pc);
	b.fetched = 1000;
	CHECK_INT(ippool_cache_write(fd, 0, &pc, "node-a", &b), 0);
	/* 60 s later it is stale: the kubeconfig is needed, fails, the cache serves. */
	CHECK_INT(ippool_resolve(&pc, 0, "node-a", fd, 1060, &r, &src, &err), 0);
	CHECK_INT(src, IPPOOL_FROM_STALE_CACHE);
	CHECK_STR(fmt(&r.end), "192.168.0.100");
	/* A clock that went back makes the cache stale too, never fresh forever. */
	src = -1;
	CHECK_INT(ippool_resolve(&pc, 0, "node-a", fd, 999, &r, &src, &err), 0);
	CHECK_INT(src, IPPOOL_FROM_STALE_CACHE);
	/* cacheMaxAge 0: always ask. */
	pc.max_age = 0;
	src = -1;
	CHECK_INT(ippool_resolve(&pc, 0, "node-a", fd, 1000, &r, &src, &err), 0);
	CHECK_INT(src, IPPOOL_FROM_STALE_CACHE);
	close(fd);
}

static void test_resolve_no_cache(void)
{
	struct cni_error err = { 0 };
	enum ippool_source src = -1;
	struct ippool_block r;
	struct ippool_conf pc;
	int fd = -1;

	CHECK_INT(store_open(&fd), 0);
	conf_of("pool1", IPPOOL_KIND_IPPOOL, &pc);
	ippool_cache_remove(fd, 0);
	CHECK(ippool_resolve(&pc, 0, "node-a", fd, 1000, &r, &src, &err) < 0);
	CHECK_INT(err.code, 7);
	CHECK_HAS(err.msg, "IPPool kube-system/pool1: ");
	CHECK_HAS(err.msg, "no-such-kubeconfig");
	CHECK_HAS(err.msg, "node node-a has no cached block yet");
	CHECK_HAS(err.details, "ipam.ippool.kubeconfig");
	close(fd);
}

int main(void)
{
	char cmd[128];

	snprintf(root, sizeof(root), "/tmp/test-ippool.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_conf_defaults);
	RUN(test_conf_full);
	RUN(test_conf_errors);
	RUN(test_ippool_convert);
	RUN(test_ippool_no_gateway);
	RUN(test_ippool_node_missing);
	RUN(test_ippool_bad_objects);
	RUN(test_cidrpool_convert);
	RUN(test_cidrpool_small_prefixes);
	RUN(test_cidrpool_bad_objects);
	RUN(test_apply);
	RUN(test_cache_roundtrip);
	RUN(test_cache_corrupt);
	RUN(test_resolve_fresh_cache_sends_nothing);
	RUN(test_resolve_stale_cache_falls_back);
	RUN(test_resolve_no_cache);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	return check_summary();
}
