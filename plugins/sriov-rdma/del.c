/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DEL: release the address first (it needs nothing but the config), then
 * put the VF back as the record says. Every branch succeeds when what it
 * would undo is already gone: the namespace, the record, the interface,
 * the VF, its PF, or a previous DEL that did it all.
 *
 * DEL always finishes: the runtime retries a failed DEL for ever and the
 * pod never finishes terminating. A config that no longer validates, a
 * record that cannot be read, a state directory that cannot be used are
 * logged and worked around: without a usable record the VF is found by the
 * config's deviceID and CNI_IFNAME, and its PF-side settings go back to the
 * driver's defaults. Only a VF whose state cannot be changed right now (the
 * kernel refuses a request, another DEL holds the lock) fails DEL, so that
 * the runtime's retry tries again.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "netns.h"
#include "state.h"
#include "release.h"
#include "timing.h"


/* ---- DEL ---- */

/* What a DEL refused for a newer release's record or marker leaves (docs/upgrading.md). */
#define DEL_NEWER_LEAVES \
	"nothing was changed: the VF, its address and the record stay as they are"

struct del_ctx {
	struct cni_request *req;
	struct sriov_paths paths;
	char state_dir[PATH_MAX];	/* "": no usable stateDir */
	int dirfd, pci_fd;
	char name[512];			/* the record's */
	char bdf[VF_BDF_LEN];		/* the VF, "" when neither record nor config says */
	struct claim claim;		/* lock_fd -1: not locked */
	struct claim_owner me;
	/* This attachment's, or what stands in for it when it cannot be read. */
	struct sriov_record rec;
	const char *ipam;		/* the IPAM to release from, NULL: none */
	char ipam_recorded[256];	/* the one the record names, "" when it names none */
	struct cni_delegation ipam_d;	/* its DEL, while the VF moves home */
	struct cni_error ipam_err;
	struct timing timing;		/* per phase, for the log line that ends DEL */
};

/* Each problem is logged and leaves the fd at -1: DEL goes on without it. */
static void open_state(struct del_ctx *c)
{
	struct cni_error e = { 0 };
	int ret;

	if (sriov_state_dir(c->req, c->state_dir, sizeof(c->state_dir), &e)) {
		log_error("%s: the attachment's record, lock and in-use marker cannot be reached",
			  e.msg);
		c->state_dir[0] = '\0';
		return;
	}
	ret = state_dir_open(c->state_dir, &c->dirfd);
	if (ret < 0) {
		log_error("stateDir %s: %s: the attachment's record cannot be reached", c->state_dir,
			  strerror(-ret));
		c->state_dir[0] = '\0';
		return;
	}
	ret = state_subdir_open(c->dirfd, SRIOV_PCI_SUBDIR, &c->pci_fd);
	if (ret < 0)
		log_error("stateDir %s: %s/: %s: the VF's lock and in-use marker cannot be reached",
			  c->state_dir, SRIOV_PCI_SUBDIR, strerror(-ret));
}

/* The record of this attachment: 0, -ENOENT, or -EBADMSG for one DEL cannot use. */
static int read_record(struct del_ctx *c)
{
	struct sriov_record *rec = &c->rec;
	int ret;

	if (c->dirfd < 0)
		return -EBADMSG;
	ret = sriov_record_read(c->dirfd, c->name, rec);
	/* A record is found by its name: one that says otherwise is not this attachment's. */
	if (ret == 0 && (strcmp(rec->container_id, c->req->env.container_id) ||
			 strcmp(rec->ifname, c->req->env.ifname)))
		ret = -EBADMSG;
	return ret;
}

/* The VF's lock: -ETIMEDOUT is for the runtime to retry; any other failure goes on without. */
static int lock_vf(struct del_ctx *c)
{
	int ret;

	if (c->pci_fd < 0 || !c->bdf[0])
		return 0;
	ret = claim_lock(c->pci_fd, c->bdf, SRIOV_LOCK_TIMEOUT_MS, &c->claim);
	timing_wait(&c->timing, "vf", c->claim.waited_ms);
	if (ret < 0 && ret != -ETIMEDOUT) {
		log_error("deviceID %s: cannot lock the VF in %s/%s: %s: going on without the lock",
			  c->bdf, c->state_dir, SRIOV_PCI_SUBDIR, strerror(-ret));
		ret = 0;
	}
	return ret;
}

