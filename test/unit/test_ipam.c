/* SPDX-License-Identifier: Apache-2.0 */
/* ipam: address math, iteration, capacity and the config parser with its errors. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "ipam.h"

static struct ipam_conf conf;

static struct ipam_addr A(const char *s)
{
	struct ipam_addr a = { 0, 0 };

	if (ipam_addr_parse(s, &a) < 0)
		fprintf(stderr, "  bad test address %s\n", s);
	return a;
}

static const char *fmt(const struct ipam_addr *a)
{
	static char buf[4][IPAM_ADDR_STRLEN];
	static int i;

	i = (i + 1) % 4;
	ipam_addr_format(a, buf[i], sizeof(buf[i]));
	return buf[i];
}

/* Parse an ipam object; returns the error message ("" on success). */
static const char *parse(const char *json)
{
	static struct cni_error err;
	cJSON *j = cJSON_Parse(json);
	int ret;

	memset(&err, 0, sizeof(err));
	if (!j)
		return "test JSON does not parse";
	ret = ipam_conf_parse(j, &conf, &err);
	cJSON_Delete(j);
	if (ret == 0)
		return "";
	if (err.code != CNI_ERR_INVALID_CONFIG)
		return "error code is not 7";
	return err.msg;
}

static void test_addr_parse_format(void)
{
	struct ipam_addr a;

	CHECK_INT(ipam_addr_parse("10.1.2.3", &a), 0);
	CHECK_INT(a.family, AF_INET);
	CHECK(a.v == 0x0a010203);
	CHECK_STR(fmt(&a), "10.1.2.3");
	CHECK_INT(ipam_addr_parse("fd00::1:0:0:5", &a), 0);
	CHECK_INT(a.family, AF_INET6);
	CHECK((uint64_t)a.v == 0x0001000000000005ull && (uint64_t)(a.v >> 64) == 0xfd00000000000000ull);
	CHECK_STR(fmt(&a), "fd00::1:0:0:5");
	CHECK_INT(ipam_addr_parse("FD00:0::0001", &a), 0);
	CHECK_STR(fmt(&a), "fd00::1");
	CHECK(ipam_addr_parse("10.1.2", &a) < 0);
	CHECK(ipam_addr_parse("10.1.2.256", &a) < 0);
	CHECK(ipam_addr_parse("10.1.2.3/24", &a) < 0);
	CHECK(ipam_addr_parse(" 10.1.2.3", &a) < 0);
	CHECK(ipam_addr_parse("", &a) < 0);
	CHECK_INT(ipam_addr_parse_cidr("10.1.2.3/24", &a), 0);
	CHECK_STR(fmt(&a), "10.1.2.3");
	CHECK(ipam_addr_parse_cidr("10.1.2.3/33", &a) < 0);
	CHECK(ipam_addr_parse_cidr("10.1.2.3/", &a) < 0);
}

static void test_prefix_math(void)
{
	struct ipam_prefix p, q;
	struct ipam_addr last, a;

	CHECK_INT(ipam_prefix_parse("10.1.2.77/24", &p), 0);
	CHECK_STR(fmt(&p.addr), "10.1.2.0");
	CHECK_INT(p.len, 24);
	last = ipam_prefix_last(&p);
	CHECK_STR(fmt(&last), "10.1.2.255");
	a = A("10.1.2.200");
	CHECK(ipam_prefix_contains(&p, &a));
	a = A("10.1.3.0");
	CHECK(!ipam_prefix_contains(&p, &a));
	a = A("::ffff:10.1.2.3");
	CHECK(!ipam_prefix_contains(&p, &a));

	CHECK_INT(ipam_prefix_parse("fd00:1::/64", &p), 0);
	last = ipam_prefix_last(&p);
	CHECK_STR(fmt(&last), "fd00:1::ffff:ffff:ffff:ffff");
	CHECK_INT(ipam_prefix_parse("::/0", &q), 0);
	last = ipam_prefix_last(&q);
	CHECK_STR(fmt(&last), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	CHECK(ipam_prefix_overlap(&p, &q));
	CHECK_INT(ipam_prefix_parse("0.0.0.0/0", &q), 0);
	CHECK(!ipam_prefix_overlap(&p, &q));

	CHECK(ipam_prefix_parse("10.1.2.0", &p) < 0);
	CHECK(ipam_prefix_parse("10.1.2.0/33", &p) < 0);
	CHECK(ipam_prefix_parse("fd00::/129", &p) < 0);
	CHECK(ipam_prefix_parse("10.1.2.0/2x", &p) < 0);
	CHECK(ipam_prefix_parse("10.1.2.0/-1", &p) < 0);
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
	CHECK_HAS(parse("[]"), "ipam: missing or not an object");
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

int main(void)
{
	RUN(test_addr_parse_format);
	RUN(test_prefix_math);
	RUN(test_defaults_and_shorthand);
	RUN(test_dual_stack);
	RUN(test_iteration_wraps_over_ranges);
	RUN(test_skips_gateway_network_broadcast);
	RUN(test_exclusions);
	RUN(test_config_errors);
	RUN(test_routes_dns);
	RUN(test_resolv_conf);
	RUN(test_result_ip);
	return check_summary();
}
