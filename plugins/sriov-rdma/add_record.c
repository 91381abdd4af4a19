/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The record DEL works from, written before the first change on the host:
 * the VF as it is (its host netdev, the PF-side fields the config changes),
 * what ADD is about to change; then the device-info file, and the record
 * again once ADD is complete.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "link.h"
#include "log.h"
#include "add.h"
#include "release.h"

/* The VF's netdev on the host, with its altnames: the move drops them without asking again. */
int add_look_host_netdev(struct add_ctx *c)
{
	struct link_sock *ls;
	int ret = link_sock_open(&ls);

	if (ret == 0) {
		ret = link_get_by_name_alt(ls, c->vf.netdev, &c->host_li, c->altnames,
					   SRIOV_MAX_ALTNAMES, &c->n_altnames);
		link_sock_close(ls);
	}
	return ret;
}

/* The VF as it is now: its netdev (host_li) and every field its PF reports (pf_before). */
static int snapshot(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	if (!c->vf.dpdk) {
		if (!c->vf.netdev[0])
			return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND,
					  "deviceID %s: the VF has no netdev on the host (driver \"%s\")",
					  c->vf.bdf, c->vf.driver);
		ret = add_look_host_netdev(c);
		if (ret < 0)
			return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND,
					  "deviceID %s: netdev %s: %s", c->vf.bdf, c->vf.netdev,
					  strerror(-ret));
	}
	/* No property asked: the PF is not even opened (RTNL is the bottleneck at density). */
	if (!c->conf.vf.mask)
		return 0;
	ret = pf_open(c->vf.pf_netdev, &c->pf);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot reach its PF %s: %s",
				  c->vf.bdf, c->vf.pf_netdev, strerror(-ret));
	/* VF settings go to the PF one VF at a time, whatever the VF's own lock allows. */
	ret = pf_lock_at(c->pf, c->pci_fd, c->vf.pf_bdf);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: PF address %s: %s", c->vf.bdf,
				  c->vf.pf_bdf, strerror(-ret));
	ret = pf_get(c->pf, c->vf.vf_index, &c->pf_before);
	if (ret == -EOVERFLOW) {
		/* One VF's worth of sysfs, rather than a second query of every VF. */
		ret = pf_sysfs_config(c->conf.paths.sysfs_root, c->vf.pf_bdf, c->vf.vf_index,
				      &c->pf_before);
		if (ret < 0) {
			log_warn("VF %s: PF %s lists only some of its VFs, not VF %d, and sysfs has "
				 "no settings of it (%s): DEL will restore the driver's defaults",
				 c->vf.bdf, c->vf.pf_netdev, c->vf.vf_index, strerror(-ret));
			pf_vf_config_default(&c->pf_before);
		}
		ret = 0;
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot read VF %d on PF %s: %s",
				  c->vf.bdf, c->vf.vf_index, c->vf.pf_netdev, strerror(-ret));
	return 0;
}

/*
 * The device-info file and its text, declared before the file is made: a
 * DEL after ADD was killed removes it only if it holds that text, so a
 * file someone else put at the path is never removed. The RDMA name is the
 * one the pod will see: rdmaName once the device has moved.
 */
static int devinfo_declare(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	if (!c->conf.devinfo_file)
		return 0;
	ret = sriov_devinfo_text(c->devinfo_prior.text, c->vf.bdf, c->vf.pf_bdf,
				 c->rdma && c->conf.rdma_name ? c->conf.rdma_name :
							      c->rec.rdma_pod_name,
				 &c->rec.ib, c->rec.devinfo_text, sizeof(c->rec.devinfo_text));
	/* The record keeps the whole text: a copy near the limit cannot grow past it. */
	if (ret == -ENAMETOOLONG)
		return cni_errorf(err, CNI_ERR_IO, "runtimeConfig.CNIDeviceInfoFile \"%s\": the "
				  "document there (%zu bytes) and what ADD adds to it make more than "
				  "a device-info file's %d bytes; it is left as it is (give each "
				  "attachment its own path)", c->conf.devinfo_file,
				  c->devinfo_prior.len, SRIOV_DEVINFO_MAX);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "runtimeConfig.CNIDeviceInfoFile: "
				  "cannot make its text: %s", strerror(-ret));
	snprintf(c->rec.devinfo_file, sizeof(c->rec.devinfo_file), "%s", c->conf.devinfo_file);
	return 0;
}

