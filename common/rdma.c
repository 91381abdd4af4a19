/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include "rdma.h"

#define RX_BUF 32768			/* one dump skb of the kernel fits */

struct rdma_sock {
	struct mnl_socket *nl;		/* NULL for the fake */
	uint32_t portid;
	uint32_t seq;
	int fake_dirfd;			/* -1: the kernel */
	ino_t netns_ino;		/* the fake: namespace the socket was opened in */
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

/*
 * A dump that fails once started ends with NLMSG_DONE carrying the error
 * (the kernel's dump_done_errno); libmnl's default treats any DONE as success.
 */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	int32_t e;

	(void)data;
	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(e)) {
		memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof(e));
		if (e < 0) {
			errno = -e;
			return MNL_CB_ERROR;
		}
	}
	return MNL_CB_STOP;
}

/* Given a control table, libmnl uses no defaults: the ACK and errors are ours too. */
static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

	(void)data;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	if (e->error == 0)
		return MNL_CB_STOP;
	errno = e->error < 0 ? -e->error : e->error;
	return MNL_CB_ERROR;
}

static int noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static int overrun_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	errno = ENOBUFS;
	return MNL_CB_ERROR;
}

static mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_NOOP] = noop_cb,
	[NLMSG_ERROR] = error_cb,
	[NLMSG_DONE] = done_cb,
	[NLMSG_OVERRUN] = overrun_cb,
};

/* 0 complete, 1 more to come, -errno from the kernel or -EPROTO. */
static int run(const void *buf, size_t len, uint32_t seq, uint32_t portid, mnl_cb_t cb,
	       struct parse_ctx *ctx)
{
	int ret;

	errno = 0;
	ret = mnl_cb_run2(buf, len, seq, portid, cb, ctx, ctl_cbs, NLMSG_MIN_TYPE);
	if (ret == MNL_CB_ERROR)
		return errno ? -errno : -EPROTO;
	if (ctx->err)
		return ret == MNL_CB_STOP ? ctx->err : 1;
	return ret == MNL_CB_STOP ? 0 : 1;
}

int rdma_parse_sys(const void *buf, size_t len, uint32_t seq, bool *exclusive)
{
	struct sys_ctx c = { .exclusive = exclusive };
	int ret = run(buf, len, seq, 0, sys_cb, (struct parse_ctx *)&c);

	if (ret == 0 && !c.seen)
		return -EPROTO;
	return ret;
}

int rdma_parse_devs(const void *buf, size_t len, uint32_t seq, rdma_dev_fn fn, void *data)
{
	struct dev_ctx c = { .fn = fn, .data = data };

	return run(buf, len, seq, 0, dev_cb, (struct parse_ctx *)&c);
}

int rdma_parse_ports(const void *buf, size_t len, uint32_t seq, rdma_port_fn fn, void *data)
{
	struct port_ctx c = { .fn = fn, .data = data };

	return run(buf, len, seq, 0, port_cb, (struct parse_ctx *)&c);
}

/* ---- the recording fake ---- */

#define FAKE_MAX_DEVS 256

struct fake_dev {
	uint32_t index;
	char name[RDMA_NAME_MAX];
	char netdev[IFNAMSIZ];
	unsigned long netns;		/* inode of the namespace it is in */
};

struct fake {
	int n;
	struct fake_dev devs[FAKE_MAX_DEVS];
	bool exclusive;
};

static int netns_inode(int fd, unsigned long *ino)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*ino = (unsigned long)st.st_ino;
	return 0;
}

static int current_netns_inode(unsigned long *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st) < 0)
		return -errno;
	*ino = (unsigned long)st.st_ino;
	return 0;
}

static FILE *fake_fopen(int dirfd, const char *name, const char *mode, int flags)
{
	int fd = openat(dirfd, name, flags | O_CLOEXEC, 0644);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, mode);
	if (!f)
		close(fd);
	return f;
}

