/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/netlink.h>
#include "log.h"
#include "netns.h"
#include "nlio.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct nlio {
	struct mnl_socket *nl;
	int protocol;
	uint32_t portid, seq;
	dev_t ns_dev;			/* 0: namespace unknown, never shared */
	ino_t ns_ino;
	unsigned refs;
	struct nlio *next;
};

/* The sockets this process holds, to share per protocol and namespace. */
static struct nlio *open_socks;

static void current_ns(dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st) < 0) {
		*dev = 0;
		*ino = 0;
		return;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
}

int nlio_open(int protocol, struct nlio **out)
{
	struct nlio *s;
	dev_t dev;
	ino_t ino;
	int one = 1, ret;

	/* Left in a pod's namespace, a "host" socket would open there. */
	ret = netns_stranded();
	if (ret)
		return ret;
	current_ns(&dev, &ino);
	for (s = open_socks; s && dev; s = s->next) {
		if (s->protocol == protocol && s->ns_dev == dev && s->ns_ino == ino) {
			s->refs++;
			*out = s;
			return 0;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* No CONFIG_INFINIBAND: socket() says EPROTONOSUPPORT, which goes back as is. */
	s->nl = mnl_socket_open2(protocol, SOCK_CLOEXEC);
	if (!s->nl) {
		ret = -errno;
		goto err_free;
	}
	if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto err_close;
	}
	/* The kernel's reason for a refusal, on kernels that give one; optional. */
	(void)setsockopt(mnl_socket_get_fd(s->nl), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	s->protocol = protocol;
	s->portid = mnl_socket_get_portid(s->nl);
	s->seq = (uint32_t)time(NULL);
	s->ns_dev = dev;
	s->ns_ino = ino;
	s->refs = 1;
	s->next = open_socks;
	open_socks = s;
	*out = s;
	return 0;

err_close:
	mnl_socket_close(s->nl);
err_free:
	free(s);
	return ret;
}

struct open_args {
	int protocol;
	struct nlio **s;
};

static int open_cb(void *arg)
{
	struct open_args *a = arg;

	return nlio_open(a->protocol, a->s);
}

int nlio_open_in(int protocol, int netns_fd, struct nlio **s)
{
	struct open_args a = { .protocol = protocol, .s = s };
	int ret;

	*s = NULL;
	ret = netns_do(netns_fd, open_cb, &a);
	if (ret < 0 && *s) {
		/* Opened, but the way back failed: nothing may use it. */
		nlio_close(*s);
		*s = NULL;
	}
	return ret;
}

int nlio_fd(const struct nlio *s)
{
	return mnl_socket_get_fd(s->nl);
}

void nlio_close(struct nlio *s)
{
	struct nlio **p;

	if (!s || --s->refs > 0)
		return;
	for (p = &open_socks; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			break;
		}
	}
	mnl_socket_close(s->nl);
	free(s);
}

/* ---- decoding ---- */

struct run_ctx {
	mnl_cb_t cb;
	void *data;
	char *errmsg;			/* NULL: not wanted */
	size_t errlen;
};

/* NLMSGERR_ATTR_MSG among the TLVs that start off bytes into nlh's payload. */
static void ext_ack(const struct nlmsghdr *nlh, size_t off, struct run_ctx *rc)
{
	const struct nlattr *a;

	if (!rc->errmsg || !(nlh->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    off > mnl_nlmsg_get_payload_len(nlh))
		return;
	mnl_attr_for_each(a, nlh, off) {
		if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0) {
			snprintf(rc->errmsg, rc->errlen, "%s", mnl_attr_get_str(a));
			return;
		}
	}
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct run_ctx *rc = data;

	return rc->cb ? rc->cb(nlh, rc->data) : MNL_CB_OK;
}

/* The ACK (error 0) or the kernel's error. */
static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	if (e->error == 0)
		return MNL_CB_STOP;
	/* Unless capped, the request itself comes back before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len >= sizeof(e->msg) ? e->msg.nlmsg_len - sizeof(e->msg) : 0;
	ext_ack(nlh, MNL_ALIGN(off), data);
	errno = e->error < 0 ? -e->error : e->error;
	return MNL_CB_ERROR;
}

/*
 * A dump that fails once started ends with NLMSG_DONE carrying the error
 * (the kernel's dump_done_errno); libmnl's default treats any DONE as success.
 */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	int32_t e;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(e)) {
		memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof(e));
		if (e < 0) {
			ext_ack(nlh, MNL_ALIGN(sizeof(e)), data);
			errno = -e;
			return MNL_CB_ERROR;
		}
	}
	return MNL_CB_STOP;
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

/* Given a control table, libmnl uses no defaults: the ACK and errors are ours too. */
static const mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_NOOP] = noop_cb,
	[NLMSG_ERROR] = error_cb,
	[NLMSG_DONE] = done_cb,
	[NLMSG_OVERRUN] = overrun_cb,
};

static int run(const void *buf, size_t len, uint32_t seq, uint32_t portid, struct run_ctx *rc)
{
	int ret;

	errno = 0;
	ret = mnl_cb_run2(buf, len, seq, portid, data_cb, rc, (mnl_cb_t *)ctl_cbs, NLMSG_MIN_TYPE);
	if (ret == MNL_CB_ERROR)
		return errno ? -errno : -EPROTO;
	return ret == MNL_CB_STOP ? 0 : 1;
}

int nlio_run(const void *buf, size_t len, uint32_t seq, uint32_t portid, mnl_cb_t cb,
	     void *data)
{
	struct run_ctx rc = { .cb = cb, .data = data };

	return run(buf, len, seq, portid, &rc);
}

/* ---- the request loop ---- */

static ssize_t recv_retry(int fd, void *buf, size_t len, int flags)
{
	ssize_t n;

	do
		n = recv(fd, buf, len, flags);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int nlio_talk(struct nlio *s, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	char errmsg[256] = "";
	struct run_ctx rc = { .cb = cb, .data = data, .errmsg = errmsg, .errlen = sizeof(errmsg) };
	int fd = mnl_socket_get_fd(s->nl), ret;
	const struct nlmsghdr *first;
	ssize_t n;
	char *buf;

	req->nlmsg_seq = ++s->seq;
	req->nlmsg_flags |= NLM_F_ACK;
	while (mnl_socket_sendto(s->nl, req, req->nlmsg_len) < 0)
		if (errno != EINTR)
			return -errno;
	do {
		/* A link message can outgrow a page (many altnames, a PF's VF info): size it first. */
		n = recv_retry(fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
		if (n <= 0)
			return n < 0 ? (int)n : -EIO;
		buf = malloc((size_t)n);
		if (!buf)
			return -ENOMEM;
		n = recv_retry(fd, buf, (size_t)n, 0);
		if (n < 0) {
			free(buf);
			return (int)n;
		}
		first = (const struct nlmsghdr *)buf;
		/* The rest of an earlier request's replies (it stopped early): not ours. */
		if ((size_t)n >= sizeof(*first) && first->nlmsg_seq && first->nlmsg_seq != req->nlmsg_seq)
			ret = 1;
		else
			ret = run(buf, (size_t)n, req->nlmsg_seq, s->portid, &rc);
		free(buf);
	} while (ret > 0);
	if (ret < 0 && errmsg[0])
		log_debug("netlink: %s", errmsg);
	return ret;
}
