/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ADD's first steps: the VF's lock, a repeated ADD of the same attachment
 * refused, the stale claim of a pod gone without a DEL taken over (the VF
 * restored as that pod's record says) and so is, through add_orphan.c, the
 * claim of an earlier sandbox of this pod that its runtime forgot, and the
 * plan for the VF's RDMA device once the VF is ours.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "add.h"
#include "release.h"

/* This attachment already exists: a repeated ADD must not touch what the first one holds. */
static int refuse_existing(struct add_ctx *c, struct cni_error *err)
{
	const struct sriov_record *prev = &c->old;
	char name[512];
	int ret;

	sriov_record_name(c->req->env.container_id, c->req->env.ifname, name, sizeof(name));
	ret = sriov_record_read(c->state_fd, name, &c->old);
	if (ret == -ENOENT)
		return 0;
	if (ret == -EPROTO) {
		sriov_record_newer(prev, c->conf.state_dir, name, "nothing was changed", err);
		return -EEXIST;
	}
	if (ret < 0)
		cni_errorf(err, CNI_ERR_STORE_CORRUPT, "stateDir %s: the record %s of this "
			   "attachment is unreadable", c->conf.state_dir, name);
	else if (prev->in_progress)
		cni_errorf(err, CNI_ERR_DEVICE_IN_USE, "container %s interface %s: an earlier ADD "
			   "of this attachment (VF %s) did not finish", c->req->env.container_id,
			   c->req->env.ifname, prev->bdf);
	else
		cni_errorf(err, CNI_ERR_DEVICE_IN_USE, "container %s interface %s is attached "
			   "already (VF %s)", c->req->env.container_id, c->req->env.ifname, prev->bdf);
	cni_error_details(err, "DEL the attachment before adding it again: DEL undoes what it holds");
	return -EEXIST;
}

/*
 * The marker names an attachment whose pod is gone without a DEL: put the
 * VF back as that attachment's record says (its host name, MAC, MTU, PF
 * settings and RDMA device), so this attachment starts from the host's
 * VF and not from the last tenant's. Without a usable record, what the
 * marker knows and the driver's defaults stand in for it.
 */
static int take_over(struct add_ctx *c, struct cni_error *err)
{
	const struct claim_owner *o = &c->claim.owner;
	struct sriov_record *old = &c->old;
	struct cni_error why = { 0 };
	char who[4400], name[512];
	int ret = -ENOENT;

	claim_owner_format(o, who, sizeof(who));
	if (c->claim.marker == CLAIM_MARKER_READ && o->container_id[0]) {
		sriov_record_name(o->container_id, o->ifname, name, sizeof(name));
		ret = sriov_record_read(c->state_fd, name, old);
		if (ret == 0 && strcmp(old->bdf, c->vf.bdf))
			ret = -EBADMSG;
	}
	if (ret == -EPROTO) {
		sriov_record_newer(old, c->conf.state_dir, name, "the VF is not taken over", err);
		return -EPROTO;
	}
	if (ret == 0) {
		log_info("VF %s: taking over the stale claim of %s: restoring the VF as its record "
			 "says", c->vf.bdf, who);
	} else {
		sriov_release_fallback(&c->vf, c->claim.marker == CLAIM_MARKER_READ ? o : NULL,
				       o->container_id, o->ifname, o->netns, old);
		sriov_ib_fallback(&c->conf.paths, &c->vf, old);
		log_warn("VF %s: taking over the stale claim of %s, %s: restoring it as %s with the "
			 "driver's default VF settings", c->vf.bdf,
			 c->claim.marker == CLAIM_MARKER_READ ? who : "whose marker is unreadable",
			 ret == -ENOENT ? "which left no record" : "whose record is unreadable",
			 old->dpdk ? "(dpdk)" : old->host_ifname);
	}
	/* Its address, as its DEL would release it: the pod is gone, its DEL never comes. */
	if (sriov_release_ipam(c->req, c->state_fd, old, c->conf.ipam_type, who, err))
		return -EIO;
	if (sriov_release_locked(old, NULL, c->state_fd, &c->claim, &c->conf.paths, NULL,
				 &why) == 0)
		return 0;
	cni_errorf(err, why.code, "deviceID %s: cannot restore the VF left behind by %s: %s",
		   c->vf.bdf, who, why.msg);
	return -EIO;
}

/* The VF is another attachment's, whose namespace is alive. */
static int refuse_busy(struct add_ctx *c, struct cni_error *err)
{
	char who[4400], name[512];

	claim_owner_format(&c->claim.owner, who, sizeof(who));
	claim_release(&c->claim);
	/* The holder a newer release recorded: what this version cannot take over, and why. */
	if (c->old_newer) {
		sriov_record_name(c->claim.owner.container_id, c->claim.owner.ifname, name,
				  sizeof(name));
		sriov_record_newer(&c->old, c->conf.state_dir, name, "the VF is not taken over",
				   err);
		return -EBUSY;
	}
	cni_errorf(err, CNI_ERR_DEVICE_IN_USE, "deviceID %s: VF in use by %s", c->vf.bdf, who);
	cni_error_details(err, "another attachment holds this VF; the device plugin allocated it "
			  "twice, or that pod's DEL has not run yet (if its runtime forgot it, "
			  "scripts/rdma-doctor names it and the command that frees it)");
	return -EBUSY;
}

int add_claim_run(struct add_ctx *c, struct cni_error *err)
{
	const struct sriov_record *old = &c->old;
	bool took_over = false, busy;
	int ret;

	ret = claim_lock(c->pci_fd, c->vf.bdf, SRIOV_LOCK_TIMEOUT_MS, &c->claim);
	timing_wait(&c->timing, "vf", c->claim.waited_ms);
	if (ret == -ETIMEDOUT)
		return cni_errorf(err, CNI_ERR_TRY_AGAIN,
				  "deviceID %s: another ADD or DEL holds the VF's lock; try again",
				  c->vf.bdf);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO, "deviceID %s: cannot lock the VF in %s/%s: %s",
				  c->vf.bdf, c->conf.state_dir, SRIOV_PCI_SUBDIR, strerror(-ret));
	if (c->claim.marker == CLAIM_MARKER_NEWER) {
		sriov_release_marker_newer(&c->claim, c->conf.state_dir, "the VF is not taken over",
					   err);
		claim_release(&c->claim);
		return -EBUSY;
	}
	busy = claim_busy(&c->claim, &c->me);
	if (busy && !add_orphan_found(c))
		return refuse_busy(c, err);
	if (refuse_existing(c, err))
		return -EEXIST;
	if (busy) {
		if (add_orphan_take(c, err))
			return -EIO;
		took_over = true;
	} else if (c->claim.marker != CLAIM_MARKER_NONE && !claim_held_by(&c->claim, &c->me)) {
		if (take_over(c, err))
			return -EIO;
		took_over = true;
	}
	/* Read again under the lock: a DEL or a takeover may have renamed the netdev. */
	ret = vf_lookup(c->conf.paths.sysfs_root, c->claim.bdf, &c->vf);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND, "deviceID %s: %s", c->claim.bdf,
				  strerror(-ret));
	/*
	 * The names the takeover just gave them, whatever sysfs lags behind
	 * with; after an InfiniBand VF's rebind, sysfs has the new ones.
	 */
	if (took_over && old->ib.guid_set)
		took_over = false;
	if (took_over && !old->dpdk && c->vf.netdev[0])
		memcpy(c->vf.netdev, old->host_ifname, IFNAMSIZ);
	if (took_over && old->rdma_moved && c->vf.rdma_dev[0])
		snprintf(c->vf.rdma_dev, sizeof(c->vf.rdma_dev), "%s", old->rdma_dev);
	return 0;
}

int add_plan_run(struct add_ctx *c, struct cni_error *err)
{
	return sriov_rdma_plan(&c->conf, &c->vf, &c->rec, &c->rdma, err);
}
