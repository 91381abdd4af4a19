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
#include "sriov.h"
#include "timing.h"

/* Where an operator finds out how to release by hand. */
#define BY_HAND "release it by hand as docs/how-it-works.md \"When DEL cannot clean up\" says"

void sriov_owner_of(const struct sriov_record *rec, struct claim_owner *owner)
{
	memset(owner, 0, sizeof(*owner));
	snprintf(owner->container_id, sizeof(owner->container_id), "%s", rec->container_id);
	snprintf(owner->ifname, sizeof(owner->ifname), "%s", rec->ifname);
	snprintf(owner->netns, sizeof(owner->netns), "%s", rec->netns);
}

/*
 * <PF>v<N>: systemd's name for VF N of a ConnectX PF, whose own name ends
 * in its physical port ("enp59s0f0np0" -> "enp59s0f0v0"). A name too long
 * for IFNAMSIZ keeps the PF name's head.
 */
static void derived_host_name(const char *pf, int vf_index, char out[IFNAMSIZ])
{
	char suffix[12];
	size_t len = strlen(pf), k;

	k = len;
	while (k > 0 && isdigit((unsigned char)pf[k - 1]))
		k--;
	if (k >= 2 && k < len && pf[k - 1] == 'p' && pf[k - 2] == 'n')
		len = k - 2;
	snprintf(suffix, sizeof(suffix), "v%d", vf_index & 0xffff);
	if (len + strlen(suffix) > IFNAMSIZ - 1)
		len = IFNAMSIZ - 1 - strlen(suffix);
	memcpy(out, pf, len);
	strcpy(out + len, suffix);
}

void sriov_record_fallback(const struct vf_dev *vf, const struct claim_owner *owner,
			   const char *container_id, const char *ifname, const char *netns,
			   struct sriov_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->in_progress = true;
	snprintf(rec->container_id, sizeof(rec->container_id), "%s", container_id);
	snprintf(rec->ifname, sizeof(rec->ifname), "%s", ifname);
	snprintf(rec->netns, sizeof(rec->netns), "%s", netns ? netns : "");
	memcpy(rec->bdf, vf->bdf, sizeof(rec->bdf));
	memcpy(rec->pf_bdf, vf->pf_bdf, sizeof(rec->pf_bdf));
	memcpy(rec->pf_netdev, vf->pf_netdev, sizeof(rec->pf_netdev));
	rec->vf_index = vf->vf_index;
	rec->dpdk = vf->dpdk;
	if (owner && owner->host_ifname[0]) {
		memcpy(rec->host_ifname, owner->host_ifname, IFNAMSIZ);
		memcpy(rec->host_mac, owner->host_mac, 6);
		rec->host_mtu = owner->host_mtu;
	} else if (!vf->dpdk) {
		derived_host_name(vf->pf_netdev, vf->vf_index, rec->host_ifname);
	}
	pf_vf_config_default(&rec->vf_orig);
	if (owner && owner->rdma_dev[0] && rdma_dev_name_valid(owner->rdma_dev)) {
		snprintf(rec->rdma_dev, sizeof(rec->rdma_dev), "%s", owner->rdma_dev);
		snprintf(rec->rdma_pod_name, sizeof(rec->rdma_pod_name), "%s", owner->rdma_dev);
		rec->rdma_index = owner->rdma_index;
		rec->rdma_moved = true;
	}
}

/*
 * A PF whose PCI device vanished, or a VF it no longer has (sriov_numvfs
 * lowered), has nothing to restore. pf_name: the PF's name now.
 */
