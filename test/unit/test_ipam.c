/* SPDX-License-Identifier: Apache-2.0 */
/* ipam, ipam_conf and ipam_ranges: iteration, capacity and the config parser with its errors. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "addr_check.h"
#include "check.h"
#include "ipam.h"
#include "ipam_addr.h"
#include "ipam_conf.h"
#include "ipam_ranges.h"

static struct ipam_conf conf;

static int parse_ret;

/* Parse an ipam object; returns the error message ("" on success), parse_ret the code. */
static const char *parse(const char *json)
{
	static struct cni_error err;
	cJSON *j = cJSON_Parse(json);
	int ret;

	memset(&err, 0, sizeof(err));
	if (!j)
		return "test JSON does not parse";
	ret = parse_ret = ipam_conf_parse(j, &conf, &err);
	cJSON_Delete(j);
	if (ret == 0)
		return "";
	if (err.code != CNI_ERR_INVALID_CONFIG)
		return "error code is not 7";
	return err.msg;
}

static void test_defaults_and_shorthand(void)
{
	const struct ipam_range *r;

	CHECK_STR(parse("{\"type\":\"pool-ipam\",\"subnet\":\"10.1.0.0/24\",\"gateway\":\"10.1.0.1\"}"), "");
	CHECK_INT(conf.n_sets, 1);
	r = &conf.sets[0].r[0];
	CHECK_STR(fmt(&r->start), "10.1.0.1");
	CHECK_STR(fmt(&r->end), "10.1.0.254");
	CHECK(r->has_gw);
	CHECK_STR(conf.data_dir, IPAM_DEFAULT_DATA_DIR);
	CHECK_INT(conf.cooldown, 0);
	/* 254 hosts minus the gateway */
	CHECK(ipam_capacity(&conf, 0) == 253);

	CHECK_STR(parse("{\"ranges\":[[{\"subnet\":\"fd00::/120\"}]],\"dataDir\":\"/srv/ipam\",\"releaseCooldown\":30}"), "");
	r = &conf.sets[0].r[0];
	CHECK_STR(fmt(&r->start), "fd00::1");
	CHECK_STR(fmt(&r->end), "fd00::ff");
	CHECK(!r->has_gw);
	CHECK(ipam_capacity(&conf, 0) == 255);
	CHECK_STR(conf.data_dir, "/srv/ipam");
	CHECK_INT(conf.cooldown, 30);
}

static void test_dual_stack(void)
{
	struct ipam_addr a = A("fd00::7");

	CHECK_STR(parse("{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"}],[{\"subnet\":\"fd00::/64\"}]]}"), "");
	CHECK_INT(conf.n_sets, 2);
	CHECK_INT(ipam_set_of(&conf, &a), 1);
	a = A("10.1.0.9");
	CHECK_INT(ipam_set_of(&conf, &a), 0);
	a = A("10.2.0.9");
	CHECK_INT(ipam_set_of(&conf, &a), -1);
	CHECK(ipam_capacity(&conf, 1) == (((ipam_u128)1 << 64) - 1));
}

static void test_iteration_wraps_over_ranges(void)
{
	struct ipam_addr a, n;

	CHECK_STR(parse("{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\",\"rangeStart\":\"10.1.0.10\",\"rangeEnd\":\"10.1.0.11\"},"
			"{\"subnet\":\"10.2.0.0/24\",\"rangeStart\":\"10.2.0.254\",\"gateway\":\"10.2.0.1\"}]]}"), "");
	CHECK(ipam_capacity(&conf, 0) == 3);
	a.family = 0;
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.0.10");
	CHECK_INT(ipam_next(&conf, 0, &n, &n), 0);
	CHECK_STR(fmt(&n), "10.1.0.11");
	CHECK_INT(ipam_next(&conf, 0, &n, &n), 0);
	CHECK_STR(fmt(&n), "10.2.0.254");
	/* end of the last range wraps to the first start */
	CHECK_INT(ipam_next(&conf, 0, &n, &n), 0);
	CHECK_STR(fmt(&n), "10.1.0.10");
}

static void test_skips_gateway_network_broadcast(void)
{
	struct ipam_addr a, n;

	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/29\",\"rangeStart\":\"10.1.0.0\",\"rangeEnd\":\"10.1.0.7\",\"gateway\":\"10.1.0.2\"}"), "");
	/* .0 network, .7 broadcast, .2 gateway: .1 .3 .4 .5 .6 */
	CHECK(ipam_capacity(&conf, 0) == 5);
	a = A("10.1.0.1");
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.0.3");
	a = A("10.1.0.6");
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.0.1");
	a = A("10.1.0.2");
	CHECK(!ipam_usable(&conf, 0, &a));
	a = A("10.1.0.7");
	CHECK(!ipam_usable(&conf, 0, &a));
}

static void test_exclusions(void)
{
	struct ipam_addr a, n;

	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/16\",\"exclude\":[\"10.1.0.0/17\",\"10.1.128.5\",\"10.1.200.0/24\",\"10.1.0.0/18\"]}"), "");
	CHECK_INT(conf.n_exclude, 4);
	/* 65534 hosts - 32767 (the /17 minus network .0.0 already skipped) - 1 - 256 */
	CHECK(ipam_capacity(&conf, 0) == 65534 - 32767 - 1 - 256);
	a.family = 0;
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.128.0");
	a = A("10.1.128.4");
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.128.6");
	a = A("10.1.199.255");
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.201.0");
	/* a huge IPv6 exclusion is jumped over, not walked */
	CHECK_STR(parse("{\"subnet\":\"fd00::/64\",\"exclude\":[\"fd00::/65\"]}"), "");
	a.family = 0;
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "fd00::8000:0:0:0");
	CHECK(ipam_capacity(&conf, 0) == ((ipam_u128)1 << 63));
}