/*
 * Does the namespace at netns (the one of id, when known) hold VF vf, by
 * its PCI device, under CNI_IFNAME or any other name?
 */
static bool pod_holds_vf(struct del_ctx *c, const char *netns, const struct netns_id *id,
			 const struct vf_dev *vf)
{
	const char *const names[] = { c->req->env.ifname };
	struct link_sock *ls = NULL;
	struct link_info li;
	int pod_fd, ret;

	if (!netns || !netns[0] || netns_open_id(netns, id, &pod_fd) < 0)
		return false;
	ret = link_sock_open_in(pod_fd, &ls);
	close(pod_fd);
	if (ret == 0)
		ret = sriov_pod_find_vf(ls, vf->bdf, names, 1, &li);
	link_sock_close(ls);
	return ret == 0;
}

/*
 * No usable record (unreadable, or no stateDir): the config's deviceID and
 * CNI_IFNAME say where the VF is, the marker how it was on the host.
 */
static int fallback(struct del_ctx *c, const char *why, struct cni_error *err)
{
	const char *netns = c->req->env.netns;
	const struct netns_id *id = NULL;
	const struct claim_owner *owner = NULL;
	bool locked = c->claim.lock_fd >= 0, proven;
	struct sriov_record *rec = &c->rec;
	char who[4400];
	struct vf_dev vf;
	int ret;

	if (!c->bdf[0]) {
		log_error("%s, and the config names no VF (deviceID): the VF of %s:%s is not "
			  "restored; %s", why, c->req->env.container_id, c->req->env.ifname,
			  SRIOV_RELEASE_BY_HAND);
		return 0;
	}
	/* Enough to name the unreadable record, for the branches that only forget it. */
	memset(rec, 0, sizeof(*rec));
	snprintf(rec->container_id, sizeof(rec->container_id), "%s", c->req->env.container_id);
	snprintf(rec->ifname, sizeof(rec->ifname), "%s", c->req->env.ifname);
	ret = vf_lookup(c->paths.sysfs_root, c->bdf, &vf);
	if (ret == -ENODEV || ret == -ENOTSUP) {
		log_warn("%s; VF %s is gone from %s/bus/pci/devices: nothing to restore", why,
			 c->bdf, c->paths.sysfs_root);
		goto forget;
	}
	if (ret < 0) {
		log_error("%s; VF %s: %s: not restored; %s", why, c->bdf, strerror(-ret),
			  SRIOV_RELEASE_BY_HAND);
		goto forget;
	}
	if (locked && c->claim.marker == CLAIM_MARKER_READ) {
		if (!claim_held_by(&c->claim, &c->me)) {
			claim_owner_format(&c->claim.owner, who, sizeof(who));
			log_info("%s; VF %s belongs to %s: leaving it alone", why, c->bdf, who);
			goto forget;
		}
		owner = &c->claim.owner;
	}
	/*
	 * Without CNI_NETNS (containerd's later DELs), the namespace the
	 * marker names, when it names this attachment: the VF is there while
	 * the pod lives.
	 */
	if ((!netns || !netns[0]) && owner) {
		netns = owner->netns;
		id = &owner->netns_id;
	}
	/*
	 * deviceID and CNI_IFNAME are the NAD's and the runtime's word, not
	 * proof: the link in the pod moves only when its PCI device is the VF.
	 */
	proven = !vf.dpdk && pod_holds_vf(c, netns, id, &vf);
	if (!owner && !proven) {
		/* Nothing else tells whose the VF is: not even its PF settings are touched. */
		log_error("%s, and without an in-use marker naming this attachment VF %s is "
			  "restored only from the pod that holds it, %s, which holds no link whose "
			  "PCI device is the VF: not restored; %s", why, c->bdf,
			  netns && netns[0] ? netns : "(no CNI_NETNS)", SRIOV_RELEASE_BY_HAND);
		return 0;
	}
	sriov_release_fallback(&vf, owner, c->req->env.container_id, c->req->env.ifname, netns,
			       rec);
	sriov_ib_fallback(&c->paths, &vf, rec);
	if (!proven)
		netns = NULL;	/* the VF is found on the host by its PCI address, or not at all */
	log_warn("%s: falling back on deviceID %s and CNI_IFNAME %s: the VF goes home as %s, "
		 "its PF settings back to the driver's defaults%s", why, c->bdf,
		 c->req->env.ifname, vf.dpdk ? "(dpdk)" : rec->host_ifname,
		 owner ? "" : " (its host name, MAC and MTU are not known)");
	return sriov_release_locked(rec, netns, c->dirfd, &c->claim, &c->paths, &c->timing, err);
forget:
	sriov_release_forget(c->dirfd, rec);
	if (locked && claim_clear(&c->claim, &c->me) == 0)
		log_debug("VF %s: in-use marker cleared", c->bdf);
	return 0;
}

