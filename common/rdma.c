/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include "log.h"
#include "nlio.h"
#include "rdma.h"

struct rdma_sock {
	const struct rdma_backend *ops;
	void *priv;			/* the backend's: the kernel's is a struct nlio */
	uint32_t seq;
};

/* ---- encoding ---- */

static struct nlmsghdr *req_put(void *buf, uint32_t seq, int cmd, uint16_t flags)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, RDMA_REQ_BUF);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = seq;
	return nlh;
}

struct nlmsghdr *rdma_req_sys_get(void *buf, uint32_t seq)
{
	return req_put(buf, seq, RDMA_NLDEV_CMD_SYS_GET, 0);
}

struct nlmsghdr *rdma_req_sys_set(void *buf, uint32_t seq, bool exclusive)
{
	struct nlmsghdr *nlh = req_put(buf, seq, RDMA_NLDEV_CMD_SYS_SET, 0);

	/* The attribute says "shared": 1 shared, 0 exclusive (ib_core netns_mode). */
	mnl_attr_put_u8(nlh, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, exclusive ? 0 : 1);
	return nlh;
}

struct nlmsghdr *rdma_req_dev_get(void *buf, uint32_t seq, uint32_t index)
{
	struct nlmsghdr *nlh = req_put(buf, seq, RDMA_NLDEV_CMD_GET, 0);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	return nlh;
}

struct nlmsghdr *rdma_req_dev_dump(void *buf, uint32_t seq)
{
	return req_put(buf, seq, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
}

struct nlmsghdr *rdma_req_port_dump(void *buf, uint32_t seq, uint32_t dev_index)
{
	/* The kernel dumps the ports of one device only: the index is required. */
	struct nlmsghdr *nlh = req_put(buf, seq, RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	return nlh;
}

struct nlmsghdr *rdma_req_dev_set_netns(void *buf, uint32_t seq, uint32_t index, int netns_fd)
{
	struct nlmsghdr *nlh = req_put(buf, seq, RDMA_NLDEV_CMD_SET, 0);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_NET_NS_FD, (uint32_t)netns_fd);
	return nlh;
}

struct nlmsghdr *rdma_req_dev_rename(void *buf, uint32_t seq, uint32_t index, const char *name)
{
	struct nlmsghdr *nlh;

	if (!rdma_dev_name_valid(name))
		return NULL;
	nlh = req_put(buf, seq, RDMA_NLDEV_CMD_SET, 0);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	return nlh;
}

bool rdma_dev_name_valid(const char *name)
{
	size_t i, len;

	if (!name)
		return false;
	len = strlen(name);
	if (len == 0 || len >= RDMA_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* ---- decoding ---- */

static const enum mnl_attr_data_type attr_types[RDMA_NLDEV_ATTR_MAX] = {
	[RDMA_NLDEV_ATTR_DEV_INDEX] = MNL_TYPE_U32,
	[RDMA_NLDEV_ATTR_DEV_NAME] = MNL_TYPE_NUL_STRING,
	[RDMA_NLDEV_ATTR_PORT_INDEX] = MNL_TYPE_U32,
	[RDMA_NLDEV_ATTR_NODE_GUID] = MNL_TYPE_U64,
	[RDMA_NLDEV_ATTR_PORT_STATE] = MNL_TYPE_U8,
	[RDMA_NLDEV_ATTR_PORT_PHYS_STATE] = MNL_TYPE_U8,
	[RDMA_NLDEV_ATTR_DEV_NODE_TYPE] = MNL_TYPE_U8,
	[RDMA_NLDEV_ATTR_NDEV_INDEX] = MNL_TYPE_U32,
	[RDMA_NLDEV_ATTR_NDEV_NAME] = MNL_TYPE_NUL_STRING,
	[RDMA_NLDEV_SYS_ATTR_NETNS_MODE] = MNL_TYPE_U8,
	[RDMA_NLDEV_ATTR_DEV_PROTOCOL] = MNL_TYPE_NUL_STRING,
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	/* Attributes newer than our header are not ours to judge. */
	if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX - 1) < 0)
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, attr_types[type]) < 0)
		return MNL_CB_ERROR;
	tb[type] = attr;
	return MNL_CB_OK;
}

