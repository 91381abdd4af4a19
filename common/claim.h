/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claim: claiming a VF for one attachment: a lock and an in-use marker in
 * a state directory. Not VF work: it only names the VF by PCI address.
 */
#ifndef CLAIM_H
#define CLAIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <net/if.h>
#include "netns.h"
#include "state.h"
#include "vf.h"

/*
 * The attachment that holds a VF, as its in-use marker <dir>/<bdf> names
 * it (checksummed JSON). The marker also keeps the VF's identity on the
 * host from before the attachment, a second copy of what the attachment
 * record holds, for a DEL whose record is lost.
 */
struct claim_owner {
	char container_id[256];		/* "": a marker of an older version (a netns path alone) */
	char ifname[IFNAMSIZ];
	char netns[4096];
	struct netns_id netns_id;	/* the namespace netns named at ADD; unknown in older markers */
	char host_ifname[IFNAMSIZ];	/* "": unknown (or a DPDK VF) */
	uint8_t host_mac[6];
	int host_mtu;			/* 0: unknown */
	char rdma_dev[64];		/* the RDMA device's host name, "" when none moves */
	uint32_t rdma_index;
};

/* The newest in-use marker this version reads (docs/upgrading.md). */
#define CLAIM_MARKER_VERSION	1

enum claim_marker {
	CLAIM_MARKER_NONE = 0,		/* the VF is free */
	CLAIM_MARKER_READ,			/* claim->owner holds what it says */
	CLAIM_MARKER_UNREADABLE,		/* torn or not a file: its owner is unknown */
	/*
	 * A newer release's, in a version this one does not read
	 * (claim->written says whose): the VF is held by an attachment this
	 * version cannot tell, never taken over or cleared.
	 */
	CLAIM_MARKER_NEWER,
};

struct claim {
	int lock_fd;			/* flock held on <dir>/<bdf>.lock, close-on-exec */
	int dirfd;
	char bdf[VF_BDF_LEN];
	enum claim_marker marker;		/* the marker when the lock was taken */
	struct claim_owner owner;
	struct state_version written;	/* what the marker says of its writer */
	double waited_ms;		/* for the lock, behind another attachment of the VF */
};

/* Lock the VF (waiting up to timeout_ms: -ETIMEDOUT) and read its marker; nothing is decided. */
int claim_lock(int dirfd, const char *bdf, unsigned timeout_ms, struct claim *claim);
/*
 * claim_lock, then -EBUSY (the lock dropped, claim->owner set) when the
 * marker names another attachment, or a namespace alone (an older
 * marker), whose namespace is still alive: also another attachment of the
 * same pod; and when it is a newer release's. A marker whose namespace is
 * gone (its path names no namespace, or another one than at ADD), or that
 * cannot be read, is stale and may be taken over.
 */
int claim_take(int dirfd, const char *bdf, const struct claim_owner *me, unsigned timeout_ms,
		  struct claim *claim);
/* claim_take's test, on a claim locked by claim_lock: -EBUSY's condition. */
bool claim_busy(const struct claim *claim, const struct claim_owner *me);
/* Does the marker read at lock time name `me` (by container ID and ifname; an older one by netns)? */
bool claim_held_by(const struct claim *claim, const struct claim_owner *me);
/* Write the marker (atomically) naming owner; the lock must be held. */
int claim_mark(struct claim *claim, const struct claim_owner *owner);
/*
 * Remove the marker when it names `me`, as read now under the lock: only
 * the attachment that wrote a marker clears it (one that cannot be read
 * names nobody, and goes too). 0 also when there is none; -EBUSY, the
 * marker left in place, when it names another attachment or is a newer
 * release's.
 */
int claim_clear(struct claim *claim, const struct claim_owner *me);
/* Drop the lock (the marker stays as it is). */
void claim_release(struct claim *claim);
/* "<netns> (container <id>, interface <ifname>)", or the netns alone for an older marker. */
void claim_owner_format(const struct claim_owner *o, char *out, size_t len);

#endif
