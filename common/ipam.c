/* SPDX-License-Identifier: Apache-2.0 */
#include "ipam.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static bool addr_eq(const struct ipam_addr *a, const struct ipam_addr *b)
{
	return ipam_addr_cmp(a, b) == 0;
}


const struct ipam_range *ipam_range_of(const struct ipam_conf *c, int s, const struct ipam_addr *a)
{
	const struct ipam_set *set = &c->sets[s];
	int i;

	for (i = 0; i < set->n; i++)
		if (a->family == set->r[i].start.family &&
		    ipam_addr_cmp(a, &set->r[i].start) >= 0 && ipam_addr_cmp(a, &set->r[i].end) <= 0)
			return &set->r[i];
	return NULL;
}

int ipam_set_of(const struct ipam_conf *c, const struct ipam_addr *a)
{
	int s;

	for (s = 0; s < c->n_sets; s++)
		if (ipam_range_of(c, s, a))
			return s;
	return -1;
}

/* Runs body on every gateway of the config, those of ranges without this node's block too. */
#define FOR_EACH_GW(c, s, i, gw, body) do {					\
	for (s = 0; s < (c)->n_sets; s++) {					\
		for (i = 0; i < (c)->sets[s].n; i++)				\
			if ((c)->sets[s].r[i].has_gw) {				\
				gw = &(c)->sets[s].r[i].gw;			\
				body;						\
			}							\
		for (i = 0; i < (c)->sets[s].n_off; i++)			\
			if ((c)->sets[s].off[i].has_gw) {			\
				gw = &(c)->sets[s].off[i].gw;			\
				body;						\
			}							\
	}									\
} while (0)

static bool is_gateway(const struct ipam_conf *c, const struct ipam_addr *a)
{
	const struct ipam_addr *gw;
	int s, i;

	FOR_EACH_GW(c, s, i, gw, if (addr_eq(gw, a)) return true);
	return false;
}

static int n_gateways(const struct ipam_conf *c)
{
	const struct ipam_addr *gw;
	int s, i, n = 0;

	FOR_EACH_GW(c, s, i, gw, n += gw != NULL);
	return n;
}

static const struct ipam_span *excluded_by(const struct ipam_conf *c, const struct ipam_addr *a)
{
	int i;

	for (i = 0; i < c->n_exclude; i++)
		if (a->family == c->exclude[i].start.family &&
		    ipam_addr_cmp(a, &c->exclude[i].start) >= 0 &&
		    ipam_addr_cmp(a, &c->exclude[i].end) <= 0)
			return &c->exclude[i];
	return NULL;
}

/* An IPv4 subnet's first and last addresses are not hosts', unless it is a /31 or /32. */
static bool has_net_bcast(const struct ipam_prefix *p)
{
	return p->addr.family == AF_INET && p->len < 31;
}

bool ipam_usable(const struct ipam_conf *c, int s, const struct ipam_addr *a)
{
	const struct ipam_range *r = ipam_range_of(c, s, a);
	struct ipam_addr bcast;

	if (!r || is_gateway(c, a) || excluded_by(c, a))
		return false;
	if (has_net_bcast(&r->subnet)) {
		bcast = ipam_prefix_last(&r->subnet);
		if (addr_eq(a, &r->subnet.addr) || addr_eq(a, &bcast))
			return false;
	}
	return true;
}

/* The address after a in set s, wrapping; a outside the set gives the first start. */
static struct ipam_addr step(const struct ipam_set *set, const struct ipam_addr *a)
{
	int i;

	for (i = 0; i < set->n; i++) {
		const struct ipam_range *r = &set->r[i];

		if (a->family != r->start.family || ipam_addr_cmp(a, &r->start) < 0 ||
		    ipam_addr_cmp(a, &r->end) > 0)
			continue;
		if (ipam_addr_cmp(a, &r->end) < 0) {
			struct ipam_addr n = *a;

			n.v++;
			return n;
		}
		return set->r[(i + 1) % set->n].start;
	}
	return set->r[0].start;
}

int ipam_next(const struct ipam_conf *c, int s, const struct ipam_addr *cur, struct ipam_addr *next)
{
	const struct ipam_set *set = &c->sets[s];
	const struct ipam_span *ex;
	const struct ipam_range *r;
	struct ipam_addr cand;
	long turns;

	if (set->n == 0)
		return -ENOSPC;
	/*
	 * Every turn moves forward on the cycle of the set's ranges. In one
	 * lap (n ranges, plus the part of cur's range before cur) an excluded
	 * span is jumped over at most once per range, and a gateway, network
	 * or broadcast address is met once: more turns than that and no
	 * address is usable. A bound, not ipam_capacity: this runs once per
	 * candidate of an allocation.
	 */
	turns = (long)(set->n + 1) * (c->n_exclude + n_gateways(c) + 3);
	cand = ipam_range_of(c, s, cur) ? step(set, cur) : set->r[0].start;
	while (!ipam_usable(c, s, &cand)) {
		if (--turns < 0)
			return -ENOSPC;
		ex = excluded_by(c, &cand);
		r = ipam_range_of(c, s, &cand);
		if (ex)
			cand = ipam_addr_cmp(&ex->end, &r->end) < 0 ? ex->end : r->end;
		cand = step(set, &cand);
	}
	*next = cand;
	return 0;
}

