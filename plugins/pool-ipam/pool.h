/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool: the on-disk address store of pool-ipam and its allocator.
 *
 * A network's store is the directory <dataDir>/<network>/ (0700):
 *   lock                      flock'd by every operation (pool_open)
 *   tmp/                      temp files; any found under the lock is a dead writer's
 *   a-<address>               one reservation: a checksummed JSON record
 *   c-<containerID>:<ifname>.<set>
 *                             a hard link to the same record, the lookup index
 *   r-<address>               a released address resting (releaseCooldown), by mtime
 *   last.<set>                the last address handed out in the set (round-robin)
 *
 * (pool_record reads and writes the records and names the entries;
 * pool_add picks and takes addresses, pool_gc releases what no attachment
 * owns; this module opens the store, looks up, releases and counts.)
 *
 * An address is held while its a- exists, whatever the entry holds or its
 * link count: only a record the store can read, naming an owner that is
 * gone (DEL, GC, an earlier boot), frees one. So a store copied without
 * hard links, or a record damaged or edited in place, never hands out an
 * address twice: the copied pair is linked into one file again when met,
 * and what cannot be read stays held and is logged with how to free it.
 * ADD writes the record to tmp/, renames it to c-, then links a-; a
 * release removes a-, then c-. Cut short anywhere, the store is left with
 * at most a lone c-, which holds nothing: the owner's next DEL removes it,
 * its next ADD completes it. One directory fsync commits each change.
 *
 * Every call but pool_open/pool_close runs under the lock pool_open took.
 * Failures return -errno and fill a struct pool_diag for the message:
 *   -EBADMSG        (ADD, CHECK) the owner's own record is unreadable (diag.file)
 *   -EXFULL         a range set has no free address (diag.set)
 *   -EADDRINUSE     a requested address is held (diag.addr, diag.holder)
 *   -EADDRNOTAVAIL  a requested address is in no range or not usable (diag.addr)
 *   -EALREADY       a repeated ADD asks another address than it holds
 *                   (diag.set, diag.addr: held, diag.holder: asked)
 *   -EINVAL         two requested addresses for one range set (diag.set)
 *   -ENOENT         (pool_check) the reservation of diag.set is missing (diag.file)
 *   -EPROTO         (ADD, CHECK, DEL) the owner's own record is a newer release's, in a
 *                   version this one does not read (diag.file, diag.written): nothing
 *                   of the owner's is changed
 *   -ETIMEDOUT      the lock was not obtained in time
 *   other           the file system failed (diag.file: the store)
 */
#ifndef POOL_H
#define POOL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>
#include "ipam.h"
#include "pool_record.h"

#define POOL_LOCK_TIMEOUT_MS	30000
#define POOL_DEFAULT_PROC_ROOT	"/proc"

struct pool {
	const struct ipam_conf *conf;
	char path[PATH_MAX];		/* <dataDir>/<network> */
	int dirfd, tmpfd, lockfd;
	char boot_id[64];
	time_t boot_time;		/* when this boot began, by the wall clock */
	double lock_waited_ms;		/* for the lock, behind other ADDs and DELs of the network */
};

struct pool_diag {
	int set;			/* -1 when not about a set */
	char file[PATH_MAX + 320];
	char addr[IPAM_ADDR_STRLEN];
	char holder[280];		/* "containerID:ifname" */
	struct state_version written;	/* -EPROTO: what the record says of its writer */
};

/* The kernel's boot ID from <proc_root>/sys/kernel/random/boot_id. */
int pool_boot_id(const char *proc_root, char *buf, size_t len);

/*
 * Open (creating) the store of `network` under conf->data_dir, take its
 * lock (waiting up to timeout_ms) and clear tmp/. A symlink in the path is
 * -ELOOP (diag.file names the path).
 */
int pool_open(struct pool *p, const struct ipam_conf *conf, const char *network,
	      const char *proc_root, unsigned timeout_ms, struct pool_diag *d);
void pool_close(struct pool *p);

/*
 * Release every reservation of the owner; none is success. *released
 * counts them. An unreadable one is logged and left held: not an error.
 * One of a newer release (-EPROTO) leaves every one of them as it is.
 */
int pool_del(struct pool *p, const struct pool_owner *o, int *released, struct pool_diag *d);
/* Every set must hold a complete reservation for the owner: out[] gets them. */
int pool_check(struct pool *p, const struct pool_owner *o, struct ipam_addr out[IPAM_MAX_SETS],
	       struct pool_diag *d);
/*
 * -EXFULL (diag.set) when a set has no address to give, counting
 * earlier-boot records as free; -errno when the store cannot take a write.
 */
int pool_status(struct pool *p, struct pool_diag *d);

/* ---- the entries, for pool_add and pool_gc ---- */

/*
 * The owner's reservation in set s: 0, -ENOENT, or -EBADMSG (its c- is
 * unreadable). Repairs on the way: a store copied without hard links has
 * its pair made one file again; with `repair` (ADD), a c- whose a- is
 * missing (an ADD or a release cut short between its two links) gets its
 * a- back, and a c- whose address went elsewhere is dropped.
 */
int pool_lookup(struct pool *p, const struct pool_owner *o, int s, struct pool_record *r,
		bool repair, struct pool_diag *d);
/*
 * Free the address of reservation r. An a- or c- that is not r's
 * (another owner's, or unreadable) is left alone: an a- holds its address
 * whatever it says. c_st: r was just read from its c-, whose stat this is.
 */
int pool_release(struct pool *p, const struct pool_record *r, const struct stat *c_st);
/* Calls fn on every directory entry whose name starts with prefix; stops at a non-zero return. */
int pool_scan(struct pool *p, const char *prefix,
	      int (*fn)(struct pool *p, const char *name, void *arg), void *arg);
/*
 * A record met by a scan: 0 when it can be acted on; 1 when it is gone,
 * or unreadable or not what its name says (logged, and left held).
 */
int pool_scanned(struct pool *p, const char *name, struct pool_record *r, struct stat *st,
		 bool (*names)(const char *name, const struct pool_record *r));
/*
 * An entry the store cannot read: an a- holds its address until a person
 * looks, so say which and how to free it. A c- that shares no a- holds
 * nothing, and goes.
 */
void pool_unreadable(struct pool *p, const char *name, int why);
/* The entry was last written before this boot began. */
bool pool_before_boot(const struct pool *p, const char *name);

#endif