static int attr_parse(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	memset(tb, 0, sizeof(*tb) * RDMA_NLDEV_ATTR_MAX);
	return mnl_attr_parse(nlh, 0, attr_cb, tb) == MNL_CB_OK ? 0 : -EPROTO;
}

static int attr_str(const struct nlattr *a, char *dst, size_t size)
{
	const char *s = mnl_attr_get_str(a);

	if (strlen(s) >= size)
		return -EPROTO;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

/* Every context starts with the first error a callback met. */
struct parse_ctx {
	int err;
};

struct sys_ctx {
	int err;
	bool seen;
	bool *exclusive;
};

struct dev_ctx {
	int err;
	rdma_dev_fn fn;
	void *data;
};

struct port_ctx {
	int err;
	rdma_port_fn fn;
	void *data;
};

static int sys_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct sys_ctx *c = data;

	if (c->err)
		return MNL_CB_OK;
	if (attr_parse(nlh, tb) < 0 || !tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) {
		c->err = -EPROTO;
		return MNL_CB_OK;
	}
	*c->exclusive = mnl_attr_get_u8(tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) == 0;
	c->seen = true;
	return MNL_CB_OK;
}

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct dev_ctx *c = data;
	struct rdma_dev d = { 0 };

	if (c->err)
		return MNL_CB_OK;
	if (attr_parse(nlh, tb) < 0 || !tb[RDMA_NLDEV_ATTR_DEV_INDEX] ||
	    !tb[RDMA_NLDEV_ATTR_DEV_NAME] ||
	    attr_str(tb[RDMA_NLDEV_ATTR_DEV_NAME], d.name, sizeof(d.name)) < 0 ||
	    (tb[RDMA_NLDEV_ATTR_DEV_PROTOCOL] &&
	     attr_str(tb[RDMA_NLDEV_ATTR_DEV_PROTOCOL], d.protocol, sizeof(d.protocol)) < 0)) {
		c->err = -EPROTO;
		return MNL_CB_OK;
	}
	d.index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		d.ports = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_DEV_NODE_TYPE])
		d.node_type = mnl_attr_get_u8(tb[RDMA_NLDEV_ATTR_DEV_NODE_TYPE]);
	if (tb[RDMA_NLDEV_ATTR_NODE_GUID])
		d.node_guid = mnl_attr_get_u64(tb[RDMA_NLDEV_ATTR_NODE_GUID]);
	c->err = c->fn(&d, c->data);
	return MNL_CB_OK;
}

static int port_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct port_ctx *c = data;
	struct rdma_port p = { 0 };

	if (c->err)
		return MNL_CB_OK;
	if (attr_parse(nlh, tb) < 0 || !tb[RDMA_NLDEV_ATTR_DEV_INDEX] ||
	    !tb[RDMA_NLDEV_ATTR_PORT_INDEX] || !tb[RDMA_NLDEV_ATTR_DEV_NAME] ||
	    attr_str(tb[RDMA_NLDEV_ATTR_DEV_NAME], p.dev_name, sizeof(p.dev_name)) < 0 ||
	    (tb[RDMA_NLDEV_ATTR_NDEV_NAME] &&
	     attr_str(tb[RDMA_NLDEV_ATTR_NDEV_NAME], p.ndev_name, sizeof(p.ndev_name)) < 0)) {
		c->err = -EPROTO;
		return MNL_CB_OK;
	}
	p.dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	p.port = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_NDEV_INDEX])
		p.ndev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_NDEV_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_PORT_STATE])
		p.state = mnl_attr_get_u8(tb[RDMA_NLDEV_ATTR_PORT_STATE]);
	if (tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE])
		p.phys_state = mnl_attr_get_u8(tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]);
	c->err = c->fn(&p, c->data);
	return MNL_CB_OK;
}

