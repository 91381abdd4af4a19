/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link: netdev operations over rtnetlink.
 *
 * Objects (links, addresses, routes, rules) are encoded and decoded by
 * libnl-route-3; what libnl 3.7 cannot express - alternative names, the
 * shaped move - is encoded with libmnl. Both kinds travel through nlio on the one rtnetlink socket
 * of the namespace (see nlio.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <linux/fib_rules.h>
#include "link.h"
#include "link_int.h"
#include "netns.h"
#include "nlio.h"
#include "valid.h"

struct link_sock {
	struct nlio *io;
	bool pod;			/* opened in another namespace: its requests count as the pod's */
};

/* Requests sent, per side: each one takes RTNL, which every attach on the node waits for. */
static unsigned n_host, n_pod;

static void count_request(const struct link_sock *ls)
{
	if (ls->pod)
		n_pod++;
	else
		n_host++;
}

void link_requests(unsigned *host, unsigned *pod)
{
	*host = n_host;
	*pod = n_pod;
}

int link_nle_errno(int nle)
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
	default:		return -EIO;
	}
}

static int sock_new(int netns_fd, struct link_sock **ls)
{
	struct link_sock *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ret = netns_fd < 0 ? nlio_open(NETLINK_ROUTE, &s->io) :
			     nlio_open_in(NETLINK_ROUTE, netns_fd, &s->io);
	if (ret < 0) {
		free(s);
		return ret;
	}
	s->pod = netns_fd >= 0;
	*ls = s;
	return 0;
}

int link_sock_open(struct link_sock **ls)
{
	return sock_new(-1, ls);
}

int link_sock_open_in(int netns_fd, struct link_sock **ls)
{
	if (netns_fd < 0)
		return -EBADF;
	return sock_new(netns_fd, ls);
}

void link_sock_close(struct link_sock *ls)
{
	if (!ls)
		return;
	nlio_close(ls->io);
	free(ls);
}

/* ---- requests ---- */

static int xfer(struct link_sock *ls, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	count_request(ls);
	return nlio_talk(ls->io, nlh, cb, data);
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
		c->err = link_nle_errno(ret);
	return MNL_CB_OK;
}

static int obj_xfer(struct link_sock *ls, struct nlmsghdr *nlh, struct obj_ctx *c)
{
	int ret;

	nlh->nlmsg_flags |= NLM_F_REQUEST;
	ret = xfer(ls, nlh, c ? obj_cb : NULL, c);
	if (ret < 0)
		return link_nle_errno(-nl_syserr2nlerr(ret));
	return c ? c->err : 0;
}

