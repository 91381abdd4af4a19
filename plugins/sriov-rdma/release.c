/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The release of one recorded attachment: what DEL does once it holds the
 * VF's lock, and what GC and ADD's take-over of an orphan do too. It sits
 * below the commands, so that none of them calls another: DEL, GC and ADD
 * each call down here.
 *
 * The order is the one that works on every PF seen: the PF-side settings
 * first while the VF is still in the pod (Intel PFs refuse the VF-side MAC
 * change while the PF holds one; older mlx5 refuse to clear a MAC while
 * spoof checking is on), then the RDMA device and the netdev home, then
 * the PF fields that must follow the move, then the record and the marker.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "log.h"
#include "netns.h"
#include "state.h"
#include "release.h"
#include "timing.h"

int sriov_release_marker_newer(const struct claim *claim, const char *state_dir,
			       const char *what, struct cni_error *err)
{
	const char *by = claim->written.written_by;
	char who[256];

	state_version_format(&claim->written, "in-use marker", CLAIM_MARKER_VERSION, who,
			     sizeof(who));
	cni_errorf(err, CNI_ERR_TRY_AGAIN, "deviceID %s: the in-use marker %s%s%s/%s was written "
		   "by %s, and cannot tell which attachment holds the VF: %s", claim->bdf,
		   state_dir ? state_dir : "", state_dir ? "/" : "", SRIOV_PCI_SUBDIR, claim->bdf,
		   who, what);
	cni_error_details(err, "install %s%s again (docs/upgrading.md, \"Rolling back\"): it "
			  "releases the VF", by[0] ? by : "the release that wrote it",
			  by[0] ? " or later" : "");
	return -1;
}

