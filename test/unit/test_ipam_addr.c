/* SPDX-License-Identifier: Apache-2.0 */
/* ipam_addr: address and prefix text, prefix math and the span forms. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "addr_check.h"
#include "check.h"
#include "ipam_addr.h"

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
	CHECK(ipam_prefix_contains(&q, &p.addr));
	CHECK_INT(ipam_prefix_parse("0.0.0.0/0", &q), 0);
	CHECK(!ipam_prefix_contains(&q, &p.addr));

	CHECK(ipam_prefix_parse("10.1.2.0", &p) < 0);
	CHECK(ipam_prefix_parse("10.1.2.0/33", &p) < 0);
	CHECK(ipam_prefix_parse("fd00::/129", &p) < 0);
	CHECK(ipam_prefix_parse("10.1.2.0/2x", &p) < 0);
	CHECK(ipam_prefix_parse("10.1.2.0/-1", &p) < 0);

	/* A prefix filled by code: only the host bits go. */
	p.addr = A("10.1.2.77");
	p.len = 26;
	ipam_prefix_normalize(&p);
	CHECK_STR(fmt(&p.addr), "10.1.2.64");
	p.addr = A("fd00::1:2");
	p.len = 0;
	ipam_prefix_normalize(&p);
	CHECK_STR(fmt(&p.addr), "::");
	p.addr = A("10.9.9.9");
	p.len = 32;
	ipam_prefix_normalize(&p);
	CHECK_STR(fmt(&p.addr), "10.9.9.9");
}

/* The three forms an exclusion is written in. */
static void test_span_parse(void)
{
	struct ipam_span sp;

	CHECK_INT(ipam_span_parse("10.1.0.7", &sp), 0);
	CHECK_STR(fmt(&sp.start), "10.1.0.7");
	CHECK_STR(fmt(&sp.end), "10.1.0.7");
	CHECK_INT(ipam_span_parse("10.1.0.77/26", &sp), 0);
	CHECK_STR(fmt(&sp.start), "10.1.0.64");
	CHECK_STR(fmt(&sp.end), "10.1.0.127");
	CHECK_INT(ipam_span_parse("10.1.0.10-10.1.0.20", &sp), 0);
	CHECK_STR(fmt(&sp.start), "10.1.0.10");
	CHECK_STR(fmt(&sp.end), "10.1.0.20");
	CHECK_INT(ipam_span_parse("fd00::a-fd00::a", &sp), 0);
	CHECK_INT(ipam_span_parse("10.1.0.20-10.1.0.10", &sp), -EINVAL);
	CHECK_INT(ipam_span_parse("10.1.0.1-fd00::1", &sp), -EINVAL);
	CHECK_INT(ipam_span_parse("-10.1.0.1", &sp), -EINVAL);
	CHECK_INT(ipam_span_parse("10.1.0.1-", &sp), -EINVAL);
	CHECK_INT(ipam_span_parse("10.1.0.0/33", &sp), -EINVAL);
	CHECK_INT(ipam_span_parse("", &sp), -EINVAL);
	CHECK_INT(ipam_span_parse(NULL, &sp), -EINVAL);
}

int main(void)
{
	RUN(test_addr_parse_format);
	RUN(test_prefix_math);
	RUN(test_span_parse);
	return check_summary();
}