static int fake_load(struct rdma_sock *s, struct fake *fk)
{
	char word[16] = "";
	FILE *f;

	memset(fk, 0, sizeof(*fk));
	f = fake_fopen(s->fake_dirfd, "rdma.mode", "r", O_RDONLY);
	if (f) {
		if (fscanf(f, "%15s", word) == 1)
			fk->exclusive = !strcmp(word, "exclusive");
		fclose(f);
	}
	f = fake_fopen(s->fake_dirfd, "rdma.devs", "r", O_RDONLY);
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fk->n < FAKE_MAX_DEVS) {
		struct fake_dev *d = &fk->devs[fk->n];
		int r = fscanf(f, "%u %63s %15s %lu", &d->index, d->name, d->netdev, &d->netns);

		if (r == EOF)
			break;
		if (r != 4) {
			fclose(f);
			return -EPROTO;
		}
		fk->n++;
	}
	fclose(f);
	return 0;
}

static int fake_write(struct rdma_sock *s, const char *name, const char *text)
{
	char tmp[64];
	FILE *f;
	int ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	f = fake_fopen(s->fake_dirfd, tmp, "w", O_WRONLY | O_CREAT | O_TRUNC);
	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		ret = -EIO;
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (!ret && renameat(s->fake_dirfd, tmp, s->fake_dirfd, name) < 0)
		ret = -errno;
	return ret;
}

static int fake_save_devs(struct rdma_sock *s, const struct fake *fk)
{
	char text[FAKE_MAX_DEVS * 128];
	size_t off = 0;
	int i;

	text[0] = '\0';
	for (i = 0; i < fk->n; i++)
		off += snprintf(text + off, sizeof(text) - off, "%u %s %s %lu\n", fk->devs[i].index,
				fk->devs[i].name, fk->devs[i].netdev, fk->devs[i].netns);
	return fake_write(s, "rdma.devs", text);
}

static int fake_record(struct rdma_sock *s, const char *op, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append the call, then fail it if rdma.fail-<op> holds an errno. */
static int fake_record(struct rdma_sock *s, const char *op, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	FILE *f;
	int e = 0;

	f = fake_fopen(s->fake_dirfd, "rdma.calls", "a", O_WRONLY | O_CREAT | O_APPEND);
	if (!f)
		return -errno;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	if (fclose(f) != 0)
		return -errno;
	snprintf(name, sizeof(name), "rdma.fail-%s", op);
	f = fake_fopen(s->fake_dirfd, name, "r", O_RDONLY);
	if (!f)
		return 0;
	if (fscanf(f, "%d", &e) != 1 || e <= 0)
		e = EIO;
	fclose(f);
	return -e;
}

static bool fake_visible(const struct rdma_sock *s, const struct fake *fk, const struct fake_dev *d)
{
	return !fk->exclusive || d->netns == s->netns_ino;
}

static struct fake_dev *fake_find(const struct rdma_sock *s, struct fake *fk, uint32_t index)
{
	int i;

	for (i = 0; i < fk->n; i++)
		if (fk->devs[i].index == index && fake_visible(s, fk, &fk->devs[i]))
			return &fk->devs[i];
	return NULL;
}

static struct nlmsghdr *fake_msg(char *buf, size_t *off, uint32_t seq, uint16_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + *off);

	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = seq;
	return nlh;
}

static void fake_end(size_t *off, const struct nlmsghdr *nlh)
{
	*off += NLMSG_ALIGN(nlh->nlmsg_len);
}

static void fake_put_dev(char *buf, size_t *off, uint32_t seq, uint16_t type,
			 const struct fake_dev *d)
{
	struct nlmsghdr *nlh = fake_msg(buf, off, seq, type);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, RDMA_NODE_IB_CA);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
	fake_end(off, nlh);
}

static void fake_put_port(char *buf, size_t *off, uint32_t seq, uint16_t type,
			  const struct fake_dev *d)
{
	struct nlmsghdr *nlh = fake_msg(buf, off, seq, type);
	unsigned ifindex = if_nametoindex(d->netdev);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	/* As the kernel: the netdev only when it is in the caller's namespace. */
	if (ifindex) {
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_NDEV_INDEX, ifindex);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_NDEV_NAME, d->netdev);
	}
	fake_end(off, nlh);
}

