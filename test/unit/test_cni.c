/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cni.h"
#include "cni_delegate.h"
#include "log.h"

static char tmpdir[64];

static void test_version_cmp(void)
{
	CHECK(cni_version_cmp("0.3.1", "0.4.0") < 0);
	CHECK(cni_version_cmp("1.1.0", "1.0.0") > 0);
	CHECK(cni_version_cmp("1.0.0", "1.0.0") == 0);
	CHECK(cni_version_cmp("1.0", "1.0.0") == 0);
	CHECK(cni_version_cmp("0.10.0", "0.9.0") > 0);
	CHECK(cni_version_cmp("garbage", "0.1.0") < 0);
	CHECK(cni_version_cmp("0.1.0", "") > 0);
	CHECK(cni_version_cmp("1.0.0.0", "0.1.0") < 0);
	CHECK(cni_version_cmp("1..0", "0.1.0") < 0);
}

static void test_version_supported(void)
{
	const char *yes[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0" };
	const char *no[] = { "0.1.0", "0.2.0", "1.2.0", "1.0", "", "1.1.0 " };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(cni_version_supported(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(!cni_version_supported(no[i]));
	CHECK(!cni_version_supported(NULL));
}

static void test_valid_container_id(void)
{
	char long_id[256];

	CHECK(valid_container_id("3f2a1b0c9d8e"));
	CHECK(valid_container_id("a_b.c-d"));
	CHECK(!valid_container_id(""));
	CHECK(!valid_container_id(".."));
	CHECK(!valid_container_id("../x"));
	CHECK(!valid_container_id("a/b"));
	CHECK(!valid_container_id("-abc"));
	CHECK(!valid_container_id(".hidden"));
	CHECK(!valid_container_id("a b"));
	CHECK(!valid_container_id("a\nb"));
	CHECK(!valid_container_id("caf\xc3\xa9"));
	memset(long_id, 'a', 200);
	long_id[200] = '\0';
	CHECK(valid_container_id(long_id));
	long_id[200] = 'a';
	long_id[201] = '\0';
	CHECK(!valid_container_id(long_id));
}

static void test_valid_ifname(void)
{
	CHECK(valid_ifname("net1"));
	CHECK(valid_ifname("eth0.100"));
	CHECK(valid_ifname("-x"));
	CHECK(valid_ifname("123456789012345"));
	CHECK(!valid_ifname("1234567890123456"));
	CHECK(!valid_ifname(""));
	CHECK(!valid_ifname("."));
	CHECK(!valid_ifname(".."));
	CHECK(!valid_ifname("a/b"));
	CHECK(!valid_ifname("a:b"));
	CHECK(!valid_ifname("a b"));
	CHECK(!valid_ifname("a\tb"));
	CHECK(!valid_ifname(NULL));
}

static void test_valid_mac(void)
{
	uint8_t m[6];
	char s[18];

	CHECK_INT(valid_mac_parse("02:AB:cd:00:ff:09", m), 0);
	valid_mac_format(m, s);
	CHECK_STR(s, "02:ab:cd:00:ff:09");
	CHECK_INT(valid_mac_parse("02:ab:cd:00:ff", m), -EINVAL);
	CHECK_INT(valid_mac_parse("02:ab:cd:00:ff:0g", m), -EINVAL);
	CHECK_INT(valid_mac_parse("02-ab-cd-00-ff-09", m), -EINVAL);
	CHECK_INT(valid_mac_parse("02:ab:cd:00:ff:091", m), -EINVAL);
	CHECK_INT(valid_mac_parse("", m), -EINVAL);
}

static void test_valid_network_name(void)
{
	CHECK(valid_network_name("rdma-net"));
	CHECK(valid_network_name("a.b_c"));
	CHECK(!valid_network_name("../n"));
	CHECK(!valid_network_name(".."));
	CHECK(!valid_network_name("a/b"));
	CHECK(!valid_network_name("-net"));
	CHECK(!valid_network_name("my net"));
	CHECK(!valid_network_name(""));
}

static void test_valid_abs_path(void)
{
	char long_path[PATH_MAX + 1];

	CHECK(valid_abs_path("/var/lib/cni/sriov-rdma"));
	CHECK(valid_abs_path("/var//lib/cni..d/.hidden/"));
	CHECK(!valid_abs_path("var/lib"));
	CHECK(!valid_abs_path("/var/lib/../../etc"));
	CHECK(!valid_abs_path("/var/.."));
	CHECK(!valid_abs_path("/var/./lib"));
	CHECK_STR(valid_abs_path_problem("/var/./lib"), "holds a \".\" component (write the path without it)");
	CHECK_STR(valid_abs_path_problem("/var/lib/.."), "holds a \"..\" component");
	CHECK_STR(valid_abs_path_problem("var"), "is not an absolute path");
	CHECK(valid_abs_path_problem("/var/lib/") == NULL);
	CHECK(!valid_abs_path(""));
	CHECK(!valid_abs_path(NULL));
	memset(long_path, 'a', sizeof(long_path));
	long_path[0] = '/';
	long_path[PATH_MAX] = '\0';
	CHECK(!valid_abs_path(long_path));
	long_path[PATH_MAX - 1] = '\0';
	CHECK(valid_abs_path(long_path));
}

static void set_env(const char *cmd, const char *cid, const char *netns, const char *ifname,
		    const char *args)
{
	const char *names[] = { "CNI_COMMAND", "CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME",
				"CNI_ARGS" };
	const char *vals[] = { cmd, cid, netns, ifname, args };

	for (int i = 0; i < 5; i++) {
		if (vals[i])
			setenv(names[i], vals[i], 1);
		else
			unsetenv(names[i]);
	}
}

static int load(struct cni_error *err)
{
	struct cni_env env;
	int r;

	memset(err, 0, sizeof(*err));
	r = cni_env_load(&env, err);
	cni_env_free(&env);
	return r;
}

static void test_env_required_per_verb(void)
{
	struct cni_error err;

	set_env("ADD", "c1", "/var/run/netns/p", "net1", NULL);
	CHECK_INT(load(&err), 0);
	set_env("ADD", "c1", NULL, "net1", NULL);
	CHECK(load(&err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_ENV);
	CHECK_HAS(err.msg, "CNI_NETNS");
	set_env("CHECK", "c1", NULL, "net1", NULL);
	CHECK(load(&err) != 0);
	CHECK_HAS(err.msg, "CNI_NETNS");
	/* DEL may come after the namespace is gone. */
	set_env("DEL", "c1", NULL, "net1", NULL);
	CHECK_INT(load(&err), 0);
	set_env("DEL", NULL, NULL, "net1", NULL);
	CHECK(load(&err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_ENV);
	CHECK_HAS(err.msg, "CNI_CONTAINERID");
	set_env("DEL", "c1", NULL, NULL, NULL);
	CHECK(load(&err) != 0);
	CHECK_HAS(err.msg, "CNI_IFNAME");
	set_env("GC", NULL, NULL, NULL, NULL);
	CHECK_INT(load(&err), 0);
	set_env("STATUS", NULL, NULL, NULL, NULL);
	CHECK_INT(load(&err), 0);
	set_env(NULL, "c1", "/x", "net1", NULL);
	CHECK(load(&err) != 0);
	CHECK_HAS(err.msg, "CNI_COMMAND");
	set_env("FROB", "c1", "/x", "net1", NULL);
	CHECK(load(&err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_ENV);
	CHECK_HAS(err.msg, "FROB");
}

static void test_env_validates_formats(void)
{
	struct cni_error err;

	set_env("ADD", "../x", "/x", "net1", NULL);
	CHECK(load(&err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_ENV);
	CHECK_HAS(err.msg, "CNI_CONTAINERID \"../x\" is invalid");
	CHECK_HAS(err.msg, "^[a-zA-Z0-9][a-zA-Z0-9_.-]*$");
	set_env("DEL", "c1", NULL, "a/b", NULL);
	CHECK(load(&err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_ENV);
	CHECK_HAS(err.msg, "CNI_IFNAME \"a/b\" is invalid");
	set_env("ADD", "c1", "/x", "averyveryverylongname", NULL);
	CHECK(load(&err) != 0);
	CHECK_HAS(err.msg, "CNI_IFNAME");
}

/* A namespace path ADD could not record for DEL is refused before anything happens. */
static void test_env_netns_path(void)
{
	struct cni_env env;
	struct cni_error err;
	char long_ns[VALID_NETNS_MAX + 1];

	memset(long_ns, 'n', sizeof(long_ns) - 1);
	long_ns[0] = '/';
	long_ns[VALID_NETNS_MAX] = '\0';
	set_env("ADD", "c1", long_ns, "net1", NULL);
	CHECK(load(&err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_ENV);
	CHECK_HAS(err.msg, "CNI_NETNS");
	CHECK_HAS(err.msg, "at most 1023 bytes");
	long_ns[VALID_NETNS_MAX - 1] = '\0';
	set_env("ADD", "c1", long_ns, "net1", NULL);
	CHECK_INT(load(&err), 0);
	set_env("CHECK", "c1", "var/run/netns/p", "net1", NULL);
	CHECK(load(&err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_ENV);
	set_env("ADD", "c1", "/var/run/netns/p\x01", "net1", NULL);
	CHECK(load(&err) != 0);
	set_env("ADD", "c1", "/var/run/netns/../../etc", "net1", NULL);
	CHECK(load(&err) != 0);
	/* DEL needs no namespace: an unusable path is taken as one that is gone. */
	long_ns[VALID_NETNS_MAX - 1] = 'n';
	set_env("DEL", "c1", long_ns, "net1", NULL);
	memset(&err, 0, sizeof(err));
	CHECK_INT(cni_env_load(&env, &err), 0);
	CHECK(env.netns == NULL);
	cni_env_free(&env);
}

static void test_env_args(void)
{
	struct cni_error err = { 0 };
	struct cni_env env;

	set_env("ADD", "c1", "/x", "net1",
		"IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;EMPTY=;");
	CHECK_INT(cni_env_load(&env, &err), 0);
	CHECK_INT(env.n_args, 4);
	CHECK_STR(cni_env_arg(&env, "K8S_POD_NAME"), "p");
	CHECK_STR(cni_env_arg(&env, "K8S_POD_NAMESPACE"), "ns");
	CHECK_STR(cni_env_arg(&env, "EMPTY"), "");
	CHECK(cni_env_arg(&env, "MISSING") == NULL);
	CHECK_STR(env.args, "IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;EMPTY=;");
	cni_env_free(&env);

	set_env("ADD", "c1", "/x", "net1", "A=1;broken");
	CHECK(load(&err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_ENV);
	CHECK_HAS(err.msg, "\"broken\"");
	set_env(NULL, NULL, NULL, NULL, NULL);
}

static void sample_result(struct cni_result *r)
{
	struct cni_iface *f;
	struct cni_route *rt;

	cni_result_init(r);
	f = cni_result_add_iface(r);
	strcpy(f->name, "net1");
	strcpy(f->mac, "02:00:00:00:00:01");
	f->mtu = 9000;
	strcpy(f->sandbox, "/var/run/netns/p");
	strcpy(f->pci_id, "0000:3b:02.1");
	strcpy(cni_result_add_iface(r)->name, "ens1f0");
	r->n_ips = 2;
	strcpy(r->ips[0].address, "10.1.0.5/24");
	strcpy(r->ips[0].gateway, "10.1.0.1");
	r->ips[0].iface = 0;
	strcpy(r->ips[1].address, "fd00::5/64");
	rt = cni_result_add_route(r);
	strcpy(rt->dst, "0.0.0.0/0");
	strcpy(rt->gw, "10.1.0.1");
	rt->mtu = 1500;
	rt->table = 100;
	r->dns.n_nameservers = 1;
	strcpy(r->dns.nameservers[0], "10.1.0.2");
	strcpy(r->dns.domain, "cluster.local");
	r->dns.n_search = 1;
	strcpy(r->dns.search[0], "svc.cluster.local");
}

static const cJSON *at(const cJSON *o, const char *key, int idx)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return idx < 0 ? v : cJSON_GetArrayItem(v, idx);
}

static void test_encode_pre_1_0(void)
{
	struct cni_result r;
	cJSON *o;

	sample_result(&r);
	o = cni_result_encode(&r, "0.3.1");
	CHECK_STR(at(o, "cniVersion", -1)->valuestring, "0.3.1");
	CHECK_STR(at(at(o, "ips", 0), "version", -1)->valuestring, "4");
	CHECK_STR(at(at(o, "ips", 1), "version", -1)->valuestring, "6");
	CHECK_INT(at(at(o, "ips", 0), "interface", -1)->valueint, 0);
	/* Index absent (CNI_UNSET) means no "interface" member at all. */
	CHECK(at(at(o, "ips", 1), "interface", -1) == NULL);
	CHECK(at(at(o, "ips", 1), "gateway", -1) == NULL);
	CHECK(at(at(o, "interfaces", 0), "mtu", -1) == NULL);
	CHECK(at(at(o, "interfaces", 0), "pciID", -1) == NULL);
	CHECK_STR(at(at(o, "interfaces", 0), "mac", -1)->valuestring, "02:00:00:00:00:01");
	CHECK(at(at(o, "interfaces", 1), "mac", -1) == NULL);
	CHECK(at(at(o, "interfaces", 1), "sandbox", -1) == NULL);
	CHECK(at(at(o, "routes", 0), "mtu", -1) == NULL);
	CHECK(at(at(o, "routes", 0), "table", -1) == NULL);
	CHECK_STR(at(at(o, "dns", -1), "domain", -1)->valuestring, "cluster.local");
	cJSON_Delete(o);
}

static void test_encode_1_0(void)
{
	struct cni_result r;
	cJSON *o;

	sample_result(&r);
	o = cni_result_encode(&r, "1.0.0");
	CHECK(at(at(o, "ips", 0), "version", -1) == NULL);
	/* as Go's types100 writes 1.0.0: the interface's mtu and pciID stay (DRA reads them) */
	CHECK(at(at(o, "interfaces", 0), "mtu", -1) != NULL);
	CHECK_STR(at(at(o, "interfaces", 0), "pciID", -1)->valuestring, "0000:3b:02.1");
	CHECK(at(at(o, "routes", 0), "mtu", -1) == NULL);
	cJSON_Delete(o);
}

static void test_encode_1_1(void)
{
	struct cni_result r;
	cJSON *o;

	sample_result(&r);
	o = cni_result_encode(&r, "1.1.0");
	CHECK(at(at(o, "ips", 0), "version", -1) == NULL);
	CHECK_INT(at(at(o, "interfaces", 0), "mtu", -1)->valueint, 9000);
	CHECK_STR(at(at(o, "interfaces", 0), "pciID", -1)->valuestring, "0000:3b:02.1");
	CHECK(at(at(o, "interfaces", 1), "mtu", -1) == NULL);
	CHECK(at(at(o, "interfaces", 1), "pciID", -1) == NULL);
	CHECK_INT(at(at(o, "routes", 0), "mtu", -1)->valueint, 1500);
	CHECK_INT(at(at(o, "routes", 0), "table", -1)->valueint, 100);
	CHECK(at(at(o, "routes", 0), "advmss", -1) == NULL);
	CHECK(at(at(o, "routes", 0), "scope", -1) == NULL);
	cJSON_Delete(o);
}

static void test_encode_empty(void)
{
	struct cni_result r;
	cJSON *o;

	cni_result_init(&r);
	o = cni_result_encode(&r, "1.1.0");
	CHECK_INT(cJSON_GetArraySize(o), 1);
	CHECK(at(o, "dns", -1) == NULL);
	CHECK(at(o, "ips", -1) == NULL);
	cJSON_Delete(o);
}

static void test_parse_round_trip(void)
{
	const char *versions[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0" };

	for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
		struct cni_result in, out;
		struct cni_error err = { 0 };
		bool v1 = versions[v][0] == '1';
		cJSON *o;

		sample_result(&in);
		o = cni_result_encode(&in, versions[v]);
		CHECK_INT(cni_result_parse(o, &out, &err), 0);
		cJSON_Delete(o);
		CHECK_INT(out.n_ifaces, 2);
		CHECK_STR(out.ifaces[0].name, "net1");
		CHECK_STR(out.ifaces[0].mac, "02:00:00:00:00:01");
		CHECK_STR(out.ifaces[0].sandbox, "/var/run/netns/p");
		CHECK_INT(out.ifaces[0].mtu, v1 ? 9000 : 0);
		CHECK_STR(out.ifaces[0].pci_id, v1 ? "0000:3b:02.1" : "");
		CHECK_INT(out.n_ips, 2);
		CHECK_STR(out.ips[0].address, "10.1.0.5/24");
		CHECK_STR(out.ips[0].gateway, "10.1.0.1");
		CHECK_INT(out.ips[0].iface, 0);
		CHECK_INT(out.ips[1].iface, CNI_UNSET);
		CHECK_INT(out.n_routes, 1);
		CHECK_STR(out.routes[0].dst, "0.0.0.0/0");
		CHECK_INT(out.routes[0].mtu, !strcmp(versions[v], "1.1.0") ? 1500 : CNI_UNSET);
		CHECK_INT(out.routes[0].priority, CNI_UNSET);
		CHECK_INT(out.dns.n_nameservers, 1);
		CHECK_STR(out.dns.nameservers[0], "10.1.0.2");
		CHECK_STR(out.dns.search[0], "svc.cluster.local");
	}
}

static int parse_text(const char *text, struct cni_error *err)
{
	struct cni_result r;
	cJSON *o = cJSON_Parse(text);
	int ret;

	memset(err, 0, sizeof(*err));
	ret = cni_result_parse(o, &r, err);
	cJSON_Delete(o);
	return ret;
}

static void test_parse_rejects(void)
{
	struct cni_error err;
	char big[4096];
	size_t n;

	CHECK(parse_text("{\"ips\":[{\"address\":\"10.1.0.5\"}]}", &err) != 0);
	CHECK_INT(err.code, CNI_ERR_DECODE);
	CHECK_HAS(err.msg, "ips[0].address");
	CHECK(parse_text("{\"ips\":[{\"address\":\"10.1.0.5/33\"}]}", &err) != 0);
	CHECK_INT(err.code, CNI_ERR_DECODE);
	CHECK(parse_text("{\"ips\":[{\"address\":\"10.1.0.x/24\"}]}", &err) != 0);
	CHECK(parse_text("{\"ips\":[{\"address\":\"10.1.0.5/24\",\"interface\":3}]}", &err) != 0);
	CHECK_HAS(err.msg, "ips[0].interface");
	/* Far out of int's range: refused before the conversion, which would be undefined. */
	CHECK(parse_text("{\"ips\":[{\"address\":\"10.1.0.5/24\",\"interface\":1e300}]}", &err) != 0);
	CHECK_HAS(err.msg, "ips[0].interface");
	CHECK(parse_text("{\"ips\":[{\"address\":\"10.1.0.5/24\",\"interface\":-1e300}]}", &err) != 0);
	CHECK_HAS(err.msg, "ips[0].interface");
	/* No JSON text gives a NaN; a document built in code can. */
	{
		cJSON *o = cJSON_Parse("{\"ips\":[{\"address\":\"10.1.0.5/24\",\"interface\":0}]}");
		cJSON *ip = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "ips"), 0);
		struct cni_result r;

		cJSON_ReplaceItemInObjectCaseSensitive(ip, "interface", cJSON_CreateNumber(NAN));
		memset(&err, 0, sizeof(err));
		CHECK(cni_result_parse(o, &r, &err) != 0);
		CHECK_HAS(err.msg, "ips[0].interface");
		cJSON_Delete(o);
	}
	CHECK(parse_text("{\"interfaces\":[{\"mac\":\"x\"}]}", &err) != 0);
	CHECK_HAS(err.msg, "interfaces[0].name");
	CHECK(parse_text("{\"routes\":[{\"dst\":\"10.0.0.0/8\",\"gw\":\"nope\"}]}", &err) != 0);
	CHECK_HAS(err.msg, "routes[0].gw");
	CHECK(parse_text("[]", &err) != 0);
	CHECK_INT(err.code, CNI_ERR_DECODE);

	n = (size_t)snprintf(big, sizeof(big), "{\"ips\":[");
	for (int i = 0; i <= CNI_MAX_IPS; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%s{\"address\":\"10.0.0.%d/24\"}",
				      i ? "," : "", i + 1);
	snprintf(big + n, sizeof(big) - n, "]}");
	CHECK(parse_text(big, &err) != 0);
	CHECK_INT(err.code, CNI_ERR_DECODE);
	CHECK_HAS(err.msg, "at most 16");
	/* ips[].version from an old result is ignored, not trusted. */
	CHECK_INT(parse_text("{\"ips\":[{\"version\":\"6\",\"address\":\"10.1.0.5/24\"}]}", &err), 0);
}

/* Run fn with stdout going to a temporary file; return what it printed (malloc'd). */
static char *capture_stdout(void (*fn)(const void *), const void *arg)
{
	char path[96], *buf;
	int fd, saved;
	long len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stdout", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	fn(arg);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	f = fopen(path, "r");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	if (fread(buf, 1, (size_t)len, f) != (size_t)len)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static void print_err_031(const void *e)
{
	cni_error_print(e, "0.3.1");
}

static void test_error_json(void)
{
	struct cni_error err = { 0 };
	cJSON *o;
	char *out;

	CHECK_INT(cni_errorf(&err, CNI_ERR_INVALID_CONFIG, "vlan: %d is out of range", 4095), -1);
	/* The first error is the cause; later ones are consequences. */
	cni_errorf(&err, CNI_ERR_PLUGIN, "rollback failed");
	CHECK_INT(err.code, CNI_ERR_INVALID_CONFIG);
	CHECK_STR(err.msg, "vlan: 4095 is out of range");

	out = capture_stdout(print_err_031, &err);
	o = cJSON_Parse(out);
	CHECK_STR(at(o, "cniVersion", -1)->valuestring, "0.3.1");
	CHECK_INT(at(o, "code", -1)->valueint, 7);
	CHECK_STR(at(o, "msg", -1)->valuestring, "vlan: 4095 is out of range");
	CHECK(at(o, "details", -1) == NULL);
	cJSON_Delete(o);
	free(out);

	cni_error_details(&err, "set vlan to 0-4094");
	cni_error_details(&err, "see the README");
	CHECK_STR(err.details, "set vlan to 0-4094; see the README");
	out = capture_stdout(print_err_031, &err);
	o = cJSON_Parse(out);
	CHECK_STR(at(o, "details", -1)->valuestring, "set vlan to 0-4094; see the README");
	cJSON_Delete(o);
	free(out);
}

static void gc_list(const char *conf, struct cni_attachment **list, int *n, int *ret,
		    struct cni_error *err)
{
	struct cni_request req = { 0 };

	req.conf = cJSON_Parse(conf);
	memset(err, 0, sizeof(*err));
	*ret = cni_gc_valid_attachments(&req, list, n, err);
	/* The list points into conf: check it before conf goes. */
	if (*ret == 0 && *n > 0) {
		CHECK(cni_attachment_valid(*list, *n, "c1", "net1"));
		CHECK(!cni_attachment_valid(*list, *n, "c1", "net2"));
		CHECK(!cni_attachment_valid(*list, *n, "c2", "net1"));
	}
	cJSON_Delete(req.conf);
}

static void test_gc_attachments(void)
{
	struct cni_attachment *list = NULL;
	struct cni_error err;
	int n, ret;

	gc_list("{\"cni.dev/valid-attachments\":[{\"containerID\":\"c1\",\"ifname\":\"net1\"},"
		"{\"containerID\":\"c2\",\"ifname\":\"net2\"}]}", &list, &n, &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(n, 2);
	free(list);

	/* Absent: the runtime did not say, so nothing may be collected. */
	gc_list("{\"name\":\"x\"}", &list, &n, &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(n, -1);
	CHECK(cni_attachment_valid(list, n, "anything", "net9"));
	free(list);

	gc_list("{\"cni.dev/valid-attachments\":[]}", &list, &n, &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(n, 0);
	CHECK(!cni_attachment_valid(list, n, "c1", "net1"));
	free(list);

	/* null is libcni's empty list (its own tests say so): every attachment is stale. */
	gc_list("{\"cni.dev/valid-attachments\":null}", &list, &n, &ret, &err);
	CHECK_INT(ret, 0);
	CHECK_INT(n, 0);
	CHECK(!cni_attachment_valid(list, n, "c1", "net1"));
	free(list);

	gc_list("{\"cni.dev/valid-attachments\":{}}", &list, &n, &ret, &err);
	CHECK(ret != 0);
	CHECK_INT(err.code, CNI_ERR_DECODE);
	CHECK_HAS(err.msg, "cni.dev/valid-attachments");
	gc_list("{\"cni.dev/valid-attachments\":[{\"containerID\":\"c1\"}]}", &list, &n, &ret,
		&err);
	CHECK(ret != 0);
	CHECK_HAS(err.msg, "cni.dev/valid-attachments[0]");
	CHECK(list == NULL);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_log_lines(void)
{
	char path[128], want[128], link[128];
	enum log_level lvl;
	struct stat st;
	const char *text;
	int dirfd;

	CHECK_INT(log_level_parse("DEBUG", &lvl), 0);
	CHECK_INT(lvl, LOG_LVL_DEBUG);
	CHECK_INT(log_level_parse("warning", &lvl), 0);
	CHECK_INT(lvl, LOG_LVL_WARNING);
	CHECK_INT(log_level_parse("verbose", &lvl), -EINVAL);

	snprintf(path, sizeof(path), "%s/plugin.log", tmpdir);
	dirfd = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	log_init("pool-ipam");
	CHECK_INT(log_set_file_at(dirfd, "plugin.log"), 0);
	log_set_context("ADD", "3f2a1b0c9d8e7f6011223344", "net1");
	log_info("allocated %s", "10.0.0.5");
	log_debug("not at the default level");
	log_set_context(NULL, NULL, NULL);
	log_error("no context");
	log_close();

	text = slurp(path);
	CHECK(text != NULL);
	snprintf(want, sizeof(want), " pool-ipam/" PROJECT_VERSION "[%d] INFO ADD 3f2a1b0c9d8e:net1: "
		 "allocated 10.0.0.5\n", (int)getpid());
	CHECK_HAS(text, want);
	snprintf(want, sizeof(want), " pool-ipam/" PROJECT_VERSION "[%d] ERROR no context\n",
		 (int)getpid());
	CHECK_HAS(text, want);
	CHECK(!strstr(text, "not at the default level"));
	/* "2026-11-23T08:31:49.123Z ": an ISO 8601 UTC time with milliseconds. */
	CHECK(text && strlen(text) > 24 && text[4] == '-' && text[10] == 'T' && text[19] == '.' &&
	      text[23] == 'Z' && text[24] == ' ');
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);

	/* A log path that is a symlink could make us append to any file. */
	snprintf(link, sizeof(link), "%s/link.log", tmpdir);
	CHECK_INT(symlink(path, link), 0);
	CHECK_INT(log_set_file_at(dirfd, "link.log"), -ELOOP);
	close(dirfd);
	log_init("test_cni");
}

/* ---- delegation to small shell-script plugins ---- */

static void write_plugin(const char *name, const char *body)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(path, 0755);
}

static void make_request(struct cni_request *req, const char *stdin_text)
{
	memset(req, 0, sizeof(*req));
	req->env.command = CNI_CMD_ADD;
	req->env.path = tmpdir;
	req->stdin_buf = (char *)stdin_text;
	req->stdin_len = strlen(stdin_text);
}

static void test_delegate_success(void)
{
	const char *conf = "{\"cniVersion\":\"0.4.0\",\"name\":\"n\",\"ipam\":{\"type\":\"good\"}}";
	struct cni_request req;
	struct cni_result res;
	struct cni_error err = { 0 };
	char path[128], seen[256] = "";
	FILE *f;

	write_plugin("good",
		     "cat > \"$(dirname \"$0\")/good.stdin\"\n"
		     "echo \"$CNI_COMMAND\" > \"$(dirname \"$0\")/good.cmd\"\n"
		     "echo 'host-local-like log line' >&2\n"
		     "cat <<'EOF'\n"
		     "{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"4\",\"address\":\"10.9.0.7/16\","
		     "\"gateway\":\"10.9.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}]}\n"
		     "EOF");
	make_request(&req, conf);
	setenv("CNI_COMMAND", "CHECK", 1);
	CHECK_INT(cni_delegate(&req, "good", CNI_CMD_ADD, &res, &err), 0);
	CHECK_INT(err.code, 0);
	CHECK_INT(res.n_ips, 1);
	CHECK_STR(res.ips[0].address, "10.9.0.7/16");
	CHECK_STR(res.ips[0].gateway, "10.9.0.1");
	CHECK_INT(res.n_routes, 1);

	snprintf(path, sizeof(path), "%s/good.stdin", tmpdir);
	f = fopen(path, "r");
	CHECK(f && fgets(seen, sizeof(seen), f));
	if (f)
		fclose(f);
	CHECK_STR(seen, conf);
	/* The delegate gets the verb we asked for, whatever our own CNI_COMMAND. */
	snprintf(path, sizeof(path), "%s/good.cmd", tmpdir);
	f = fopen(path, "r");
	CHECK(f && fgets(seen, sizeof(seen), f));
	if (f)
		fclose(f);
	CHECK_STR(seen, "ADD\n");

	memset(&err, 0, sizeof(err));
	CHECK_INT(cni_delegate(&req, "good", CNI_CMD_DEL, NULL, &err), 0);
	f = fopen(path, "r");
	CHECK(f && fgets(seen, sizeof(seen), f));
	if (f)
		fclose(f);
	CHECK_STR(seen, "DEL\n");
	unsetenv("CNI_COMMAND");
}

static void test_delegate_error_propagates(void)
{
	struct cni_request req;
	struct cni_error err = { 0 };

	write_plugin("busy", "cat >/dev/null\n"
			     "echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"pool locked\","
			     "\"details\":\"retry later\"}'\nexit 1");
	make_request(&req, "{}");
	CHECK(cni_delegate(&req, "busy", CNI_CMD_ADD, NULL, &err) != 0);
	CHECK_INT(err.code, CNI_ERR_TRY_AGAIN);
	CHECK_STR(err.msg, "busy: pool locked");
	CHECK_STR(err.details, "retry later");
}

static void test_delegate_not_json(void)
{
	struct cni_request req;
	struct cni_error err = { 0 };

	write_plugin("crash", "echo 'panic: runtime error'\necho 'goroutine 1'\nexit 2");
	make_request(&req, "{}");
	CHECK(cni_delegate(&req, "crash", CNI_CMD_ADD, NULL, &err) != 0);
	CHECK_INT(err.code, CNI_ERR_PLUGIN);
	CHECK_HAS(err.msg, "crash");
	CHECK_HAS(err.msg, "exit status 2");
	CHECK_HAS(err.msg, "panic: runtime error");

	memset(&err, 0, sizeof(err));
	write_plugin("killed", "kill -9 $$");
	CHECK(cni_delegate(&req, "killed", CNI_CMD_ADD, NULL, &err) != 0);
	CHECK_INT(err.code, CNI_ERR_PLUGIN);
	CHECK_HAS(err.msg, "killed by signal 9");

	memset(&err, 0, sizeof(err));
	write_plugin("garbage", "echo 'not a result'");
	{
		struct cni_result res;

		CHECK(cni_delegate(&req, "garbage", CNI_CMD_ADD, &res, &err) != 0);
		CHECK_INT(err.code, CNI_ERR_DECODE);
		CHECK_HAS(err.msg, "garbage");
	}
}

static void test_delegate_ignores_unread_stdin(void)
{
	struct cni_request req;
	struct cni_error err = { 0 };
	size_t len = 512 * 1024;
	char *big = malloc(len + 1);

	/* More than a pipe holds, to a plugin that exits without reading it. */
	memset(big, ' ', len);
	big[0] = '{';
	big[len - 1] = '}';
	big[len] = '\0';
	write_plugin("deaf", "exit 0");
	make_request(&req, big);
	CHECK_INT(cni_delegate(&req, "deaf", CNI_CMD_DEL, NULL, &err), 0);
	CHECK_INT(err.code, 0);
	free(big);
}

static void test_delegate_missing_and_bad_type(void)
{
	struct cni_request req;
	struct cni_error err = { 0 };
	char path[128];

	make_request(&req, "{}");
	CHECK(cni_delegate(&req, "host-local-nope", CNI_CMD_ADD, NULL, &err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_CONFIG);
	CHECK_HAS(err.msg, "host-local-nope");
	CHECK_HAS(err.msg, tmpdir);

	/* Present but not executable is as good as missing. */
	memset(&err, 0, sizeof(err));
	snprintf(path, sizeof(path), "%s/noexec", tmpdir);
	fclose(fopen(path, "w"));
	CHECK(cni_delegate(&req, "noexec", CNI_CMD_ADD, NULL, &err) != 0);
	CHECK_INT(err.code, CNI_ERR_INVALID_CONFIG);

	const char *bad[] = { "../good", "a/b", "", ".good", "-x", "a b" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		CHECK(cni_delegate(&req, bad[i], CNI_CMD_ADD, NULL, &err) != 0);
		CHECK_INT(err.code, CNI_ERR_INVALID_CONFIG);
		CHECK_HAS(err.msg, "is invalid");
	}

	/* The search walks every CNI_PATH entry, empty ones included. */
	memset(&err, 0, sizeof(err));
	snprintf(path, sizeof(path), "/nonexistent::%s", tmpdir);
	req.env.path = path;
	CHECK_INT(cni_delegate(&req, "deaf", CNI_CMD_DEL, NULL, &err), 0);
}

/*
 * Executable, but the kernel will not run it (no #! line, no ELF): the
 * exec fails in the child, after start returned, and finish says so.
 */
static void test_delegate_exec_refused(void)
{
	struct cni_request req;
	struct cni_error err = { 0 };
	struct cni_delegation d;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/notelf", tmpdir);
	f = fopen(path, "w");
	fputs("just text\n", f);
	fclose(f);
	chmod(path, 0755);
	make_request(&req, "{}");
	CHECK(cni_delegate(&req, "notelf", CNI_CMD_ADD, NULL, &err) != 0);
	CHECK_INT(err.code, CNI_ERR_PLUGIN);
	CHECK_HAS(err.msg, "notelf: cannot run ");
	CHECK_HAS(err.msg, path);
	CHECK_HAS(err.msg, strerror(ENOEXEC));

	memset(&err, 0, sizeof(err));
	CHECK_INT(cni_delegate_start(&req, "notelf", CNI_CMD_DEL, &d, &err), 0);
	CHECK(d.pid > 0);
	CHECK(cni_delegate_finish(&d, NULL, &err) != 0);
	CHECK_HAS(err.msg, strerror(ENOEXEC));
	CHECK_INT(d.pid, 0);
	/* Reaped: no child of ours is left. */
	CHECK_INT(waitpid(-1, NULL, WNOHANG), -1);
}

/* The peer every runtime ships: its results and errors are what ours must read. */
static void test_delegate_host_local(void)
{
	const char *dir = "/usr/lib/cni";
	char conf[512], exe[64];
	struct cni_request req;
	struct cni_result res;
	struct cni_error err = { 0 };

	snprintf(exe, sizeof(exe), "%s/host-local", dir);
	if (access(exe, X_OK) != 0) {
		printf("# %s not installed: host-local delegation not exercised\n", exe);
		return;
	}
	snprintf(conf, sizeof(conf),
		 "{\"cniVersion\":\"0.3.1\",\"name\":\"peer\",\"type\":\"x\","
		 "\"ipam\":{\"type\":\"host-local\",\"subnet\":\"10.77.0.0/24\","
		 "\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dataDir\":\"%s/hl\"}}", tmpdir);
	set_env("ADD", "hlcontainer", "/proc/self/ns/net", "net1", NULL);
	setenv("CNI_PATH", dir, 1);
	make_request(&req, conf);
	req.env.path = dir;
	CHECK_INT(cni_delegate(&req, "host-local", CNI_CMD_ADD, &res, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(res.n_ips, 1);
	CHECK_STR(res.ips[0].address, "10.77.0.2/24");
	CHECK_STR(res.ips[0].gateway, "10.77.0.1");
	CHECK_INT(res.n_routes, 1);

	/* Its error object (here: a bad subnet) comes back with its code. */
	snprintf(conf, sizeof(conf),
		 "{\"cniVersion\":\"0.3.1\",\"name\":\"peer\",\"ipam\":{\"type\":\"host-local\","
		 "\"subnet\":\"10.77.0.0/33\",\"dataDir\":\"%s/hl\"}}", tmpdir);
	make_request(&req, conf);
	req.env.path = dir;
	CHECK(cni_delegate(&req, "host-local", CNI_CMD_ADD, &res, &err) != 0);
	CHECK(err.code > 0);
	CHECK_HAS(err.msg, "host-local: ");

	snprintf(conf, sizeof(conf),
		 "{\"cniVersion\":\"0.3.1\",\"name\":\"peer\",\"ipam\":{\"type\":\"host-local\","
		 "\"subnet\":\"10.77.0.0/24\",\"dataDir\":\"%s/hl\"}}", tmpdir);
	make_request(&req, conf);
	req.env.path = dir;
	memset(&err, 0, sizeof(err));
	CHECK_INT(cni_delegate(&req, "host-local", CNI_CMD_DEL, NULL, &err), 0);
	CHECK_STR(err.msg, "");
	set_env(NULL, NULL, NULL, NULL, NULL);
	unsetenv("CNI_PATH");
}

int main(void)
{
	char cmd[128];
	int ret;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_cni.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_version_cmp);
	RUN(test_version_supported);
	RUN(test_valid_container_id);
	RUN(test_valid_ifname);
	RUN(test_valid_mac);
	RUN(test_valid_network_name);
	RUN(test_valid_abs_path);
	RUN(test_env_required_per_verb);
	RUN(test_env_validates_formats);
	RUN(test_env_netns_path);
	RUN(test_env_args);
	RUN(test_encode_pre_1_0);
	RUN(test_encode_1_0);
	RUN(test_encode_1_1);
	RUN(test_encode_empty);
	RUN(test_parse_round_trip);
	RUN(test_parse_rejects);
	RUN(test_error_json);
	RUN(test_gc_attachments);
	RUN(test_log_lines);
	RUN(test_delegate_success);
	RUN(test_delegate_error_propagates);
	RUN(test_delegate_not_json);
	RUN(test_delegate_ignores_unread_stdin);
	RUN(test_delegate_missing_and_bad_type);
	RUN(test_delegate_exec_refused);
	RUN(test_delegate_host_local);
	ret = check_summary();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return ret;
}
