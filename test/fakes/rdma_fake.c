/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The recording fake of RDMA netlink, for tests on kernels without RDMA: an
 * rdma_backend that keeps its state in files of a directory and answers
 * with messages built like the kernel's, so the same decoders run. Files:
 *   rdma.mode   "shared" or "exclusive" (absent: shared)
 *   rdma.devs   one device a line: "<index> <name> <netdev> <netns inode>"
 *   rdma.calls  appended, one line per change asked for:
 *               "dev-set 3 netns 4026532301", "dev-set 3 name rdma_net1"
 *   rdma.fail-netns, rdma.fail-rename
 *               when present, hold an errno number the matching request
 *               fails with (after being recorded)
 *   rdma.lock   flock'd while a request reads and changes the state, so
 *               plugins running side by side lose no update
 *   rdma.ipoib  optional, lines "<netdev> <new-netdev> <new-peer>": what
 *               mlx5 IPoIB does when its RDMA device changes namespace
 *               (the device is unregistered and registered again, and
 *               ipoib makes its netdev anew, on the host): after moving a
 *               device whose netdev is <netdev>, that link is deleted and
 *               a veth <new-netdev> (peer <new-peer>, up) takes its place,
 *               with a new ifindex; the sysfs tree of SRIOV_RDMA_SYSFS_ROOT
 *               follows as test/fixtures/mksysfs lays it out (the VF's
 *               net/<netdev> entry and class/net/<netdev> renamed), and
 *               the call is recorded as "ipoib <netdev> <new-netdev>"
 * The fake applies the kernel's rules common/rdma.h relies on: exclusive
 * mode hides devices of other namespaces, set-netns needs exclusive mode
 * and the caller in the device's namespace, names are unique.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libgen.h>
#include <limits.h>
#include <libmnl/libmnl.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <rdma/rdma_netlink.h>
#include "fakes.h"
#include "lock.h"
#include "nlio.h"
#include "rdma.h"

#define FAKE_MAX_DEVS 256
#define FAKE_RX_BUF 32768
/* A request holds rdma.lock for a few file operations: a long wait means a stuck test. */
#define FAKE_LOCK_TIMEOUT_MS 10000

static const char *fake_dir;

struct fake_sock {
	int dirfd;
	unsigned long netns_ino;	/* the namespace the socket was opened in */
	size_t len;			/* replies waiting in buf */
	char buf[FAKE_RX_BUF];
};

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

static int fake_load(struct fake_sock *s, struct fake *fk)
{
	char word[16] = "";
	FILE *f;

	memset(fk, 0, sizeof(*fk));
	f = fake_fopen(s->dirfd, "rdma.mode", "r", O_RDONLY);
	if (f) {
		if (fscanf(f, "%15s", word) == 1)
			fk->exclusive = !strcmp(word, "exclusive");
		fclose(f);
	}
	f = fake_fopen(s->dirfd, "rdma.devs", "r", O_RDONLY);
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

/* Replace name through a temporary only this process writes: a writer killed half way leaves the old file. */
static int fake_write(struct fake_sock *s, const char *name, const char *text)
{
	char tmp[96];
	FILE *f;
	int ret = 0;

	snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid());
	f = fake_fopen(s->dirfd, tmp, "w", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW);
	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		ret = -EIO;
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (!ret && renameat(s->dirfd, tmp, s->dirfd, name) < 0)
		ret = -errno;
	if (ret)
		unlinkat(s->dirfd, tmp, 0);
	return ret;
}

static int fake_save_devs(struct fake_sock *s, const struct fake *fk)
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

