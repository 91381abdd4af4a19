/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ADD: a straight list of steps, each with its undo. Everything is checked
 * before the first step; when a step fails, the steps before it are undone
 * in reverse order, so a failed ADD leaves the VF on the host as it was,
 * its address released and no record behind. An ADD killed half way
 * (runtimes SIGKILL a plugin past its deadline, then call DEL) is undone
 * by DEL: the record saying what ADD is about to change is written before
 * the first change on the host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "netns.h"
#include "state.h"
#include "add.h"

struct add_step {
	const char *name;
	int (*run)(struct add_ctx *c, struct cni_error *err);
	void (*undo)(struct add_ctx *c);
};

/*
 * In order; each undo reverts its own step. The claim comes first: a VF
 * another pod holds is refused as in use before anything else is asked
 * about it, its RDMA device included (the lock is dropped at the end,
 * whatever happened). The RDMA device moves just before the netdev: a
 * driver that refuses the move then costs no netdev round trip, and drivers
 * that tie their RDMA device to the netdev's namespace (rxe, siw)
 * unregister it as soon as the netdev leaves, which would turn their
 * refusal into a vanished device. The IPAM and everything after it see both
 * in the pod; an IPAM that never looks there (pool-ipam, host-local, ...)
 * is started before the moves and answers after them: a move waits on the
 * kernel's RCU grace periods, not on a CPU, and the IPAM runs in that wait.
 */
static const struct add_step add_steps[] = {
	{ "claim",	add_claim_run,		NULL },
	{ "rdma-plan",	add_plan_run,		NULL },
	{ "record",	add_record_run,		add_record_undo },
	{ "vf-config",	add_vfcfg_run,		add_vfcfg_undo },
	{ "ib-guid",	add_ib_guid_run,	add_ib_guid_undo },
	{ "ipam-spawn",	add_ipam_spawn_run,	add_ipam_spawn_undo },
	{ "rdma",	add_rdma_run,		add_rdma_undo },
	{ "netdev",	add_netdev_run,		add_netdev_undo },
	{ "vf-mac",	add_vfmac_run,		add_vfmac_undo },
	{ "sysctl",	add_sysctl_run,		add_sysctl_undo },
	{ "ipam",	add_ipam_run,		add_ipam_undo },
	{ "address",	add_addr_run,		NULL },
	{ "routing",	add_routing_run,	add_routing_undo },
	{ "devinfo",	add_devinfo_run,	add_devinfo_undo },
	{ "commit",	add_commit_run,		NULL },
};

static int run_steps(struct add_ctx *c, struct cni_error *err)
{
	int n = (int)(sizeof(add_steps) / sizeof(add_steps[0]));
	char steps[512];
	int i;

	for (i = 0; i < n; i++) {
		int ret = add_steps[i].run(c, err);

		timing_lap(&c->timing, add_steps[i].name);
		if (ret == 0 && !netns_stranded())
			continue;
		timing_format(&c->timing, steps, sizeof(steps));
		/* In the pod's namespace, an undo would act on the pod as if it were the host. */
		if (sriov_stranded(err)) {
			log_error("ADD stopped at %s in the pod's network namespace, nothing undone; "
				  "steps %s", add_steps[i].name, steps);
			return -1;
		}
		log_error("ADD failed at %s: %s; steps %s", add_steps[i].name, err->msg, steps);
		while (--i >= 0)
			if (add_steps[i].undo)
				add_steps[i].undo(c);
		if (c->vf_unrestored)
			cni_error_details(err, "VF %s: PF %s refused to restore its %s: DEL the "
					  "attachment to finish (its record stays)", c->vf.bdf,
					  c->vf.pf_netdev, c->unrestored_text);
		if (c->ipam_unreleased)
			cni_error_details(err, "the IPAM's DEL failed too (%s): its address may stay "
					  "reserved; DEL the attachment to release it (its record stays)",
					  c->ipam_del_msg);
		return -1;
	}
	return 0;
}

/* ---- checks before any change ---- */