/* Send what libnl built: built is the builder's return, *msg its message (freed here). */
int link_msg_xfer(struct link_sock *ls, int built, struct nl_msg **msg)
{
	int ret;

	if (built < 0)
		return link_nle_errno(built);
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

int link_dump_cache(struct link_sock *ls, const char *kind, uint16_t type, uint8_t family,
		    size_t hdrlen, struct nl_cache **cache)
{
	struct obj_ctx c = { 0 };
	int ret;

	ret = link_nle_errno(nl_cache_alloc_name(kind, &c.cache));
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
int link_dump_each(struct link_sock *ls, uint16_t type, uint8_t family, size_t hdrlen,
		   void (*fn)(struct nl_object *obj, void *arg), void *arg)
{
	struct obj_ctx c = { .fn = fn, .arg = arg };

	return dump(ls, type, family, hdrlen, &c);
}

/* ---- links ---- */

/* Only a 6-byte address is a MAC: IPoIB's is 20 bytes, and leaves info->mac zero. */
void link_info_fill(struct rtnl_link *l, struct link_info *info)
{
	struct nl_addr *a = rtnl_link_get_addr(l);
	const char *alias = rtnl_link_get_ifalias(l);
	unsigned flags = rtnl_link_get_flags(l);

	memset(info, 0, sizeof(*info));
	info->ifindex = rtnl_link_get_ifindex(l);
	snprintf(info->name, sizeof(info->name), "%s", rtnl_link_get_name(l));
	if (a && nl_addr_get_len(a) == 6)
		memcpy(info->mac, nl_addr_get_binary_addr(a), 6);
	info->mtu = (int)rtnl_link_get_mtu(l);
	info->up = flags & IFF_UP;
	info->carrier = flags & IFF_LOWER_UP;
	info->loopback = flags & IFF_LOOPBACK;
	snprintf(info->alias, sizeof(info->alias), "%s", alias ? alias : "");
}

int link_bus_info(struct link_sock *ls, const char *name, char *out, size_t len)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;

	out[0] = '\0';
	if (strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strlen(name));
	ifr.ifr_data = (void *)&di;
	/* Any socket answers for its own namespace: the netlink one is where the link is. */
	if (ioctl(nlio_fd(ls->io), SIOCETHTOOL, &ifr) < 0)
		return errno == EOPNOTSUPP ? 0 : -errno;
	snprintf(out, len, "%.*s", (int)sizeof(di.bus_info), di.bus_info);
	return 0;
}

static void keep_link(struct nl_object *obj, void *arg)
{
	struct rtnl_link **l = arg;

	if (!*l) {
		nl_object_get(obj);
		*l = (struct rtnl_link *)obj;
	}
}

static int get_link(struct link_sock *ls, int ifindex, const char *name, struct rtnl_link **l)
{
	struct obj_ctx c = { .fn = keep_link, .arg = l };
	struct nl_msg *msg;
	int ret;

	*l = NULL;
	ret = link_nle_errno(rtnl_link_build_get_request(ifindex, name, &msg));
	if (ret < 0)
		return ret;
	ret = obj_xfer(ls, nlmsg_hdr(msg), &c);
	nlmsg_free(msg);
	if (ret == 0 && !*l)
		ret = -ENODEV;
	if (ret < 0 && *l) {
		rtnl_link_put(*l);
		*l = NULL;
	}
	return ret;
}

int link_get_by_name(struct link_sock *ls, const char *name, struct link_info *info)
{
	struct rtnl_link *l;
	int ret;

	if (!valid_ifname(name))
		return -EINVAL;
	ret = get_link(ls, 0, name, &l);
	if (ret < 0)
		return ret;
	link_info_fill(l, info);
	rtnl_link_put(l);
	return 0;
}

int link_get_by_index(struct link_sock *ls, int ifindex, struct link_info *info)
{
	struct rtnl_link *l;
	int ret;

	if (ifindex <= 0)
		return -EINVAL;
	ret = get_link(ls, ifindex, NULL, &l);
	if (ret < 0)
		return ret;
	link_info_fill(l, info);
	rtnl_link_put(l);
	return 0;
}

/* Apply the attributes set in `changes` to link ifindex. */
static int change_link(struct link_sock *ls, int ifindex, struct rtnl_link *changes)
{
	struct rtnl_link *orig;
	int ret;

	struct nl_msg *msg;

	ret = get_link(ls, ifindex, NULL, &orig);
	if (ret < 0)
		return ret;
	ret = link_nle_errno(rtnl_link_build_change_request(orig, changes, 0, &msg));
	rtnl_link_put(orig);
	if (ret < 0)
		return ret;
	ret = obj_xfer(ls, nlmsg_hdr(msg), NULL);
	/* As rtnl_link_change: a kernel that takes no RTM_NEWLINK for a change gets RTM_SETLINK. */
	if (ret == -EOPNOTSUPP && nlmsg_hdr(msg)->nlmsg_type == RTM_NEWLINK) {
		nlmsg_hdr(msg)->nlmsg_type = RTM_SETLINK;
		ret = obj_xfer(ls, nlmsg_hdr(msg), NULL);
	}
	nlmsg_free(msg);
	return ret;
}

int link_set_name(struct link_sock *ls, int ifindex, const char *name)
{
	struct rtnl_link *c;
	int ret;

	if (!valid_ifname(name))
		return -EINVAL;
	c = rtnl_link_alloc();
	if (!c)
		return -ENOMEM;
	rtnl_link_set_name(c, name);
	ret = change_link(ls, ifindex, c);
	rtnl_link_put(c);
	return ret;
}

int link_set_mtu(struct link_sock *ls, int ifindex, int mtu)
{
	struct rtnl_link *c;
	int ret;

	if (mtu <= 0)
		return -EINVAL;
	c = rtnl_link_alloc();
	if (!c)
		return -ENOMEM;
	rtnl_link_set_mtu(c, (unsigned)mtu);
	ret = change_link(ls, ifindex, c);
	rtnl_link_put(c);
	return ret;
}

int link_set_mac(struct link_sock *ls, int ifindex, const uint8_t mac[6])
{
	struct rtnl_link *c;
	struct nl_addr *a;
	int ret;

	a = nl_addr_build(AF_LLC, mac, 6);
	if (!a)
		return -ENOMEM;
	c = rtnl_link_alloc();
	if (!c) {
		ret = -ENOMEM;
		goto out_addr;
	}
	rtnl_link_set_addr(c, a);
	ret = change_link(ls, ifindex, c);
	rtnl_link_put(c);
out_addr:
	nl_addr_put(a);
	return ret;
}

int link_set_up(struct link_sock *ls, int ifindex, bool up)
{
	struct rtnl_link *c;
	int ret;

	c = rtnl_link_alloc();
	if (!c)
		return -ENOMEM;
	if (up)
		rtnl_link_set_flags(c, IFF_UP);
	else
		rtnl_link_unset_flags(c, IFF_UP);
	ret = change_link(ls, ifindex, c);
	rtnl_link_put(c);
	return ret;
}

/* ---- raw requests (libmnl) ---- */

const struct nlattr *link_msg_attr(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg))
		if (mnl_attr_get_type(a) == type)
			return a;
	return NULL;
}

