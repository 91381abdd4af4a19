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
 * Read tmp/ with getdents64(2) on the descriptor the pool already holds:
 * opendir would dup, fstat and fcntl it first, on every operation, to find
 * nothing in the common case.
 */
static int clear_tmp(struct pool *p)
{
	char buf[4096] __attribute__((aligned(8)));
	struct dirent64 *e;
	ssize_t n, off;

	while ((n = file_dirents(p->tmpfd, buf, sizeof(buf))) > 0) {
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
	return n < 0 ? (int)n : 0;
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
	/*
	 * Not swept: that reads every entry, thousands in a full store, on
	 * every call. The store's own temporary files are in tmp/, cleared
	 * below under the lock; the ippool cache's, written in the store
	 * itself, are swept when ADD opens it for the blocks.
	 */
	ret = state_dir_open_unswept(p->path, &p->dirfd);
	if (ret < 0)
		return ret;
	ret = lock_take_waited(p->dirfd, "lock", timeout_ms, &p->lock_waited_ms);
	if (ret < 0)
		goto err_dir;
	p->lockfd = ret;
	/* Emptied whole below, under the store's lock that every writer holds. */
	ret = state_subdir_open_unswept(p->dirfd, "tmp", &p->tmpfd);
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
 * a- goes first, then c-: a release cut short leaves a lone c-, which
 * frees nothing and which the owner's next DEL removes.
 */
int pool_release(struct pool *p, const struct pool_record *r, const struct stat *c_st)
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

int pool_scan(struct pool *p, const char *prefix,
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

void pool_unreadable(struct pool *p, const char *name, int why)
{
	struct same_file sf = { 0 };
	const char *aname = name;
	struct stat st;

	/* Not unreadable, but not this version's to judge: left for the release that can. */
	if (why == -EPROTO) {
		log_warn("store %s: %s is a newer release's, in a version this one does not read: "
			 "left as it is (docs/upgrading.md)", p->path, name);
		return;
	}

	if (name[0] == 'c') {
		if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return;
		sf.dev = st.st_dev;
		sf.ino = st.st_ino;
		if (st.st_nlink < 2 || pool_scan(p, "a-", find_same_file, &sf) != 1) {
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

int pool_lookup(struct pool *p, const struct pool_owner *o, int s, struct pool_record *r,
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
	if (ret == -EPROTO) {
		d->written = r->written;
		return ret;
	}
	if (ret == 0 && !pool_record_same_owner(r, o->container_id, o->ifname, s))
		ret = -EBADMSG;
	if (ret < 0 && repair) {
		/* An unreadable c- alone holds nothing: it goes, and ADD goes on. */
		pool_unreadable(p, cname, ret);
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
	/* Whether it is this owner's is not this version's to say: nothing is repaired. */
	if (ret == -EPROTO) {
		diag_file(p, d, aname);
		d->written = x.written;
		return ret;
	}
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
		pool_unreadable(p, aname, ret);
	ret = state_remove(p->dirfd, cname);
	return ret < 0 ? ret : -ENOENT;
}

int pool_scanned(struct pool *p, const char *name, struct pool_record *r, struct stat *st,
		 bool (*names)(const char *name, const struct pool_record *r))
{
	int ret = pool_record_load(p->dirfd, name, r, st);

	if (ret == -ENOENT)
		return 1;
	if (ret < 0 || !names(name, r)) {
		pool_unreadable(p, name, ret < 0 ? ret : -EBADMSG);
		return 1;
	}
	return 0;
}

/*
 * Records are not fsync'd (docs/pool-ipam.md, "The pool-ipam store"): a
 * power loss may leave one garbled, and then its boot ID cannot be read.
 * Its time can: a file last written before this boot began belongs to a
 * sandbox of an earlier boot as surely as a readable record with another
 * boot ID. A second of slack for the boot time's rounding.
 */
bool pool_before_boot(const struct pool *p, const char *name)
{
	struct stat st;

	return fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       st.st_mtime < p->boot_time - 1;
}

int pool_del(struct pool *p, const struct pool_owner *o, int *released, struct pool_diag *d)
{
	char cname[POOL_NAME_MAX];
	struct ipam_addr addr[IPAM_MAX_SETS];
	struct stat st[IPAM_MAX_SETS];
	bool have[IPAM_MAX_SETS] = { false };
	struct pool_record r;
	int s, ret;

	*released = 0;
	/*
	 * Every possible set (the config may have lost a set since the ADD),
	 * each read before any is released: one of a newer release leaves
	 * them all as they are.
	 */
	for (s = 0; s < IPAM_MAX_SETS; s++) {
		pool_record_name_owner(cname, sizeof(cname), o, s);
		ret = pool_record_load(p->dirfd, cname, &r, &st[s]);
		if (ret == -ENOENT)
			continue;
		if (ret == -EPROTO) {
			diag_file(p, d, cname);
			d->written = r.written;
			return ret;
		}
		if (ret == 0 && !pool_record_same_owner(&r, o->container_id, o->ifname, s))
			ret = -EBADMSG;
		if (ret < 0) {
			pool_unreadable(p, cname, ret);
			continue;
		}
		addr[s] = r.addr;
		have[s] = true;
	}
	/* What pool_release compares: the owner each record above named, its set, its address. */
	snprintf(r.container_id, sizeof(r.container_id), "%s", o->container_id);
	snprintf(r.ifname, sizeof(r.ifname), "%s", o->ifname);
	for (s = 0; s < IPAM_MAX_SETS; s++) {
		if (!have[s])
			continue;
		r.set = s;
		r.addr = addr[s];
		ret = pool_release(p, &r, &st[s]);
		if (ret < 0) {
			pool_record_name_owner(cname, sizeof(cname), o, s);
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
		ret = pool_lookup(p, o, s, &r, false, d);
		if (ret == -ENOENT)
			d->set = s;
		if (ret < 0)
			return ret;
		out[s] = r.addr;
	}
	return 0;
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
	} else if (pool_before_boot(p, name)) {
		ca->stale[s]++;
	}
	return 0;
}

static int count(struct pool *p, struct count_arg *ca, bool read_boot)
{
	int ret;

	memset(ca, 0, sizeof(*ca));
	ca->read_boot = read_boot;
	ret = pool_scan(p, "a-", count_one, ca);
	if (ret == 0 && p->conf->cooldown > 0)
		ret = pool_scan(p, "r-", count_one, ca);
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