/* 0 complete, 1 more to come, -errno from the kernel or -EPROTO. */
static int run(const void *buf, size_t len, uint32_t seq, mnl_cb_t cb, struct parse_ctx *ctx)
{
	int ret = nlio_run(buf, len, seq, 0, cb, ctx);

	if (ret >= 0 && ctx->err)
		return ret == 0 ? ctx->err : 1;
	return ret;
}

int rdma_parse_sys(const void *buf, size_t len, uint32_t seq, bool *exclusive)
{
	struct sys_ctx c = { .exclusive = exclusive };
	int ret = run(buf, len, seq, sys_cb, (struct parse_ctx *)&c);

	if (ret == 0 && !c.seen)
		return -EPROTO;
	return ret;
}

int rdma_parse_devs(const void *buf, size_t len, uint32_t seq, rdma_dev_fn fn, void *data)
{
	struct dev_ctx c = { .fn = fn, .data = data };

	return run(buf, len, seq, dev_cb, (struct parse_ctx *)&c);
}

int rdma_parse_ports(const void *buf, size_t len, uint32_t seq, rdma_port_fn fn, void *data)
{
	struct port_ctx c = { .fn = fn, .data = data };

	return run(buf, len, seq, port_cb, (struct parse_ctx *)&c);
}

/* ---- the socket ---- */

static int kernel_open(void **priv)
{
	return nlio_open(NETLINK_RDMA, (struct nlio **)priv);
}

static int kernel_xfer(void *priv, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	return nlio_talk(priv, req, cb, data);
}

static void kernel_close(void *priv)
{
	nlio_close(priv);
}

static const struct rdma_backend kernel_backend = {
	.open = kernel_open,
	.xfer = kernel_xfer,
	.close = kernel_close,
};

static const struct rdma_backend *backend = &kernel_backend;

void rdma_set_backend(const struct rdma_backend *b)
{
	backend = b ? b : &kernel_backend;
}

int rdma_sock_open(struct rdma_sock **out)
{
	struct rdma_sock *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->ops = backend;
	ret = s->ops->open(&s->priv);
	if (ret < 0) {
		free(s);
		return ret;
	}
	s->seq = (uint32_t)time(NULL);
	*out = s;
	return 0;
}

void rdma_sock_close(struct rdma_sock *s)
{
	if (!s)
		return;
	s->ops->close(s->priv);
	free(s);
}

/* Send req and decode every reply through cb: 0, or the first error. */
static int talk(struct rdma_sock *s, struct nlmsghdr *req, mnl_cb_t cb, struct parse_ctx *ctx)
{
	int ret = s->ops->xfer(s->priv, req, cb, ctx);

	return ret == 0 && ctx->err ? ctx->err : ret;
}

int rdma_sys_get_netns_mode(struct rdma_sock *s, bool *exclusive)
{
	char req[RDMA_REQ_BUF];
	struct sys_ctx c = { .exclusive = exclusive };
	int ret;

	ret = talk(s, rdma_req_sys_get(req, ++s->seq), sys_cb, (struct parse_ctx *)&c);
	if (ret == 0 && !c.seen)
		return -EPROTO;
	return ret;
}

int rdma_dev_dump(struct rdma_sock *s, rdma_dev_fn fn, void *data)
{
	char req[RDMA_REQ_BUF];
	struct dev_ctx c = { .fn = fn, .data = data };

	return talk(s, rdma_req_dev_dump(req, ++s->seq), dev_cb, (struct parse_ctx *)&c);
}

struct dev_match {
	const char *name;		/* NULL: take any */
	struct rdma_dev *out;
	bool found;
};

static int dev_match_cb(const struct rdma_dev *dev, void *data)
{
	struct dev_match *m = data;

	if (!m->found && (!m->name || !strcmp(dev->name, m->name))) {
		*m->out = *dev;
		m->found = true;
	}
	return 0;
}