static int fake_record(struct fake_sock *s, const char *op, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append the call, then fail it if rdma.fail-<op> holds an errno. */
static int fake_record(struct fake_sock *s, const char *op, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	FILE *f;
	int e = 0;

	f = fake_fopen(s->dirfd, "rdma.calls", "a", O_WRONLY | O_CREAT | O_APPEND);
	if (!f)
		return -errno;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	if (fclose(f) != 0)
		return -errno;
	snprintf(name, sizeof(name), "rdma.fail-%s", op);
	f = fake_fopen(s->dirfd, name, "r", O_RDONLY);
	if (!f)
		return 0;
	if (fscanf(f, "%d", &e) != 1 || e <= 0)
		e = EIO;
	fclose(f);
	return -e;
}

static bool fake_visible(const struct fake_sock *s, const struct fake *fk, const struct fake_dev *d)
{
	return !fk->exclusive || d->netns == s->netns_ino;
}

static struct fake_dev *fake_find(const struct fake_sock *s, struct fake *fk, uint32_t index)
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

/* The fixture's entries of netdev old, renamed to new (mksysfs's layout). */
static int ipoib_sysfs_rename(const char *old, const char *new)
{
	const char *root = getenv("SRIOV_RDMA_SYSFS_ROOT");
	char cls[PATH_MAX], dev[PATH_MAX], parent[PATH_MAX], to[PATH_MAX], target[PATH_MAX];
	char *slash;
	ssize_t n;

	if (!root || !root[0])
		return -ENOENT;
	snprintf(cls, sizeof(cls), "%s/class/net/%s", root, old);
	n = readlink(cls, target, sizeof(target) - 1);
	if (n < 0 || !realpath(cls, dev))
		return -errno;
	target[n] = '\0';
	slash = strrchr(target, '/');
	if (!slash || (size_t)(slash - target) + 1 + strlen(new) >= sizeof(target))
		return -ENAMETOOLONG;
	strcpy(slash + 1, new);
	memcpy(parent, dev, sizeof(parent));
	snprintf(to, sizeof(to), "%s/%s", dirname(parent), new);
	if (rename(dev, to) < 0 || unlink(cls) < 0)
		return -errno;
	snprintf(cls, sizeof(cls), "%s/class/net/%s", root, new);
	return symlink(target, cls) < 0 ? -errno : 0;
}

/*
 * Delete link old, make a veth pair new <-> peer in its place (peer up),
 * new with old's ifalias: the stand-in's PCI device (standin_fake.c),
 * which the kernel's new netdev has as the old one had.
 */
static int ipoib_relink(const char *old, const char *new, const char *peer)
{
	struct rtnl_link *l = NULL, *p = NULL, *n = NULL, *up = NULL, *alias = NULL;
	struct nl_sock *sk = nl_socket_alloc();
	int ret = -ENOMEM;

	if (!sk)
		return ret;
	ret = nl_connect(sk, NETLINK_ROUTE);
	if (ret < 0)
		goto out;
	up = rtnl_link_alloc();
	alias = rtnl_link_alloc();
	ret = -ENOMEM;
	if (!up || !alias)
		goto out;
	ret = rtnl_link_get_kernel(sk, 0, old, &l);
	if (ret == 0 && rtnl_link_get_ifalias(l))
		rtnl_link_set_ifalias(alias, rtnl_link_get_ifalias(l));
	if (ret == 0)
		ret = rtnl_link_delete(sk, l);
	if (ret == 0)
		ret = rtnl_link_veth_add(sk, new, peer, getpid());
	if (ret == 0)
		ret = rtnl_link_get_kernel(sk, 0, peer, &p);
	if (ret == 0) {
		rtnl_link_set_flags(up, IFF_UP);
		ret = rtnl_link_change(sk, p, up, 0);
	}
	if (ret == 0 && rtnl_link_get_ifalias(alias))
		ret = rtnl_link_get_kernel(sk, 0, new, &n);
	if (ret == 0 && n)
		ret = rtnl_link_change(sk, n, alias, 0);
	ret = ret < 0 ? -EIO : 0;
out:
	rtnl_link_put(n);
	rtnl_link_put(p);
	rtnl_link_put(up);
	rtnl_link_put(alias);
	rtnl_link_put(l);
	nl_socket_free(sk);
	return ret;
}

/* rdma.ipoib: d's netdev made anew after d moved, when a line names it. */
static int ipoib_recreate(struct fake_sock *s, struct fake_dev *d)
{
	char old[IFNAMSIZ], new[IFNAMSIZ], peer[IFNAMSIZ];
	FILE *f = fake_fopen(s->dirfd, "rdma.ipoib", "r", O_RDONLY);
	bool found = false;
	int ret;

	if (!f)
		return 0;
	while (!found && fscanf(f, "%15s %15s %15s", old, new, peer) == 3)
		found = !strcmp(old, d->netdev);
	fclose(f);
	if (!found)
		return 0;
	ret = fake_record(s, "ipoib", "ipoib %s %s", old, new);
	if (ret == 0)
		ret = ipoib_relink(old, new, peer);
	if (ret == 0)
		ret = ipoib_sysfs_rename(old, new);
	if (ret == 0)
		snprintf(d->netdev, sizeof(d->netdev), "%s", new);
	return ret;
}

static int fake_set(struct fake_sock *s, struct fake *fk, const struct nlattr **tb)
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
	ret = ipoib_recreate(s, d);
	if (ret < 0)
		return ret;
	return fake_save_devs(s, fk);
}

