/* SPDX-License-Identifier: Apache-2.0 */
#include "ipam_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int ipam_family_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static ipam_u128 host_mask(int family, int len)
{
	int host = ipam_family_bits(family) - len;

	if (host >= 128)
		return ~(ipam_u128)0;
	return ((ipam_u128)1 << host) - 1;
}

int ipam_addr_parse(const char *s, struct ipam_addr *a)
{
	unsigned char b[16];
	int i;

	if (!s)
		return -EINVAL;
	if (inet_pton(AF_INET, s, b) == 1) {
		a->family = AF_INET;
		a->v = 0;
		for (i = 0; i < 4; i++)
			a->v = (a->v << 8) | b[i];
		return 0;
	}
	if (inet_pton(AF_INET6, s, b) == 1) {
		a->family = AF_INET6;
		a->v = 0;
		for (i = 0; i < 16; i++)
			a->v = (a->v << 8) | b[i];
		return 0;
	}
	return -EINVAL;
}

void ipam_addr_format(const struct ipam_addr *a, char *buf, size_t len)
{
	unsigned char b[16];
	int n = a->family == AF_INET ? 4 : 16, i;
	ipam_u128 v = a->v;

	for (i = n - 1; i >= 0; i--) {
		b[i] = (unsigned char)(v & 0xff);
		v >>= 8;
	}
	if (!inet_ntop(a->family, b, buf, (socklen_t)len) && len)
		buf[0] = '\0';
}

int ipam_addr_cmp(const struct ipam_addr *a, const struct ipam_addr *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return 0;
}

/* Split "addr/len" into a copy of addr and the length (-1 when absent). */
static int split_cidr(const char *s, char *addr, size_t addr_len, int *len)
{
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	char *end;
	long v;

	if (n == 0 || n >= addr_len)
		return -EINVAL;
	memcpy(addr, s, n);
	addr[n] = '\0';
	*len = -1;
	if (!slash)
		return 0;
	if (slash[1] < '0' || slash[1] > '9' || strlen(slash + 1) > 3)
		return -EINVAL;
	errno = 0;
	v = strtol(slash + 1, &end, 10);
	if (*end || errno)
		return -EINVAL;
	*len = (int)v;
	return 0;
}

int ipam_prefix_parse(const char *s, struct ipam_prefix *p)
{
	char addr[IPAM_ADDR_STRLEN];
	int len;

	if (!s || split_cidr(s, addr, sizeof(addr), &len) < 0 || len < 0)
		return -EINVAL;
	if (ipam_addr_parse(addr, &p->addr) < 0 || len > ipam_family_bits(p->addr.family))
		return -EINVAL;
	p->len = len;
	p->addr.v &= ~host_mask(p->addr.family, len);
	return 0;
}

int ipam_addr_parse_cidr(const char *s, struct ipam_addr *a)
{
	char addr[IPAM_ADDR_STRLEN];
	int len;

	if (!s || split_cidr(s, addr, sizeof(addr), &len) < 0)
		return -EINVAL;
	if (ipam_addr_parse(addr, a) < 0 || len > ipam_family_bits(a->family))
		return -EINVAL;
	return 0;
}

struct ipam_addr ipam_prefix_last(const struct ipam_prefix *p)
{
	struct ipam_addr a = p->addr;

	a.v |= host_mask(a.family, p->len);
	return a;
}

bool ipam_prefix_contains(const struct ipam_prefix *p, const struct ipam_addr *a)
{
	return a->family == p->addr.family &&
	       (a->v & ~host_mask(a->family, p->len)) == p->addr.v;
}

void ipam_prefix_normalize(struct ipam_prefix *p)
{
	p->addr.v &= ~host_mask(p->addr.family, p->len);
}

int ipam_span_parse(const char *s, struct ipam_span *sp)
{
	char a[IPAM_ADDR_STRLEN];
	struct ipam_prefix p;
	const char *dash;
	size_t n;

	if (!s)
		return -EINVAL;
	dash = strchr(s, '-');
	if (dash) {
		n = (size_t)(dash - s);
		if (n == 0 || n >= sizeof(a))
			return -EINVAL;
		memcpy(a, s, n);
		a[n] = '\0';
		if (ipam_addr_parse(a, &sp->start) < 0 || ipam_addr_parse(dash + 1, &sp->end) < 0 ||
		    sp->start.family != sp->end.family || ipam_addr_cmp(&sp->start, &sp->end) > 0)
			return -EINVAL;
		return 0;
	}
	if (!strchr(s, '/')) {
		if (ipam_addr_parse(s, &sp->start) < 0)
			return -EINVAL;
		sp->end = sp->start;
		return 0;
	}
	if (ipam_prefix_parse(s, &p) < 0)
		return -EINVAL;
	sp->start = p.addr;
	sp->end = ipam_prefix_last(&p);
	return 0;
}
