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

#include "file.h"
#include "lock.h"
#include "log.h"
#include "state.h"



static void diag_file(struct pool *p, struct pool_diag *d, const char *name)
{
	snprintf(d->file, sizeof(d->file), "%s/%s", p->path, name);
}


int pool_boot_id(const char *proc_root, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", proc_root);
	n = file_read(AT_FDCWD, path, 0, buf, len);
	if (n <= 0)
		return n < 0 ? (int)n : -ENODATA;
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
			/*
			 * Nothing of ours is ever a directory or in use here:
			 * what cannot be removed is someone else's mess, and
			 * must not stop the store (the writer's names never
			 * collide with it, see state_write_tmp).
			 */
			if (unlinkat(p->tmpfd, e->d_name, 0) < 0 && errno == EISDIR &&
			    unlinkat(p->tmpfd, e->d_name, AT_REMOVEDIR) < 0)
				log_debug("store %s: tmp/%s left in place: %s", p->path,
					  e->d_name, strerror(errno));
		}
	}
	return n < 0 ? -errno : 0;
}

int pool_open(struct pool *p, const struct ipam_conf *conf, const char *network,
	      const char *proc_root, unsigned timeout_ms, struct pool_diag *d)
{
	struct timespec up;
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
	ret = clock_gettime(CLOCK_BOOTTIME, &up);
	if (ret < 0)
		return -errno;
	p->boot_time = time(NULL) - up.tv_sec;
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


static const char *unreadable_why(int ret)
{
	return ret == -EBADMSG ? "not a valid record" : strerror(-ret);
}


/*
 * Make `to` a hard link of `from`, replacing it: the link goes through
 * tmp/ and a rename, so `to` is never missing on the way.
 */
static int relink(struct pool *p, const char *from, const char *to)
{
	static const char tmp[] = "relink";

	unlinkat(p->tmpfd, tmp, 0);
	if (linkat(p->dirfd, from, p->tmpfd, tmp, 0) < 0)
		return -errno;
	if (renameat(p->tmpfd, tmp, p->dirfd, to) < 0) {
		int ret = -errno;

		unlinkat(p->tmpfd, tmp, 0);
		return ret;
	}
	return 0;
}


/*
 * Free the address of reservation r: a- first, then c-, so a release cut
 * short leaves a lone c-, which frees nothing and which the owner's next
 * DEL removes. An a- or c- that is not r's (another owner's, or
 * unreadable) is left alone: an a- holds its address whatever it says.
 * c_st: r was just read from its c-, whose stat this is.
 */
static int release(struct pool *p, const struct pool_record *r, const struct stat *c_st)
{
	char aname[POOL_NAME_MAX], cname[POOL_NAME_MAX], rname[POOL_NAME_MAX];
	struct pool_owner o = { r->container_id, r->ifname, NULL };
	struct stat ast, cst;
	struct pool_record x;
	struct timespec now[2];
	bool a_ours = false, c_ours = false, c_exists = true;
	int ret;

	pool_record_name_owner(cname, sizeof(cname), &o, r->set);
	pool_record_name_addr(aname, sizeof(aname), 'a', &r->addr);
	if (c_st) {
		cst = *c_st;
		c_ours = true;
	} else if (fstatat(p->dirfd, cname, &cst, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return -errno;
		c_exists = false;
	} else {
		c_ours = pool_record_load(p->dirfd, cname, &x, &cst) == 0 && pool_record_same(&x, r);
	}
	if (fstatat(p->dirfd, aname, &ast, AT_SYMLINK_NOFOLLOW) == 0) {
		/* The common case: a- and c- are one file, whose content is known. */
		if (c_exists && ast.st_ino == cst.st_ino && ast.st_dev == cst.st_dev)
			a_ours = c_ours;
		else
			a_ours = pool_record_load(p->dirfd, aname, &x, &ast) == 0 &&
				 pool_record_same(&x, r);
	} else if (errno != ENOENT) {
		return -errno;
	}
	if (a_ours) {
		if (p->conf->cooldown <= 0) {
			ret = state_remove(p->dirfd, aname);
		} else {
			pool_record_name_addr(rname, sizeof(rname), 'r', &r->addr);
			ret = renameat(p->dirfd, aname, p->dirfd, rname) < 0 ? -errno : 0;
			clock_gettime(CLOCK_REALTIME, &now[0]);
			now[1] = now[0];
			/* The rest period starts at release, not at the record's creation. */
			if (ret == 0 && utimensat(p->dirfd, rname, now, AT_SYMLINK_NOFOLLOW) < 0)
				ret = -errno;
		}
		if (ret < 0)
			return ret;
	}
	return c_ours ? state_remove(p->dirfd, cname) : 0;
}

/* Calls fn on every directory entry whose name starts with prefix; stops at a non-zero return. */
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
			if (ret)
				break;
		}
	closedir(dir);
	return ret;
}