static void test_config_errors(void)
{
	CHECK_HAS(parse("{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"}],[{\"subnet\":\"10.1.0.128/25\"}]]}"),
		  "ipam.ranges[1][0]: range 10.1.0.129-10.1.0.254 overlaps ipam.ranges[0][0]");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"gateway\":\"10.2.0.1\"}"),
		  "ipam.gateway: 10.2.0.1 is outside subnet 10.1.0.0/24");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"rangeStart\":\"10.1.0.50\",\"rangeEnd\":\"10.1.0.40\"}"),
		  "ipam.rangeStart: 10.1.0.50 is after rangeEnd 10.1.0.40");
	CHECK_HAS(parse("{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\",\"rangeEnd\":\"10.1.1.9\"}]]}"),
		  "ipam.ranges[0][0].rangeEnd: 10.1.1.9 is outside subnet 10.1.0.0/24");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.4/32\"}"), "ipam.subnet: 10.1.0.4/32 is too small");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.4/31\"}"), "too small");
	CHECK_HAS(parse("{\"subnet\":\"fd00::/127\"}"), "too small");
	CHECK_HAS(parse("{\"subnet\":\"fd00::/128\"}"), "too small");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"rangeStrat\":\"10.1.0.9\"}"), "rangeStrat");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"rangeStrat\":\"10.1.0.9\"}"), "rangeStart");
	CHECK_HAS(parse("{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\",\"gatway\":\"10.1.0.1\"}]]}"),
		  "ipam.ranges[0][0].gatway");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"dataDir\":\"var/lib\"}"), "ipam.dataDir");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"dataDir\":\"/var/../etc\"}"), "ipam.dataDir");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"releaseCooldown\":-1}"), "releaseCooldown");
	CHECK_HAS(parse("{\"type\":\"pool-ipam\"}"), "ipam.ranges: no range");
	CHECK_HAS(parse("{\"rangeStart\":\"10.1.0.9\"}"), "ipam.subnet: missing");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0/24\"}"), "ipam.subnet: not a CIDR");
	CHECK_HAS(parse("{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"},{\"subnet\":\"fd00::/64\"}]]}"),
		  "ipam.ranges[0][1]: mixes IPv4 and IPv6");
	CHECK_HAS(parse("{\"ranges\":[[]]}"), "ipam.ranges[0]: want a non-empty list");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/30\",\"gateway\":\"10.1.0.1\",\"exclude\":[\"10.1.0.2\"]}"),
		  "ipam: no usable address");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"exclude\":[\"10.1.0.x\"]}"), "ipam.exclude[0]");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"exclude\":[\"10.1.0.9-10.1.0.5\"]}"), "ipam.exclude[0]");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"exclude\":[\"10.1.0.9-fd00::5\"]}"), "ipam.exclude[0]");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"exclude\":[\"10.1.0.1\",\"-10.1.0.5\"]}"), "ipam.exclude[1]");
	CHECK_HAS(parse("[]"), "ipam: missing or not an object");
	/* The spec's names, exactly: another case is refused, named as written. */
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"rangestart\":\"10.9.0.1\"}"),
		  "ipam.rangestart: keys are case-sensitive; write \"rangeStart\"");
	CHECK_HAS(parse("{\"ranges\":[[{\"Subnet\":\"10.1.0.0/24\"}]]}"),
		  "ipam.ranges[0][0].Subnet: keys are case-sensitive; write \"subnet\"");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"DataDir\":\"/x\"}"),
		  "ipam.DataDir: keys are case-sensitive; write \"dataDir\"");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"dns\":{\"Nameservers\":[]}}"),
		  "ipam.dns.Nameservers: keys are case-sensitive");
}

static void test_routes_dns(void)
{
	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\",\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"10.1.0.1\"},{\"dst\":\"192.168.0.0/16\"}],"
			"\"dns\":{\"nameservers\":[\"10.1.0.53\",\"fd00::53\"],\"domain\":\"cluster.local\",\"search\":[\"a.svc\",\"b.svc\"],\"options\":[\"ndots:5\"]}}"), "");
	CHECK_INT(conf.n_routes, 2);
	CHECK_STR(conf.routes[0].dst, "0.0.0.0/0");
	CHECK_STR(conf.routes[0].gw, "10.1.0.1");
	CHECK_STR(conf.routes[1].gw, "");
	CHECK_INT(conf.dns.n_nameservers, 2);
	CHECK_STR(conf.dns.nameservers[1], "fd00::53");
	CHECK_STR(conf.dns.domain, "cluster.local");
	CHECK_INT(conf.dns.n_search, 2);
	CHECK_STR(conf.dns.search[1], "b.svc");
	CHECK_STR(conf.dns.options[0], "ndots:5");

	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"routes\":[{\"dst\":\"0.0.0.0\"}]}"), "ipam.routes[0].dst: not a CIDR");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"fd00::1\"}]}"), "ipam.routes[0].gw");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"dns\":{\"nameservers\":[\"dns.example\"]}}"), "ipam.dns.nameservers[0]");
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"dns\":{\"nameserver\":[\"10.0.0.1\"]}}"), "ipam.dns.nameserver");
}