static bool vf_gone(struct pf *pf, const struct sriov_record *rec, const char *pf_name, int ret)
{
	struct pf_vf_config now;

	if (ret == -ENODEV) {
		log_warn("VF %s: its PF %s is gone (PCI device %s): no VF settings to restore",
			 rec->bdf, pf_name, rec->pf_bdf);
		return true;
	}
	/* The kernel's answer for an index beyond the PF's VFs; the PF's own list tells. */
	if (ret == -EINVAL && pf && pf_get(pf, rec->vf_index, &now) == -ENOENT) {
		log_warn("VF %s: PF %s has no VF %d any more: no VF settings to restore", rec->bdf,
			 pf_name, rec->vf_index);
		return true;
	}
	return false;
}

/*
 * The VF's settings on its PF, in one of two passes. pin_mac false: all
 * but the MAC, then the MAC cleared, before the netdev comes home: Intel
 * PFs (igb, ixgbe, i40e) refuse a VF-side MAC change while the PF holds
 * an administrative MAC for the VF ("VF N attempted to override
 * administratively set MAC address"), and clearing it is what lets the
 * netdev take its host MAC back. pin_mac true, after the netdev is home:
 * the MAC from before the attachment, unless the PF reports it already
 * (on igb the netdev's own MAC shows there, unpinned, as before the
 * attachment; pinning it again would refuse the next VF-side change).
 * pf_lock_dirfd: where the PF's lock lives, -1 for none; timing, if not
 * NULL, gets the time waited for it.
 */
static int restore_vf_config(const struct sriov_record *rec, int pf_lock_dirfd,
			     const char *sysfs_root, bool pin_mac, struct timing *timing,
			     char *refused, size_t refused_len)
{
	struct pf_vf_config cfg = rec->vf_orig, now;
	char pf_name[IFNAMSIZ];
	struct pf *pf = NULL;
	int ret;

	snprintf(refused, refused_len, "settings");
	/* Before the netdev moves: some drivers refuse to move it while trust is off. */
	if (!rec->vf_orig.mask || (pin_mac && (!(rec->vf_orig.mask & PF_VF_MAC) ||
					       pf_mac_unset(rec->vf_orig.mac))))
		return 0;
	ret = sriov_pf_name(rec, sysfs_root, pf_name);
	if (ret == 0)
		ret = pf_open(pf_name, &pf);
	if (ret < 0)
		return vf_gone(NULL, rec, pf_name, ret) ? 0 : ret;
	if (pf_lock_dirfd >= 0 && (ret = pf_lock_at(pf, pf_lock_dirfd, rec->pf_bdf)) < 0)
		log_warn("VF %s: PF address %s: %s: its settings go back without the PF's lock",
			 rec->bdf, rec->pf_bdf, strerror(-ret));
	if (pin_mac) {
		cfg.mask = PF_VF_MAC;
		ret = pf_get(pf, rec->vf_index, &now);
		if (ret < 0 || !(now.mask & PF_VF_MAC) || memcmp(now.mac, cfg.mac, 6))
			ret = pf_set(pf, rec->vf_index, &cfg);
	} else {
		/*
		 * The MAC last: older mlx5 kernels refuse to clear it (all-zero, the
		 * default) while spoof checking is on, which this may just turn off.
		 */
		cfg.mask &= ~PF_VF_MAC;
		ret = pf_set_each(pf, rec->vf_index, &cfg);
		if (ret == 0 && (rec->vf_orig.mask & PF_VF_MAC)) {
			cfg.mask = PF_VF_MAC;
			memset(cfg.mac, 0, 6);
			ret = pf_set(pf, rec->vf_index, &cfg);
		}
	}
	if (ret < 0 && vf_gone(pf, rec, pf_name, ret))
		ret = 0;
	if (ret < 0 && pf_refused(pf))
		sriov_vf_fields_format(pf_refused(pf), &rec->vf_orig, refused, refused_len);
	timing_wait(timing, "pf", pf_lock_waited_ms(pf));
	pf_close(pf);
	return ret;
}

