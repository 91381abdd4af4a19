/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link, layer 3: a link's addresses, routes and policy rules, as
 * libnl-route-3 objects: libnl builds and reads the messages, link_xfer
 * sends them on the link socket and counts them (link_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <linux/neighbour.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <linux/fib_rules.h>
#include "link.h"
#include "link_int.h"

/* ---- libnl-route objects over nlio ---- */

/* A libnl error (NLE_*, either sign) as -errno. */
static int nle_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case 0:			return 0;
	case NLE_EXIST:		return -EEXIST;
	case NLE_OBJ_NOTFOUND:
	case NLE_NODEV:		return -ENODEV;
	case NLE_PERM:		return -EPERM;
	case NLE_NOACCESS:	return -EACCES;
	case NLE_BUSY:		return -EBUSY;
	case NLE_INVAL:		return -EINVAL;
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_RANGE:		return -ERANGE;
	case NLE_AGAIN:		return -EAGAIN;
	case NLE_OPNOTSUPP:	return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:	return -EAFNOSUPPORT;
	case NLE_NOADDR:	return -EADDRNOTAVAIL;
	case NLE_MSGSIZE:	return -EMSGSIZE;
	/* An interrupted dump (NLM_F_DUMP_INTR, EINTR from libmnl): dump() starts it over. */
	case NLE_INTR:		return -EINTR;
	default:		return -EIO;
	}
}

/*
 * libnl-route-3 objects travel as messages libnl builds and parses; nlio
 * carries them. Errors keep the meaning libnl gave them (ENOENT reads as
 * ENODEV, as before).
 */
struct obj_ctx {
	void (*fn)(struct nl_object *obj, void *arg);
	void *arg;
	struct nl_cache *cache;		/* or into a cache */
	int err;
};

static int obj_cb(const struct nlmsghdr *nlh, void *data)
{
	struct obj_ctx *c = data;
	struct nl_msg *msg;
	int ret;

	if (c->err)
		return MNL_CB_OK;
	msg = nlmsg_convert((struct nlmsghdr *)nlh);
	if (!msg) {
		c->err = -ENOMEM;
		return MNL_CB_OK;
	}
	nlmsg_set_proto(msg, NETLINK_ROUTE);
	ret = c->cache ? nl_cache_parse_and_add(c->cache, msg) : nl_msg_parse(msg, c->fn, c->arg);
	nlmsg_free(msg);
	if (ret < 0)
		c->err = nle_errno(ret);
	return MNL_CB_OK;
}

static int obj_xfer(struct link_sock *ls, struct nlmsghdr *nlh, struct obj_ctx *c)
{
	int ret;

	nlh->nlmsg_flags |= NLM_F_REQUEST;
	ret = link_xfer(ls, nlh, c ? obj_cb : NULL, c);
	if (ret < 0)
		return nle_errno(-nl_syserr2nlerr(ret));
	return c ? c->err : 0;
}

/* Send what libnl built: built is the builder's return, *msg its message (freed here). */
static int msg_xfer(struct link_sock *ls, int built, struct nl_msg **msg)
{
	int ret;

	if (built < 0)
		return nle_errno(built);
	ret = obj_xfer(ls, nlmsg_hdr(*msg), NULL);
	nlmsg_free(*msg);
	return ret;
}

/*
 * One dump request, its objects to c (a cache or a function). As libnl
 * did, a dump the kernel reports interrupted (a change meanwhile) starts
 * over: the cache is emptied first; a function sees those objects again.
 */
static int dump(struct link_sock *ls, uint16_t type, uint8_t family, size_t hdrlen,
		struct obj_ctx *c)
{
	char buf[64];
	struct nlmsghdr *nlh;
	int ret, tries = 0;