static void test_resolv_conf(void)
{
	struct cni_dns dns;

	ipam_resolv_conf_parse("# comment\nnameserver 10.0.0.53\nnameserver fd00::53\n"
			       "domain example.com\nsearch a.example b.example\noptions ndots:2 edns0\n; x\n",
			       &dns);
	CHECK_INT(dns.n_nameservers, 2);
	CHECK_STR(dns.nameservers[0], "10.0.0.53");
	CHECK_STR(dns.domain, "example.com");
	CHECK_INT(dns.n_search, 2);
	CHECK_STR(dns.search[1], "b.example");
	CHECK_INT(dns.n_options, 2);
	CHECK_STR(dns.options[1], "edns0");
}

static void test_result_ip(void)
{
	struct cni_ip ip;
	struct ipam_addr a = A("10.1.0.9");

	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\",\"gateway\":\"10.1.0.1\"}"), "");
	CHECK_INT(ipam_result_ip(&conf, 0, &a, &ip), 0);
	CHECK_STR(ip.address, "10.1.0.9/24");
	CHECK_STR(ip.gateway, "10.1.0.1");
	CHECK_INT(ip.iface, CNI_UNSET);
}

/* parse() with ' for " (the per-node configs below are long enough without escapes). */
static const char *parseq(const char *json)
{
	static char buf[4096];
	size_t i;

	for (i = 0; json[i] && i < sizeof(buf) - 1; i++)
		buf[i] = json[i] == '\'' ? '"' : json[i];
	buf[i] = '\0';
	return parse(buf);
}

static void test_exclude_spans(void)
{
	struct ipam_addr a, n;

	/* "a-b" is inclusive; spans may overlap each other and the gateway: capacity counts each address once */
	CHECK_STR(parseq("{'subnet':'10.1.0.0/24','gateway':'10.1.0.1','exclude':"
			 "['10.1.0.10-10.1.0.19','10.1.0.15-10.1.0.24','10.1.0.0-10.1.0.3','10.1.0.24/30','10.1.0.200']}"), "");
	CHECK_INT(conf.n_exclude, 5);
	CHECK_STR(fmt(&conf.exclude[0].start), "10.1.0.10");
	CHECK_STR(fmt(&conf.exclude[0].end), "10.1.0.19");
	CHECK_STR(fmt(&conf.exclude[3].end), "10.1.0.27");
	/* 254 hosts - .1/.2/.3 (.0 is the network) - .10-.27 - .200 */
	CHECK(ipam_capacity(&conf, 0) == 254 - 3 - 18 - 1);
	a = A("10.1.0.9");
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.0.28");
	a = A("10.1.0.19");
	CHECK(!ipam_usable(&conf, 0, &a));
	a = A("10.1.0.254");
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.0.4");
	CHECK_STR(parseq("{'subnet':'fd00::/64','exclude':['fd00::-fd00::7fff:ffff:ffff:ffff']}"), "");
	a.family = 0;
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "fd00::8000:0:0:0");
	CHECK(ipam_capacity(&conf, 0) == ((ipam_u128)1 << 63));
}

