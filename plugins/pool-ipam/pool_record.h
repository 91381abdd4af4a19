/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_record: one reservation of the pool-ipam store (pool), as the bytes
 * of its record and as the names of its directory entries.
 *
 * A record is checksummed JSON (state_seal) naming the address, its range
 * set, the owner (containerID, ifname, netns), the boot it was made in and
 * when. It is reached through two hard links, a-<address> and
 * c-<containerID>:<ifname>.<set>; a released address rests as
 * r-<address>. A record whose content disagrees with the entry it was
 * read through was edited, and is as unreadable as a garbled one.
 */
#ifndef POOL_RECORD_H
#define POOL_RECORD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <net/if.h>
#include "ipam_addr.h"
#include "state.h"

#define POOL_RECORD_MAX		8192	/* bytes: a larger entry is not a record */
#define POOL_NAME_MAX		300	/* an entry name, "c-" + containerID + ":" + ifname + ".set" */
/* The newest record this version reads (docs/upgrading.md). */
#define POOL_RECORD_VERSION	1

/* One reservation, as its record says. */
struct pool_record {
	struct ipam_addr addr;
	int set;
	char container_id[256];
	char ifname[IFNAMSIZ];
	char netns[PATH_MAX];
	char boot_id[64];
	long long created;
	struct state_version written;	/* what the record says of its writer */
};

struct pool_owner {
	const char *container_id;
	const char *ifname;
	const char *netns;		/* NULL or "" when unknown (DEL) */
};

/* "a-<address>" (kind 'a') or "r-<address>" (kind 'r'). */
void pool_record_name_addr(char *buf, size_t len, char kind, const struct ipam_addr *a);
/* "c-<containerID>:<ifname>.<set>". */
void pool_record_name_owner(char *buf, size_t len, const struct pool_owner *o, int set);
/* Is `name` the a- (resp. c-) entry of r? */
bool pool_record_names_a(const char *name, const struct pool_record *r);
bool pool_record_names_c(const char *name, const struct pool_record *r);

bool pool_record_same_owner(const struct pool_record *r, const char *cid, const char *ifname,
			    int set);
/* Both records say the same reservation: owner, set and address. */
bool pool_record_same(const struct pool_record *a, const struct pool_record *b);

/*
 * A record's bytes (sealed JSON; buf is modified): 0, -EBADMSG, or -EPROTO
 * for a newer release's in a version this one does not read (r->written
 * says whose; nothing else of r is filled).
 */
int pool_record_parse(char *buf, size_t len, struct pool_record *r);

/*
 * Read record `name` of the store directory dirfd: 0, -ENOENT, -EPROTO (a
 * newer release's), or another -errno when the entry exists but says
 * nothing usable (-EBADMSG: not a regular file, too large, or not a
 * record). *st comes from the descriptor the record is read through.
 */
int pool_record_load(int dirfd, const char *name, struct pool_record *r, struct stat *st);

/*
 * Write the record of (owner, set, a) made in boot boot_id, sealed, into
 * the directory tmpfd: its name goes to tmpname. 0 or -errno.
 */
int pool_record_write_tmp(int tmpfd, const struct pool_owner *o, int set,
			  const struct ipam_addr *a, const char *boot_id, char *tmpname,
			  size_t tmplen);

#endif