void sriov_release_owner(const struct sriov_record *rec, struct claim_owner *owner)
{
	memset(owner, 0, sizeof(*owner));
	snprintf(owner->container_id, sizeof(owner->container_id), "%s", rec->container_id);
	snprintf(owner->ifname, sizeof(owner->ifname), "%s", rec->ifname);
	snprintf(owner->netns, sizeof(owner->netns), "%s", rec->netns);
	owner->netns_id = rec->netns_id;
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

void sriov_release_fallback(const struct vf_dev *vf, const struct claim_owner *owner,
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
	/* The marker's namespace, when the caller takes it: known as the marker knew it. */
	if (owner && netns && !strcmp(netns, owner->netns))
		rec->netns_id = owner->netns_id;
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
 * All but the MAC put back, and the MAC cleared (pf_set_mac_cleared: one
 * request when the kernel's order allows). Each request holds RTNL, queued
 * behind the node's other pods' moves; the caller holds the PF's lock
 * across them.
 */
static int restore_and_clear(struct pf *pf, const struct sriov_record *rec)
{
	if (!(rec->vf_orig.mask & PF_VF_MAC))
		return pf_set_each(pf, rec->vf_index, &rec->vf_orig);
	return pf_set_mac_cleared(pf, rec->vf_index, &rec->vf_orig, pf_set_each);
}

/*
 * The VF's settings on its PF, in one of two passes. pin_mac false: all
 * but the MAC put back and the MAC cleared (restore_and_clear), before
 * the netdev comes home: Intel PFs (igb, ixgbe, i40e) refuse a VF-side
 * MAC change while the PF holds an administrative MAC for the VF ("VF N
 * attempted to override administratively set MAC address"), and clearing
 * it is what lets the netdev take its host MAC back. pin_mac true, after
 * the netdev is home: the MAC from before the attachment, unless the PF
 * reports it already (on igb the netdev's own MAC shows there, unpinned,
 * as before the attachment; pinning it again would refuse the next
 * VF-side change).
 * pf_lock_dirfd: where the PF's lock lives, -1 for none; timing, if not
 * NULL, gets the time waited for it. A failure fills *err, naming each
 * field the PF refused.
 */
static int restore_vf_config(const struct sriov_record *rec, int pf_lock_dirfd,
			     const char *sysfs_root, bool pin_mac, struct timing *timing,
			     struct cni_error *err)
{
	struct pf_vf_config cfg = rec->vf_orig, now;
	char pf_name[IFNAMSIZ], refused[256] = "settings";
	struct pf *pf = NULL;
	int ret;

	/* Before the netdev moves: some drivers refuse to move it while trust is off. */
	if (!rec->vf_orig.mask || (pin_mac && (!(rec->vf_orig.mask & PF_VF_MAC) ||
					       pf_mac_unset(rec->vf_orig.mac))))
		return 0;
	ret = sriov_pf_name(rec, sysfs_root, pf_name);
	if (ret == 0)
		ret = pf_open(pf_name, &pf);
	if (ret < 0 && vf_gone(NULL, rec, pf_name, ret))
		return 0;
	if (ret < 0)
		goto out;
	if (pf_lock_dirfd >= 0 && (ret = pf_lock_at(pf, pf_lock_dirfd, rec->pf_bdf)) < 0)
		log_warn("VF %s: PF address %s: %s: its settings go back without the PF's lock",
			 rec->bdf, rec->pf_bdf, strerror(-ret));
	if (pin_mac) {
		cfg.mask = PF_VF_MAC;
		ret = pf_get(pf, rec->vf_index, &now);
		if (ret < 0 || !(now.mask & PF_VF_MAC) || memcmp(now.mac, cfg.mac, 6))
			ret = pf_set(pf, rec->vf_index, &cfg);
	} else {
		ret = pf_lock(pf);
		if (ret == 0)
			ret = restore_and_clear(pf, rec);
	}
	if (ret < 0 && vf_gone(pf, rec, pf_name, ret))
		ret = 0;
	if (ret < 0 && pf_refused(pf))
		sriov_vf_fields_format(pf_refused(pf), &rec->vf_orig, refused, sizeof(refused));
	timing_wait(timing, "pf", pf_lock_waited_ms(pf));
	pf_close(pf);
out:
	if (ret < 0)
		cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot restore VF %d's %s on PF %s: %s",
			   rec->bdf, rec->vf_index, refused, rec->pf_netdev, strerror(-ret));
	return ret;
}

/* A record, or whatever stands in its place (a directory): gone, or logged. */
void sriov_release_forget(int state_dirfd, const struct sriov_record *rec)
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
	int ret;

	ret = restore_vf_config(rec, pf_lock_dirfd, sysfs_root, true, timing, err);
	timing_lap(timing, "vf-mac");
	if (ret < 0)
		return ret;
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
	char who[4400];
	int pod_fd = -1, ret;

	sriov_release_owner(rec, &me);
	if (locked && claim->marker == CLAIM_MARKER_NEWER)
		return sriov_release_marker_newer(claim, NULL, "nothing was changed", err);
	if (locked && claim->marker == CLAIM_MARKER_READ && !claim_held_by(claim, &me)) {
		/* A late DEL must not reset a VF another pod owns now (sriov-cni #219). */
		claim_owner_format(&claim->owner, who, sizeof(who));
		log_info("VF %s now belongs to %s: leaving it alone", rec->bdf, who);
		goto forget;
	}
	ret = restore_vf_config(rec, pf_lock_dirfd, paths->sysfs_root, false, timing, err);
	timing_lap(timing, "vf-config");
	if (ret < 0)
		goto out;
	/*
	 * containerd's later DELs and libcni's cache before 1.2 carry no
	 * CNI_NETNS: the VF is still where ADD put it while that netns lives,
	 * and the VF is found there by its PCI address, never by name alone.
	 */
	if (!pod_netns || !pod_netns[0])
		pod_netns = rec->netns;
	/* A path outlives its namespace, and may be bound to another pod's since. */
	ret = pod_netns[0] ? netns_open_id(pod_netns, &rec->netns_id, &pod_fd) : -ENOENT;
	if (ret == -ESTALE)
		log_warn("VF %s: %s names another namespace than the one ADD moved it into: that "
			 "one is gone; the VF is looked for on the host", rec->bdf, pod_netns);
	if (ret < 0)
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
	sriov_release_forget(state_dirfd, rec);
	timing_lap(timing, "state");
	log_released(rec, timing);
	ret = 0;
out:
	if (ret < 0 && !sriov_stranded(err))
		cni_error_details(err, "the record stays for the runtime's next DEL to try again; "
				  "if the host keeps refusing, %s", SRIOV_RELEASE_BY_HAND);
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
	if (ret == 0 && strcmp(rec->bdf, bdf) == 0 && claim.marker == CLAIM_MARKER_NEWER) {
		sriov_release_marker_newer(&claim, NULL, "left as it is, its address too", err);
		ret = -EPROTO;
	} else if (ret == 0 && strcmp(rec->bdf, bdf) == 0) {
		ret = sriov_release_locked(rec, rec->netns, state_dirfd, &claim, paths, NULL, err);
	} else {
		ret = ret == -ENOENT ? 0 : ret;
	}
	claim_release(&claim);
out:
	close(pci_fd);
	return err->code && ret != -EPROTO ? -1 : ret;
}

/* The note's name: the attachment's record name. */
static int leftover_open(int state_dirfd, bool create, int *fd)
{
	if (create)
		return state_subdir_open(state_dirfd, SRIOV_LEFTOVER_SUBDIR, fd);
	*fd = openat(state_dirfd, SRIOV_LEFTOVER_SUBDIR,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/*
 * What rdma-doctor reports, until that attachment's own DEL releases its
 * address: who held the VF, its pod, and why the address stayed.
 */
static void note_leftover(int state_dirfd, const struct sriov_record *old, const char *ipam,
			  const char *why)
{
	cJSON *o = cJSON_CreateObject(), *pod;
	char name[512];
	int fd = -1, ret = -ENOMEM;

	/* A marker that could not be read names no one: the log says what it can. */
	if (!old->container_id[0] || !old->ifname[0]) {
		cJSON_Delete(o);
		return;
	}
	sriov_record_name(old->container_id, old->ifname, name, sizeof(name));
	pod = o ? cJSON_AddObjectToObject(o, "pod") : NULL;
	if (pod && state_version_put(o, 1) == 0 &&
	    cJSON_AddStringToObject(o, "containerID", old->container_id) &&
	    cJSON_AddStringToObject(o, "ifname", old->ifname) &&
	    cJSON_AddStringToObject(o, "netns", old->netns) &&
	    cJSON_AddStringToObject(o, "deviceID", old->bdf) &&
	    cJSON_AddStringToObject(o, "ipam", ipam) &&
	    cJSON_AddStringToObject(o, "why", why) &&
	    cJSON_AddStringToObject(pod, "namespace", old->pod_namespace) &&
	    cJSON_AddStringToObject(pod, "name", old->pod_name) &&
	    cJSON_AddStringToObject(pod, "uid", old->pod_uid))
		ret = state_dirfd < 0 ? -EBADF : leftover_open(state_dirfd, true, &fd);
	if (ret == 0)
		ret = state_write_json(fd, name, o, true);
	if (ret < 0)
		log_error("stateDir: cannot note %s/%s for rdma-doctor: %s", SRIOV_LEFTOVER_SUBDIR,
			  name, strerror(-ret));
	if (fd >= 0)
		close(fd);
	cJSON_Delete(o);
}

void sriov_release_leftover_forget(int state_dirfd, const char *container_id, const char *ifname)
{
	char name[512];
	int fd;

	if (state_dirfd < 0 || leftover_open(state_dirfd, false, &fd) < 0)
		return;
	sriov_record_name(container_id, ifname, name, sizeof(name));
	if (unlinkat(fd, name, 0) == 0)
		log_info("%s:%s: its address is released; the takeover's note is gone", container_id,
			 ifname);
	close(fd);
}

int sriov_release_ipam(const struct cni_request *req, int state_dirfd,
		       const struct sriov_record *old, const char *ipam_hint, const char *who,
		       struct cni_error *err)
{
	char cid[300], ifname[32], netns[4200], args[1200], why[160];
	char *env[] = { cid, ifname, netns, args, NULL };
	const char *ipam = old->ipam_type[0] ? old->ipam_type : ipam_hint;
	struct cni_request del = *req;
	struct cni_error fail = { 0 };
	const cJSON *type;
	cJSON *conf;
	int ret = -1;

	if (!old->ipam_conf[0]) {
		if (!ipam)
			return 0;
		snprintf(why, sizeof(why), "%s", old->ipam_type[0] ?
			 "its record keeps no IPAM config (an older version's, or one too large)" :
			 "its record is lost or unreadable");
		log_warn("VF %s: the address %s may hold from %s is not released: %s; its DEL "
			 "releases it, or release it by hand as docs/how-it-works.md \"Releasing an "
			 "address by hand\" says (rdma-doctor names it)", old->bdf, who, ipam, why);
		note_leftover(state_dirfd, old, ipam, why);
		return 0;
	}
	conf = cJSON_Parse(old->ipam_conf);
	type = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(conf, "ipam"),
						"type");
	del.stdin_buf = (char *)old->ipam_conf;
	del.stdin_len = strlen(old->ipam_conf);
	snprintf(cid, sizeof(cid), "CNI_CONTAINERID=%s", old->container_id);
	snprintf(ifname, sizeof(ifname), "CNI_IFNAME=%s", old->ifname);
	snprintf(netns, sizeof(netns), "CNI_NETNS=%s", old->netns);
	snprintf(args, sizeof(args), "CNI_ARGS=IgnoreUnknown=true;K8S_POD_NAMESPACE=%s;"
		 "K8S_POD_NAME=%s;K8S_POD_INFRA_CONTAINER_ID=%s;K8S_POD_UID=%s", old->pod_namespace,
		 old->pod_name, old->container_id, old->pod_uid);
	if (cJSON_IsString(type))
		ret = cni_delegate_env(&del, type->valuestring, CNI_CMD_DEL, env, NULL, &fail);
	else
		cni_errorf(&fail, CNI_ERR_STORE_CORRUPT, "its recorded IPAM config names no type");
	cJSON_Delete(conf);
	if (ret == 0)
		return 0;
	cni_errorf(err, fail.code, "deviceID %s: cannot release the address of %s, which holds the "
		   "VF: %s", old->bdf, who, fail.msg);
	cni_error_details(err, "the VF stays with it and the runtime's retry tries again; or free "
			  "it with the command scripts/rdma-doctor prints");
	return -EIO;
}