static void test_conf_exclude(void)
{
	struct ipam_addr a = A("10.1.0.5"), b = A("10.1.0.9"), six = A("fd00::1"), n;
	int i;

	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/28\"}"), "");
	CHECK(ipam_capacity(&conf, 0) == 14);
	CHECK_INT(ipam_exclude(&conf, &a, &b), 0);
	CHECK(ipam_capacity(&conf, 0) == 9);
	CHECK_INT(ipam_exclude(&conf, &b, &a), -EINVAL);
	CHECK_INT(ipam_exclude(&conf, &a, &six), -EINVAL);
	a = A("10.1.0.4");
	CHECK_INT(ipam_next(&conf, 0, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.1.0.10");
	for (i = conf.n_exclude; i < IPAM_MAX_EXCLUDE; i++)
		CHECK_INT(ipam_exclude(&conf, &six, &six), 0);
	CHECK_INT(ipam_exclude(&conf, &six, &six), -ENOSPC);
	CHECK_INT(conf.n_exclude, IPAM_MAX_EXCLUDE);
	/* every address excluded, span by span: the walk gives up after a bounded number of turns */
	for (i = 0; i < IPAM_MAX_EXCLUDE; i++) {
		a = A("10.1.0.0");
		a.v += (unsigned)i % 16;
		conf.exclude[i].start = conf.exclude[i].end = a;
	}
	CHECK(ipam_capacity(&conf, 0) == 0);
	a.family = 0;
	CHECK_INT(ipam_next(&conf, 0, &a, &n), -ENOSPC);
}

static void test_node_name_sources(void)
{
	struct utsname u;
	char host[sizeof(u.nodename)];
	size_t i;

	CHECK(ipam_valid_node_name("gpu-node-07.rack3.example.com"));
	CHECK(ipam_valid_node_name("a"));
	CHECK(ipam_valid_node_name("10.0.0.1"));
	CHECK(!ipam_valid_node_name(""));
	CHECK(!ipam_valid_node_name("GPU-node"));
	CHECK(!ipam_valid_node_name("node_7"));
	CHECK(!ipam_valid_node_name("-node"));
	CHECK(!ipam_valid_node_name("node-"));
	CHECK(!ipam_valid_node_name("a..b"));
	CHECK(!ipam_valid_node_name("a.-b"));
	CHECK(!ipam_valid_node_name("a-.b"));
	CHECK(!ipam_valid_node_name("node/x"));
	{
		char long_name[255];

		memset(long_name, 'a', sizeof(long_name));
		long_name[253] = '\0';
		CHECK(ipam_valid_node_name(long_name));
		long_name[253] = 'a';
		long_name[254] = '\0';
		CHECK(!ipam_valid_node_name(long_name));
	}

	setenv("NODE_NAME", "node-env", 1);
	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\",\"nodeName\":\"node-conf\"}"), "");
	CHECK_STR(conf.node_name, "node-conf");
	CHECK_STR(conf.node_name_from, "ipam.nodeName");
	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\"}"), "");
	CHECK_STR(conf.node_name, "node-env");
	CHECK_STR(conf.node_name_from, "NODE_NAME");
	setenv("MULTUS_NODE_NAME", "node-multus", 1);
	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\"}"), "");
	CHECK_STR(conf.node_name_from, "NODE_NAME");
	setenv("NODE_NAME", "", 1);
	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\"}"), "");
	CHECK_STR(conf.node_name, "node-multus");
	CHECK_STR(conf.node_name_from, "MULTUS_NODE_NAME");
	unsetenv("MULTUS_NODE_NAME");
	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\"}"), "");
	CHECK_STR(conf.node_name_from, "the host name");
	unsetenv("NODE_NAME");
	/* A config without per-node blocks never needs the host name: not looked up. */
	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\"}"), "");
	CHECK_STR(conf.node_name_from, "the host name");
	CHECK_STR(conf.node_name, "");
	CHECK_INT(uname(&u), 0);
	for (i = 0; u.nodename[i]; i++)
		host[i] = (char)tolower((unsigned char)u.nodename[i]);
	host[i] = '\0';
	/* One with them does (whether this node has a block or not), lowercased as the kubelet does. */
	parseq("{'subnet':'10.1.0.0/24','nodes':{'node-a':'10.1.0.64/26'}}");
	CHECK_STR(conf.node_name_from, "the host name");
	CHECK_STR(conf.node_name, ipam_valid_node_name(host) ? host : "");
	parseq("{'ranges':[[{'subnet':'10.2.0.0/24'}],[{'subnet':'10.3.0.0/24','nodes':{'node-a':'10.3.0.0/26'}}]]}");
	CHECK_STR(conf.node_name, ipam_valid_node_name(host) ? host : "");
	parseq("{'ippool':{'name':'pool1'}}");
	CHECK_STR(conf.node_name, ipam_valid_node_name(host) ? host : "");

	/* a bad ipam.nodeName fails; a bad NODE_NAME only where a node name is needed */
	CHECK_HAS(parse("{\"subnet\":\"10.1.0.0/24\",\"nodeName\":\"Node_A\"}"),
		  "ipam.nodeName: \"Node_A\" is not a Kubernetes node name");
	setenv("NODE_NAME", "Node_A", 1);
	CHECK_STR(parse("{\"subnet\":\"10.1.0.0/24\"}"), "");
	CHECK_STR(conf.node_name, "");
	CHECK_HAS(parseq("{'subnet':'10.1.0.0/24','nodes':{'node-a':'10.1.0.64/26'}}"),
		  "ipam: cannot tell which node this is: $NODE_NAME \"Node_A\" is not a Kubernetes node name");
	CHECK_INT(parse_ret, -ENOENT);
	CHECK_HAS(parseq("{'ippool':{'name':'pool1'}}"), "ipam.ippool: cannot tell which node this is");
	unsetenv("NODE_NAME");
}