struct same_file {
	dev_t dev;
	ino_t ino;
	char name[POOL_NAME_MAX];
};

static int find_same_file(struct pool *p, const char *name, void *arg)
{
	struct same_file *sf = arg;
	struct stat st;

	if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_ino != sf->ino ||
	    st.st_dev != sf->dev)
		return 0;
	snprintf(sf->name, sizeof(sf->name), "%s", name);
	return 1;
}

/*
 * An entry the store cannot read: an a- holds its address until a person
 * looks, so say which and how to free it. A c- that shares no a- holds
 * nothing, and goes.
 */
static void unreadable(struct pool *p, const char *name, int why)
{
	struct same_file sf = { 0 };
	const char *aname = name;
	struct stat st;

	if (name[0] == 'c') {
		if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return;
		sf.dev = st.st_dev;
		sf.ino = st.st_ino;
		if (st.st_nlink < 2 || scan(p, "a-", find_same_file, &sf) != 1) {
			log_warn("store %s: %s is unreadable (%s) and holds no address: removed",
				 p->path, name, unreadable_why(why));
			state_remove(p->dirfd, name);
			return;
		}
		aname = sf.name;
	}
	log_warn("store %s: %s is unreadable (%s): %s stays held; if no pod uses it, remove %s/%s by hand",
		 p->path, name, unreadable_why(why), aname + 2, p->path, aname);
}


/* ---- lookup and reservation ---- */

/*
 * The owner's reservation in set s: 0, -ENOENT, or -EBADMSG (its c- is
 * unreadable). Repairs on the way: a store copied without hard links has
 * its pair made one file again; with `repair` (ADD), a c- whose a- is
 * missing (an ADD or a release cut short between its two links) gets its
 * a- back, and a c- whose address went elsewhere is dropped.
 */