/* A record, or whatever stands in its place (a directory): gone, or logged. */
static void forget_record(int state_dirfd, const struct sriov_record *rec)
{
	char name[512];
	int ret;

	if (state_dirfd < 0 || !rec->container_id[0])
		return;
	ret = sriov_record_remove(state_dirfd, rec);
	if (ret == -EISDIR || ret == -EPERM) {
		sriov_record_name(rec->container_id, rec->ifname, name, sizeof(name));
		ret = unlinkat(state_dirfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
	}
	if (ret < 0)
		log_error("stateDir: cannot remove the record of %s:%s: %s; remove it by hand",
			  rec->container_id, rec->ifname, strerror(-ret));
}

/*
 * The RDMA device, then the netdev home from the pod (pod_fd -1: it is
 * gone), and the netdev's rules; *pod_ls is the socket opened in the pod,
 * for the caller to close.
 */
static int release_devices(const struct sriov_record *rec, const char *pod_netns, int pod_fd,
			   const char *sysfs_root, struct link_sock **pod_ls, struct timing *timing,
			   struct cni_error *err)
{
	bool found;
	int ret;

	/* Before the netdev, as a chain runs rdma-cni's DEL before sriov-cni's. */
	ret = sriov_rdma_to_host(rec, pod_fd);
	timing_lap(timing, "rdma");
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: cannot return RDMA device %s (index %u) "
			   "to the host as %s: %s", rec->bdf, rec->rdma_pod_name, rec->rdma_index,
			   rec->rdma_dev, strerror(-ret));
		return ret;
	}
	if (rec->dpdk)
		return 0;
	/* One socket in the pod for the netdev and its rules: each open is two setns calls. */
	if (pod_fd >= 0 && (ret = link_sock_open_in(pod_fd, pod_ls)) < 0) {
		cni_errorf(err, CNI_ERR_PLUGIN, "CNI_NETNS %s: %s", pod_netns, strerror(-ret));
		return ret;
	}
	ret = sriov_netdev_to_host(rec, *pod_ls, sysfs_root, &found);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot return %s to the host as %s: %s",
			   rec->bdf, rec->ifname, rec->host_ifname, strerror(-ret));
		return ret;
	}
	if (!found)
		log_warn("VF %s: %s is neither in the pod nor on the host: nothing to move",
			 rec->bdf, rec->ifname);
	sriov_rail_release(rec, *pod_ls);
	timing_lap(timing, "netdev");
	return 0;
}

/* Once the netdev is home: the MAC the PF held, then the GUIDs. */
static int release_pf_last(const struct sriov_record *rec, int pf_lock_dirfd,
			   const char *sysfs_root, struct timing *timing, struct cni_error *err)
{
	char refused[256];
	int ret;

	ret = restore_vf_config(rec, pf_lock_dirfd, sysfs_root, true, timing, refused,
				sizeof(refused));
	timing_lap(timing, "vf-mac");
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot restore VF %d's %s on PF %s: %s",
			   rec->bdf, rec->vf_index, refused, rec->pf_netdev, strerror(-ret));
		return ret;
	}
	/* The rebind that applies them replaces the netdev. */
	ret = sriov_ib_restore(rec, pf_lock_dirfd, sysfs_root, timing);
	timing_lap(timing, "ib-guid");
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: PF %s refused the original GUIDs of "
			   "VF %d: %s", rec->bdf, rec->pf_netdev, rec->vf_index, strerror(-ret));
		return ret;
	}
	return 0;
}

/* The release's log line; with timing, its phases and the runtime's trace. */
static void log_released(const struct sriov_record *rec, struct timing *timing)
{
	char steps[512] = "", trace[48] = "", trace_id[33];

	if (timing) {
		timing_format(timing, steps, sizeof(steps));
		if (timing_trace_id(getenv("TRACEPARENT"), trace_id))
			snprintf(trace, sizeof(trace), ", trace %s", trace_id);
	}
	log_info("VF %s: released from %s (%s -> %s)%s%s%s", rec->bdf, rec->container_id,
		 rec->ifname, rec->dpdk ? "(dpdk)" : rec->host_ifname, steps[0] ? "; steps " : "",
		 steps, trace);
}

