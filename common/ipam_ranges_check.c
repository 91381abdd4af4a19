/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam_ranges, the checks once every set is filled: each range's defaults
 * and bounds, overlaps between ranges, an address left to allocate; for a
 * config's sets (named by their JSON paths) or for sets filled by code
 * (named by their subnets).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "conf.h"
#include "ipam.h"
#include "ipam_ranges.h"
#include "ipam_ranges_int.h"

/* Sets filled by code have no JSON path: "range set 0 (10.0.0.0/24)". */
static void set_name(const struct ipam_conf *c, const char *const *names, int s, char *buf,
		     size_t len)
{
	const struct ipam_set *set = &c->sets[s];
	char net[IPAM_ADDR_STRLEN];

	if (names) {
		snprintf(buf, len, "%s", names[s]);
	} else if (set->n > 0) {
		ipam_addr_format(&set->r[0].subnet.addr, net, sizeof(net));
		snprintf(buf, len, "range set %d (%s/%d)", s, net, set->r[0].subnet.len);
	} else {
		snprintf(buf, len, "range set %d", s);
	}
}

static void range_name(const struct ipam_conf *c, const char *const *names, int s, int i,
		       char *buf, size_t len)
{
	const struct ipam_range *r = &c->sets[s].r[i];
	char net[IPAM_ADDR_STRLEN];

	if (names) {
		snprintf(buf, len, "%s[%d]", names[s], i);
	} else if (c->sets[s].n == 1) {
		set_name(c, names, s, buf, len);
	} else {
		ipam_addr_format(&r->subnet.addr, net, sizeof(net));
		snprintf(buf, len, "range set %d, range %d (%s/%d)", s, i, net, r->subnet.len);
	}
}

/*
 * A range filled by code: defaults, then what parse_range checks in the
 * JSON. Unlike ipam.subnet, an IPv4 /31 or /32 is a subnet of its own
 * (RFC 3021: no network or broadcast address to skip).
 */
static int finish_range(struct ipam_conf *c, const char *const *names, int s, int i,
			struct cni_error *err)
{
	struct ipam_range *r = &c->sets[s].r[i];
	char name[96], a[IPAM_ADDR_STRLEN], b[IPAM_ADDR_STRLEN];
	int fam = r->subnet.addr.family;
	struct ipam_addr last;

	range_name(c, names, s, i, name, sizeof(name));
	if ((fam != AF_INET && fam != AF_INET6) || r->subnet.len < 0 ||
	    r->subnet.len > ipam_family_bits(fam))
		return conf_invalid(err, "%s: the subnet is not an IPv4 or IPv6 prefix", name);
	ipam_prefix_normalize(&r->subnet);
	last = ipam_prefix_last(&r->subnet);
	if (r->start.family == 0) {
		r->start = r->subnet.addr;
		if (fam == AF_INET6 ? r->subnet.len < 128 : r->subnet.len < 31)
			r->start.v++;
	}
	if (r->end.family == 0) {
		r->end = last;
		if (fam == AF_INET && r->subnet.len < 31)
			r->end.v--;
	}
	ipam_addr_format(&r->subnet.addr, b, sizeof(b));
	if (!ipam_prefix_contains(&r->subnet, &r->start) || !ipam_prefix_contains(&r->subnet, &r->end)) {
		ipam_addr_format(ipam_prefix_contains(&r->subnet, &r->start) ? &r->end : &r->start,
				 a, sizeof(a));
		return conf_invalid(err, "%s: %s is outside subnet %s/%d", name, a, b, r->subnet.len);
	}
	if (ipam_addr_cmp(&r->start, &r->end) > 0) {
		ipam_addr_format(&r->start, a, sizeof(a));
		ipam_addr_format(&r->end, b, sizeof(b));
		return conf_invalid(err, "%s: the range starts at %s, after its end %s", name, a, b);
	}
	if (r->has_gw && !ipam_prefix_contains(&r->subnet, &r->gw)) {
		ipam_addr_format(&r->gw, a, sizeof(a));
		return conf_invalid(err, "%s: gateway %s is outside subnet %s/%d", name, a, b,
			       r->subnet.len);
	}
	if (i > 0 && fam != c->sets[s].r[0].subnet.addr.family)
		return conf_invalid(err, "%s: mixes IPv4 and IPv6 in one range set", name);
	return 0;
}

