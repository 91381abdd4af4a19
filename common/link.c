/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link: netdevs over rtnetlink, encoded and decoded with libmnl.
 *
 * libnl-route 3.7 has no API for alternative names, and a link built or
 * read there costs a look before every change; libmnl says what the
 * kernel takes, byte for byte, and reads any address length (IPoIB's are
 * 20 bytes). Addresses, routes and rules are libnl-route objects in
 * link_ip.c. Every request, of either kind, is counted here and travels
 * through nlio on the one rtnetlink socket of the namespace (see nlio.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include "link.h"
#include "link_int.h"
#include "nlio.h"
#include "valid.h"

/*
 * Linux 5.15's parent attributes (uapi values, fixed): the headers of the
 * oldest release we build on (Debian 11, Linux 5.10) do not have them.
 */
#define LINK_IFLA_PARENT_DEV_NAME	56
#define LINK_IFLA_PARENT_DEV_BUS_NAME	57

struct link_sock {
	struct nlio *io;
	bool pod;			/* opened in another namespace: its requests count as the pod's */
};

/* Requests sent, per side: each one takes RTNL, which every attach on the node waits for. */
static unsigned n_host, n_pod;

void link_requests(unsigned *host, unsigned *pod)
{
	*host = n_host;
	*pod = n_pod;
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

int link_xfer(struct link_sock *ls, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	if (ls->pod)
		n_pod++;
	else
		n_host++;
	return nlio_talk(ls->io, req, cb, data);
}

/* ---- messages ---- */

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
		case LINK_IFLA_PARENT_DEV_NAME:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				snprintf(info->parent_dev, sizeof(info->parent_dev), "%s",
					 mnl_attr_get_str(attr));
			break;
		case LINK_IFLA_PARENT_DEV_BUS_NAME:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				snprintf(info->parent_bus, sizeof(info->parent_bus), "%s",
					 mnl_attr_get_str(attr));
			break;
		}
	}
	return 0;
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

/* ---- reading links ---- */

struct get_ctx {
	struct link_info *info;
	struct altnames_ctx alt;
	bool seen;
};

static int get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct get_ctx *ctx = data;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	if (link_info_parse(nlh, ctx->info) < 0)
		return MNL_CB_ERROR;
	ctx->seen = true;
	return altnames_cb(nlh, &ctx->alt);
}

/*
 * One RTM_GETLINK for link ifindex, or for name when ifindex is 0: the
 * link, and its first max alternative names (*n of them; more than fit
 * are not an error here). -ENODEV when absent.
 */
static int get_link(struct link_sock *ls, int ifindex, const char *name, struct link_info *info,
		    char names[][128], int max, int *n)
{
	char buf[256];
	struct get_ctx ctx = { .info = info, .alt = { .names = names, .max = max } };
	struct nlmsghdr *nlh;
	int ret;

	*n = 0;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_GETLINK, ifindex);
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	ret = link_xfer(ls, nlh, get_cb, &ctx);
	if (ret < 0)
		return ret;
	if (!ctx.seen)
		return -ENODEV;
	*n = ctx.alt.n;
	return 0;
}

int link_get_by_name(struct link_sock *ls, const char *name, struct link_info *info)
{
	int n;

	if (!valid_ifname(name))
		return -EINVAL;
	return get_link(ls, 0, name, info, NULL, 0, &n);
}

int link_get_by_name_alt(struct link_sock *ls, const char *name, struct link_info *info,
			 char names[][128], int max, int *n)
{
	*n = 0;
	if (!name[0] || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	return get_link(ls, 0, name, info, names, max, n);
}

int link_get_by_index(struct link_sock *ls, int ifindex, struct link_info *info)
{
	int n;

	if (ifindex <= 0)
		return -EINVAL;
	return get_link(ls, ifindex, NULL, info, NULL, 0, &n);
}

struct list_ctx {
	struct link_info *links;
	int n, cap;
	int ret;
};

static int list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct list_ctx *ctx = data;
	struct link_info *grown;

	if (nlh->nlmsg_type != RTM_NEWLINK || ctx->ret)
		return MNL_CB_OK;
	if (ctx->n == ctx->cap) {
		grown = realloc(ctx->links, (size_t)(ctx->cap ? ctx->cap * 2 : 8) * sizeof(*grown));
		if (!grown) {
			ctx->ret = -ENOMEM;
			return MNL_CB_OK;
		}
		ctx->links = grown;
		ctx->cap = ctx->cap ? ctx->cap * 2 : 8;
	}
	if (link_info_parse(nlh, &ctx->links[ctx->n]) == 0)
		ctx->n++;
	return MNL_CB_OK;
}