	do {
		if (c->cache)
			nl_cache_clear(c->cache);
		c->err = 0;
		memset(buf, 0, sizeof(buf));
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = type;
		nlh->nlmsg_flags = NLM_F_DUMP;
		/* rtgenmsg and rtmsg both start with the family. */
		*(uint8_t *)mnl_nlmsg_put_extra_header(nlh, hdrlen) = family;
		ret = obj_xfer(ls, nlh, c);
	} while (ret == -EINTR && ++tries < 10);
	return ret;
}

/* A dump of one kind of object ("route/addr", ...) into a libnl cache. */
static int dump_cache(struct link_sock *ls, const char *kind, uint16_t type, uint8_t family,
		      size_t hdrlen, struct nl_cache **cache)
{
	struct obj_ctx c = { 0 };
	int ret;

	ret = nle_errno(nl_cache_alloc_name(kind, &c.cache));
	if (ret < 0)
		return ret;
	ret = dump(ls, type, family, hdrlen, &c);
	if (ret < 0) {
		nl_cache_free(c.cache);
		return ret;
	}
	*cache = c.cache;
	return 0;
}

/*
 * The same dump, each object handed to fn as it is parsed: a libnl cache
 * refuses a second object with the same key (two routes to one destination
 * in one table, as rails sharing a subnet's route make), and fails the dump.
 */
static int dump_each(struct link_sock *ls, uint16_t type, uint8_t family, size_t hdrlen,
		     void (*fn)(struct nl_object *obj, void *arg), void *arg)
{
	struct obj_ctx c = { .fn = fn, .arg = arg };

	return dump(ls, type, family, hdrlen, &c);
}

/* ---- addresses ---- */

static int parse_cidr(const char *cidr, struct nl_addr **a)
{
	int ret;

	if (!strchr(cidr, '/'))
		return -EINVAL;
	ret = nl_addr_parse(cidr, AF_UNSPEC, a);
	if (ret < 0)
		return ret == -NLE_NOMEM ? -ENOMEM : -EINVAL;
	if (nl_addr_get_family(*a) != AF_INET && nl_addr_get_family(*a) != AF_INET6) {
		/* libnl also parses MAC-like and other families' strings. */
		nl_addr_put(*a);
		return -EINVAL;
	}
	return 0;
}

/* The IPv4 broadcast address host-device and the Go netlink library set too. */
static int v4_broadcast(const struct nl_addr *a, struct nl_addr **brd)
{
	unsigned plen = nl_addr_get_prefixlen(a);
	uint32_t ip, mask;

	memcpy(&ip, nl_addr_get_binary_addr(a), 4);
	mask = plen ? htonl(~0u << (32 - plen)) : 0;
	ip |= ~mask;
	*brd = nl_addr_build(AF_INET, &ip, 4);
	return *brd ? 0 : -ENOMEM;
}

int link_addr_add(struct link_sock *ls, int ifindex, const char *cidr)
{
	struct rtnl_addr *ra;
	struct nl_addr *a, *brd = NULL;
	struct nl_msg *msg;
	int ret;

	ret = parse_cidr(cidr, &a);
	if (ret < 0)
		return ret;
	ra = rtnl_addr_alloc();
	if (!ra) {
		ret = -ENOMEM;
		goto out_a;
	}
	rtnl_addr_set_ifindex(ra, ifindex);
	ret = nle_errno(rtnl_addr_set_local(ra, a));
	if (ret < 0)
		goto out_ra;
	if (nl_addr_get_family(a) == AF_INET && nl_addr_get_prefixlen(a) < 31) {
		ret = v4_broadcast(a, &brd);
		if (ret < 0)
			goto out_ra;
		ret = nle_errno(rtnl_addr_set_broadcast(ra, brd));
		if (ret < 0)
			goto out_brd;
	}
	ret = msg_xfer(ls, rtnl_addr_build_add_request(ra, 0, &msg), &msg);
	if (ret == -EEXIST)
		ret = 0;
out_brd:
	nl_addr_put(brd);
out_ra:
	rtnl_addr_put(ra);
out_a:
	nl_addr_put(a);
	return ret;
}