struct span {
	ipam_u128 lo, hi;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void add_point(struct span *sp, int *n, const struct ipam_range *r, ipam_u128 v)
{
	if (v >= r->start.v && v <= r->end.v) {
		if (sp)
			sp[*n].lo = sp[*n].hi = v;
		(*n)++;
	}
}

/* What r skips, clipped to it, into sp (only counted when sp is NULL). */
static int skipped_spans(const struct ipam_conf *c, const struct ipam_range *r, struct span *sp)
{
	const struct ipam_addr *gw;
	ipam_u128 lo, hi;
	int n = 0, s, i;

	for (i = 0; i < c->n_exclude; i++) {
		if (c->exclude[i].start.family != r->start.family)
			continue;
		lo = c->exclude[i].start.v;
		hi = c->exclude[i].end.v;
		if (hi < r->start.v || lo > r->end.v)
			continue;
		if (sp) {
			sp[n].lo = lo < r->start.v ? r->start.v : lo;
			sp[n].hi = hi > r->end.v ? r->end.v : hi;
		}
		n++;
	}
	FOR_EACH_GW(c, s, i, gw, if (gw->family == r->start.family) add_point(sp, &n, r, gw->v));
	if (has_net_bcast(&r->subnet)) {
		add_point(sp, &n, r, r->subnet.addr.v);
		add_point(sp, &n, r, ipam_prefix_last(&r->subnet).v);
	}
	return n;
}

/*
 * Usable addresses of one range: its size minus the union of what is
 * skipped. The spans are counted first and held in an array of that size:
 * one sized for the worst config (16 KiB) put its first entry, and what
 * it calls, on stack pages of their own, a page fault each at every exec.
 */
static ipam_u128 range_capacity(const struct ipam_conf *c, const struct ipam_range *r)
{
	int n = skipped_spans(c, r, NULL), i;
	ipam_u128 size = r->end.v - r->start.v, cover = 0, cur_lo, cur_hi;

	size = size + 1 ? size + 1 : size;
	if (n == 0)
		return size;

	struct span sp[n];

	skipped_spans(c, r, sp);
	qsort(sp, (size_t)n, sizeof(sp[0]), span_cmp);
	cur_lo = sp[0].lo;
	cur_hi = sp[0].hi;
	for (i = 1; i <= n; i++) {
		if (i < n && (cur_hi == ~(ipam_u128)0 || sp[i].lo <= cur_hi + 1)) {
			if (sp[i].hi > cur_hi)
				cur_hi = sp[i].hi;
			continue;
		}
		cover += cur_hi - cur_lo + 1;
		if (i < n) {
			cur_lo = sp[i].lo;
			cur_hi = sp[i].hi;
		}
	}
	return cover >= size ? 0 : size - cover;
}

ipam_u128 ipam_capacity(const struct ipam_conf *c, int s)
{
	ipam_u128 total = 0, n;
	int i;

	for (i = 0; i < c->sets[s].n; i++) {
		n = range_capacity(c, &c->sets[s].r[i]);
		total = total + n < total ? ~(ipam_u128)0 : total + n;
	}
	return total;
}

/* The range describing a: by its window, else by its subnet (also among `off`). */
static const struct ipam_range *range_describing(const struct ipam_conf *c, int s,
						 const struct ipam_addr *a)
{
	const struct ipam_set *set = &c->sets[s];
	const struct ipam_range *r = ipam_range_of(c, s, a);
	int i;

	for (i = 0; !r && i < set->n; i++)
		if (ipam_prefix_contains(&set->r[i].subnet, a))
			r = &set->r[i];
	for (i = 0; !r && i < set->n_off; i++)
		if (ipam_prefix_contains(&set->off[i].subnet, a))
			r = &set->off[i];
	return r;
}

int ipam_result_ip(const struct ipam_conf *c, int s, const struct ipam_addr *a, struct cni_ip *ip)
{
	const struct ipam_range *r = range_describing(c, s, a);
	char buf[IPAM_ADDR_STRLEN];

	if (!r)
		return -EINVAL;
	ipam_addr_format(a, buf, sizeof(buf));
	snprintf(ip->address, sizeof(ip->address), "%s/%d", buf, r->subnet.len);
	ip->gateway[0] = '\0';
	if (r->has_gw)
		ipam_addr_format(&r->gw, ip->gateway, sizeof(ip->gateway));
	ip->iface = CNI_UNSET;
	return 0;
}

int ipam_exclude(struct ipam_conf *c, const struct ipam_addr *start,
		 const struct ipam_addr *end)
{
	if ((start->family != AF_INET && start->family != AF_INET6) ||
	    start->family != end->family || ipam_addr_cmp(start, end) > 0)
		return -EINVAL;
	if (c->n_exclude >= IPAM_MAX_EXCLUDE)
		return -ENOSPC;
	c->exclude[c->n_exclude].start = *start;
	c->exclude[c->n_exclude].end = *end;
	c->n_exclude++;
	return 0;
}