static int lookup_vf(struct add_ctx *c, struct cni_error *err)
{
	int ret = vf_lookup(c->conf.paths.sysfs_root, c->conf.bdf, &c->vf);

	if (ret == -ENODEV)
		return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND,
				  "deviceID %s: no such PCI device in %s/bus/pci/devices",
				  c->conf.bdf, c->conf.paths.sysfs_root);
	if (ret == -ENOTSUP)
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "deviceID %s: not an SR-IOV VF (it has no physfn); "
				  "name a VF's PCI address", c->conf.bdf);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: %s", c->conf.bdf, strerror(-ret));
	return 0;
}

static int open_pod(struct add_ctx *c, struct cni_error *err)
{
	const char *netns = c->req->env.netns;
	struct link_info li;
	bool host = false;
	int ret, self;

	ret = netns_open(netns, &c->pod_fd);
	if (ret == -ENOENT)
		return cni_errorf(err, CNI_ERR_INVALID_NETNS, "CNI_NETNS %s: no such namespace", netns);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_INVALID_NETNS, "CNI_NETNS %s: not a network namespace (%s)",
				  netns, strerror(-ret));
	/*
	 * By identity, not by path: any path can name the host's namespace,
	 * and a VF "moved" there stays on the host under the pod's name with
	 * its claim held for ever.
	 */
	ret = netns_open_current(&self);
	if (ret == 0) {
		host = netns_same(c->pod_fd, self);
		close(self);
	}
	if (ret == 0 && host)
		return cni_errorf(err, CNI_ERR_INVALID_NETNS,
				  "CNI_NETNS %s: is the host's own network namespace; a pod's namespace is needed",
				  netns);
	if (c->vf.dpdk)
		return 0;
	/* The one socket of the pod for the whole ADD: each open is two setns calls. */
	ret = link_sock_open_in(c->pod_fd, &c->pod_ls);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "CNI_NETNS %s: %s", netns, strerror(-ret));
	ret = link_get_by_name(c->pod_ls, c->req->env.ifname, &li);
	if (ret == 0)
		return cni_errorf(err, CNI_ERR_IFNAME_TAKEN,
				  "CNI_IFNAME %s: already exists in %s; choose another interface name",
				  c->req->env.ifname, netns);
	/* The netdev step counts on this look: it does not ask again. */
	if (ret != -ENODEV)
		return cni_errorf(err, CNI_ERR_PLUGIN, "CNI_NETNS %s: cannot look for %s there: %s",
				  netns, c->req->env.ifname, strerror(-ret));
	return 0;
}

/*
 * Before anything changes: the path is free, or holds the device plugin's
 * document for this VF. Anything else stays, and so does the host.
 */
static int look_at_devinfo(struct add_ctx *c, struct cni_error *err)
{
	const char *path = c->conf.devinfo_file;
	char other[64] = "";
	int ret;

	if (!path)
		return 0;
	ret = sriov_devinfo_inspect(path, c->vf.bdf, &c->devinfo_prior, other, sizeof(other));
	if (ret == 0)
		return 0;
	switch (ret) {
	case -EXDEV:
		cni_errorf(err, CNI_ERR_IO, "runtimeConfig.CNIDeviceInfoFile \"%s\": holds the "
			   "device-info of %s, not of VF %s", path, other, c->vf.bdf);
		break;
	case -EBADMSG:
		cni_errorf(err, CNI_ERR_IO, "runtimeConfig.CNIDeviceInfoFile \"%s\": a file that is "
			   "not a device-info document (\"type\": \"pci\" with a pci-address) is "
			   "there", path);
		break;
	case -ELOOP:
		cni_errorf(err, CNI_ERR_IO, "runtimeConfig.CNIDeviceInfoFile \"%s\": is a symlink",
			   path);
		break;
	case -EINVAL:
		cni_errorf(err, CNI_ERR_IO, "runtimeConfig.CNIDeviceInfoFile \"%s\": is not a "
			   "regular file", path);
		break;
	case -EFBIG:
		cni_errorf(err, CNI_ERR_IO, "runtimeConfig.CNIDeviceInfoFile \"%s\": a file larger "
			   "than a device-info document (%d bytes) is there", path, SRIOV_DEVINFO_MAX);
		break;
	default:
		return cni_errorf(err, CNI_ERR_IO, "runtimeConfig.CNIDeviceInfoFile \"%s\": cannot "
				  "read it: %s", path, strerror(-ret));
	}
	cni_error_details(err, "a file this plugin did not write is left as it is: give each "
			  "attachment its own path (the only file taken over is the device "
			  "plugin's copy for this VF, which Multus puts there)");
	return ret;
}

