/* SPDX-License-Identifier: Apache-2.0 */
#include "pool_record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ipam.h"
#include "state.h"

void pool_record_name_addr(char *buf, size_t len, char kind, const struct ipam_addr *a)
{
	char s[IPAM_ADDR_STRLEN];

	ipam_addr_format(a, s, sizeof(s));
	snprintf(buf, len, "%c-%s", kind, s);
}

void pool_record_name_owner(char *buf, size_t len, const struct pool_owner *o, int set)
{
	snprintf(buf, len, "c-%s:%s.%d", o->container_id, o->ifname, set);
}

/* The record's own entry names: a record whose content disagrees with its name was edited. */
bool pool_record_names_a(const char *name, const struct pool_record *r)
{
	char buf[POOL_NAME_MAX];

	pool_record_name_addr(buf, sizeof(buf), 'a', &r->addr);
	return !strcmp(buf, name);
}

bool pool_record_names_c(const char *name, const struct pool_record *r)
{
	struct pool_owner o = { r->container_id, r->ifname, NULL };
	char buf[POOL_NAME_MAX];

	pool_record_name_owner(buf, sizeof(buf), &o, r->set);
	return !strcmp(buf, name);
}

bool pool_record_same_owner(const struct pool_record *r, const char *cid, const char *ifname,
			    int set)
{
	return r->set == set && !strcmp(r->container_id, cid) && !strcmp(r->ifname, ifname);
}

/* Both records say the same reservation: owner, set and address. */
bool pool_record_same(const struct pool_record *a, const struct pool_record *b)
{
	return pool_record_same_owner(a, b->container_id, b->ifname, b->set) &&
	       ipam_addr_cmp(&a->addr, &b->addr) == 0;
}

/* A JSON number that is an integer in [lo, hi]: anything else is not ours. */
static bool int_in(const cJSON *n, double lo, double hi)
{
	return cJSON_IsNumber(n) && n->valuedouble >= lo && n->valuedouble <= hi &&
	       n->valuedouble == (double)(long long)n->valuedouble;
}

int pool_record_parse(char *buf, size_t len, struct pool_record *r)
{
	const cJSON *addr, *set, *cid, *ifn, *ns, *boot, *created;
	cJSON *j;
	int ret = -EBADMSG;

	memset(r, 0, sizeof(*r));
	if (state_unseal(buf, &len) < 0)
		return -EBADMSG;
	j = cJSON_ParseWithLength(buf, len);
	if (!j)
		return -EBADMSG;
	/* A newer one is not read further: what it holds is not this version's to judge. */
	ret = state_version_get(j, POOL_RECORD_VERSION, false, &r->written);
	if (ret < 0)
		goto out;
	ret = -EBADMSG;
	addr = cJSON_GetObjectItemCaseSensitive(j, "address");
	set = cJSON_GetObjectItemCaseSensitive(j, "set");
	cid = cJSON_GetObjectItemCaseSensitive(j, "containerID");
	ifn = cJSON_GetObjectItemCaseSensitive(j, "ifname");
	ns = cJSON_GetObjectItemCaseSensitive(j, "netns");
	boot = cJSON_GetObjectItemCaseSensitive(j, "bootID");
	created = cJSON_GetObjectItemCaseSensitive(j, "created");
	/* 2^53: the largest integer a double (and so a JSON number here) holds exactly. */
	if (!cJSON_IsString(addr) || !int_in(set, 0, IPAM_MAX_SETS - 1) || !cJSON_IsString(cid) ||
	    !cJSON_IsString(ifn) || !cJSON_IsString(ns) || !cJSON_IsString(boot) ||
	    !int_in(created, 0, 9007199254740992.0) ||
	    ipam_addr_parse(addr->valuestring, &r->addr) < 0 ||
	    strlen(cid->valuestring) >= sizeof(r->container_id) ||
	    strlen(ifn->valuestring) >= sizeof(r->ifname) ||
	    strlen(ns->valuestring) >= sizeof(r->netns) ||
	    strlen(boot->valuestring) >= sizeof(r->boot_id))
		goto out;
	r->set = (int)set->valuedouble;
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
 * The whole of a record of size bytes (at most POOL_RECORD_MAX) from fd,
 * parsed. Its buffer is as large as the record (hundreds of bytes), not
 * as the largest: under a frame of 8 KiB the lookup's openat and fstat
 * ran on stack pages of their own, a page fault each at every exec.
 */
static int read_record(int fd, size_t size, struct pool_record *r)
{
	char buf[size ? size : 1];
	size_t len = 0;
	ssize_t n = 0;

	while (len < size) {
		n = read(fd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (n < 0)
		return -errno;
	if (len != size)
		return -EBADMSG;
	return pool_record_parse(buf, len, r);
}

/*
 * Read record `name`: 0, -ENOENT, or another -errno when the entry exists
 * but says nothing usable (-EBADMSG: not a regular file, too large, or not
 * a record). An entry that cannot be read still holds its address: only
 * what the store can read may free one. *st comes from the descriptor the
 * record is read through. Records never change once linked: st_size is
 * the whole of one.
 */
int pool_record_load(int dirfd, const char *name, struct pool_record *r, struct stat *st)
{
	int fd, ret;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : errno == ELOOP ? -EBADMSG : -errno;
	if (fstat(fd, st) < 0)
		ret = -errno;
	else if (!S_ISREG(st->st_mode) || st->st_size > POOL_RECORD_MAX)
		ret = -EBADMSG;
	else
		ret = read_record(fd, (size_t)st->st_size, r);
	close(fd);
	return ret;
}

/* Write the record of (owner, set, addr) into tmp/: its name goes to tmpname. */
int pool_record_write_tmp(int tmpfd, const struct pool_owner *o, int set,
			  const struct ipam_addr *a, const char *boot_id, char *tmpname,
			  size_t tmplen)
{
	char s[IPAM_ADDR_STRLEN], n_set[16], n_created[24], *buf = NULL;
	size_t len;
	cJSON *j;
	int ret = -ENOMEM;

	/*
	 * The numbers go in as text: cJSON prints a number with sprintf and
	 * reads it back with sscanf to check it, two more parts of libc to
	 * page in at every ADD, for two integers.
	 */
	ipam_addr_format(a, s, sizeof(s));
	snprintf(n_set, sizeof(n_set), "%d", set);
	snprintf(n_created, sizeof(n_created), "%lld", (long long)time(NULL));
	j = cJSON_CreateObject();
	if (!j || state_version_put(j, POOL_RECORD_VERSION) < 0 ||
	    !cJSON_AddStringToObject(j, "address", s) ||
	    !cJSON_AddRawToObject(j, "set", n_set) ||
	    !cJSON_AddStringToObject(j, "containerID", o->container_id) ||
	    !cJSON_AddStringToObject(j, "ifname", o->ifname) ||
	    !cJSON_AddStringToObject(j, "netns", o->netns ? o->netns : "") ||
	    !cJSON_AddStringToObject(j, "bootID", boot_id) ||
	    !cJSON_AddRawToObject(j, "created", n_created))
		goto out;
	buf = cJSON_PrintUnformatted(j);
	if (!buf)
		goto out;
	len = strlen(buf);
	ret = state_seal(&buf, &len);
	if (ret < 0)
		goto out;
	ret = state_write_tmp(tmpfd, buf, len, tmpname, tmplen, false);
out:
	free(buf);
	cJSON_Delete(j);
	return ret;
}