int rdma_dev_get_by_index(struct rdma_sock *s, uint32_t index, struct rdma_dev *dev)
{
	char req[RDMA_REQ_BUF];
	struct dev_match m = { .out = dev };
	struct dev_ctx c = { .fn = dev_match_cb, .data = &m };
	int ret;

	ret = talk(s, rdma_req_dev_get(req, ++s->seq, index), dev_cb, (struct parse_ctx *)&c);
	/* The kernel says EINVAL for an index it does not know (here). */
	if (ret == -EINVAL || (ret == 0 && !m.found))
		return -ENODEV;
	return ret;
}

int rdma_dev_get_by_name(struct rdma_sock *s, const char *name, struct rdma_dev *dev)
{
	struct dev_match m = { .name = name, .out = dev };
	int ret;

	ret = rdma_dev_dump(s, dev_match_cb, &m);
	if (ret == 0 && !m.found)
		return -ENODEV;
	return ret;
}

int rdma_port_dump(struct rdma_sock *s, uint32_t dev_index, rdma_port_fn fn, void *data)
{
	char req[RDMA_REQ_BUF];
	struct port_ctx c = { .fn = fn, .data = data };
	int ret;

	ret = talk(s, rdma_req_port_dump(req, ++s->seq, dev_index), port_cb,
		   (struct parse_ctx *)&c);
	return ret == -EINVAL ? -ENODEV : ret;
}

struct index_list {
	size_t n, cap;
	uint32_t *v;
};

static int index_list_add(const struct rdma_dev *dev, void *data)
{
	struct index_list *l = data;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		uint32_t *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = dev->index;
	return 0;
}

struct port_match {
	int ifindex;
	const char *ifname;
	struct rdma_port *out;
	bool found;
};

static int port_match_cb(const struct rdma_port *port, void *data)
{
	struct port_match *m = data;

	if (m->found || port->ndev_index == 0)
		return 0;
	if ((m->ifindex > 0 && port->ndev_index == (uint32_t)m->ifindex) ||
	    (m->ifname && !strcmp(port->ndev_name, m->ifname))) {
		*m->out = *port;
		m->found = true;
	}
	return 0;
}

int rdma_dev_find_by_netdev(struct rdma_sock *s, int ifindex, const char *ifname,
			    struct rdma_port *port)
{
	struct port_match m = { .ifindex = ifindex, .ifname = ifname, .out = port };
	struct index_list l = { 0 };
	size_t i;
	int ret;

	if (ifindex <= 0 && !ifname)
		return -EINVAL;
	/* Collect first: a socket cannot start a dump while another is running. */
	ret = rdma_dev_dump(s, index_list_add, &l);
	for (i = 0; ret == 0 && !m.found && i < l.n; i++) {
		ret = rdma_port_dump(s, l.v[i], port_match_cb, &m);
		/* Gone between the two dumps: not ours to report. */
		if (ret == -ENODEV)
			ret = 0;
	}
	free(l.v);
	if (ret == 0 && !m.found)
		return -ENODEV;
	return ret;
}

int rdma_dev_set_netns(struct rdma_sock *s, uint32_t index, int netns_fd)
{
	char req[RDMA_REQ_BUF];
	struct parse_ctx c = { 0 };

	if (netns_fd < 0)
		return -EBADF;
	return talk(s, rdma_req_dev_set_netns(req, ++s->seq, index, netns_fd), NULL, &c);
}

int rdma_dev_rename(struct rdma_sock *s, uint32_t index, const char *name)
{
	char req[RDMA_REQ_BUF];
	struct parse_ctx c = { 0 };
	struct nlmsghdr *nlh = rdma_req_dev_rename(req, ++s->seq, index, name);

	if (!nlh)
		return -EINVAL;
	return talk(s, nlh, NULL, &c);
}