static void test_node_blocks(void)
{
	const struct ipam_range *r;
	struct ipam_addr a;
	const char *two = "{'ranges':[[{'subnet':'10.2.0.0/16','rangeStart':'10.2.0.1','rangeEnd':'10.2.3.254',"
			  "'gateway':'10.2.0.1','nodes':{'node-a':'10.2.1.0/24',"
			  "'node-b':{'rangeStart':'10.2.2.10','rangeEnd':'10.2.2.19','exclude':['10.2.2.12','10.2.2.14-10.2.2.15']}}}]]}";

	setenv("NODE_NAME", "node-a", 1);
	CHECK_STR(parseq(two), "");
	CHECK_INT(conf.sets[0].n, 1);
	r = &conf.sets[0].r[0];
	CHECK_STR(fmt(&r->start), "10.2.1.0");
	CHECK_STR(fmt(&r->end), "10.2.1.255");
	CHECK_STR(fmt(&r->subnet.addr), "10.2.0.0");
	CHECK_INT(r->subnet.len, 16);
	CHECK(r->has_gw);
	CHECK_STR(fmt(&r->gw), "10.2.0.1");
	/* inside a /16, the .0 and .255 of a /24 block are hosts */
	CHECK(ipam_capacity(&conf, 0) == 256);
	CHECK_INT(conf.n_exclude, 0);
	a = A("10.2.1.0");
	CHECK(ipam_usable(&conf, 0, &a));
	a = A("10.2.2.10");
	CHECK(!ipam_usable(&conf, 0, &a));
	CHECK_INT(ipam_set_of(&conf, &a), -1);
	a = A("10.2.0.5");
	CHECK(!ipam_usable(&conf, 0, &a));

	setenv("NODE_NAME", "node-b", 1);
	CHECK_STR(parseq(two), "");
	r = &conf.sets[0].r[0];
	CHECK_STR(fmt(&r->start), "10.2.2.10");
	CHECK_STR(fmt(&r->end), "10.2.2.19");
	/* the block's own exclusions apply on this node only */
	CHECK_INT(conf.n_exclude, 2);
	CHECK(ipam_capacity(&conf, 0) == 10 - 3);
	a = A("10.2.2.12");
	CHECK(!ipam_usable(&conf, 0, &a));
	a = A("10.2.1.7");
	CHECK(!ipam_usable(&conf, 0, &a));

	/* the gateway and ipam.exclude apply inside a block */
	CHECK_STR(parseq("{'subnet':'10.3.0.0/24','rangeStart':'10.3.0.0','gateway':'10.3.0.65','exclude':['10.3.0.70-10.3.0.79'],"
			 "'nodes':{'node-a':'10.3.0.0/26','node-b':'10.3.0.64/26'}}"), "");
	CHECK_STR(fmt(&conf.sets[0].r[0].start), "10.3.0.64");
	CHECK(ipam_capacity(&conf, 0) == 64 - 1 - 10);
	a = A("10.3.0.65");
	CHECK(!ipam_usable(&conf, 0, &a));
	a = A("10.3.0.75");
	CHECK(!ipam_usable(&conf, 0, &a));
	a = A("10.3.0.127");
	CHECK(ipam_usable(&conf, 0, &a));
	unsetenv("NODE_NAME");
}

static void test_node_walk_stays_in_block(void)
{
	struct ipam_addr a, first, lo = A("10.4.0.64"), hi = A("10.4.0.127");
	ipam_u128 cap, i;
	int seen = 0;

	setenv("NODE_NAME", "node-b", 1);
	CHECK_STR(parseq("{'ranges':[[{'subnet':'10.4.0.0/24','rangeStart':'10.4.0.0','gateway':'10.4.0.1',"
			 "'nodes':{'node-a':'10.4.0.0/26','node-b':{'rangeStart':'10.4.0.64','rangeEnd':'10.4.0.127','exclude':['10.4.0.64/28']}}}]]}"), "");
	cap = ipam_capacity(&conf, 0);
	CHECK(cap == 48);
	a.family = 0;
	CHECK_INT(ipam_next(&conf, 0, &a, &first), 0);
	CHECK_STR(fmt(&first), "10.4.0.80");
	a = first;
	/* one full cycle and then some: every address in the block, usable, and back to the first */
	for (i = 0; i < cap + 3; i++) {
		CHECK_INT(ipam_next(&conf, 0, &a, &a), 0);
		if (ipam_addr_cmp(&a, &lo) < 0 || ipam_addr_cmp(&a, &hi) > 0 || !ipam_usable(&conf, 0, &a)) {
			fprintf(stderr, "  walk left the block: %s\n", fmt(&a));
			CHECK(0);
			break;
		}
		seen += ipam_addr_cmp(&a, &first) == 0;
	}
	CHECK_INT(seen, 1);
	/* a walk from an address of another node's block starts at this node's first */
	a = A("10.4.0.10");
	CHECK_INT(ipam_next(&conf, 0, &a, &a), 0);
	CHECK_STR(fmt(&a), "10.4.0.80");
	unsetenv("NODE_NAME");
}

static void test_node_ranges_dropped(void)
{
	struct cni_ip ip;
	struct ipam_addr a;
	const char *c = "{'ranges':[[{'subnet':'10.5.0.0/24','rangeStart':'10.5.0.0','gateway':'10.5.0.1','nodes':{'node-a':'10.5.0.0/25','node-b':'10.5.0.128/26'}},"
			"{'subnet':'10.6.0.0/24','rangeStart':'10.6.0.0','rangeEnd':'10.6.0.255','gateway':'10.6.0.1','nodes':{'node-a':'10.6.0.128/25','node-c':'10.6.0.0/25'}}],"
			"[{'subnet':'fd00:5::/64','nodes':{'node-a':'fd00:5::1000/120','node-b':'fd00:5::100/120','node-c':'fd00:5::200/120'}}]]}";

	setenv("NODE_NAME", "node-b", 1);
	CHECK_STR(parseq(c), "");
	CHECK_INT(conf.n_sets, 2);
	CHECK_INT(conf.sets[0].n, 1);
	CHECK_INT(conf.sets[0].n_off, 1);
	CHECK_STR(fmt(&conf.sets[0].off[0].subnet.addr), "10.6.0.0");
	CHECK_STR(fmt(&conf.sets[1].r[0].start), "fd00:5::100");
	CHECK(ipam_capacity(&conf, 0) == 64);
	CHECK(ipam_capacity(&conf, 1) == 256);
	/* a reservation made before the block moved out of 10.6.0.0/24 is still described */
	a = A("10.6.0.7");
	CHECK(!ipam_usable(&conf, 0, &a));
	CHECK_INT(ipam_result_ip(&conf, 0, &a, &ip), 0);
	CHECK_STR(ip.address, "10.6.0.7/24");
	CHECK_STR(ip.gateway, "10.6.0.1");
	/* ... and one outside this node's block in its own range */
	a = A("10.5.0.9");
	CHECK_INT(ipam_result_ip(&conf, 0, &a, &ip), 0);
	CHECK_STR(ip.address, "10.5.0.9/24");
	a = A("10.7.0.9");
	CHECK_INT(ipam_result_ip(&conf, 0, &a, &ip), -EINVAL);
	/* the gateway of a dropped range is still not handed out */
	CHECK_STR(parseq("{'ranges':[[{'subnet':'10.8.0.0/16','rangeStart':'10.8.0.0','rangeEnd':'10.8.0.255','gateway':'10.8.1.1',"
			 "'nodes':{'node-a':'10.8.0.0/25'}},{'subnet':'10.8.0.0/16','rangeStart':'10.8.1.0','rangeEnd':'10.8.1.255','gateway':'10.8.1.1',"
			 "'nodes':{'node-b':'10.8.1.0/24'}}]]}"), "");
	CHECK_INT(conf.sets[0].n, 1);
	CHECK(ipam_capacity(&conf, 0) == 255);
	a = A("10.8.1.1");
	CHECK(!ipam_usable(&conf, 0, &a));
	unsetenv("NODE_NAME");
}

