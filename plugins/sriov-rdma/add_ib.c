/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ADD's InfiniBand steps: the VF's link layer checked against the config,
 * its GUIDs set on the PF and the VF rebound so that its driver reads
 * them, and what the rebind renamed looked at again. What DEL and CHECK
 * share with ADD (parse, snapshot, restore, check) is in ib.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ib.h"
#include "link.h"
#include "log.h"
#include "add.h"

int add_ib_validate(struct sriov_conf *conf, const struct vf_dev *vf, struct cni_error *err)
{
	struct sriov_ib_conf *ib = &conf->ib;
	bool is_ib = false, connected = false;
	int ret, max;

	ret = sriov_ib_link_is_ib(conf->paths.sysfs_root, vf, &is_ib);
	if (ret < 0 && ret != -ENOENT)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot read its link layer in "
				  "sysfs: %s", vf->bdf, strerror(-ret));
	ib->is_ib = is_ib;
	if (!is_ib) {
		if (!ib->ib_key)
			return 0;
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s: VF %s is Ethernet, and %s is an "
			   "InfiniBand setting", ib->ib_key, vf->bdf, ib->ib_key);
		cni_error_details(err, "drop it, or use an InfiniBand VF (its netdev of type 32)");
		return -EINVAL;
	}
	if (ib->eth_key) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s: VF %s is InfiniBand (IPoIB), and %s is "
			   "an Ethernet setting", ib->eth_key, vf->bdf, ib->eth_key);
		cni_error_details(err, "drop it: an InfiniBand VF has no MAC, VLAN, spoof check, "
				  "trust or rate on its PF (the subnet manager's partitions, pkey, "
				  "take the VLAN's place)");
		return -EINVAL;
	}
	/* Here, not in parsing: a config is checked whole before the VF is looked at, this is the VF's. */
	if (ib->k8s && (!ib->guid_field || strcmp(ib->guid_field, "runtimeConfig.infinibandGUID"))) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "ibKubernetesEnabled: true, but no "
			   "runtimeConfig.infinibandGUID: ib-kubernetes has not given this pod a GUID "
			   "yet");
		cni_error_details(err, "the NAD must list the capability (\"capabilities\": "
				  "{\"infinibandGUID\": true}) and ib-kubernetes must run; the pod is "
				  "retried once it has annotated it");
		return -EINVAL;
	}
	if (vf->dpdk) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "deviceID %s: an InfiniBand VF bound to %s "
			   "is not supported", vf->bdf, vf->driver);
		return -EINVAL;
	}
	if (!conf->mtu || !vf->netdev[0])
		return 0;
	ret = ib_ipoib_connected(conf->paths.sysfs_root, vf->bdf, vf->netdev, &connected);
	if (ret < 0 && ret != -ENOENT)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot read the IPoIB mode of "
				  "%s: %s", vf->bdf, vf->netdev, strerror(-ret));
	max = connected ? IB_MTU_CONNECTED_MAX : IB_MTU_DATAGRAM_MAX;
	if (conf->mtu > max) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "mtu: %d is more than IPoIB in %s mode "
			   "carries (at most %d)", conf->mtu, connected ? "connected" : "datagram",
			   max);
		cni_error_details(err, "datagram mode carries the IB MTU less 4 (2044 or 4092), "
				  "connected mode up to 65520");
		return -EINVAL;
	}
	return 0;
}

