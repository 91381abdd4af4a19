/* SPDX-License-Identifier: Apache-2.0 */
#include "pool_gc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state.h"

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

	if (pool_scanned(p, name, &r, &st, pool_record_names_c))
		return 0;
	if (gc_keeps(p, ga, &r))
		return 0;
	ret = pool_release(p, &r, &st);
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

	if (pool_scanned(p, name, &r, &st, pool_record_names_a))
		return 0;
	if (!gc_keeps(p, ga, &r)) {
		ret = pool_release(p, &r, NULL);
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
	ret = pool_scan(p, "c-", gc_index, &ga);
	if (ret == 0)
		ret = pool_scan(p, "a-", gc_addr, &ga);
	if (ret == 0)
		ret = pool_scan(p, "r-", gc_sweep, NULL);
	*released = ga.released;
	if (ret < 0)
		snprintf(d->file, sizeof(d->file), "%s", p->path);
	return ret;
}