static void test_node_errors(void)
{
	setenv("NODE_NAME", "node-c", 1);
	/* an unlisted node: code 7, the field, the name, where it came from, the fix; -ENOENT so DEL can go on */
	CHECK_HAS(parseq("{'ranges':[[{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26','node-b':'10.2.0.128/26'}}]],"
			 "'dataDir':'/srv/ipam'}"),
		  "ipam.ranges[0]: node \"node-c\" (the name from $NODE_NAME) has no block in \"nodes\"; add one");
	CHECK_INT(parse_ret, -ENOENT);
	CHECK_STR(conf.data_dir, "/srv/ipam");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26'},'nodeName':'node-d'}"),
		  "ipam: node \"node-d\" (the name from ipam.nodeName) has no block in \"nodes\"");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26'},'nodeName':'node-d'}"),
		  "or correct ipam.nodeName");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26'}}"), "or correct NODE_NAME");
	unsetenv("NODE_NAME");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-zz-not-this-host':'10.2.0.64/26'}}"),
		  "(the name from the host name)");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-zz-not-this-host':'10.2.0.64/26'}}"),
		  "or set NODE_NAME (from spec.nodeName)");
	setenv("NODE_NAME", "node-a", 1);

	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26','node-b':'10.2.0.60-10.2.0.70'}}"),
		  "ipam.nodes.node-b: not a CIDR");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26','node-b':{'rangeStart':'10.2.0.60','rangeEnd':'10.2.0.70'}}}"),
		  "ipam: the blocks of nodes \"node-b\" (10.2.0.60-10.2.0.70) and \"node-a\" (10.2.0.64-10.2.0.127) overlap");
	CHECK_INT(parse_ret, -EINVAL);
	/* a CIDR block is the part of it the range holds: at the subnet's edge, as people write it */
	CHECK_STR(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.0/26'}}"), "");
	CHECK_STR(fmt(&conf.sets[0].r[0].start), "10.2.0.1");
	CHECK_STR(fmt(&conf.sets[0].r[0].end), "10.2.0.63");
	CHECK_STR(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.192/26'}}"), "");
	CHECK_STR(fmt(&conf.sets[0].r[0].end), "10.2.0.254");
	CHECK_STR(parseq("{'ranges':[[{'subnet':'10.2.0.0/24','rangeEnd':'10.2.0.99','nodes':{'node-a':'10.2.0.64/26'}}]]}"), "");
	CHECK_STR(fmt(&conf.sets[0].r[0].start), "10.2.0.64");
	CHECK_STR(fmt(&conf.sets[0].r[0].end), "10.2.0.99");
	/* ... but one that misses the range, and an explicit block past it, are refused */
	CHECK_HAS(parseq("{'ranges':[[{'subnet':'10.2.0.0/24','rangeEnd':'10.2.0.99','nodes':{'node-a':'10.2.0.128/26'}}]]}"),
		  "ipam.ranges[0][0].nodes.node-a: block 10.2.0.128-10.2.0.191 is outside the range 10.2.0.1-10.2.0.99");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':{'rangeStart':'10.2.0.0','rangeEnd':'10.2.0.9'}}}"),
		  "ipam.nodes.node-a: block 10.2.0.0-10.2.0.9 is outside the range 10.2.0.1-10.2.0.254");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'fd00::/120'}}"), "is outside the range");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':{'rangeStart':'10.2.0.9'}}}"),
		  "ipam.nodes.node-a.rangeEnd: is required");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':{'rangeStart':'10.2.0.9','rangeEnd':'10.2.0.5'}}}"),
		  "ipam.nodes.node-a.rangeStart: 10.2.0.9 is after rangeEnd 10.2.0.5");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':{'rangeStart':'10.2.0.9','rangeEnd':'10.2.0.15','exlude':[]}}}"),
		  "ipam.nodes.node-a.exlude: unknown key; did you mean \"exclude\"?");
	/* another node's exclusions are checked on every node */
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26','node-b':{'rangeStart':'10.2.0.9','rangeEnd':'10.2.0.15','exclude':['x']}}}"),
		  "ipam.nodes.node-b.exclude[0]: want an address, a CIDR or a range");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'Node-B':'10.2.0.64/26'}}"),
		  "ipam.nodes: \"Node-B\" is not a Kubernetes node name");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26','node-a':'10.2.0.128/26'}}"),
		  "ipam.nodes: \"node-a\" is listed twice");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':{}}"), "ipam.nodes: want an object");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','nodes':['node-a']}"), "ipam.nodes: want an object");
	CHECK_HAS(parseq("{'nodes':{'node-a':'10.2.0.64/26'}}"), "ipam.subnet: missing (nodes needs it");
	/* every range of a set has blocks, or none */
	CHECK_HAS(parseq("{'ranges':[[{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26'}},{'subnet':'10.3.0.0/24'}]]}"),
		  "ipam.ranges[0][1]: has no \"nodes\" while ipam.ranges[0][0] has them");
	/* ... but sets are independent */
	CHECK_STR(parseq("{'ranges':[[{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26'}}],[{'subnet':'fd00::/64'}]]}"), "");
	/* whole ranges may not overlap even where this node's blocks do not */
	CHECK_HAS(parseq("{'ranges':[[{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.64/26'}}],[{'subnet':'10.2.0.0/24','nodes':{'node-a':'10.2.0.128/26'}}]]}"),
		  "ipam.ranges[1][0]: range 10.2.0.1-10.2.0.254 overlaps ipam.ranges[0][0]");
	CHECK_HAS(parseq("{'subnet':'10.2.0.0/24','gateway':'10.2.0.65','exclude':['10.2.0.64-10.2.0.127'],'nodes':{'node-a':'10.2.0.64/26'}}"),
		  "ipam: no usable address in the block of node \"node-a\"");
	unsetenv("NODE_NAME");
}