static void fake_put_status(char *buf, size_t *off, uint32_t seq, uint16_t type, int error)
{
	struct nlmsghdr *nlh = fake_msg(buf, off, seq, type);

	if (type == NLMSG_ERROR) {
		struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

		e->error = error;
	} else {
		int32_t *v = mnl_nlmsg_put_extra_header(nlh, sizeof(*v));

		*v = error;
	}
	fake_end(off, nlh);
}

static int fake_set(struct rdma_sock *s, struct fake *fk, const struct nlattr **tb)
{
	uint32_t index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	struct fake_dev *d;
	unsigned long here = 0, target = 0;
	int ret, i;

	if (tb[RDMA_NLDEV_ATTR_DEV_NAME]) {
		const char *name = mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME]);

		ret = fake_record(s, "rename", "dev-set %u name %s", index, name);
		if (ret < 0)
			return ret;
		d = fake_find(s, fk, index);
		if (!d)
			return -EINVAL;
		for (i = 0; i < fk->n; i++)
			if (&fk->devs[i] != d && !strcmp(fk->devs[i].name, name))
				return -EEXIST;
		snprintf(d->name, sizeof(d->name), "%s", name);
		return fake_save_devs(s, fk);
	}
	if (!tb[RDMA_NLDEV_NET_NS_FD])
		return -EINVAL;
	if (netns_inode((int)mnl_attr_get_u32(tb[RDMA_NLDEV_NET_NS_FD]), &target) < 0)
		return -EBADF;
	ret = fake_record(s, "netns", "dev-set %u netns %lu", index, target);
	if (ret < 0)
		return ret;
	d = fake_find(s, fk, index);
	if (!d)
		return -EINVAL;
	if (!fk->exclusive)
		return -EOPNOTSUPP;
	ret = current_netns_inode(&here);
	if (ret < 0)
		return ret;
	/* The kernel moves a device only out of the mover's own namespace. */
	if (d->netns != here)
		return -ENODEV;
	d->netns = target;
	return fake_save_devs(s, fk);
}

static int fake_talk(struct rdma_sock *s, const struct nlmsghdr *req, mnl_cb_t cb,
		     struct parse_ctx *ctx)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	uint32_t seq = req->nlmsg_seq;
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	struct fake *fk;
	struct fake_dev *d;
	size_t off = 0;
	char *buf;
	int ret, i;

	fk = malloc(sizeof(*fk));
	buf = calloc(1, RX_BUF);
	if (!fk || !buf) {
		ret = -ENOMEM;
		goto out;
	}
	ret = attr_parse(req, tb);
	if (ret < 0)
		goto out;
	ret = fake_load(s, fk);
	if (ret < 0)
		goto out;
	switch (RDMA_NL_GET_OP(req->nlmsg_type)) {
	case RDMA_NLDEV_CMD_SYS_GET: {
		struct nlmsghdr *nlh = fake_msg(buf, &off, seq, req->nlmsg_type);

		mnl_attr_put_u8(nlh, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, fk->exclusive ? 0 : 1);
		fake_end(&off, nlh);
		break;
	}
	case RDMA_NLDEV_CMD_SYS_SET: {
		bool excl;

		if (!tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) {
			ret = -EINVAL;
			break;
		}
		excl = mnl_attr_get_u8(tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) == 0;
		ret = fake_record(s, "sys-set", "sys-set netns-mode %s", excl ? "exclusive" : "shared");
		if (ret == 0)
			ret = fake_write(s, "rdma.mode", excl ? "exclusive\n" : "shared\n");
		break;
	}
	case RDMA_NLDEV_CMD_GET:
		for (i = 0; i < fk->n; i++) {
			d = &fk->devs[i];
			if (!fake_visible(s, fk, d))
				continue;
			if (dump || (tb[RDMA_NLDEV_ATTR_DEV_INDEX] &&
				     d->index == mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX])))
				fake_put_dev(buf, &off, seq, req->nlmsg_type, d);
		}
		if (!dump && off == 0)
			ret = -EINVAL;
		break;
	case RDMA_NLDEV_CMD_PORT_GET:
		d = tb[RDMA_NLDEV_ATTR_DEV_INDEX] ?
			fake_find(s, fk, mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX])) : NULL;
		if (d)
			fake_put_port(buf, &off, seq, req->nlmsg_type, d);
		else
			ret = -EINVAL;
		break;
	case RDMA_NLDEV_CMD_SET:
		ret = tb[RDMA_NLDEV_ATTR_DEV_INDEX] ? fake_set(s, fk, tb) : -EINVAL;
		break;
	default:
		ret = -EOPNOTSUPP;
	}
	if (dump)
		fake_put_status(buf, &off, seq, NLMSG_DONE, ret);
	else
		fake_put_status(buf, &off, seq, NLMSG_ERROR, ret);
	ret = run(buf, off, seq, 0, cb, ctx);