int sriov_release_locked(const struct sriov_record *rec, const char *pod_netns, int state_dirfd,
			 struct claim *claim, const struct sriov_paths *paths, struct timing *timing,
			 struct cni_error *err)
{
	bool locked = claim && claim->lock_fd >= 0;
	int pf_lock_dirfd = locked ? claim->dirfd : -1;
	struct link_sock *pod_ls = NULL;
	struct claim_owner me;
	char who[4400], refused[256];
	int pod_fd = -1, ret;

	sriov_owner_of(rec, &me);
	if (locked && claim->marker == CLAIM_MARKER_READ && !claim_held_by(claim, &me)) {
		/* A late DEL must not reset a VF another pod owns now (sriov-cni #219). */
		claim_owner_format(&claim->owner, who, sizeof(who));
		log_info("VF %s now belongs to %s: leaving it alone", rec->bdf, who);
		goto forget;
	}
	ret = restore_vf_config(rec, pf_lock_dirfd, paths->sysfs_root, false, timing, refused,
				sizeof(refused));
	timing_lap(timing, "vf-config");
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot restore VF %d's %s on PF %s: %s",
			   rec->bdf, rec->vf_index, refused, rec->pf_netdev, strerror(-ret));
		goto out;
	}
	/*
	 * containerd's later DELs and libcni's cache before 1.2 carry no
	 * CNI_NETNS: the VF is still where ADD put it while that netns lives,
	 * and the VF is found there by its PCI address, never by name alone.
	 */
	if (!pod_netns || !pod_netns[0])
		pod_netns = rec->netns;
	if (pod_netns[0] && netns_open(pod_netns, &pod_fd) < 0)
		pod_fd = -1;
	ret = release_devices(rec, pod_netns, pod_fd, paths->sysfs_root, &pod_ls, timing, err);
	if (ret < 0)
		goto out;
	ret = release_pf_last(rec, pf_lock_dirfd, paths->sysfs_root, timing, err);
	if (ret < 0)
		goto out;
	if (locked) {
		ret = claim_clear(claim, &me);
		if (ret < 0)
			log_error("VF %s: cannot remove the in-use marker %s/%s: %s; remove it by hand",
				  rec->bdf, SRIOV_PCI_SUBDIR, rec->bdf, strerror(-ret));
	}
forget:
	if (rec->devinfo_file[0])
		sriov_devinfo_remove(rec->devinfo_file, rec->devinfo_text, rec->bdf, NULL);
	forget_record(state_dirfd, rec);
	timing_lap(timing, "state");
	log_released(rec, timing);
	ret = 0;
out:
	if (ret < 0 && !sriov_stranded(err))
		cni_error_details(err, "the record stays for the runtime's next DEL to try again; "
				  "if the host keeps refusing, %s", BY_HAND);
	link_sock_close(pod_ls);
	if (pod_fd >= 0)
		close(pod_fd);
	return ret < 0 ? -1 : 0;
}

int sriov_release_record(int state_dirfd, const char *name, const struct sriov_paths *paths,
			 struct sriov_record *rec, struct cni_error *err)
{
	struct claim claim = { .lock_fd = -1 };
	char bdf[VF_BDF_LEN];
	int pci_fd, ret;