static void test_ippool_key(void)
{
	struct ipam_addr a = A("10.1.0.5"), n;
	struct cni_ip ip;

	setenv("NODE_NAME", "node-a", 1);
	CHECK_STR(parseq("{'ippool':{'name':'pool1'},'exclude':['10.1.0.7']}"), "");
	CHECK(conf.cluster);
	CHECK_INT(conf.n_sets, 1);
	CHECK_INT(conf.sets[0].n, 0);
	CHECK_INT(conf.n_exclude, 1);
	CHECK_STR(conf.node_name, "node-a");
	/* a set of 0 ranges is safe everywhere */
	CHECK_INT(ipam_set_of(&conf, &a), -1);
	CHECK(ipam_capacity(&conf, 0) == 0);
	CHECK(!ipam_usable(&conf, 0, &a));
	CHECK(ipam_range_of(&conf, 0, &a) == NULL);
	CHECK_INT(ipam_next(&conf, 0, &a, &n), -ENOSPC);
	a.family = 0;
	CHECK_INT(ipam_next(&conf, 0, &a, &n), -ENOSPC);
	CHECK_INT(ipam_result_ip(&conf, 0, &a, &ip), -EINVAL);

	CHECK_STR(parseq("{'ippool':[{'name':'v4'},{'name':'v6'}]}"), "");
	CHECK_INT(conf.n_sets, 2);
	CHECK_STR(parseq("{'ippool':[{'name':'v4'}]}"), "");
	CHECK_INT(conf.n_sets, 1);
	CHECK_STR(parseq("{'subnet':'10.1.0.0/24'}"), "");
	CHECK(!conf.cluster);
	CHECK_HAS(parseq("{'ippool':[]}"), "ipam.ippool: want an object");
	CHECK_HAS(parseq("{'ippool':[{},{},{}]}"), "ipam.ippool: want an object");
	CHECK_HAS(parseq("{'ippool':['pool1']}"), "ipam.ippool: want an object");
	CHECK_HAS(parseq("{'ippool':'pool1'}"), "ipam.ippool: want an object");
	CHECK_HAS(parseq("{'ippool':{'name':'p'},'subnet':'10.1.0.0/24'}"), "ipam.ippool: cannot be combined with ipam.subnet");
	CHECK_HAS(parseq("{'ippool':{'name':'p'},'ranges':[]}"), "ipam.ippool: cannot be combined with ipam.ranges");
	CHECK_HAS(parseq("{'ippool':{'name':'p'},'rangeStart':'10.1.0.1'}"), "with ipam.rangeStart");
	CHECK_HAS(parseq("{'ippool':{'name':'p'},'rangeEnd':'10.1.0.1'}"), "with ipam.rangeEnd");
	CHECK_HAS(parseq("{'ippool':{'name':'p'},'gateway':'10.1.0.1'}"), "with ipam.gateway");
	CHECK_HAS(parseq("{'ippool':{'name':'p'},'nodes':{}}"), "with ipam.nodes");
	CHECK_HAS(parseq("{'ippool':{'name':'p'},'dataDir':'rel'}"), "ipam.dataDir");
	unsetenv("NODE_NAME");
}

/* What the module that reads cluster pools does: parse "ippool", fill the sets, finish. */
static void fill(int s, const char *subnet, const char *start, const char *end, const char *gw)
{
	struct ipam_range *r = &conf.sets[s].r[conf.sets[s].n++];

	memset(r, 0, sizeof(*r));
	if (ipam_prefix_parse(subnet, &r->subnet) < 0)
		fprintf(stderr, "  bad test subnet %s\n", subnet);
	if (start)
		r->start = A(start);
	if (end)
		r->end = A(end);
	if (gw) {
		r->gw = A(gw);
		r->has_gw = true;
	}
}

