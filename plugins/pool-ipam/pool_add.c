/* SPDX-License-Identifier: Apache-2.0 */
#include "pool_add.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "state.h"

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

struct reclaim_arg {
	int set;			/* -1: every set */
	int reclaimed;
};

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
	    (ra->set < 0 || ipam_set_of(p->conf, &a) == ra->set) && pool_before_boot(p, name)) {
		log_info("store %s: %s is unreadable and older than this boot: released",
			 p->path, name);
		ret = state_remove(p->dirfd, name);
		if (ret == 0)
			ra->reclaimed++;
		return ret == -ENOENT ? 0 : ret;
	}
	if (pool_scanned(p, name, &r, &st, pool_record_names_a))
		return 0;
	if ((ra->set >= 0 && r.set != ra->set) || !strcmp(r.boot_id, p->boot_id))
		return 0;
	ret = pool_release(p, &r, NULL);
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
		ret = pool_scan(p, "a-", reclaim_stale_one, &ra);
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
		ret = pool_lookup(p, o, s, &r, true, d);
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
			pool_release(p, &r, NULL);
		}
	return ret;
}
