/* SPDX-License-Identifier: Apache-2.0 */
/*
 * release: one recorded attachment undone, under its VF's lock. DEL, GC
 * and ADD's take-over of an orphan call it; it calls none of them.
 */
#ifndef SRIOV_RDMA_RELEASE_H
#define SRIOV_RDMA_RELEASE_H

#include "sriov.h"

/* Where an operator finds out how to release by hand. */
#define SRIOV_RELEASE_BY_HAND \
	"release it by hand as docs/how-it-works.md \"When DEL cannot clean up\" says"

/*
 * The refusal of a VF whose in-use marker a newer release wrote, in a
 * version this one does not read (CLAIM_MARKER_NEWER): code 11, naming it,
 * who wrote it and what to run; what: what the command leaves; state_dir
 * may be NULL.
 */
int sriov_release_marker_newer(const struct claim *claim, const char *state_dir,
			       const char *what, struct cni_error *err);
/* The attachment a record describes, as the in-use marker names it. */
void sriov_release_owner(const struct sriov_record *rec, struct claim_owner *owner);
/*
 * Undo one recorded attachment (DEL, GC, and ADD taking over a stale
 * claim), with the VF's lock held in *claim; pod_netns may be NULL.
 * Whatever is gone (pod, netdev, RDMA device, VF, PF) is skipped with a
 * warning. The record is removed, the marker cleared when it names the
 * attachment; a marker naming another attachment means the VF has a new
 * owner, and it is left alone. A marker of a newer release
 * (CLAIM_MARKER_NEWER) is refused, code 11, nothing changed. timing (NULL for none) gets a lap per
 * phase, and the release's log line says them.
 */
int sriov_release_locked(const struct sriov_record *rec, const char *pod_netns, int state_dirfd,
			 struct claim *claim, const struct sriov_paths *paths, struct timing *timing,
			 struct cni_error *err);
/*
 * A record for an attachment whose own cannot be read: the VF as sysfs
 * shows it now, its host identity from the marker (owner, may be NULL:
 * then the name is <PF>v<N>, as systemd names a ConnectX VF, and MAC and
 * MTU stay as they are), its PF-side settings back to the driver's
 * defaults, the RDMA device the marker names.
 */
void sriov_release_fallback(const struct vf_dev *vf, const struct claim_owner *owner,
			    const char *container_id, const char *ifname, const char *netns,
			    struct sriov_record *rec);
/*
 * GC: read record `name` into rec, lock its VF, read it again under the
 * lock, undo it. -EPROTO when this version cannot (a newer release's
 * record, or marker: err says so then), with nothing changed.
 */
int sriov_release_record(int state_dirfd, const char *name, const struct sriov_paths *paths,
			 struct sriov_record *rec, struct cni_error *err);
/* A record, or whatever stands in its place (a directory): gone, or logged. */
void sriov_release_forget(int state_dirfd, const struct sriov_record *rec);

/*
 * Where stateDir keeps a note of each address a takeover could not
 * release (<containerID>:<ifname>.json), for rdma-doctor, until a DEL of
 * that attachment releases it (sriov_release_leftover_forget).
 */
#define SRIOV_LEFTOVER_SUBDIR	"leftover"
/*
 * A takeover's release of the address old's ADD reserved, as its DEL
 * would: old's recorded IPAM config, with its container, interface,
 * namespace and pod as CNI_ARGS (req: this ADD's, for CNI_PATH). Without
 * a recorded config (a lost or unreadable record: old is then a fallback;
 * an older version's; one too large) it cannot be: when old names an IPAM
 * or ipam_hint (this ADD's) does, that is logged and noted for
 * rdma-doctor, and 0. -EIO with err when the IPAM's DEL fails.
 */
int sriov_release_ipam(const struct cni_request *req, int state_dirfd,
		       const struct sriov_record *old, const char *ipam_hint, const char *who,
		       struct cni_error *err);
/* A DEL released the address of container_id:ifname: its takeover note goes. */
void sriov_release_leftover_forget(int state_dirfd, const char *container_id, const char *ifname);

#endif