int link_list(struct link_sock *ls, struct link_info **links, int *n)
{
	struct list_ctx ctx = { 0 };
	struct nlmsghdr *nlh;
	char buf[64];
	int ret, tries = 0;

	do {
		ctx.n = 0;
		ctx.ret = 0;
		nlh = link_msg_hdr(buf, sizeof(buf), RTM_GETLINK, 0);
		nlh->nlmsg_flags |= NLM_F_DUMP;
		ret = link_xfer(ls, nlh, list_cb, &ctx);
	/* A dump interrupted by a change to the list (NLM_F_DUMP_INTR) starts over. */
	} while (ret == -EINTR && ++tries < 10);
	if (ret == 0)
		ret = ctx.ret;
	if (ret < 0) {
		free(ctx.links);
		return ret;
	}
	*links = ctx.links;
	*n = ctx.n;
	return 0;
}

int link_altnames(struct link_sock *ls, int ifindex, char names[][128], int max, int *n)
{
	char buf[256];
	struct altnames_ctx ctx = { .names = names, .max = max };
	struct nlmsghdr *nlh;
	int ret;

	*n = 0;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_GETLINK, ifindex);
	ret = link_xfer(ls, nlh, altnames_cb, &ctx);
	if (ret < 0)
		return ret;
	*n = ctx.n;
	return ctx.ret;
}

static const struct link_parent_backend *parent_backend;

void link_set_parent_backend(const struct link_parent_backend *b)
{
	parent_backend = b;
}

/* The bus-info the driver of link `name` reports to ethtool, "" for none. */
static int ethtool_bus_info(struct link_sock *ls, const char *name, char *out, size_t len)
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

int link_parent(struct link_sock *ls, const struct link_info *li, char bus[32], char dev[64])
{
	struct link_info again;
	int ret;

	snprintf(bus, 32, "%s", li->parent_bus);
	snprintf(dev, 64, "%s", li->parent_dev);
	if (dev[0])
		return 0;
	/*
	 * Before 5.15 the kernel names no parent: ethtool asks by name, and a
	 * name can pass to another link between two requests.
	 */
	ret = ethtool_bus_info(ls, li->name, dev, 64);
	if (ret < 0)
		return ret;
	if (dev[0]) {
		ret = link_get_by_name(ls, li->name, &again);
		if (ret < 0 || again.ifindex != li->ifindex) {
			dev[0] = '\0';
			return ret < 0 && ret != -ENODEV ? ret : -EAGAIN;
		}
		return 0;
	}
	return parent_backend ? parent_backend->parent(li, bus, dev) : 0;
}

/* ---- changing links ---- */

/*
 * Each change is one RTM_NEWLINK on a link named by its index; the kernel
 * answers -ENODEV for a link that is not there, so nothing is read first.
 */
int link_set_name(struct link_sock *ls, int ifindex, const char *name)
{
	char buf[256];
	struct nlmsghdr *nlh;

	if (ifindex <= 0 || !valid_ifname(name))
		return -EINVAL;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_NEWLINK, ifindex);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return link_xfer(ls, nlh, NULL, NULL);
}

int link_set_mtu(struct link_sock *ls, int ifindex, int mtu)
{
	char buf[256];
	struct nlmsghdr *nlh;

	if (ifindex <= 0 || mtu <= 0)
		return -EINVAL;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_NEWLINK, ifindex);
	mnl_attr_put_u32(nlh, IFLA_MTU, (uint32_t)mtu);
	return link_xfer(ls, nlh, NULL, NULL);
}

int link_set_mac(struct link_sock *ls, int ifindex, const uint8_t mac[6])
{
	char buf[256];
	struct nlmsghdr *nlh;

	if (ifindex <= 0)
		return -EINVAL;
	nlh = link_msg_hdr(buf, sizeof(buf), RTM_NEWLINK, ifindex);
	mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	return link_xfer(ls, nlh, NULL, NULL);
}

/* IFF_UP set or cleared on the link of ifindex, or (ifindex 0) of name. */
static int set_up(struct link_sock *ls, int ifindex, const char *name, bool up)
{
	char buf[256];
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh;

	nlh = link_msg_hdr(buf, sizeof(buf), RTM_NEWLINK, ifindex);
	ifi = mnl_nlmsg_get_payload(nlh);
	ifi->ifi_flags = up ? IFF_UP : 0;
	ifi->ifi_change = IFF_UP;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return link_xfer(ls, nlh, NULL, NULL);
}

int link_set_up(struct link_sock *ls, int ifindex, bool up)
{
	if (ifindex <= 0)
		return -EINVAL;
	return set_up(ls, ifindex, NULL, up);
}

int link_set_up_named(struct link_sock *ls, const char *name, bool up)
{
	if (!valid_ifname(name))
		return -EINVAL;
	/* Index 0 and a name: the kernel finds the link by it. */
	return set_up(ls, 0, name, up);
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
	return link_xfer(ls, nlh, NULL, NULL);
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
	return link_xfer(ls, nlh, NULL, NULL);
}