static int open_state(struct add_ctx *c, struct cni_error *err)
{
	int ret = state_dir_open(c->conf.state_dir, &c->state_fd);

	if (ret == 0)
		ret = state_subdir_open(c->state_fd, SRIOV_PCI_SUBDIR, &c->pci_fd);
	/* O_NOFOLLOW|O_DIRECTORY reports a symlink as ENOTDIR, or ELOOP. */
	if (ret == -ELOOP || ret == -ENOTDIR)
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "stateDir %s: a component is a symlink or not a directory; "
				  "name a real directory", c->conf.state_dir);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO, "stateDir %s: %s", c->conf.state_dir,
				  strerror(-ret));
	return 0;
}

int sriov_cmd_add(struct cni_request *req, struct cni_result *res, struct cni_error *err)
{
	struct add_ctx *c;
	int ret = -1;

	c = calloc(1, sizeof(*c));
	if (!c)
		return cni_errorf(err, CNI_ERR_PLUGIN, "out of memory");
	timing_start(&c->timing);
	c->req = req;
	c->state_fd = c->pci_fd = c->pod_fd = -1;
	c->claim.lock_fd = -1;
	cni_result_init(&c->ipam);
	cni_result_init(&c->prev);
	if (sriov_conf_parse(req, &c->conf, err) ||
	    (req->prev_result && cni_result_parse(req->prev_result, &c->prev, err)))
		goto out;
	if (c->prev.n_ifaces >= CNI_MAX_IFACES) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "prevResult: already %d interfaces, the most "
			   "a result holds", c->prev.n_ifaces);
		goto out;
	}
	if (lookup_vf(c, err) || add_ib_validate(&c->conf, &c->vf, err) || open_pod(c, err) ||
	    open_state(c, err) || look_at_devinfo(c, err)) {
		sriov_stranded(err);
		goto out;
	}
	timing_lap(&c->timing, "checks");
	/* The claim's owner; the record, filled once the VF is ours, names the rest. */
	snprintf(c->me.container_id, sizeof(c->me.container_id), "%s", req->env.container_id);
	snprintf(c->me.ifname, sizeof(c->me.ifname), "%s", req->env.ifname);
	snprintf(c->me.netns, sizeof(c->me.netns), "%s", req->env.netns);
	/* What CNI_NETNS names now: by the time of DEL, the path may name another namespace. */
	if (netns_id_of(c->pod_fd, &c->me.netns_id) < 0)
		memset(&c->me.netns_id, 0, sizeof(c->me.netns_id));
	if (run_steps(c, err))
		goto out;
	add_result_fill(c, res);
	add_log_success(c, res);
	/* Complete and recorded, but this process is in the pod: the runtime's DEL undoes it. */
	if (sriov_stranded(err))
		goto out;
	ret = 0;
out:
	/* Stranded in the pod with the IPAM still running: its answer is DEL's to undo. */
	cni_delegate_abandon(&c->ipam_d);
	claim_release(&c->claim);
	rdma_sock_close(c->rdma);
	pf_close(c->pf);
	link_sock_close(c->pod_ls);
	if (c->pod_fd >= 0)
		close(c->pod_fd);
	if (c->pci_fd >= 0)
		close(c->pci_fd);
	if (c->state_fd >= 0)
		close(c->state_fd);
	free(c->devinfo_prior.text);
	free(c);
	return ret;
}
