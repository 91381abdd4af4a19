/* SPDX-License-Identifier: Apache-2.0 */
#include "pool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "log.h"
#include "state.h"

#define RECORD_MAX	8192
#define NAME_MAX_LEN	300

struct record {
	struct ipam_addr addr;
	int set;
	char container_id[256];
	char ifname[IFNAMSIZ];
	char netns[PATH_MAX];
	char boot_id[64];
	long long created;
};

static void diag_file(struct pool *p, struct pool_diag *d, const char *name)
{
	snprintf(d->file, sizeof(d->file), "%s/%s", p->path, name);
}

static void name_addr(char *buf, size_t len, char kind, const struct ipam_addr *a)
{
	char s[IPAM_ADDR_STRLEN];

	ipam_addr_format(a, s, sizeof(s));
	snprintf(buf, len, "%c-%s", kind, s);
}

static void name_owner(char *buf, size_t len, const struct pool_owner *o, int set)
{
	snprintf(buf, len, "c-%s:%s.%d", o->container_id, o->ifname, set);
}

int pool_boot_id(const char *proc_root, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", proc_root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] ? 0 : -ENODATA;
}

/*
 * Read tmp/ with getdents64 on the descriptor the pool already holds:
 * opendir would dup, fstat and fcntl it first, on every operation, to find
 * nothing in the common case.
 */