static int lookup(struct pool *p, const struct pool_owner *o, int s, struct pool_record *r,
		  bool repair, struct pool_diag *d)
{
	char cname[POOL_NAME_MAX], aname[POOL_NAME_MAX], rname[POOL_NAME_MAX];
	struct pool_record x;
	struct stat cst, ast;
	int ret;

	pool_record_name_owner(cname, sizeof(cname), o, s);
	diag_file(p, d, cname);
	ret = pool_record_load(p->dirfd, cname, r, &cst);
	if (ret == -ENOENT)
		return ret;
	if (ret == 0 && !pool_record_same_owner(r, o->container_id, o->ifname, s))
		ret = -EBADMSG;
	if (ret < 0 && repair) {
		/* An unreadable c- alone holds nothing: it goes, and ADD goes on. */
		unreadable(p, cname, ret);
		if (fstatat(p->dirfd, cname, &cst, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			return -ENOENT;
	}
	if (ret < 0)
		return ret;
	pool_record_name_addr(aname, sizeof(aname), 'a', &r->addr);
	if (fstatat(p->dirfd, aname, &ast, AT_SYMLINK_NOFOLLOW) == 0 &&
	    ast.st_ino == cst.st_ino && ast.st_dev == cst.st_dev)
		return 0;
	ret = pool_record_load(p->dirfd, aname, &x, &ast);
	if (ret == 0 && pool_record_same(&x, r))
		return relink(p, aname, cname);
	if (!repair) {
		d->set = s;
		diag_file(p, d, aname);
		return -ENOENT;
	}
	if (ret == -ENOENT) {
		/* Free, since no a- holds it; a resting r- can only be this owner's own. */
		pool_record_name_addr(rname, sizeof(rname), 'r', &r->addr);
		state_remove(p->dirfd, rname);
		return linkat(p->dirfd, cname, p->dirfd, aname, 0) < 0 ? -errno : 0;
	}
	if (ret < 0)
		unreadable(p, aname, ret);
	ret = state_remove(p->dirfd, cname);
	return ret < 0 ? ret : -ENOENT;
}

/*
 * Is a free for a new reservation? -EEXIST when an a- exists, whatever it
 * holds; -EBUSY when resting (unless ignore_rest).
 */
static int probe(struct pool *p, const struct ipam_addr *a, bool ignore_rest)
{
	char aname[POOL_NAME_MAX], rname[POOL_NAME_MAX];
	struct stat st;

	pool_record_name_addr(aname, sizeof(aname), 'a', a);
	if (fstatat(p->dirfd, aname, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	if (errno != ENOENT)
		return -errno;
	if (p->conf->cooldown <= 0)
		return 0;
	pool_record_name_addr(rname, sizeof(rname), 'r', a);
	if (fstatat(p->dirfd, rname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!ignore_rest && time(NULL) - st.st_mtime < p->conf->cooldown)
		return -EBUSY;
	return state_remove(p->dirfd, rname);
}

/*
 * The record goes in as c- first, then a-: cut short in between, a lone
 * c- frees nothing and holds nothing, and the owner's DEL removes it.
 */
static int reserve(struct pool *p, const struct pool_owner *o, int s, const struct ipam_addr *a)
{
	char tmpname[POOL_NAME_MAX], aname[POOL_NAME_MAX], cname[POOL_NAME_MAX];
	int ret;

	ret = pool_record_write_tmp(p->tmpfd, o, s, a, p->boot_id, tmpname, sizeof(tmpname));
	if (ret < 0)
		return ret;
	pool_record_name_addr(aname, sizeof(aname), 'a', a);
	pool_record_name_owner(cname, sizeof(cname), o, s);
	if (renameat(p->tmpfd, tmpname, p->dirfd, cname) < 0) {
		ret = -errno;
		state_remove(p->tmpfd, tmpname);
		return ret;
	}
	if (linkat(p->dirfd, cname, p->dirfd, aname, 0) < 0) {
		ret = -errno;
		state_remove(p->dirfd, cname);
	}
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
	fd = openat(p->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
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

/*
 * A record met by a scan: 0 when it can be acted on; 1 when it is gone,
 * or unreadable or not what its name says (logged, and left held).
 */
static int scanned(struct pool *p, const char *name, struct pool_record *r, struct stat *st,
		   bool (*names)(const char *name, const struct pool_record *r))
{
	int ret = pool_record_load(p->dirfd, name, r, st);

	if (ret == -ENOENT)
		return 1;
	if (ret < 0 || !names(name, r)) {
		unreadable(p, name, ret < 0 ? ret : -EBADMSG);
		return 1;
	}
	return 0;
}

struct reclaim_arg {
	int set;			/* -1: every set */
	int reclaimed;
};

/*
 * Records are not fsync'd (README, "The pool-ipam store"): a power loss may
 * leave one garbled, and then its boot ID cannot be read. Its time can: a
 * file last written before this boot began belongs to a sandbox of an
 * earlier boot as surely as a readable record with another boot ID. A
 * second of slack for the boot time's rounding.
 */
static bool before_boot(const struct pool *p, const char *name)
{
	struct stat st;

	return fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       st.st_mtime < p->boot_time - 1;
}

/* Records of an earlier boot belong to sandboxes that no longer exist. */
static int reclaim_stale_one(struct pool *p, const char *name, void *arg)
{
	struct reclaim_arg *ra = arg;
	struct pool_record r;
	struct ipam_addr a;
	struct stat st;
	int ret;

	ret = pool_record_load(p->dirfd, name, &r, &st);
	if (ret != -ENOENT && (ret < 0 || !pool_record_names_a(name, &r)) &&
	    ipam_addr_parse(name + 2, &a) == 0 &&
	    (ra->set < 0 || ipam_set_of(p->conf, &a) == ra->set) && before_boot(p, name)) {
		log_info("store %s: %s is unreadable and older than this boot: released",
			 p->path, name);
		ret = state_remove(p->dirfd, name);
		if (ret == 0)
			ra->reclaimed++;
		return ret == -ENOENT ? 0 : ret;
	}
	if (scanned(p, name, &r, &st, pool_record_names_a))
		return 0;
	if ((ra->set >= 0 && r.set != ra->set) || !strcmp(r.boot_id, p->boot_id))
		return 0;
	ret = release(p, &r, NULL);
	if (ret == 0)
		ra->reclaimed++;
	return ret;
}

static int allocate(struct pool *p, const struct pool_owner *o, int s, struct ipam_addr *out,
		    struct pool_diag *d)
{
	struct reclaim_arg ra = { s, 0 };
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
				break;
			ret = probe(p, &cand, false);
			if (ret == 0)
				ret = reserve(p, o, s, &cand);
			if (ret == -EEXIST || ret == -EBUSY)
				continue;
			if (ret < 0) {
				snprintf(d->file, sizeof(d->file), "%s", p->path);
				goto out;
			}
			*out = cand;
			if (last_fd >= 0)
				write_last(last_fd, &cand);
			goto out;
		}
		if (pass == 1)
			break;
		ret = scan(p, "a-", reclaim_stale_one, &ra);
		if (ret < 0)
			goto out;
		if (ra.reclaimed == 0)
			break;
	}
	d->set = s;
	ret = -EXFULL;
out:
	if (last_fd >= 0)
		close(last_fd);
	return ret;
}

static int reserve_requested(struct pool *p, const struct pool_owner *o, int s,
			     const struct ipam_addr *a, struct pool_diag *d)
{
	char aname[POOL_NAME_MAX];
	struct pool_record holder;
	struct stat st;
	int ret;

	ret = probe(p, a, true);
	if (ret == 0)
		ret = reserve(p, o, s, a);
	if (ret != -EEXIST) {
		if (ret < 0)
			snprintf(d->file, sizeof(d->file), "%s", p->path);
		return ret;
	}
	ipam_addr_format(a, d->addr, sizeof(d->addr));
	d->set = s;
	pool_record_name_addr(aname, sizeof(aname), 'a', a);
	if (pool_record_load(p->dirfd, aname, &holder, &st) == 0)
		snprintf(d->holder, sizeof(d->holder), "%s:%s", holder.container_id, holder.ifname);
	return -EADDRINUSE;
}

int pool_add(struct pool *p, const struct pool_owner *o, const struct ipam_addr *req, int n_req,
	     struct ipam_addr out[IPAM_MAX_SETS], struct pool_diag *d)
{
	const struct ipam_conf *c = p->conf;
	const struct ipam_addr *want[IPAM_MAX_SETS] = { NULL };
	bool created[IPAM_MAX_SETS] = { false };
	struct pool_record r;
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
		ret = lookup(p, o, s, &r, true, d);
		if (ret == 0 && want[s] && ipam_addr_cmp(&r.addr, want[s]) != 0) {
			/* A repeated ADD returns what the first one gave, or nothing. */
			d->set = s;
			ipam_addr_format(&r.addr, d->addr, sizeof(d->addr));
			ipam_addr_format(want[s], d->holder, sizeof(d->holder));
			ret = -EALREADY;
			goto rollback;
		}
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
	return 0;

rollback:
	for (i = 0; i < s; i++)
		if (created[i]) {
			memset(&r, 0, sizeof(r));
			r.addr = out[i];
			r.set = i;
			snprintf(r.container_id, sizeof(r.container_id), "%s", o->container_id);
			snprintf(r.ifname, sizeof(r.ifname), "%s", o->ifname);
			release(p, &r, NULL);
		}
	return ret;
}

int pool_del(struct pool *p, const struct pool_owner *o, int *released, struct pool_diag *d)
{
	char cname[POOL_NAME_MAX];
	struct pool_record r;
	struct stat st;
	int s, ret;

	*released = 0;
	/* Every possible set: the config may have lost a set since the ADD. */
	for (s = 0; s < IPAM_MAX_SETS; s++) {
		pool_record_name_owner(cname, sizeof(cname), o, s);
		ret = pool_record_load(p->dirfd, cname, &r, &st);
		if (ret == -ENOENT)
			continue;
		if (ret == 0 && !pool_record_same_owner(&r, o->container_id, o->ifname, s))
			ret = -EBADMSG;
		if (ret < 0) {
			unreadable(p, cname, ret);
			continue;
		}
		ret = release(p, &r, &st);
		if (ret < 0) {
			diag_file(p, d, cname);
			return ret;
		}
		(*released)++;
	}
	return 0;
}

int pool_check(struct pool *p, const struct pool_owner *o, struct ipam_addr out[IPAM_MAX_SETS],
	       struct pool_diag *d)
{
	struct pool_record r;
	int s, ret;

	for (s = 0; s < p->conf->n_sets; s++) {
		ret = lookup(p, o, s, &r, false, d);
		if (ret == -ENOENT)
			d->set = s;
		if (ret < 0)
			return ret;
		out[s] = r.addr;
	}
	return 0;
}

struct gc_arg {
	bool (*owned)(const char *container_id, const char *ifname, void *arg);
	void *arg;
	int released;
};

static bool gc_keeps(struct pool *p, const struct gc_arg *ga, const struct pool_record *r)
{
	return !strcmp(r->boot_id, p->boot_id) &&
	       ga->owned(r->container_id, r->ifname, ga->arg);
}

/* The index: what no valid attachment owns is released. */
static int gc_index(struct pool *p, const char *name, void *arg)
{
	struct gc_arg *ga = arg;
	struct pool_record r;
	struct stat st;
	int ret;

	if (scanned(p, name, &r, &st, pool_record_names_c))
		return 0;
	if (gc_keeps(p, ga, &r))
		return 0;
	ret = release(p, &r, &st);
	if (ret == 0)
		ga->released++;
	return ret;
}

/* The reservations themselves: one without an index gets it back, or is released. */
static int gc_addr(struct pool *p, const char *name, void *arg)
{
	struct pool_owner o;
	struct gc_arg *ga = arg;
	char cname[POOL_NAME_MAX];
	struct pool_record r;
	struct stat st;
	int ret;

	if (scanned(p, name, &r, &st, pool_record_names_a))
		return 0;
	if (!gc_keeps(p, ga, &r)) {
		ret = release(p, &r, NULL);
		if (ret == 0)
			ga->released++;
		return ret;
	}
	o.container_id = r.container_id;
	o.ifname = r.ifname;
	pool_record_name_owner(cname, sizeof(cname), &o, r.set);
	if (fstatat(p->dirfd, cname, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return 0;
	return linkat(p->dirfd, name, p->dirfd, cname, 0) < 0 ? -errno : 0;
}

/* A resting address past its cooldown. */
static int gc_sweep(struct pool *p, const char *name, void *arg)
{
	struct stat st;

	(void)arg;
	if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (time(NULL) - st.st_mtime >= p->conf->cooldown)
		return state_remove(p->dirfd, name);
	return 0;
}

int pool_gc(struct pool *p, bool (*owned)(const char *container_id, const char *ifname, void *arg),
	    void *arg, int *released, struct pool_diag *d)
{
	struct gc_arg ga = { owned, arg, 0 };
	int ret;

	*released = 0;
	ret = scan(p, "c-", gc_index, &ga);
	if (ret == 0)
		ret = scan(p, "a-", gc_addr, &ga);
	if (ret == 0)
		ret = scan(p, "r-", gc_sweep, NULL);
	*released = ga.released;
	if (ret < 0)
		snprintf(d->file, sizeof(d->file), "%s", p->path);
	return ret;
}

struct count_arg {
	ipam_u128 held[IPAM_MAX_SETS];
	int stale[IPAM_MAX_SETS];
	bool read_boot;
};

/* Every a- holds its address, readable or not, until it is known to be of an earlier boot. */
static int count_one(struct pool *p, const char *name, void *arg)
{
	struct count_arg *ca = arg;
	struct pool_record r;
	struct ipam_addr a;
	struct stat st;
	int s;

	if (ipam_addr_parse(name + 2, &a) < 0)
		return 0;
	s = ipam_set_of(p->conf, &a);
	if (s < 0 || !ipam_usable(p->conf, s, &a))
		return 0;
	if (name[0] == 'r') {
		if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    time(NULL) - st.st_mtime < p->conf->cooldown)
			ca->held[s]++;
		return 0;
	}
	ca->held[s]++;
	if (!ca->read_boot)
		return 0;
	if (pool_record_load(p->dirfd, name, &r, &st) == 0 && pool_record_names_a(name, &r)) {
		if (strcmp(r.boot_id, p->boot_id))
			ca->stale[s]++;
	} else if (before_boot(p, name)) {
		ca->stale[s]++;
	}
	return 0;
}

static int count(struct pool *p, struct count_arg *ca, bool read_boot)
{
	int ret;

	memset(ca, 0, sizeof(*ca));
	ca->read_boot = read_boot;
	ret = scan(p, "a-", count_one, ca);
	if (ret == 0 && p->conf->cooldown > 0)
		ret = scan(p, "r-", count_one, ca);
	return ret;
}

int pool_status(struct pool *p, struct pool_diag *d)
{
	char tmpname[POOL_NAME_MAX];
	struct count_arg ca;
	int s, ret, full = 0;

	/* ADD writes before it links: a store that cannot take a write is not ready. */
	ret = state_write_tmp(p->tmpfd, "probe\n", 6, tmpname, sizeof(tmpname), true);
	if (ret == 0)
		ret = state_remove(p->tmpfd, tmpname);
	if (ret == 0)
		ret = count(p, &ca, false);
	if (ret < 0) {
		snprintf(d->file, sizeof(d->file), "%s", p->path);
		return ret;
	}
	for (s = 0; s < p->conf->n_sets; s++)
		full += ca.held[s] >= ipam_capacity(p->conf, s);
	if (!full)
		return 0;
	/* Only a full set is worth reading every record for boot IDs. */
	ret = count(p, &ca, true);
	if (ret < 0) {
		snprintf(d->file, sizeof(d->file), "%s", p->path);
		return ret;
	}
	for (s = 0; s < p->conf->n_sets; s++)
		if (ca.held[s] - (ipam_u128)ca.stale[s] >= ipam_capacity(p->conf, s)) {
			d->set = s;
			return -EXFULL;
		}
	return 0;
}