/* Ranges are [start, end] intervals: no address may belong to two of them. */
static int check_overlaps(const struct ipam_conf *c, const char *const *names,
			  struct cni_error *err)
{
	char a[IPAM_ADDR_STRLEN], b[IPAM_ADDR_STRLEN], n1[96], n2[96];
	int s1, i1, s2, i2;

	for (s1 = 0; s1 < c->n_sets; s1++)
		for (i1 = 0; i1 < c->sets[s1].n; i1++)
			for (s2 = s1; s2 < c->n_sets; s2++)
				for (i2 = s2 == s1 ? i1 + 1 : 0; i2 < c->sets[s2].n; i2++) {
					const struct ipam_range *x = &c->sets[s1].r[i1];
					const struct ipam_range *y = &c->sets[s2].r[i2];

					if (x->start.family != y->start.family ||
					    ipam_addr_cmp(&x->end, &y->start) < 0 ||
					    ipam_addr_cmp(&y->end, &x->start) < 0)
						continue;
					ipam_addr_format(&y->start, a, sizeof(a));
					ipam_addr_format(&y->end, b, sizeof(b));
					range_name(c, names, s1, i1, n1, sizeof(n1));
					range_name(c, names, s2, i2, n2, sizeof(n2));
					return conf_invalid(err,
						       "%s: range %s-%s overlaps %s; every address must belong to one range",
						       n2, a, b, n1);
				}
	return 0;
}

static int finish(struct ipam_conf *c, const char *const *names, struct cni_error *err)
{
	char name[96];
	int s, i;

	if (c->n_sets < 1 || c->n_sets > IPAM_MAX_SETS)
		return conf_invalid(err, "ipam: no range set to allocate from");
	for (s = 0; s < c->n_sets; s++) {
		if (c->sets[s].n < 1 || c->sets[s].n > IPAM_MAX_RANGES) {
			set_name(c, names, s, name, sizeof(name));
			return conf_invalid(err, "%s: no range to allocate from", name);
		}
		for (i = 0; i < c->sets[s].n; i++)
			if (finish_range(c, names, s, i, err) < 0)
				return -EINVAL;
	}
	if (check_overlaps(c, names, err) < 0)
		return -EINVAL;
	for (s = 0; s < c->n_sets; s++)
		if (ipam_capacity(c, s) == 0) {
			set_name(c, names, s, name, sizeof(name));
			return conf_invalid(err,
				       "%s: no usable address (the range holds only gateways, network/broadcast or excluded addresses)",
				       name);
		}
	return 0;
}

int ipam_ranges_finish(struct ipam_conf *c, struct cni_error *err)
{
	return finish(c, NULL, err);
}

int ipam_ranges_for_node(struct ipam_conf *c, struct ipam_ranges_ctx *x, struct cni_error *err)
{
	const char *names[IPAM_MAX_SETS];
	char name[96];
	int i, ret;

	for (i = 0; i < c->n_sets; i++)
		names[i] = x->names[i];
	/* Whole ranges first: blocks of two nodes in overlapping ranges would collide. */
	if (check_overlaps(c, names, err) < 0)
		return -EINVAL;
	for (i = 0; i < c->n_sets; i++) {
		if (!x->has_nodes[i])
			continue;
		ret = ipam_ranges_narrow(c, x, i, err);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < c->n_sets; i++)
		if (x->has_nodes[i] && ipam_capacity(c, i) == 0) {
			set_name(c, names, i, name, sizeof(name));
			return conf_invalid(err,
				       "%s: no usable address in the block of node \"%s\" (it holds only gateways, network/broadcast or excluded addresses)",
				       name, c->node_name);
		}
	return finish(c, names, err);
}