	ret = sriov_record_read(state_dirfd, name, rec);
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;
	ret = state_subdir_open(state_dirfd, SRIOV_PCI_SUBDIR, &pci_fd);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO, "stateDir: %s/: %s", SRIOV_PCI_SUBDIR,
				  strerror(-ret));
	memcpy(bdf, rec->bdf, sizeof(bdf));
	ret = claim_lock(pci_fd, bdf, SRIOV_LOCK_TIMEOUT_MS, &claim);
	if (ret == -ETIMEDOUT) {
		cni_errorf(err, CNI_ERR_TRY_AGAIN,
			   "deviceID %s: another ADD or DEL holds the VF's lock; try again", bdf);
		goto out;
	}
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_IO, "deviceID %s: cannot lock the VF: %s", bdf, strerror(-ret));
		goto out;
	}
	/* A DEL may have come first: only what is still recorded under the lock is undone. */
	ret = sriov_record_read(state_dirfd, name, rec);
	if (ret == 0 && strcmp(rec->bdf, bdf) == 0)
		ret = sriov_release_locked(rec, rec->netns, state_dirfd, &claim, paths, NULL, err);
	else
		ret = ret == -ENOENT ? 0 : ret;
	claim_release(&claim);
out:
	close(pci_fd);
	return err->code ? -1 : ret;
}

/* ---- DEL ---- */

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
 * Does the pod hold VF vf under CNI_IFNAME, by its PCI device? what: what
 * the link is instead, "" when there is none or nothing names its device.
 */
static bool pod_holds_vf(struct del_ctx *c, const struct vf_dev *vf, char what[96])
{
	const char *netns = c->req->env.netns;
	struct link_sock *ls = NULL;
	struct link_info li;
	int pod_fd, ret;

	what[0] = '\0';
	if (!netns || !netns[0] || netns_open(netns, &pod_fd) < 0)
		return false;
	ret = link_sock_open_in(pod_fd, &ls);
	close(pod_fd);
	if (ret == 0 && (ret = link_get_by_name(ls, c->req->env.ifname, &li)) == 0)
		ret = sriov_link_is_vf(ls, &li, c->paths.sysfs_root, vf->bdf, what);
	link_sock_close(ls);
	return ret == 1;
}

/*
 * No usable record (unreadable, or no stateDir): the config's deviceID and
 * CNI_IFNAME say where the VF is, the marker how it was on the host.
 */
static int fallback(struct del_ctx *c, const char *why, struct cni_error *err)
{
	const char *netns = c->req->env.netns;
	const struct claim_owner *owner = NULL;
	bool locked = c->claim.lock_fd >= 0, proven;
	struct sriov_record *rec = &c->rec;
	char who[4400], what[96];
	struct vf_dev vf;
	int ret;

	if (!c->bdf[0]) {
		log_error("%s, and the config names no VF (deviceID): the VF of %s:%s is not "
			  "restored; %s", why, c->req->env.container_id, c->req->env.ifname, BY_HAND);
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
		log_error("%s; VF %s: %s: not restored; %s", why, c->bdf, strerror(-ret), BY_HAND);
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
	 * deviceID and CNI_IFNAME are the NAD's and the runtime's word, not
	 * proof: the link in the pod moves only when its PCI device is the VF.
	 */
	proven = !vf.dpdk && pod_holds_vf(c, &vf, what);
	if (!proven && !vf.dpdk && what[0])
		log_warn("%s; %s in %s is %s, not VF %s: leaving it alone", why,
			 c->req->env.ifname, netns ? netns : "(no netns)", what, c->bdf);
	if (!owner && !proven) {
		/* Nothing else tells whose the VF is: not even its PF settings are touched. */
		log_error("%s, and without an in-use marker naming this attachment VF %s is "
			  "restored only from the pod that holds it, which has no %s proven to be "
			  "the VF: not restored; %s", why, c->bdf, c->req->env.ifname, BY_HAND);
		return 0;
	}
	sriov_record_fallback(&vf, owner, c->req->env.container_id, c->req->env.ifname, netns,
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
	forget_record(c->dirfd, rec);
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
	sriov_owner_of(rec, &c->me);
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
	ret = lock_vf(c);
	timing_lap(&c->timing, "lock");
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
	claim_release(&c->claim);
	if (c->pci_fd >= 0)
		close(c->pci_fd);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c);
	return err->code ? -1 : 0;
}