static const char *finish(void)
{
	static struct cni_error err;

	memset(&err, 0, sizeof(err));
	if (ipam_conf_finish(&conf, &err) == 0)
		return "";
	return err.code == CNI_ERR_INVALID_CONFIG ? err.msg : "error code is not 7";
}

static void test_conf_finish(void)
{
	struct ipam_addr a, n;

	setenv("NODE_NAME", "node-a", 1);
	CHECK_STR(parseq("{'ippool':[{'name':'v4'},{'name':'v6'}]}"), "");
	fill(0, "10.9.0.0/16", "10.9.4.0", "10.9.4.255", "10.9.0.1");
	fill(1, "fd00:9::/64", NULL, NULL, NULL);
	CHECK_STR(finish(), "");
	CHECK(ipam_capacity(&conf, 0) == 256);
	CHECK_STR(fmt(&conf.sets[1].r[0].start), "fd00:9::1");
	CHECK_STR(fmt(&conf.sets[1].r[0].end), "fd00:9::ffff:ffff:ffff:ffff");
	a = A("10.9.4.200");
	CHECK_INT(ipam_set_of(&conf, &a), 0);

	CHECK_STR(parseq("{'ippool':{'name':'v4'}}"), "");
	fill(0, "10.9.0.0/24", NULL, NULL, "10.9.0.1");
	CHECK_STR(finish(), "");
	CHECK_STR(fmt(&conf.sets[0].r[0].start), "10.9.0.1");
	CHECK_STR(fmt(&conf.sets[0].r[0].end), "10.9.0.254");
	CHECK(ipam_capacity(&conf, 0) == 253);

	/* a /31 and a /32 hand out every address (RFC 3021) */
	CHECK_STR(parseq("{'ippool':[{'name':'a'},{'name':'b'}]}"), "");
	fill(0, "10.9.0.4/31", NULL, NULL, NULL);
	fill(1, "10.9.0.9/32", NULL, NULL, NULL);
	CHECK_STR(finish(), "");
	CHECK(ipam_capacity(&conf, 0) == 2);
	CHECK(ipam_capacity(&conf, 1) == 1);
	a.family = 0;
	CHECK_INT(ipam_next(&conf, 1, &a, &n), 0);
	CHECK_STR(fmt(&n), "10.9.0.9");

	CHECK_STR(parseq("{'ippool':{'name':'v4'}}"), "");
	CHECK_STR(finish(), "range set 0: no range to allocate from");
	fill(0, "10.9.0.0/24", "10.9.1.5", NULL, NULL);
	CHECK_STR(finish(), "range set 0 (10.9.0.0/24): 10.9.1.5 is outside subnet 10.9.0.0/24");
	conf.sets[0].n = 0;
	fill(0, "10.9.0.0/24", "10.9.0.50", "10.9.0.40", NULL);
	CHECK_STR(finish(), "range set 0 (10.9.0.0/24): the range starts at 10.9.0.50, after its end 10.9.0.40");
	conf.sets[0].n = 0;
	fill(0, "10.9.0.0/24", NULL, NULL, "10.8.0.1");
	CHECK_STR(finish(), "range set 0 (10.9.0.0/24): gateway 10.8.0.1 is outside subnet 10.9.0.0/24");
	conf.sets[0].n = 0;
	fill(0, "10.9.0.0/24", NULL, NULL, NULL);
	fill(0, "fd00::/64", NULL, NULL, NULL);
	CHECK_HAS(finish(), "range set 0, range 1 (fd00::/64): mixes IPv4 and IPv6");
	conf.sets[0].n = 0;
	fill(0, "10.9.0.0/30", NULL, NULL, "10.9.0.1");
	CHECK_STR(finish(), "");
	CHECK(ipam_capacity(&conf, 0) == 1);
	a = A("10.9.0.2");
	CHECK_INT(ipam_exclude(&conf, &a, &a), 0);
	CHECK_HAS(finish(), "range set 0 (10.9.0.0/30): no usable address");

	CHECK_STR(parseq("{'ippool':[{'name':'a'},{'name':'b'}]}"), "");
	fill(0, "10.9.0.0/24", NULL, NULL, NULL);
	fill(1, "10.9.0.128/25", NULL, NULL, NULL);
	CHECK_HAS(finish(), "range set 1 (10.9.0.128/25): range 10.9.0.129-10.9.0.254 overlaps range set 0 (10.9.0.0/24)");
	unsetenv("NODE_NAME");
}

int main(void)
{
	RUN(test_defaults_and_shorthand);
	RUN(test_dual_stack);
	RUN(test_iteration_wraps_over_ranges);
	RUN(test_skips_gateway_network_broadcast);
	RUN(test_exclusions);
	RUN(test_config_errors);
	RUN(test_routes_dns);
	RUN(test_resolv_conf);
	RUN(test_result_ip);
	RUN(test_exclude_spans);
	RUN(test_conf_exclude);
	RUN(test_node_name_sources);
	RUN(test_node_blocks);
	RUN(test_node_walk_stays_in_block);
	RUN(test_node_ranges_dropped);
	RUN(test_node_errors);
	RUN(test_ippool_key);
	RUN(test_conf_finish);
	return check_summary();
}