/* Undo the attachment with the VF's lock held (when there is one to take). */
static int release(struct del_ctx *c, int rec_ret, struct cni_error *err)
{
	char why[PATH_MAX + 600];	/* a stateDir, a record name and the words around them */

	if (rec_ret == 0)
		return sriov_release_locked(&c->rec, c->req->env.netns, c->dirfd, &c->claim,
					    &c->paths, &c->timing, err);
	if (rec_ret == -EPROTO)
		return sriov_record_newer(&c->rec, c->state_dir, c->name, DEL_NEWER_LEAVES, err);
	if (rec_ret == -ENOENT) {
		if (c->claim.lock_fd < 0 || !claim_held_by(&c->claim, &c->me)) {
			log_debug("no record of %s:%s: nothing to undo", c->req->env.container_id,
				  c->req->env.ifname);
			return 0;
		}
		/* The marker names this attachment, and ADD writes it after the record: lost. */
		snprintf(why, sizeof(why), "VF %s: no record, but its in-use marker names this "
			 "attachment", c->bdf);
		log_warn("%s", why);
		return fallback(c, why, err);
	}
	if (c->state_dir[0])
		snprintf(why, sizeof(why), "stateDir %s: the record %s is unreadable", c->state_dir,
			 c->name);
	else
		snprintf(why, sizeof(why), "no usable stateDir");
	log_error("%s", why);
	return fallback(c, why, err);
}

/*
 * Whatever else happens: an address never leaks (plugins #1196). An IPAM
 * that never looks into the pod runs while the VF moves home.
 */
static void ipam_del_start(struct del_ctx *c, int lock_ret)
{
	const char *conf_ipam;

	/* The one that reserved, when the record knows it: the config may have changed since. */
	c->ipam = c->ipam_recorded[0] ? c->ipam_recorded : sriov_ipam_type_to_release(c->req);
	conf_ipam = sriov_ipam_type(c->req);
	if (c->ipam_recorded[0] && (!conf_ipam || strcmp(conf_ipam, c->ipam_recorded)))
		log_info("ipam: the record's %s reserved this attachment's address; the config "
			 "names %s now", c->ipam_recorded, conf_ipam ? conf_ipam : "none");
	if (c->ipam && sriov_ipam_overlaps(c->ipam) && lock_ret != -ETIMEDOUT) {
		if (cni_delegate_start(c->req, c->ipam, CNI_CMD_DEL, &c->ipam_d, &c->ipam_err))
			log_error("ipam %s DEL: %s", c->ipam, c->ipam_err.msg);
		timing_lap(&c->timing, "ipam-spawn");
	} else if (c->ipam) {
		if (cni_delegate(c->req, c->ipam, CNI_CMD_DEL, NULL, &c->ipam_err))
			log_error("ipam %s DEL: %s", c->ipam, c->ipam_err.msg);
		timing_lap(&c->timing, "ipam");
	}
}

/*
 * Under the lock, the record again: one recorded for another VF since
 * needs that VF's lock (-ETIMEDOUT, err set, when another ADD or DEL
 * holds it). *rec_ret is what the last read of the record gave.
 */