static int apply_guids(const struct sriov_conf *conf, struct vf_dev *vf, int pci_fd,
		   const struct sriov_record *rec, struct timing *timing, struct cni_error *err)
{
	char netdev[IFNAMSIZ], rdma[64], bdf[VF_BDF_LEN];
	struct pf *pf = NULL;
	int ret;

	if (!rec->ib.guid_set)
		return 0;
	if (sriov_ib_open_pf(vf, pci_fd, &pf, err))
		return -1;
	ret = pf_set_guids(pf, vf->vf_index, &rec->ib.applied);
	timing_wait(timing, "pf", pf_lock_waited_ms(pf));
	pf_close(pf);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: PF %s refused the GUIDs of VF "
				  "%d: %s", vf->bdf, vf->pf_netdev, vf->vf_index, strerror(-ret));
	/* mlx5 reads the GUID when the VF's driver probes it. */
	ret = ib_vf_rebind(conf->paths.sysfs_root, vf->bdf, rec->ib.driver, sriov_ib_rebind_ms(),
			   netdev, rdma);
	if (ret == -ETIMEDOUT) {
		cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: rebound to %s for its new GUID, but "
			   "its netdev and RDMA device did not come back within %d ms (netdev \"%s\", "
			   "RDMA device \"%s\")", vf->bdf, rec->ib.driver, sriov_ib_rebind_ms(), netdev,
			   rdma);
		cni_error_details(err, "is mlx5_ib loaded, and udev running? The GUID goes back "
				  "to the VF's own");
		return ret;
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot rebind it to %s for its "
				  "new GUID: %s", vf->bdf, rec->ib.driver, strerror(-ret));
	/* vf_lookup clears what it fills: the address from a copy. */
	memcpy(bdf, vf->bdf, sizeof(bdf));
	ret = vf_lookup(conf->paths.sysfs_root, bdf, vf);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND, "deviceID %s: after its rebind: %s",
				  bdf, strerror(-ret));
	log_info("VF %s rebound: netdev %s, RDMA device %s", vf->bdf, vf->netdev,
		 vf->rdma_dev[0] ? vf->rdma_dev : "none");
	return 0;
}

/*
 * The rebind gave the VF a new netdev and RDMA device (new ifindex, new
 * RDMA index, maybe new names): what the later steps move is looked at
 * again, and the record says so before they run.
 */
static int after_rebind(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	rdma_sock_close(c->rdma);
	c->rdma = NULL;
	memset(c->rec.rdma_dev, 0, sizeof(c->rec.rdma_dev));
	memset(c->rec.rdma_pod_name, 0, sizeof(c->rec.rdma_pod_name));
	c->rec.rdma_index = 0;
	if (add_plan_run(c, err))
		return -1;
	ret = add_look_host_netdev(c);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND, "deviceID %s: netdev %s after the "
				  "rebind: %s", c->vf.bdf, c->vf.netdev, strerror(-ret));
	/* The device-info text names the new RDMA device, where no rdmaName replaces it. */
	if (add_record_fill(c, err))
		return -1;
	ret = sriov_record_write(c->state_fd, &c->rec);
	if (ret == 0)
		ret = claim_mark(&c->claim, &c->me);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO, "stateDir %s: cannot record the attachment: %s",
				  c->conf.state_dir, strerror(-ret));
	return 0;
}

void add_ib_guid_undo(struct add_ctx *c)
{
	int ret = sriov_ib_restore(&c->rec, c->pci_fd, c->conf.paths.sysfs_root, &c->timing);

	if (ret < 0)
		log_error("VF %s: cannot restore its GUIDs on PF %s: %s", c->vf.bdf,
			  c->vf.pf_netdev, strerror(-ret));
}

int add_ib_guid_run(struct add_ctx *c, struct cni_error *err)
{
	if (!c->rec.ib.guid_set)
		return 0;
	if (apply_guids(&c->conf, &c->vf, c->pci_fd, &c->rec, &c->timing, err) ||
	    after_rebind(c, err)) {
		/* No later undo runs for this step: the VF's own GUIDs go back now. */
		add_ib_guid_undo(c);
		return -1;
	}
	return 0;
}

int add_ib_netdev_again(struct add_ctx *c, struct cni_error *err)
{
	struct link_sock *ls;
	char name[IFNAMSIZ];
	int ret;

	ret = vf_netdev_name(c->conf.paths.sysfs_root, c->vf.bdf, name);
	if (ret == 0 && !name[0])
		ret = -ENODEV;
	if (ret == 0)
		ret = link_sock_open(&ls);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND, "deviceID %s: its IPoIB netdev after "
				  "the RDMA device moved: %s", c->vf.bdf, strerror(-ret));
	ret = link_get_by_name_alt(ls, name, &c->host_li, c->altnames, SRIOV_MAX_ALTNAMES,
				   &c->n_altnames);
	link_sock_close(ls);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND, "deviceID %s: its IPoIB netdev %s "
				  "after the RDMA device moved: %s", c->vf.bdf, name, strerror(-ret));
	memcpy(c->vf.netdev, c->host_li.name, IFNAMSIZ);
	return 0;
}