out:
	free(buf);
	free(fk);
	return ret;
}

/* ---- the socket ---- */

int rdma_sock_open(struct rdma_sock **out)
{
	struct rdma_sock *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->fake_dirfd = -1;
	/* No CONFIG_INFINIBAND: socket() says EPROTONOSUPPORT, which we pass on as is. */
	s->nl = mnl_socket_open2(NETLINK_RDMA, SOCK_CLOEXEC);
	if (!s->nl) {
		ret = -errno;
		goto err_free;
	}
	if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto err_close;
	}
	s->portid = mnl_socket_get_portid(s->nl);
	s->seq = (uint32_t)time(NULL);
	*out = s;
	return 0;

err_close:
	mnl_socket_close(s->nl);
err_free:
	free(s);
	return ret;
}

int rdma_sock_open_fake(const char *dir, struct rdma_sock **out)
{
	struct rdma_sock *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->fake_dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->fake_dirfd < 0) {
		ret = -errno;
		goto err_free;
	}
	ret = current_netns_inode(&s->netns_ino);
	if (ret < 0)
		goto err_close;
	s->seq = 1;
	*out = s;
	return 0;

err_close:
	close(s->fake_dirfd);
err_free:
	free(s);
	return ret;
}

void rdma_sock_close(struct rdma_sock *s)
{
	if (!s)
		return;
	if (s->nl)
		mnl_socket_close(s->nl);
	if (s->fake_dirfd >= 0)
		close(s->fake_dirfd);
	free(s);
}

/* Send req and decode every reply through cb: 0, or the first error. */
static int talk(struct rdma_sock *s, const struct nlmsghdr *req, mnl_cb_t cb,
		struct parse_ctx *ctx)
{
	char buf[RX_BUF];
	ssize_t n;
	int ret;

	if (s->fake_dirfd >= 0)
		return fake_talk(s, req, cb, ctx);
	if (mnl_socket_sendto(s->nl, req, req->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(s->nl, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ret = run(buf, (size_t)n, req->nlmsg_seq, s->portid, cb, ctx);
	} while (ret > 0);
	return ret;
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

int rdma_sys_set_netns_mode(struct rdma_sock *s, bool exclusive)
{
	char req[RDMA_REQ_BUF];
	struct parse_ctx c = { 0 };

	return talk(s, rdma_req_sys_set(req, ++s->seq, exclusive), NULL, &c);
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
static int verbs_open(const char *name, struct ibv_context **ctx)
{
	struct ibv_device **list;
	int i, n = 0, ret = -ENODEV;

	list = ibv_get_device_list(&n);
	if (!list)
		return -ENODEV;
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) != 0)
			continue;
		*ctx = ibv_open_device(list[i]);
		ret = *ctx ? 0 : -ENODEV;
		break;
	}
	ibv_free_device_list(list);
	return ret;
}

int rdma_verbs_dev_present(const char *name)
{
	struct ibv_context *ctx;
	int ret = verbs_open(name, &ctx);

	if (ret == 0)
		ibv_close_device(ctx);
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
	ret = ibv_query_device(ctx, &dattr);
	if (ret == 0 && port > dattr.phys_port_cnt)
		ret = EINVAL;
	if (ret == 0)
		ret = ibv_query_port(ctx, (uint8_t)port, &pattr);
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
		n = ibv_query_gid_table(ctx, entries, max, 0);
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
	ibv_close_device(ctx);
	return ret;
}