struct nlmsghdr *link_msg_hdr(char *buf, size_t size, uint16_t type, int ifindex)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	memset(buf, 0, size);
	nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nlh;
}

int link_down_first(struct link_sock *ls, int ifindex)
{
	return link_set_up_index(ls, ifindex, false);
}

int link_move_shaped(struct link_sock *ls, int ifindex, int netns_fd, const struct link_shape *s)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh;

	if (netns_fd < 0)
		return -EBADF;
	if (!s->name || !s->name[0] || strlen(s->name) >= IFNAMSIZ)
		return -EINVAL;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_SETLINK, ifindex);
	ifi = mnl_nlmsg_get_payload(nlh);
	ifi->ifi_change = IFF_UP;
	ifi->ifi_flags = s->up ? IFF_UP : 0;
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)netns_fd);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, s->name);
	if (s->mac)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, s->mac);
	if (s->mtu > 0)
		mnl_attr_put_u32(nlh, IFLA_MTU, (uint32_t)s->mtu);
	return xfer(ls, nlh, NULL, NULL);
}

struct altnames_ctx {
	char (*names)[128];
	int max;
	int n;
	int ret;
};

static int altnames_cb(const struct nlmsghdr *nlh, void *data)
{
	struct altnames_ctx *ctx = data;
	const struct nlattr *attr, *prop;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(struct ifinfomsg)) {
		if (mnl_attr_get_type(attr) != IFLA_PROP_LIST)
			continue;
		mnl_attr_for_each_nested(prop, attr) {
			if (mnl_attr_get_type(prop) != IFLA_ALT_IFNAME ||
			    mnl_attr_validate(prop, MNL_TYPE_NUL_STRING) < 0)
				continue;
			if (ctx->n >= ctx->max) {
				ctx->ret = -ENOSPC;
				return MNL_CB_OK;
			}
			snprintf(ctx->names[ctx->n++], 128, "%s", mnl_attr_get_str(prop));
		}
	}
	return MNL_CB_OK;
}