static int relock_recorded_vf(struct del_ctx *c, int *rec_ret, struct cni_error *err)
{
	if (c->claim.lock_fd < 0)
		return 0;
	*rec_ret = read_record(c);
	if (*rec_ret != 0 || !strcmp(c->rec.bdf, c->claim.bdf))
		return 0;
	claim_release(&c->claim);
	memcpy(c->bdf, c->rec.bdf, sizeof(c->bdf));
	if (lock_vf(c) == -ETIMEDOUT) {
		cni_errorf(err, CNI_ERR_TRY_AGAIN, "deviceID %s: another ADD or DEL holds the VF's "
			   "lock; try again", c->bdf);
		return -ETIMEDOUT;
	}
	if (c->claim.lock_fd >= 0)
		*rec_ret = read_record(c);
	return 0;
}

int sriov_cmd_del(struct cni_request *req, struct cni_error *err)
{
	struct cni_error ignored = { 0 };
	struct sriov_record *rec;
	struct del_ctx *c;
	int rec_ret, ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return cni_errorf(err, CNI_ERR_PLUGIN, "out of memory");
	timing_start(&c->timing);
	c->req = req;
	c->dirfd = c->pci_fd = -1;
	c->claim.lock_fd = -1;
	rec = &c->rec;
	sriov_env_paths_lenient(&c->paths);
	open_state(c);
	sriov_record_name(req->env.container_id, req->env.ifname, c->name, sizeof(c->name));
	snprintf(rec->container_id, sizeof(rec->container_id), "%s", req->env.container_id);
	snprintf(rec->ifname, sizeof(rec->ifname), "%s", req->env.ifname);
	snprintf(rec->netns, sizeof(rec->netns), "%s", req->env.netns ? req->env.netns : "");
	sriov_release_owner(rec, &c->me);
	rec_ret = read_record(c);
	if (rec_ret == 0) {
		memcpy(c->bdf, rec->bdf, sizeof(c->bdf));
		memcpy(c->ipam_recorded, rec->ipam_type, sizeof(c->ipam_recorded));
	}
	else if ((ret = sriov_device_id(req, c->bdf, &ignored)) == -EXDEV)
		log_warn("%s: going by %s", ignored.msg, c->bdf);
	else if (ret)
		c->bdf[0] = '\0';
	/*
	 * Under the VF's lock from here: an ADD of this attachment racing this
	 * DEL either finished before (and everything it made is undone, its
	 * address too) or starts after (and finds nothing of this DEL's).
	 */
	timing_lap(&c->timing, "record");
	/*
	 * A newer release's record, or a marker of one naming a VF this
	 * attachment recorded: this version cannot tell what they hold, and
	 * its DEL releases neither the VF nor the address (the pod may still
	 * use both); the retry after that release is installed again does.
	 */
	if (rec_ret == -EPROTO) {
		sriov_record_newer(rec, c->state_dir, c->name, DEL_NEWER_LEAVES, err);
		goto out;
	}
	ret = lock_vf(c);
	timing_lap(&c->timing, "lock");
	if (ret == 0 && rec_ret != -ENOENT && c->claim.lock_fd >= 0 &&
	    c->claim.marker == CLAIM_MARKER_NEWER) {
		sriov_release_marker_newer(&c->claim, c->state_dir, DEL_NEWER_LEAVES, err);
		goto out;
	}
	ipam_del_start(c, ret);
	if (ret == -ETIMEDOUT) {
		cni_errorf(err, CNI_ERR_TRY_AGAIN,
			   "deviceID %s: another ADD or DEL holds the VF's lock; try again", c->bdf);
		goto out;
	}
	if (relock_recorded_vf(c, &rec_ret, err))
		goto out;
	release(c, rec_ret, err);
out:
	if (c->ipam_d.pid > 0 && cni_delegate_finish(&c->ipam_d, NULL, &c->ipam_err))
		log_error("ipam %s DEL: %s", c->ipam, c->ipam_err.msg);
	/* With the VF home and the record gone, a retry only repeats the IPAM's DEL. */
	if (!err->code && c->ipam_err.code)
		*err = c->ipam_err;
	else if (c->ipam && !c->ipam_err.code)
		sriov_release_leftover_forget(c->dirfd, req->env.container_id, req->env.ifname);
	claim_release(&c->claim);
	if (c->pci_fd >= 0)
		close(c->pci_fd);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c);
	return err->code ? -1 : 0;
}