static int clear_tmp(struct pool *p)
{
	char buf[4096] __attribute__((aligned(8)));
	struct dirent64 *e;
	ssize_t n, off;

	while ((n = getdents64(p->tmpfd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n; off += e->d_reclen) {
			e = (struct dirent64 *)(buf + off);
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (unlinkat(p->tmpfd, e->d_name, 0) < 0 && errno != ENOENT)
				return -errno;
		}
	}
	return n < 0 ? -errno : 0;
}

int pool_open(struct pool *p, const struct ipam_conf *conf, const char *network,
	      const char *proc_root, unsigned timeout_ms, struct pool_diag *d)
{
	int ret;

	memset(p, 0, sizeof(*p));
	p->conf = conf;
	p->dirfd = p->tmpfd = p->lockfd = -1;
	d->set = -1;
	if ((size_t)snprintf(p->path, sizeof(p->path), "%s/%s", conf->data_dir, network) >=
	    sizeof(p->path))
		return -ENAMETOOLONG;
	snprintf(d->file, sizeof(d->file), "%s", p->path);
	ret = pool_boot_id(proc_root, p->boot_id, sizeof(p->boot_id));
	if (ret < 0) {
		snprintf(d->file, sizeof(d->file), "%s/sys/kernel/random/boot_id", proc_root);
		return ret;
	}
	ret = state_dir_open(p->path, &p->dirfd);
	if (ret < 0)
		return ret;
	ret = lock_take(p->dirfd, "lock", timeout_ms);
	if (ret < 0)
		goto err_dir;
	p->lockfd = ret;
	ret = state_subdir_open(p->dirfd, "tmp", &p->tmpfd);
	if (ret < 0)
		goto err_lock;
	ret = clear_tmp(p);
	if (ret < 0)
		goto err_tmp;
	return 0;

err_tmp:
	close(p->tmpfd);
	p->tmpfd = -1;
err_lock:
	lock_release(p->lockfd);
	p->lockfd = -1;
err_dir:
	close(p->dirfd);
	p->dirfd = -1;
	return ret;
}

void pool_close(struct pool *p)
{
	if (p->tmpfd >= 0)
		close(p->tmpfd);
	lock_release(p->lockfd);
	if (p->dirfd >= 0)
		close(p->dirfd);
	p->dirfd = p->tmpfd = p->lockfd = -1;
}

/* ---- records ---- */

static int record_parse(char *buf, size_t len, struct record *r)
{
	const cJSON *addr, *set, *cid, *ifn, *ns, *boot, *created;
	cJSON *j;
	int ret = -EBADMSG;

	if (state_unseal(buf, &len) < 0)
		return -EBADMSG;
	j = cJSON_ParseWithLength(buf, len);
	if (!j)
		return -EBADMSG;
	addr = cJSON_GetObjectItemCaseSensitive(j, "address");
	set = cJSON_GetObjectItemCaseSensitive(j, "set");
	cid = cJSON_GetObjectItemCaseSensitive(j, "containerID");
	ifn = cJSON_GetObjectItemCaseSensitive(j, "ifname");
	ns = cJSON_GetObjectItemCaseSensitive(j, "netns");
	boot = cJSON_GetObjectItemCaseSensitive(j, "bootID");
	created = cJSON_GetObjectItemCaseSensitive(j, "created");
	if (!cJSON_IsString(addr) || !cJSON_IsNumber(set) || !cJSON_IsString(cid) ||
	    !cJSON_IsString(ifn) || !cJSON_IsString(ns) || !cJSON_IsString(boot) ||
	    !cJSON_IsNumber(created) || ipam_addr_parse(addr->valuestring, &r->addr) < 0 ||
	    set->valueint < 0 || set->valueint >= IPAM_MAX_SETS ||
	    strlen(cid->valuestring) >= sizeof(r->container_id) ||
	    strlen(ifn->valuestring) >= sizeof(r->ifname) ||
	    strlen(ns->valuestring) >= sizeof(r->netns) ||
	    strlen(boot->valuestring) >= sizeof(r->boot_id))
		goto out;
	r->set = set->valueint;
	strcpy(r->container_id, cid->valuestring);
	strcpy(r->ifname, ifn->valuestring);
	strcpy(r->netns, ns->valuestring);
	strcpy(r->boot_id, boot->valuestring);
	r->created = (long long)created->valuedouble;
	ret = 0;
out:
	cJSON_Delete(j);
	return ret;
}

/*
 * Read record `name` unless it is an orphan: an a- or c- entry alone
 * (st_nlink == 1) is an ADD that died before it could succeed, and is
 * removed instead (*orphan). The stat in *st comes from the descriptor the
 * record is read through, so the link count and inode cost no extra lookup.
 * Records never change once linked: st_size is the whole of one.
 */
static int record_load(struct pool *p, const char *name, struct record *r, struct stat *st,
		       bool *orphan, struct pool_diag *d)
{
	char buf[RECORD_MAX];
	size_t len = 0;
	ssize_t n = 0;
	int fd, ret;

	*orphan = false;
	fd = openat(p->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {
		/* No writer makes a symlink: a lone entry, like any other. */
		*orphan = true;
		return state_remove(p->dirfd, name);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		ret = -errno;
		goto out;
	}
	if (st->st_nlink == 1) {
		*orphan = true;
		ret = state_remove(p->dirfd, name);
		goto out;
	}
	ret = -EBADMSG;
	if (!S_ISREG(st->st_mode) || st->st_size > RECORD_MAX)
		goto bad;
	while (len < (size_t)st->st_size) {
		n = read(fd, buf + len, (size_t)st->st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (n < 0)
		ret = -errno;
	else if (len == (size_t)st->st_size)
		ret = record_parse(buf, len, r);
bad:
	if (ret < 0) {
		diag_file(p, d, name);
		if (!strncmp(name, "a-", 2))
			snprintf(d->addr, sizeof(d->addr), "%s", name + 2);
	}
out:
	close(fd);
	return ret;
}

/* A record known to be complete (its link count was checked): -ENOENT when it is not. */
static int record_read(struct pool *p, const char *name, struct record *r, struct pool_diag *d)
{
	struct stat st;
	bool orphan;
	int ret;

	ret = record_load(p, name, r, &st, &orphan, d);
	return ret == 0 && orphan ? -ENOENT : ret;
}

/* Write the record of (owner, set, addr) into tmp/: its name goes to tmpname. */
static int record_write_tmp(struct pool *p, const struct pool_owner *o, int set,
			    const struct ipam_addr *a, char *tmpname, size_t tmplen)
{
	char s[IPAM_ADDR_STRLEN], *buf = NULL;
	size_t len;
	cJSON *j;
	int ret = -ENOMEM;

	ipam_addr_format(a, s, sizeof(s));
	j = cJSON_CreateObject();
	if (!j ||
	    !cJSON_AddStringToObject(j, "address", s) ||
	    !cJSON_AddNumberToObject(j, "set", set) ||
	    !cJSON_AddStringToObject(j, "containerID", o->container_id) ||
	    !cJSON_AddStringToObject(j, "ifname", o->ifname) ||
	    !cJSON_AddStringToObject(j, "netns", o->netns ? o->netns : "") ||
	    !cJSON_AddStringToObject(j, "bootID", p->boot_id) ||
	    !cJSON_AddNumberToObject(j, "created", (double)time(NULL)))
		goto out;
	buf = cJSON_PrintUnformatted(j);
	if (!buf)
		goto out;
	len = strlen(buf);
	ret = state_seal(&buf, &len);
	if (ret < 0)
		goto out;
	ret = state_write_tmp(p->tmpfd, buf, len, tmpname, tmplen);
out:
	free(buf);
	cJSON_Delete(j);
	return ret;
}

/* 0 and *nlink, or -ENOENT. */
static int link_count(struct pool *p, const char *name, nlink_t *nlink)
{
	struct stat st;

	if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	*nlink = st.st_nlink;
	return 0;
}

/* An a- or c- entry alone is an ADD that died before it could succeed. */
static int reclaim_if_orphan(struct pool *p, const char *name, bool *orphan)
{
	nlink_t n = 0;
	int ret;

	*orphan = false;
	ret = link_count(p, name, &n);
	if (ret < 0)
		return ret;
	if (n != 1)
		return 0;
	*orphan = true;
	return state_remove(p->dirfd, name);
}

static int release(struct pool *p, const struct record *r)
{
	char aname[NAME_MAX_LEN], cname[NAME_MAX_LEN], rname[NAME_MAX_LEN];
	struct pool_owner o = { r->container_id, r->ifname, NULL };
	struct timespec now[2];
	int ret;

	name_owner(cname, sizeof(cname), &o, r->set);
	name_addr(aname, sizeof(aname), 'a', &r->addr);
	ret = state_remove(p->dirfd, cname);
	if (ret < 0)
		return ret;
	if (p->conf->cooldown <= 0)
		return state_remove(p->dirfd, aname);
	name_addr(rname, sizeof(rname), 'r', &r->addr);
	if (renameat(p->dirfd, aname, p->dirfd, rname) < 0)
		return errno == ENOENT ? 0 : -errno;
	clock_gettime(CLOCK_REALTIME, &now[0]);
	now[1] = now[0];
	/* The rest period starts at release, not at the record's creation. */
	if (utimensat(p->dirfd, rname, now, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

/* ---- lookup and reservation ---- */

/* The owner's complete reservation in set s: 0, -ENOENT, or -EBADMSG. */
static int lookup(struct pool *p, const struct pool_owner *o, int s, struct record *r,
		  struct pool_diag *d)
{
	char cname[NAME_MAX_LEN], aname[NAME_MAX_LEN];
	struct stat cst, ast;
	bool orphan;
	int ret;

	name_owner(cname, sizeof(cname), o, s);
	ret = record_load(p, cname, r, &cst, &orphan, d);
	if (ret < 0)
		return ret;
	if (orphan)
		return -ENOENT;
	name_addr(aname, sizeof(aname), 'a', &r->addr);
	if (fstatat(p->dirfd, aname, &ast, AT_SYMLINK_NOFOLLOW) < 0 ||
	    cst.st_ino != ast.st_ino || r->set != s || strcmp(r->container_id, o->container_id) ||
	    strcmp(r->ifname, o->ifname)) {
		diag_file(p, d, cname);
		ipam_addr_format(&r->addr, d->addr, sizeof(d->addr));
		return -EBADMSG;
	}
	return 0;
}

/*
 * Is a free for a new reservation? -EEXIST when held, -EBUSY when resting
 * (unless ignore_rest), reclaiming what is stale on the way.
 */
static int probe(struct pool *p, const struct ipam_addr *a, bool ignore_rest)
{
	char aname[NAME_MAX_LEN], rname[NAME_MAX_LEN];
	struct stat st;
	bool orphan;
	int ret;

	name_addr(aname, sizeof(aname), 'a', a);
	ret = reclaim_if_orphan(p, aname, &orphan);
	if (ret == 0 && !orphan)
		return -EEXIST;
	if (ret < 0 && ret != -ENOENT)
		return ret;
	if (p->conf->cooldown <= 0)
		return 0;
	name_addr(rname, sizeof(rname), 'r', a);
	if (fstatat(p->dirfd, rname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!ignore_rest && time(NULL) - st.st_mtime < p->conf->cooldown)
		return -EBUSY;
	return state_remove(p->dirfd, rname);
}

/* Link a fresh record as a- then c-; the caller fsyncs the directory. */
static int reserve(struct pool *p, const struct pool_owner *o, int s, const struct ipam_addr *a)
{
	char tmpname[NAME_MAX_LEN], aname[NAME_MAX_LEN], cname[NAME_MAX_LEN];
	int ret;

	ret = record_write_tmp(p, o, s, a, tmpname, sizeof(tmpname));
	if (ret < 0)
		return ret;
	name_addr(aname, sizeof(aname), 'a', a);
	name_owner(cname, sizeof(cname), o, s);
	if (linkat(p->tmpfd, tmpname, p->dirfd, aname, 0) < 0) {
		ret = -errno;
		goto out;
	}
	if (linkat(p->tmpfd, tmpname, p->dirfd, cname, 0) < 0) {
		ret = -errno;
		state_remove(p->dirfd, aname);
	}
out:
	state_remove(p->tmpfd, tmpname);
	return ret;
}

/*
 * Round-robin is a policy, not state: last.<set> is rewritten in place,
 * without a temp file or a rename, since a lost or torn write only moves
 * where the next walk starts. -errno when it cannot be opened.
 */
static int open_last(struct pool *p, int s)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "last.%d", s);
	fd = openat(p->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/* The address up to the first newline: a shorter write leaves the tail of a longer one after it. */
static int read_last(int fd, struct ipam_addr *a)
{
	char buf[IPAM_ADDR_STRLEN + 1];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -ENODATA;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return ipam_addr_parse(buf, a);
}

static void write_last(int fd, const struct ipam_addr *a)
{
	char buf[IPAM_ADDR_STRLEN + 1];
	size_t len;

	ipam_addr_format(a, buf, sizeof(buf) - 1);
	len = strlen(buf);
	buf[len++] = '\n';
	if (pwrite(fd, buf, len, 0) != (ssize_t)len)
		log_debug("last address of the walk not saved: %s", strerror(errno));
}

/* Calls fn on every directory entry whose name starts with prefix. */
static int scan(struct pool *p, const char *prefix,
		int (*fn)(struct pool *p, const char *name, void *arg), void *arg)
{
	size_t plen = strlen(prefix);
	struct dirent *e;
	int fd, ret = 0;
	DIR *dir;

	fd = openat(p->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, prefix, plen)) {
			ret = fn(p, e->d_name, arg);
			if (ret < 0)
				break;
		}
	closedir(dir);
	return ret;
}

struct reclaim_arg {
	int set;			/* -1: every set */
	int reclaimed;
	struct pool_diag *d;
};

/* Records of an earlier boot belong to sandboxes that no longer exist. */
static int reclaim_stale_one(struct pool *p, const char *name, void *arg)
{
	struct reclaim_arg *ra = arg;
	struct record r;
	struct stat st;
	bool orphan;
	int ret;

	ret = record_load(p, name, &r, &st, &orphan, ra->d);
	if (ret == -ENOENT || orphan)
		return 0;
	if (ret < 0)
		return ret;
	if ((ra->set >= 0 && r.set != ra->set) || !strcmp(r.boot_id, p->boot_id))
		return 0;
	ret = release(p, &r);
	if (ret == 0)
		ra->reclaimed++;
	return ret;
}

static int allocate(struct pool *p, const struct pool_owner *o, int s, struct ipam_addr *out,
		    struct pool_diag *d)
{
	struct reclaim_arg ra = { s, 0, d };
	struct ipam_addr cur, cand;
	ipam_u128 cap, i;
	int ret, pass, last_fd;

	last_fd = open_last(p, s);
	if (last_fd < 0 || read_last(last_fd, &cur) < 0)
		cur.family = 0;
	cap = ipam_capacity(p->conf, s);
	for (pass = 0; pass < 2; pass++) {
		cand = cur;
		for (i = 0; i < cap; i++) {
			ret = ipam_next(p->conf, s, &cand, &cand);
			if (ret < 0)
				goto out;
			ret = probe(p, &cand, false);
			if (ret == 0)
				ret = reserve(p, o, s, &cand);
			if (ret == -EEXIST || ret == -EBUSY)
				continue;
			if (ret < 0)
				goto out;
			*out = cand;
			if (last_fd >= 0)
				write_last(last_fd, &cand);
			goto out;
		}
		if (pass == 1)
			break;
		ra.reclaimed = 0;
		ret = scan(p, "a-", reclaim_stale_one, &ra);
		if (ret < 0)
			goto out;
		if (ra.reclaimed == 0)
			break;
	}
	d->set = s;
	ret = -ENOSPC;
out:
	if (last_fd >= 0)
		close(last_fd);
	return ret;
}

static int reserve_requested(struct pool *p, const struct pool_owner *o, int s,
			     const struct ipam_addr *a, struct pool_diag *d)
{
	char aname[NAME_MAX_LEN];
	struct record holder;
	int ret;

	ret = probe(p, a, true);
	if (ret == 0)
		ret = reserve(p, o, s, a);
	if (ret != -EEXIST)
		return ret;
	ipam_addr_format(a, d->addr, sizeof(d->addr));
	d->set = s;
	name_addr(aname, sizeof(aname), 'a', a);
	if (record_read(p, aname, &holder, d) == 0)
		snprintf(d->holder, sizeof(d->holder), "%s:%s", holder.container_id, holder.ifname);
	return -EADDRINUSE;
}

int pool_add(struct pool *p, const struct pool_owner *o, const struct ipam_addr *req, int n_req,
	     struct ipam_addr out[IPAM_MAX_SETS], struct pool_diag *d)
{
	const struct ipam_conf *c = p->conf;
	const struct ipam_addr *want[IPAM_MAX_SETS] = { NULL };
	bool created[IPAM_MAX_SETS] = { false };
	struct record r;
	int s, i, ret;

	for (i = 0; i < n_req; i++) {
		s = ipam_set_of(c, &req[i]);
		if (s < 0 || !ipam_usable(c, s, &req[i])) {
			ipam_addr_format(&req[i], d->addr, sizeof(d->addr));
			return -EADDRNOTAVAIL;
		}
		if (want[s]) {
			d->set = s;
			return -EINVAL;
		}
		want[s] = &req[i];
	}
	for (s = 0; s < c->n_sets; s++) {
		ret = lookup(p, o, s, &r, d);
		if (ret == 0) {
			out[s] = r.addr;
			continue;
		}
		if (ret != -ENOENT)
			goto rollback;
		if (want[s])
			ret = reserve_requested(p, o, s, want[s], d);
		else
			ret = allocate(p, o, s, &out[s], d);
		if (ret < 0)
			goto rollback;
		if (want[s])
			out[s] = *want[s];
		created[s] = true;
	}
	return state_fsync_dir(p->dirfd);

rollback:
	for (i = 0; i < s; i++)
		if (created[i]) {
			r.addr = out[i];
			r.set = i;
			snprintf(r.container_id, sizeof(r.container_id), "%s", o->container_id);
			snprintf(r.ifname, sizeof(r.ifname), "%s", o->ifname);
			release(p, &r);
		}
	state_fsync_dir(p->dirfd);
	return ret;
}

int pool_del(struct pool *p, const struct pool_owner *o, int *released, struct pool_diag *d)
{
	char cname[NAME_MAX_LEN];
	struct record r;
	struct stat st;
	bool orphan;
	int s, ret, changed = 0;

	*released = 0;
	/* Every possible set: the config may have lost a set since the ADD. */
	for (s = 0; s < IPAM_MAX_SETS; s++) {
		name_owner(cname, sizeof(cname), o, s);
		ret = record_load(p, cname, &r, &st, &orphan, d);
		if (ret == -ENOENT)
			continue;
		if (ret < 0)
			return ret;
		changed = 1;
		if (orphan)
			continue;
		ret = release(p, &r);
		if (ret < 0)
			return ret;
		(*released)++;
	}
	return changed ? state_fsync_dir(p->dirfd) : 0;
}

int pool_check(struct pool *p, const struct pool_owner *o, struct ipam_addr out[IPAM_MAX_SETS],
	       struct pool_diag *d)
{
	struct record r;
	int s, ret;

	for (s = 0; s < p->conf->n_sets; s++) {
		ret = lookup(p, o, s, &r, d);
		if (ret == -ENOENT) {
			char cname[NAME_MAX_LEN];

			d->set = s;
			name_owner(cname, sizeof(cname), o, s);
			diag_file(p, d, cname);
		}
		if (ret < 0)
			return ret;
		out[s] = r.addr;
	}
	return 0;
}

struct gc_arg {
	const struct cni_attachment *valid;
	int n_valid;
	int released;
	struct pool_diag *d;
};

static int gc_one(struct pool *p, const char *name, void *arg)
{
	struct gc_arg *ga = arg;
	struct record r;
	struct stat st;
	bool orphan;
	int ret;

	ret = record_load(p, name, &r, &st, &orphan, ga->d);
	if (ret == -ENOENT || orphan)
		return 0;
	if (ret < 0)
		return ret;
	if (!strcmp(r.boot_id, p->boot_id) &&
	    cni_attachment_valid(ga->valid, ga->n_valid, r.container_id, r.ifname))
		return 0;
	ret = release(p, &r);
	if (ret == 0)
		ga->released++;
	return ret;
}

/* A resting address past its cooldown, or a lone a- left by a dead ADD. */
static int gc_sweep(struct pool *p, const char *name, void *arg)
{
	struct stat st;
	bool orphan;

	int ret;

	(void)arg;
	if (name[0] == 'a') {
		ret = reclaim_if_orphan(p, name, &orphan);
		return ret == -ENOENT ? 0 : ret;
	}
	if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (time(NULL) - st.st_mtime >= p->conf->cooldown)
		return state_remove(p->dirfd, name);
	return 0;
}

int pool_gc(struct pool *p, const struct cni_attachment *valid, int n_valid, int *released,
	    struct pool_diag *d)
{
	struct gc_arg ga = { valid, n_valid, 0, d };
	int ret;

	*released = 0;
	ret = scan(p, "c-", gc_one, &ga);
	if (ret == 0)
		ret = scan(p, "a-", gc_sweep, NULL);
	if (ret == 0)
		ret = scan(p, "r-", gc_sweep, NULL);
	*released = ga.released;
	if (ret < 0)
		return ret;
	return state_fsync_dir(p->dirfd);
}

struct count_arg {
	ipam_u128 held[IPAM_MAX_SETS];
	int stale[IPAM_MAX_SETS];
	bool read_boot;
	struct pool_diag *d;
};

static int count_one(struct pool *p, const char *name, void *arg)
{
	struct count_arg *ca = arg;
	struct ipam_addr a;
	struct record r;
	struct stat st;
	int s, ret;

	if (ipam_addr_parse(name + 2, &a) < 0)
		return 0;
	s = ipam_set_of(p->conf, &a);
	if (s < 0 || !ipam_usable(p->conf, s, &a))
		return 0;
	if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (name[0] == 'r') {
		if (time(NULL) - st.st_mtime < p->conf->cooldown)
			ca->held[s]++;
		return 0;
	}
	if (st.st_nlink < 2)
		return 0;
	ca->held[s]++;
	if (!ca->read_boot)
		return 0;
	ret = record_read(p, name, &r, ca->d);
	if (ret < 0)
		return ret;
	if (strcmp(r.boot_id, p->boot_id))
		ca->stale[s]++;
	return 0;
}

int pool_status(struct pool *p, struct pool_diag *d)
{
	struct count_arg ca;
	int s, ret, full = 0;

	memset(&ca, 0, sizeof(ca));
	ca.d = d;
	ret = scan(p, "a-", count_one, &ca);
	if (ret == 0 && p->conf->cooldown > 0)
		ret = scan(p, "r-", count_one, &ca);
	if (ret < 0)
		return ret;
	for (s = 0; s < p->conf->n_sets; s++)
		full += ca.held[s] >= ipam_capacity(p->conf, s);
	if (!full)
		return 0;
	/* Only a full set is worth reading every record for boot IDs. */
	memset(&ca, 0, sizeof(ca));
	ca.d = d;
	ca.read_boot = true;
	ret = scan(p, "a-", count_one, &ca);
	if (ret == 0 && p->conf->cooldown > 0)
		ret = scan(p, "r-", count_one, &ca);
	if (ret < 0)
		return ret;
	for (s = 0; s < p->conf->n_sets; s++)
		if (ca.held[s] - (ipam_u128)ca.stale[s] >= ipam_capacity(p->conf, s)) {
			d->set = s;
			return -ENOSPC;
		}
	return 0;
}