int link_altnames(struct link_sock *ls, int ifindex, char names[][128], int max, int *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct altnames_ctx ctx = { .names = names, .max = max };
	struct nlmsghdr *nlh;
	int ret;

	*n = 0;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_GETLINK, ifindex);
	ret = xfer(ls, nlh, altnames_cb, &ctx);
	if (ret < 0)
		return ret;
	*n = ctx.n;
	return ctx.ret;
}

int link_del_altname(struct link_sock *ls, int ifindex, const char *altname)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	size_t len = strlen(altname);

	if (len == 0 || len >= ALTIFNAMSIZ)
		return -EINVAL;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_DELLINKPROP, ifindex);
	nest = mnl_attr_nest_start(nlh, IFLA_PROP_LIST);
	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, altname);
	mnl_attr_nest_end(nlh, nest);
	return xfer(ls, nlh, NULL, NULL);
}

/* ---- one request where the caller knows the link ---- */

int link_set_up_index(struct link_sock *ls, int ifindex, bool up)
{
	char buf[256];
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh;

	if (ifindex <= 0)
		return -EINVAL;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_NEWLINK, ifindex);
	ifi = mnl_nlmsg_get_payload(nlh);
	ifi->ifi_flags = up ? IFF_UP : 0;
	ifi->ifi_change = IFF_UP;
	return xfer(ls, nlh, NULL, NULL);
}

struct link_alt_ctx {
	struct link_info *info;
	struct altnames_ctx alt;
	bool seen;
};

int link_info_parse(const struct nlmsghdr *nlh, struct link_info *info)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;

	memset(info, 0, sizeof(*info));
	if (nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < NLMSG_SPACE(sizeof(*ifi)))
		return -EPROTO;
	info->ifindex = ifi->ifi_index;
	info->up = ifi->ifi_flags & IFF_UP;
	info->carrier = ifi->ifi_flags & IFF_LOWER_UP;
	info->loopback = ifi->ifi_flags & IFF_LOOPBACK;
	mnl_attr_for_each(attr, nlh, sizeof(*ifi)) {
		switch (mnl_attr_get_type(attr)) {
		case IFLA_IFNAME:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				snprintf(info->name, sizeof(info->name), "%s",
					 mnl_attr_get_str(attr));
			break;
		case IFLA_ADDRESS:
			/* Only a 6-byte address is a MAC: IPoIB's is 20 bytes. */
			if (mnl_attr_get_payload_len(attr) == 6)
				memcpy(info->mac, mnl_attr_get_payload(attr), 6);
			break;
		case IFLA_MTU:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
				info->mtu = (int)mnl_attr_get_u32(attr);
			break;
		case IFLA_IFALIAS:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				snprintf(info->alias, sizeof(info->alias), "%s",
					 mnl_attr_get_str(attr));
			break;
		}
	}
	return 0;
}

static int link_alt_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_alt_ctx *ctx = data;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	if (link_info_parse(nlh, ctx->info) < 0)
		return MNL_CB_ERROR;
	ctx->seen = true;
	return altnames_cb(nlh, &ctx->alt);
}

int link_get_by_name_alt(struct link_sock *ls, const char *name, struct link_info *info,
			 char names[][128], int max, int *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct link_alt_ctx ctx = { .info = info, .alt = { .names = names, .max = max } };
	struct nlmsghdr *nlh;
	int ret;

	*n = 0;
	if (!name[0] || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_GETLINK, 0);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	ret = xfer(ls, nlh, link_alt_cb, &ctx);
	if (ret < 0)
		return ret;
	if (!ctx.seen)
		return -ENODEV;
	/* More altnames than fit: the caller gets the first max of them. */
	*n = ctx.alt.n;
	return 0;
}