/*
 * Whose attachment it is and how its address goes back, for an undo that
 * comes without its runtime (a takeover of a forgotten sandbox,
 * rdma-doctor's command): the pod from CNI_ARGS, the IPAM's config.
 */
static void record_pod(struct add_ctx *c)
{
	static const char *const keys[] = { "K8S_POD_NAMESPACE", "K8S_POD_NAME", "K8S_POD_UID" };
	struct sriov_record *r = &c->rec;
	char *fields[] = { r->pod_namespace, r->pod_name, r->pod_uid };
	const cJSON *ipam = cJSON_GetObjectItemCaseSensitive(c->req->conf, "ipam");
	const char *v;
	cJSON *o;
	bool ok;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = cni_env_arg(&c->req->env, keys[i]);
		fields[i][0] = '\0';
		if (v && sriov_pod_field_ok(v))
			snprintf(fields[i], SRIOV_POD_FIELD_MAX, "%s", v);
	}
	r->ipam_conf[0] = '\0';
	if (!c->conf.ipam_type)
		return;
	o = cJSON_CreateObject();
	/* cJSON asks for 5 bytes to spare: what fits then prints again when the record is read. */
	ok = o && cJSON_AddStringToObject(o, "cniVersion", c->req->version) &&
	     cJSON_AddStringToObject(o, "name", c->req->name ? c->req->name : "") &&
	     cJSON_AddItemToObject(o, "ipam", cJSON_Duplicate(ipam, true)) &&
	     cJSON_PrintPreallocated(o, r->ipam_conf, sizeof(r->ipam_conf) - 5, false);
	cJSON_Delete(o);
	if (!ok) {
		r->ipam_conf[0] = '\0';
		log_warn("ipam: its config is too large to record (over %d bytes): should this "
			 "attachment's runtime forget it, whoever releases it in its stead must release "
			 "its address by hand", SRIOV_IPAM_CONF_MAX - 5);
	}
}

/*
 * The record and the marker, from what ADD knows before its first change:
 * the attachment, the VF, its host netdev as read under the lock, the PF's
 * fields that the config changes as they were, what is to move, the
 * device-info text. The RDMA device (sriov_rdma_plan) and the GUIDs
 * (sriov_ib_snapshot) are in the record already. Filled again after an
 * InfiniBand rebind, which gives the VF a new netdev and RDMA device.
 */
int add_record_fill(struct add_ctx *c, struct cni_error *err)
{
	struct sriov_record *r = &c->rec;
	struct claim_owner *me = &c->me;

	snprintf(r->network, sizeof(r->network), "%s", c->req->name ? c->req->name : "");
	snprintf(r->ipam_type, sizeof(r->ipam_type), "%s",
		 c->conf.ipam_type ? c->conf.ipam_type : "");
	snprintf(r->container_id, sizeof(r->container_id), "%s", c->req->env.container_id);
	snprintf(r->ifname, sizeof(r->ifname), "%s", c->req->env.ifname);
	snprintf(r->netns, sizeof(r->netns), "%s", c->req->env.netns);
	r->netns_id = me->netns_id;
	memcpy(r->bdf, c->vf.bdf, sizeof(r->bdf));
	memcpy(r->pf_bdf, c->vf.pf_bdf, sizeof(r->pf_bdf));
	memcpy(r->pf_netdev, c->vf.pf_netdev, sizeof(r->pf_netdev));
	r->vf_index = c->vf.vf_index;
	r->dpdk = c->vf.dpdk;
	if (!c->vf.dpdk) {
		memcpy(r->host_ifname, c->host_li.name, IFNAMSIZ);
		memcpy(r->host_mac, c->host_li.mac, 6);
		r->host_mtu = c->host_li.mtu;
		r->host_up = c->host_li.up;
	}
	/* An IPoIB netdev has a 20-byte address and no MAC to set or give back. */
	if (c->conf.ib.is_ib)
		memset(r->host_mac, 0, 6);
	if (c->pf) {
		r->vf_orig = c->pf_before;
		r->vf_orig.mask &= c->conf.vf.mask;
		r->vf_applied = c->conf.vf;
	}
	r->rdma_moved = c->rdma != NULL;
	r->no_rules = !c->conf.multi_rail;
	record_pod(c);
	if (devinfo_declare(c, err))
		return -1;
	r->in_progress = true;
	sriov_release_owner(r, me);
	memcpy(me->host_ifname, r->host_ifname, IFNAMSIZ);
	memcpy(me->host_mac, r->host_mac, 6);
	me->host_mtu = r->host_mtu;
	if (r->rdma_moved) {
		snprintf(me->rdma_dev, sizeof(me->rdma_dev), "%s", r->rdma_dev);
		me->rdma_index = r->rdma_index;
	}
	return 0;
}

