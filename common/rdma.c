/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
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

/* ---- libibverbs ---- */

/*
 * libibverbs lists devices through RDMA netlink in the caller's namespace
 * and opens /dev/infiniband/uverbsN, which the kernel allows only from the
 * device's namespace; GIDs then come over that file (ioctl), not from the
 * caller's sysfs mount, which still shows the host after a setns().
 */
/*
 * libibverbs, loaded on first use: only an attachment with an RDMA device
 * asks it anything, and every other exec (DEL, CHECK, VERSION, a VF without
 * RDMA) would pay for loading and relocating it. It loads its providers
 * itself, when listing devices. verbs.h wraps two calls in inline functions
 * (ibv_query_port, ibv_query_gid_table): these are the library symbols they
 * call.
 */
static struct {
	struct ibv_device **(*get_device_list)(int *num_devices);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *device);
	struct ibv_context *(*open_device)(struct ibv_device *device);
	int (*close_device)(struct ibv_context *context);
	int (*query_device)(struct ibv_context *context, struct ibv_device_attr *attr);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct _compat_ibv_port_attr *port_attr);
	ssize_t (*query_gid_table)(struct ibv_context *context, struct ibv_gid_entry *entries,
				   size_t max_entries, uint32_t flags, size_t entry_size);
} iv;
static int iv_state;			/* 0 not tried, 1 loaded, < 0 -errno */

static int verbs_load(void)
{
	static const char *const names[] = {
		"ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name",
		"ibv_open_device", "ibv_close_device", "ibv_query_device", "ibv_query_port",
		"_ibv_query_gid_table",
	};
	void *syms[sizeof(names) / sizeof(names[0])];
	void *lib;
	size_t i;

	if (iv_state)
		return iv_state < 0 ? iv_state : 0;
	iv_state = -ENOSYS;
	lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		log_warn("libibverbs: %s", dlerror());
		return iv_state;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		syms[i] = dlsym(lib, names[i]);
		if (!syms[i]) {
			log_warn("libibverbs.so.1 has no %s", names[i]);
			return iv_state;
		}
	}
	/* The library stays loaded: its providers keep state for the process. */
	iv.get_device_list = (struct ibv_device **(*)(int *))syms[0];
	iv.free_device_list = (void (*)(struct ibv_device **))syms[1];
	iv.get_device_name = (const char *(*)(struct ibv_device *))syms[2];
	iv.open_device = (struct ibv_context *(*)(struct ibv_device *))syms[3];
	iv.close_device = (int (*)(struct ibv_context *))syms[4];
	iv.query_device = (int (*)(struct ibv_context *, struct ibv_device_attr *))syms[5];
	iv.query_port = (int (*)(struct ibv_context *, uint8_t,
				 struct _compat_ibv_port_attr *))syms[6];
	iv.query_gid_table = (ssize_t (*)(struct ibv_context *, struct ibv_gid_entry *, size_t,
					  uint32_t, size_t))syms[7];
	iv_state = 1;
	return 0;
}

/* What the inline ibv_query_port does, through the loaded library. */
static int verbs_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);

	if (!vctx) {
		memset(attr, 0, sizeof(*attr));
		return iv.query_port(ctx, port, (struct _compat_ibv_port_attr *)attr);
	}
	return vctx->query_port(ctx, port, attr, sizeof(*attr));
}

static int verbs_open(const char *name, struct ibv_context **ctx)
{
	struct ibv_device **list;
	int i, n = 0, ret;

	ret = verbs_load();
	if (ret < 0)
		return ret;
	ret = -ENODEV;
	list = iv.get_device_list(&n);
	if (!list)
		return -ENODEV;
	for (i = 0; i < n; i++) {
		if (strcmp(iv.get_device_name(list[i]), name) != 0)
			continue;
		*ctx = iv.open_device(list[i]);
		ret = *ctx ? 0 : -ENODEV;
		break;
	}
	iv.free_device_list(list);
	return ret;
}

int rdma_verbs_dev_present(const char *name)
{
	struct ibv_context *ctx;
	int ret = verbs_open(name, &ctx);

	if (ret == 0)
		iv.close_device(ctx);
	return ret;
}

static int gid_from_address(const char *address, union ibv_gid *gid)
{
	char a[INET6_ADDRSTRLEN];
	const char *slash = strchr(address, '/');
	size_t len = slash ? (size_t)(slash - address) : strlen(address);
	struct in_addr v4;

	if (len == 0 || len >= sizeof(a))
		return -EINVAL;
	memcpy(a, address, len);
	a[len] = '\0';
	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET, a, &v4) == 1) {
		/* RoCE stores IPv4 as the v4-mapped IPv6 address. */
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &v4, sizeof(v4));
		return 0;
	}
	return inet_pton(AF_INET6, a, gid->raw) == 1 ? 0 : -EINVAL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int rdma_gid_index_for(const char *dev_name, uint32_t port, const char *address, bool roce_v2,
		       unsigned wait_ms, int *index)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	uint32_t want = roce_v2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	uint64_t deadline = now_ms() + wait_ms;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_gid_entry *entries;
	struct ibv_context *ctx;
	union ibv_gid gid;
	size_t max;
	ssize_t n, i;
	int ret;

	if (port == 0 || gid_from_address(address, &gid) < 0)
		return -EINVAL;
	ret = verbs_open(dev_name, &ctx);
	if (ret < 0)
		return ret;
	ret = iv.query_device(ctx, &dattr);
	if (ret == 0 && port > dattr.phys_port_cnt)
		ret = EINVAL;
	if (ret == 0)
		ret = verbs_query_port(ctx, (uint8_t)port, &pattr);
	if (ret != 0) {
		ret = -ret;
		goto out_close;
	}
	/* The table call returns the valid entries of every port at once. */
	max = (size_t)pattr.gid_tbl_len * dattr.phys_port_cnt;
	entries = calloc(max ? max : 1, sizeof(*entries));
	if (!entries) {
		ret = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		n = iv.query_gid_table(ctx, entries, max, 0, sizeof(*entries));
		if (n < 0) {
			ret = (int)n;
			goto out_free;
		}
		for (i = 0; i < n; i++) {
			if (entries[i].port_num == port && entries[i].gid_type == want &&
			    !memcmp(entries[i].gid.raw, gid.raw, sizeof(gid.raw))) {
				*index = (int)entries[i].gid_index;
				ret = 0;
				goto out_free;
			}
		}
		if (now_ms() >= deadline) {
			ret = -ENOENT;
			goto out_free;
		}
		nanosleep(&tick, NULL);
	}

out_free:
	free(entries);
out_close:
	iv.close_device(ctx);
	return ret;
}