/* The attributes of a request the fake reads; the rest are not looked at. */
static int req_attr_cb(const struct nlattr *attr, void *data)
{
	static const enum mnl_attr_data_type types[RDMA_NLDEV_ATTR_MAX] = {
		[RDMA_NLDEV_ATTR_DEV_INDEX] = MNL_TYPE_U32,
		[RDMA_NLDEV_ATTR_DEV_NAME] = MNL_TYPE_NUL_STRING,
		[RDMA_NLDEV_SYS_ATTR_NETNS_MODE] = MNL_TYPE_U8,
		[RDMA_NLDEV_NET_NS_FD] = MNL_TYPE_U32,
	};
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX - 1) < 0)
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, types[type]) < 0)
		return MNL_CB_ERROR;
	tb[type] = attr;
	return MNL_CB_OK;
}

/* Answer one request: the replies go to s->buf, for fake_xfer to decode. */
static int fake_handle(struct fake_sock *s, const struct nlmsghdr *req, struct fake *fk)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = { 0 };
	uint32_t seq = req->nlmsg_seq;
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	struct fake_dev *d;
	size_t off = 0;
	char *buf = s->buf;
	int ret, i;

	if (mnl_attr_parse(req, 0, req_attr_cb, tb) != MNL_CB_OK)
		return -EPROTO;
	ret = fake_load(s, fk);
	if (ret < 0)
		return ret;
	switch (RDMA_NL_GET_OP(req->nlmsg_type)) {
	case RDMA_NLDEV_CMD_SYS_GET: {
		struct nlmsghdr *nlh = fake_msg(buf, &off, seq, req->nlmsg_type);

		mnl_attr_put_u8(nlh, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, fk->exclusive ? 0 : 1);
		fake_end(&off, nlh);
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
	s->len = off;
	return 0;
}

static int fake_answer(struct fake_sock *s, const struct nlmsghdr *req)
{
	struct fake *fk;
	int lock, ret;

	s->len = 0;
	fk = malloc(sizeof(*fk));
	if (!fk)
		return -ENOMEM;
	memset(s->buf, 0, sizeof(s->buf));
	/* Load, change, save as one step: plugins run side by side on one fake. */
	lock = lock_take(s->dirfd, "rdma.lock", FAKE_LOCK_TIMEOUT_MS);
	if (lock < 0) {
		free(fk);
		return lock;
	}
	ret = fake_handle(s, req, fk);
	lock_release(lock);
	free(fk);
	return ret;
}

/* All the replies at once, as one datagram of the kernel's could hold them. */
static int fake_xfer(void *priv, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	struct fake_sock *s = priv;
	int ret;

	ret = fake_answer(s, req);
	if (ret < 0)
		return ret;
	ret = nlio_run(s->buf, s->len, req->nlmsg_seq, 0, cb, data);
	return ret > 0 ? -EAGAIN : ret;
}

static int fake_open(void **priv)
{
	struct fake_sock *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->dirfd = open(fake_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		ret = -errno;
		goto err_free;
	}
	ret = current_netns_inode(&s->netns_ino);
	if (ret < 0)
		goto err_close;
	*priv = s;
	return 0;

err_close:
	close(s->dirfd);
err_free:
	free(s);
	return ret;
}

static void fake_close(void *priv)
{
	struct fake_sock *s = priv;

	close(s->dirfd);
	free(s);
}

static const struct rdma_backend fake_backend = {
	.open = fake_open,
	.xfer = fake_xfer,
	.close = fake_close,
};

void rdma_fake_use(const char *dir)
{
	fake_dir = dir;
	rdma_set_backend(dir ? &fake_backend : NULL);
}

__attribute__((constructor)) static void rdma_fake_from_env(void)
{
	const char *dir = getenv(RDMA_FAKE_ENV);

	if (dir && dir[0])
		rdma_fake_use(dir);
}