/*
 * Everything the later steps may change, in one write: a DEL after ADD
 * died at any instant from here on undoes exactly that. Two writes of the
 * record per ADD, this one and the final one, and one of the marker.
 */
int add_record_run(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	if (snapshot(c, err) ||
	    (c->conf.ib.is_ib && sriov_ib_snapshot(&c->conf, &c->vf, c->pci_fd, &c->rec, err)) ||
	    add_record_fill(c, err))
		return -1;
	/*
	 * The record first: an ADD killed before the marker leaves a record
	 * DEL restores from (to what it was), never a marker without one.
	 */
	ret = sriov_record_write(c->state_fd, &c->rec);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO, "stateDir %s: cannot record the attachment: %s",
				  c->conf.state_dir, strerror(-ret));
	ret = claim_mark(&c->claim, &c->me);
	if (ret < 0) {
		sriov_record_remove(c->state_fd, &c->rec);
		return cni_errorf(err, CNI_ERR_IO, "deviceID %s: cannot write the in-use marker in "
				  "%s/%s: %s", c->vf.bdf, c->conf.state_dir, SRIOV_PCI_SUBDIR,
				  strerror(-ret));
	}
	return 0;
}

void add_record_undo(struct add_ctx *c)
{
	int ret;

	/*
	 * What the PF kept of the pod's settings is the record's to undo, not
	 * the next tenant's; an address the IPAM kept, the record's to release.
	 */
	if (c->vf_unrestored || c->ipam_unreleased)
		return;
	sriov_record_remove(c->state_fd, &c->rec);
	ret = claim_clear(&c->claim, &c->me);
	if (ret < 0)
		log_error("VF %s: cannot remove the in-use marker: %s", c->vf.bdf, strerror(-ret));
}

/*
 * Created where no file stands, or written over the device plugin's copy
 * that the checks found (Multus puts it there before ADD and reads the
 * path back for the pod's network-status): any other file is someone
 * else's, and stays.
 */
int add_devinfo_run(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	if (!c->rec.devinfo_file[0])
		return 0;
	ret = sriov_devinfo_write(c->rec.devinfo_file, c->rec.devinfo_text, &c->devinfo_prior);
	if (ret == -EEXIST)
		return cni_errorf(err, CNI_ERR_IO,
				  "runtimeConfig.CNIDeviceInfoFile \"%s\": a file this plugin did not "
				  "write took its place during ADD; it is left as it is (give each "
				  "attachment its own path)", c->rec.devinfo_file);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO,
				  "runtimeConfig.CNIDeviceInfoFile \"%s\": cannot write it: %s",
				  c->rec.devinfo_file, strerror(-ret));
	return 0;
}

/* The device plugin's copy comes back as it was; a file ADD made goes. */
void add_devinfo_undo(struct add_ctx *c)
{
	if (c->rec.devinfo_file[0])
		sriov_devinfo_remove(c->rec.devinfo_file, c->rec.devinfo_text, c->vf.bdf,
				     &c->devinfo_prior);
}

int add_commit_run(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	c->rec.in_progress = false;
	ret = sriov_record_write(c->state_fd, &c->rec);
	if (ret < 0) {
		c->rec.in_progress = true;
		return cni_errorf(err, CNI_ERR_IO, "stateDir %s: cannot record the attachment: %s",
				  c->conf.state_dir, strerror(-ret));
	}
	return 0;
}