/*
 * A neighbour entry for the link's own IPv4 address, created with NTF_USE:
 * the kernel resolves it by broadcasting ARP requests whose sender is the
 * address it selects for that target on the link (the address itself when it
 * is primary) and whose target is the address, which is what a gratuitous
 * ARP is. No one answers, so the neighbour timer repeats it mcast_solicit
 * times, retrans_time_ms apart, then marks the entry failed; the first
 * requests are lost while the link has no carrier, the later ones are not.
 * No socket of ours is involved: nothing to close, no grace period waited.
 * State NUD_NONE: a permanent state would exempt the entry from garbage
 * collection.
 */
int link_addr_probe(struct link_sock *ls, int ifindex, const char *cidr)
{
	struct ndmsg ndm = {
		.ndm_family = AF_INET,
		.ndm_ifindex = ifindex,
		.ndm_state = NUD_NONE,
		.ndm_flags = NTF_USE,
	};
	struct nl_addr *a;
	struct nl_msg *msg;
	int ret;

	ret = parse_cidr(cidr, &a);
	if (ret < 0)
		return ret;
	if (nl_addr_get_family(a) != AF_INET || ifindex <= 0) {
		ret = -EINVAL;
		goto out;
	}
	/* libnl's neighbour builder insists on a link-layer address: this has none. */
	msg = nlmsg_alloc_simple(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	if (nlmsg_append(msg, &ndm, sizeof(ndm), NLMSG_ALIGNTO) < 0 ||
	    nla_put_addr(msg, NDA_DST, a) < 0) {
		nlmsg_free(msg);
		ret = -ENOMEM;
		goto out;
	}
	ret = msg_xfer(ls, 0, &msg);
out:
	nl_addr_put(a);
	return ret;
}

int link_addr_has(struct link_sock *ls, int ifindex, const char *cidr, bool *has)
{
	struct nl_cache *cache;
	struct nl_object *obj;
	struct nl_addr *a;
	int ret;

	*has = false;
	ret = parse_cidr(cidr, &a);
	if (ret < 0)
		return ret;
	ret = dump_cache(ls, "route/addr", RTM_GETADDR, AF_UNSPEC, sizeof(struct rtgenmsg), &cache);
	if (ret < 0)
		goto out_a;
	for (obj = nl_cache_get_first(cache); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_addr *ra = (struct rtnl_addr *)obj;
		struct nl_addr *local = rtnl_addr_get_local(ra);

		if (rtnl_addr_get_ifindex(ra) == ifindex && local &&
		    rtnl_addr_get_prefixlen(ra) == (int)nl_addr_get_prefixlen(a) &&
		    nl_addr_get_family(local) == nl_addr_get_family(a) &&
		    nl_addr_get_len(local) == nl_addr_get_len(a) &&
		    !memcmp(nl_addr_get_binary_addr(local), nl_addr_get_binary_addr(a),
			    nl_addr_get_len(a))) {
			*has = true;
			break;
		}
	}
	nl_cache_free(cache);
out_a:
	nl_addr_put(a);
	return ret;
}

/* ---- routes ---- */

static int parse_gw(const char *gw, int family, struct nl_addr **a)
{
	int ret = nl_addr_parse(gw, family, a);

	/* A gateway of the other family than dst does not parse: the same mistake. */
	if (ret < 0)
		return ret == -NLE_NOMEM ? -ENOMEM : -EINVAL;
	if (nl_addr_get_family(*a) != family || strchr(gw, '/')) {
		nl_addr_put(*a);
		return -EINVAL;
	}
	return 0;
}

void link_route_init(struct link_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->mtu = rt->advmss = rt->priority = rt->table = rt->scope = LINK_UNSET;
}

int link_route_add(struct link_sock *ls, int ifindex, const struct link_route *rt)
{
	struct rtnl_route *r;
	struct rtnl_nexthop *nh;
	struct nl_addr *dst, *gw = NULL;
	struct nl_msg *msg;
	int family, ret;

	ret = parse_cidr(rt->dst, &dst);
	if (ret < 0)
		return ret;
	family = nl_addr_get_family(dst);
	if (rt->gw[0]) {
		ret = parse_gw(rt->gw, family, &gw);
		if (ret < 0)
			goto out_dst;
	}
	r = rtnl_route_alloc();
	if (!r) {
		ret = -ENOMEM;
		goto out_gw;
	}
	rtnl_route_set_family(r, (uint8_t)family);
	ret = nle_errno(rtnl_route_set_dst(r, dst));
	if (ret < 0)
		goto out_r;
	rtnl_route_set_table(r, rt->table != LINK_UNSET ? (uint32_t)rt->table : RT_TABLE_MAIN);
	if (rt->scope != LINK_UNSET)
		rtnl_route_set_scope(r, (uint8_t)rt->scope);
	if (rt->priority != LINK_UNSET)
		rtnl_route_set_priority(r, (uint32_t)rt->priority);
	if (rt->mtu != LINK_UNSET && rt->mtu > 0)
		rtnl_route_set_metric(r, RTAX_MTU, (unsigned)rt->mtu);
	if (rt->advmss != LINK_UNSET && rt->advmss > 0)
		rtnl_route_set_metric(r, RTAX_ADVMSS, (unsigned)rt->advmss);
	nh = rtnl_route_nh_alloc();
	if (!nh) {
		ret = -ENOMEM;
		goto out_r;
	}
	rtnl_route_nh_set_ifindex(nh, ifindex);
	if (gw)
		rtnl_route_nh_set_gateway(nh, gw);
	/* The route owns nh from here. */
	rtnl_route_add_nexthop(r, nh);
	ret = msg_xfer(ls, rtnl_route_build_add_request(r, 0, &msg), &msg);
	if (ret == -EEXIST)
		ret = 0;
out_r:
	rtnl_route_put(r);
out_gw:
	nl_addr_put(gw);
out_dst:
	nl_addr_put(dst);
	return ret;
}

static bool nh_matches(struct rtnl_route *r, int ifindex, const struct nl_addr *gw)
{
	struct rtnl_nexthop *nh;
	struct nl_addr *ngw;

	if (rtnl_route_get_nnexthops(r) != 1)
		return false;
	nh = rtnl_route_nexthop_n(r, 0);
	if (rtnl_route_nh_get_ifindex(nh) != ifindex)
		return false;
	ngw = rtnl_route_nh_get_gateway(nh);
	if (!gw)
		return ngw == NULL;
	return ngw && nl_addr_get_len(ngw) == nl_addr_get_len(gw) &&
	       !memcmp(nl_addr_get_binary_addr(ngw), nl_addr_get_binary_addr(gw),
		       nl_addr_get_len(gw));
}

/* rt's destination dst and gateway gw (NULL: none) in its table, on ifindex. */
static bool route_matches(struct rtnl_route *r, const struct link_route *rt, struct nl_addr *dst,
			  const struct nl_addr *gw, int ifindex)
{
	uint32_t table = rt->table != LINK_UNSET ? (uint32_t)rt->table : RT_TABLE_MAIN;
	struct nl_addr *rdst = rtnl_route_get_dst(r);

	/* cmp_prefix compares the shorter prefix only: 0.0.0.0/0 would match anything. */
	if (rtnl_route_get_table(r) != table || !rdst ||
	    nl_addr_get_family(rdst) != nl_addr_get_family(dst) ||
	    nl_addr_get_prefixlen(rdst) != nl_addr_get_prefixlen(dst) ||
	    nl_addr_cmp_prefix(rdst, dst) != 0)
		return false;
	if (rt->priority != LINK_UNSET && rtnl_route_get_priority(r) != (uint32_t)rt->priority)
		return false;
	return nh_matches(r, ifindex, gw);
}

/* The routes a dump looks for, parsed once; found[i] once one matches rts[i]. */
#define ROUTES_WANT_MAX	128
struct routes_want {
	int ifindex, n;
	const struct link_route *rts;
	struct nl_addr *dst[ROUTES_WANT_MAX], *gw[ROUTES_WANT_MAX];
	bool found[ROUTES_WANT_MAX];
};

static void route_seen(struct nl_object *obj, void *arg)
{
	struct routes_want *w = arg;
	int i;

	for (i = 0; i < w->n; i++)
		if (!w->found[i])
			w->found[i] = route_matches((struct rtnl_route *)obj, &w->rts[i], w->dst[i],
						    w->gw[i], w->ifindex);
}

int link_routes_missing(struct link_sock *ls, int ifindex, const struct link_route *rts, int n,
			int *missing)
{
	struct routes_want *w;
	uint8_t family = AF_UNSPEC;
	int i, ret = 0;

	*missing = -1;
	if (n <= 0)
		return 0;
	if (n > ROUTES_WANT_MAX)
		return -E2BIG;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ifindex = ifindex;
	w->rts = rts;
	for (i = 0; i < n && ret == 0; i++, w->n++) {
		ret = parse_cidr(rts[i].dst, &w->dst[i]);
		if (ret == 0 && rts[i].gw[0] &&
		    (ret = parse_gw(rts[i].gw, nl_addr_get_family(w->dst[i]), &w->gw[i])) < 0) {
			nl_addr_put(w->dst[i]);
			w->dst[i] = NULL;
		}
	}
	if (ret < 0)
		goto out;
	/* One family asked for: a dump of it alone; else every family in one dump. */
	family = (uint8_t)nl_addr_get_family(w->dst[0]);
	for (i = 1; i < n; i++)
		if (nl_addr_get_family(w->dst[i]) != family)
			family = AF_UNSPEC;
	/* A dump that starts over shows route_seen a match again: still one. */
	ret = dump_each(ls, RTM_GETROUTE, family, sizeof(struct rtmsg), route_seen, w);
	for (i = 0; ret == 0 && i < n && *missing < 0; i++)
		if (!w->found[i])
			*missing = i;
out:
	for (i = 0; i < w->n; i++) {
		nl_addr_put(w->dst[i]);
		nl_addr_put(w->gw[i]);
	}
	free(w);
	return ret;
}

int link_route_has(struct link_sock *ls, int ifindex, const struct link_route *rt, bool *has)
{
	int missing, ret = link_routes_missing(ls, ifindex, rt, 1, &missing);

	*has = ret == 0 && missing < 0;
	return ret;
}

/* ---- policy routing rules ---- */

/* "10.1.0.5/24" -> the host address 10.1.0.5/32, what a "from" rule matches. */
static int parse_host(const char *cidr, struct nl_addr **a)
{
	int ret = parse_cidr(cidr, a);

	if (ret < 0)
		return ret;
	nl_addr_set_prefixlen(*a, nl_addr_get_family(*a) == AF_INET ? 32 : 128);
	return 0;
}

static struct rtnl_rule *from_rule(struct nl_addr *src, uint32_t table)
{
	struct rtnl_rule *r = rtnl_rule_alloc();

	if (!r)
		return NULL;
	rtnl_rule_set_family(r, nl_addr_get_family(src));
	if (rtnl_rule_set_src(r, src) < 0) {
		rtnl_rule_put(r);
		return NULL;
	}
	rtnl_rule_set_table(r, table);
	rtnl_rule_set_action(r, FR_ACT_TO_TBL);
	return r;
}

int link_rule_add(struct link_sock *ls, const char *cidr, uint32_t table)
{
	struct rtnl_rule *r;
	struct nl_addr *src;
	struct nl_msg *msg;
	bool has;
	int ret;

	ret = link_rule_has(ls, cidr, table, &has);
	if (ret < 0 || has)
		return ret;
	ret = parse_host(cidr, &src);
	if (ret < 0)
		return ret;
	r = from_rule(src, table);
	ret = r ? msg_xfer(ls, rtnl_rule_build_add_request(r, NLM_F_CREATE | NLM_F_EXCL, &msg), &msg) :
		  -ENOMEM;
	if (ret == -EEXIST)
		ret = 0;
	rtnl_rule_put(r);
	nl_addr_put(src);
	return ret;
}

/* Every rule matching `from` cidr's address (any table when table is 0). */
static int rules_from(struct link_sock *ls, const char *cidr, uint32_t table, bool del, bool *has)
{
	struct nl_cache *cache = NULL;
	struct nl_object *o;
	struct nl_addr *src;
	struct nl_msg *msg;
	int ret;

	*has = false;
	ret = parse_host(cidr, &src);
	if (ret < 0)
		return ret;
	ret = dump_cache(ls, "route/rule", RTM_GETRULE, (uint8_t)nl_addr_get_family(src),
			 sizeof(struct rtgenmsg), &cache);
	if (ret < 0)
		goto out;
	for (o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
		struct rtnl_rule *r = (struct rtnl_rule *)o;
		struct nl_addr *rs = rtnl_rule_get_src(r);

		if (!rs || nl_addr_cmp(rs, src) || (table && rtnl_rule_get_table(r) != table))
			continue;
		*has = true;
		if (del && (ret = msg_xfer(ls, rtnl_rule_build_delete_request(r, 0, &msg), &msg)) < 0 &&
		    ret != -ENOENT)
			break;
		ret = 0;
	}
out:
	nl_cache_free(cache);
	nl_addr_put(src);
	return ret;
}

int link_rule_has(struct link_sock *ls, const char *cidr, uint32_t table, bool *has)
{
	return rules_from(ls, cidr, table, false, has);
}

int link_rule_del(struct link_sock *ls, const char *cidr, uint32_t table)
{
	bool had;

	return rules_from(ls, cidr, table, true, &had);
}

int link_rules_missing(struct link_sock *ls, const char *const *cidrs, int n, uint32_t table,
		       int *missing)
{
	struct nl_cache *cache = NULL;
	struct nl_object *o;
	struct nl_addr *src;
	bool has = true;
	int i, ret;

	*missing = -1;
	if (n <= 0)
		return 0;
	ret = dump_cache(ls, "route/rule", RTM_GETRULE, AF_UNSPEC, sizeof(struct rtgenmsg), &cache);
	if (ret < 0)
		return ret;
	for (i = 0; i < n && has; i++) {
		ret = parse_host(cidrs[i], &src);
		if (ret < 0)
			break;
		has = false;
		for (o = nl_cache_get_first(cache); o && !has; o = nl_cache_get_next(o)) {
			struct rtnl_rule *r = (struct rtnl_rule *)o;
			struct nl_addr *rs = rtnl_rule_get_src(r);

			has = rs && !nl_addr_cmp(rs, src) && rtnl_rule_get_table(r) == table;
		}
		nl_addr_put(src);
		if (!has)
			*missing = i;
	}
	nl_cache_free(cache);
	return ret;
}

int link_rule_free_table(struct link_sock *ls, uint32_t first, uint32_t *table)
{
	struct nl_cache *cache = NULL;
	struct nl_object *o;
	uint32_t t;
	bool used;
	int ret;

	ret = dump_cache(ls, "route/rule", RTM_GETRULE, AF_UNSPEC, sizeof(struct rtgenmsg), &cache);
	if (ret < 0)
		return ret;
	/* 252-255 are the kernel's own (compat, default, main, local). */
	for (t = first ? first : 1, used = true; used && t - first < 4096; t++) {
		if (t >= RT_TABLE_COMPAT && t <= RT_TABLE_LOCAL)
			continue;
		used = false;
		for (o = nl_cache_get_first(cache); o && !used; o = nl_cache_get_next(o))
			used = rtnl_rule_get_table((struct rtnl_rule *)o) == t;
	}
	nl_cache_free(cache);
	if (used)
		return -ENOSPC;
	t--;
	*table = t;
	return 0;
}
