/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DEL: release the address first (it needs nothing but the config), then
 * put the VF back as the record says. Every branch succeeds when what it
 * would undo is already gone: the namespace, the record, the interface,
 * or a previous DEL that did it all.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "netns.h"
#include "state.h"
#include "sriov.h"

static int restore_vf_config(const struct sriov_record *rec, const char *pf_fake_dir)
{
	struct vf_pf *pf;
	int ret;

	/* Before the netdev moves: some drivers refuse to move it while trust is off. */
	if (!rec->vf_orig.mask)
		return 0;
	ret = vf_pf_open(rec->pf_netdev, pf_fake_dir, &pf);
	if (ret == -ENODEV) {
		log_warn("VF %s: PF %s is gone: nothing to restore", rec->bdf, rec->pf_netdev);
		return 0;
	}
	if (ret < 0)
		return ret;
	ret = vf_pf_set(pf, rec->vf_index, &rec->vf_orig);
	vf_pf_close(pf);
	return ret;
}

int sriov_release(const struct sriov_record *rec, const char *pod_netns, int state_dirfd,
		  const struct sriov_paths *paths, struct cni_error *err)
{
	struct vf_claim claim = { .lock_fd = -1 };
	int pci_fd = -1, pod_fd = -1, ret;
	bool found;

	ret = state_subdir_open(state_dirfd, SRIOV_PCI_SUBDIR, &pci_fd);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO, "stateDir: %s/: %s", SRIOV_PCI_SUBDIR,
				  strerror(-ret));
	ret = vf_claim_take(pci_fd, rec->bdf, rec->netns, SRIOV_LOCK_TIMEOUT_MS, &claim);
	if (ret == -EBUSY) {
		/* A late DEL must not reset a VF another pod owns now (sriov-cni #219). */
		log_info("VF %s now belongs to %s: leaving it alone", rec->bdf, claim.owner);
		ret = 0;
		goto forget;
	}
	if (ret == -ETIMEDOUT) {
		cni_errorf(err, CNI_ERR_TRY_AGAIN,
			   "deviceID %s: another ADD or DEL holds the VF's lock; try again", rec->bdf);
		goto out;
	}
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_IO, "deviceID %s: cannot lock the VF: %s", rec->bdf,
			   strerror(-ret));
		goto out;
	}
	ret = restore_vf_config(rec, paths->pf_fake_dir);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot restore VF %d on PF %s: %s",
			   rec->bdf, rec->vf_index, rec->pf_netdev, strerror(-ret));
		goto unlock;
	}
	if (pod_netns && pod_netns[0] && netns_open(pod_netns, &pod_fd) < 0)
		pod_fd = -1;
	/* Before the netdev, as a chain runs rdma-cni's DEL before sriov-cni's. */
	ret = sriov_rdma_to_host(rec, pod_fd, paths->rdma_fake_dir);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: cannot return RDMA device %s (index %u) "
			   "to the host as %s: %s", rec->bdf, rec->rdma_pod_name, rec->rdma_index,
			   rec->rdma_dev, strerror(-ret));
		goto unlock;
	}
	if (!rec->dpdk) {
		ret = sriov_netdev_to_host(rec, pod_fd, paths->sysfs_root, &found);
		if (ret < 0) {
			cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot return %s to the host as %s: %s",
				   rec->bdf, rec->ifname, rec->host_ifname, strerror(-ret));
			goto unlock;
		}
		if (!found)
			log_warn("VF %s: %s is neither in the pod nor on the host: nothing to move",
				 rec->bdf, rec->ifname);
	}
	ret = vf_claim_clear(&claim);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_IO, "deviceID %s: cannot remove the in-use marker: %s",
			   rec->bdf, strerror(-ret));
		goto unlock;
	}
forget:
	if (rec->devinfo_file[0])
		sriov_devinfo_remove(rec->devinfo_file);
	ret = sriov_record_remove(state_dirfd, rec);
	if (ret < 0)
		cni_errorf(err, CNI_ERR_IO, "stateDir: cannot remove the record of %s:%s: %s",
			   rec->container_id, rec->ifname, strerror(-ret));
	else
		log_info("VF %s: released from %s (%s -> %s)", rec->bdf, rec->container_id,
			 rec->ifname, rec->dpdk ? "(dpdk)" : rec->host_ifname);
unlock:
	vf_claim_release(&claim);
out:
	if (pod_fd >= 0)
		close(pod_fd);
	close(pci_fd);
	return ret < 0 ? -1 : 0;
}

int sriov_cmd_del(struct cni_request *req, struct cni_error *err)
{
	struct cni_error ipam_err = { 0 };
	struct sriov_record rec;
	struct sriov_paths paths;
	const char *state_dir, *ipam;
	char name[512];
	int dirfd = -1, ret;

	if (sriov_state_dir(req, &state_dir, err) || sriov_env_paths(&paths, err))
		return -1;
	/* First, and whatever else happens: an address never leaks (plugins #1196). */
	ipam = sriov_ipam_type(req);
	if (ipam && cni_delegate(req, ipam, CNI_CMD_DEL, NULL, &ipam_err))
		log_error("ipam %s DEL: %s", ipam, ipam_err.msg);

	ret = state_dir_open(state_dir, &dirfd);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_IO, "stateDir %s: %s", state_dir, strerror(-ret));
		goto out;
	}
	sriov_record_name(req->env.container_id, req->env.ifname, name, sizeof(name));
	ret = sriov_record_read(dirfd, name, &rec);
	if (ret == -ENOENT) {
		log_debug("no record of %s:%s: nothing to undo", req->env.container_id,
			  req->env.ifname);
	} else if (ret < 0) {
		/* Nothing in it can be trusted to restore from, and keeping it would fail every retry. */
		log_error("stateDir %s: record %s is unreadable (%s): removing it", state_dir, name,
			  strerror(-ret));
		state_remove(dirfd, name);
	} else if (sriov_release(&rec, req->env.netns, dirfd, &paths, err)) {
		goto out;
	}
out:
	if (dirfd >= 0)
		close(dirfd);
	/* With the VF home and the record gone, a retry only repeats the IPAM's DEL. */
	if (!err->code && ipam_err.code) {
		*err = ipam_err;
		return -1;
	}
	return err->code ? -1 : 0;
}
