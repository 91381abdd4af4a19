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
#include <linux/if_ether.h>
#include "link.h"
#include "log.h"
#include "netns.h"
#include "state.h"
#include "sysctl.h"
#include "sriov.h"
#include "timing.h"

struct add_ctx {
	struct cni_request *req;
	struct sriov_conf conf;
	struct vf_dev vf;
	int state_fd;
	int pci_fd;
	int pod_fd;
	/* Opened in the pod once, for every step's requests there (NULL for DPDK). */
	struct link_sock *pod_ls;
	struct claim claim;
	struct claim_owner me;		/* this attachment, as its in-use marker names it */
	struct link_info host_li;	/* the VF netdev on the host, read under the lock */
	char altnames[SRIOV_MAX_ALTNAMES][128];	/* its alternative names, from the same read */
	int n_altnames;
	struct pf *pf;
	struct pf_vf_config pf_before;	/* every field the PF reported before vf-config */
	struct rdma_sock *rdma;		/* host socket, when the RDMA device is to move */
	struct sriov_record rec;
	/* Another attachment's record: a repeated ADD's, or that of a stale claim taken over. */
	struct sriov_record old;
	struct sriov_devinfo_prior devinfo_prior;	/* the device plugin's copy at the path */
	struct cni_result ipam;
	struct cni_delegation ipam_d;	/* the IPAM's ADD, while the VF moves */
	struct cni_result prev;		/* prevResult of the chain, or empty */
	struct sriov_rail rail;		/* what the sysctl and routing steps changed */
	int pod_ifindex;		/* the netdev's, in the pod, once moved */
	bool pod_carrier;		/* it had carrier when it arrived there */
	struct timing timing;		/* per step, for the log line that ends ADD */
};

struct add_step {
	const char *name;
	int (*run)(struct add_ctx *c, struct cni_error *err);
	void (*undo)(struct add_ctx *c);
};

/* ---- claim: the VF's lock, and who holds it ---- */

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
	if (ret == 0) {
		log_info("VF %s: taking over the stale claim of %s: restoring the VF as its record "
			 "says", c->vf.bdf, who);
	} else {
		sriov_record_fallback(&c->vf, c->claim.marker == CLAIM_MARKER_READ ? o : NULL,
				      o->container_id, o->ifname, o->netns, old);
		sriov_ib_fallback(&c->conf.paths, &c->vf, old);
		log_warn("VF %s: taking over the stale claim of %s, %s: restoring it as %s with the "
			 "driver's default VF settings", c->vf.bdf,
			 c->claim.marker == CLAIM_MARKER_READ ? who : "whose marker is unreadable",
			 ret == -ENOENT ? "which left no record" : "whose record is unreadable",
			 old->dpdk ? "(dpdk)" : old->host_ifname);
	}
	if (sriov_release_locked(old, NULL, c->state_fd, &c->claim, &c->conf.paths, NULL,
				 &why) == 0)
		return 0;
	cni_errorf(err, why.code, "deviceID %s: cannot restore the VF left behind by %s: %s",
		   c->vf.bdf, who, why.msg);
	return -EIO;
}

static int claim_run(struct add_ctx *c, struct cni_error *err)
{
	const struct sriov_record *old = &c->old;
	bool took_over = false;
	char who[4400];
	int ret;

	ret = claim_take(c->pci_fd, c->vf.bdf, &c->me, SRIOV_LOCK_TIMEOUT_MS, &c->claim);
	if (ret == -EBUSY) {
		claim_owner_format(&c->claim.owner, who, sizeof(who));
		cni_errorf(err, CNI_ERR_DEVICE_IN_USE, "deviceID %s: VF in use by %s", c->vf.bdf, who);
		cni_error_details(err, "another attachment holds this VF; the device plugin "
				  "allocated it twice, or that pod's DEL has not run yet");
		return ret;
	}
	if (ret == -ETIMEDOUT)
		return cni_errorf(err, CNI_ERR_TRY_AGAIN,
				  "deviceID %s: another ADD or DEL holds the VF's lock; try again",
				  c->vf.bdf);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO, "deviceID %s: cannot lock the VF in %s/%s: %s",
				  c->vf.bdf, c->conf.state_dir, SRIOV_PCI_SUBDIR, strerror(-ret));
	if (refuse_existing(c, err))
		return -EEXIST;
	if (c->claim.marker != CLAIM_MARKER_NONE && !claim_held_by(&c->claim, &c->me)) {
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

/* ---- the RDMA device: what happens to it, now that the VF is ours ---- */

static int plan_run(struct add_ctx *c, struct cni_error *err)
{
	return sriov_rdma_plan(&c->conf, &c->vf, &c->rec, &c->rdma, err);
}

/* ---- the record DEL works from, before the first change on the host ---- */

/* The VF's netdev on the host, with its altnames: the move drops them without asking again. */
static int look_host_netdev(struct add_ctx *c)
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

/* The VF as it is now: its netdev and the PF-side fields the config changes. */
static int snapshot(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	if (!c->vf.dpdk) {
		if (!c->vf.netdev[0])
			return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND,
					  "deviceID %s: the VF has no netdev on the host (driver \"%s\")",
					  c->vf.bdf, c->vf.driver);
		ret = look_host_netdev(c);
		if (ret < 0)
			return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND,
					  "deviceID %s: netdev %s: %s", c->vf.bdf, c->vf.netdev,
					  strerror(-ret));
		memcpy(c->rec.host_ifname, c->host_li.name, IFNAMSIZ);
		memcpy(c->rec.host_mac, c->host_li.mac, 6);
		c->rec.host_mtu = c->host_li.mtu;
		c->rec.host_up = c->host_li.up;
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
	ret = pf_get(c->pf, c->vf.vf_index, &c->rec.vf_orig);
	if (ret == -EOVERFLOW) {
		/* One VF's worth of sysfs, rather than a second query of every VF. */
		ret = pf_sysfs_config(c->conf.paths.sysfs_root, c->vf.pf_bdf, c->vf.vf_index,
				      &c->rec.vf_orig);
		if (ret < 0) {
			log_warn("VF %s: PF %s lists only some of its VFs, not VF %d, and sysfs has "
				 "no settings of it (%s): DEL will restore the driver's defaults",
				 c->vf.bdf, c->vf.pf_netdev, c->vf.vf_index, strerror(-ret));
			pf_vf_config_default(&c->rec.vf_orig);
		}
		ret = 0;
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot read VF %d on PF %s: %s",
				  c->vf.bdf, c->vf.vf_index, c->vf.pf_netdev, strerror(-ret));
	c->pf_before = c->rec.vf_orig;
	c->rec.vf_orig.mask &= c->conf.vf.mask;
	c->rec.vf_applied = c->conf.vf;
	return 0;
}

/* An IPoIB netdev has a 20-byte address and no MAC to set or give back. */
static int snapshot_ib(struct add_ctx *c, struct cni_error *err)
{
	if (!c->conf.ib.is_ib)
		return 0;
	memset(c->rec.host_mac, 0, 6);
	return sriov_ib_snapshot(&c->conf, &c->vf, c->pci_fd, &c->rec, err);
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
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "runtimeConfig.CNIDeviceInfoFile: "
				  "cannot make its text: %s", strerror(-ret));
	snprintf(c->rec.devinfo_file, sizeof(c->rec.devinfo_file), "%s", c->conf.devinfo_file);
	return 0;
}

/*
 * Everything the later steps may change, in one write: a DEL after ADD
 * died at any instant from here on undoes exactly that. Two writes of the
 * record per ADD, this one and the final one, and one of the marker.
 */
static int record_run(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	if (snapshot(c, err) || snapshot_ib(c, err))
		return -1;
	c->rec.rdma_moved = c->rdma != NULL;
	c->rec.no_rules = !c->conf.multi_rail;
	if (devinfo_declare(c, err))
		return -1;
	c->rec.in_progress = true;
	memcpy(c->me.host_ifname, c->rec.host_ifname, IFNAMSIZ);
	memcpy(c->me.host_mac, c->rec.host_mac, 6);
	c->me.host_mtu = c->rec.host_mtu;
	if (c->rec.rdma_moved) {
		snprintf(c->me.rdma_dev, sizeof(c->me.rdma_dev), "%s", c->rec.rdma_dev);
		c->me.rdma_index = c->rec.rdma_index;
	}
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

static void record_undo(struct add_ctx *c)
{
	int ret;

	sriov_record_remove(c->state_fd, &c->rec);
	ret = claim_clear(&c->claim, &c->me);
	if (ret < 0)
		log_error("VF %s: cannot remove the in-use marker: %s", c->vf.bdf, strerror(-ret));
}

/* ---- VF properties on the PF ---- */

/* The config's words for one PF_VF_* field, for the error naming what a driver refused. */
static void vf_field_format(unsigned field, const struct pf_vf_config *v, char *buf, size_t len)
{
	static const char *const states[] = { "auto", "enable", "disable" };

	switch (field) {
	case PF_VF_MAC:
		snprintf(buf, len, "mac %02x:%02x:%02x:%02x:%02x:%02x", v->mac[0], v->mac[1],
			 v->mac[2], v->mac[3], v->mac[4], v->mac[5]);
		break;
	case PF_VF_VLAN:
		snprintf(buf, len, "vlan %d, vlanQoS %d, vlanProto %s", v->vlan, v->qos,
			 v->vlan_proto == ETH_P_8021AD ? "802.1ad" : "802.1q");
		break;
	case PF_VF_RATE:
		snprintf(buf, len, "min_tx_rate %u, max_tx_rate %u", v->min_tx_rate, v->max_tx_rate);
		break;
	case PF_VF_SPOOFCHK:
		snprintf(buf, len, "spoofchk %s", v->spoofchk ? "on" : "off");
		break;
	case PF_VF_TRUST:
		snprintf(buf, len, "trust %s", v->trust ? "on" : "off");
		break;
	case PF_VF_LINK_STATE:
		snprintf(buf, len, "link_state %s", v->link_state >= 0 && v->link_state < 3 ?
			 states[v->link_state] : "?");
		break;
	default:
		snprintf(buf, len, "settings");
	}
}

static void vfcfg_undo(struct add_ctx *c);

static int vfcfg_refused(struct add_ctx *c, int ret, const struct pf_vf_config *asked,
			 struct cni_error *err)
{
	char what[96];

	vf_field_format(pf_refused(c->pf), asked, what, sizeof(what));
	return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: PF %s (driver %s) refused VF %d's %s: %s",
			  c->vf.bdf, c->vf.pf_netdev, c->vf.pf_driver[0] ? c->vf.pf_driver : "unknown",
			  c->vf.vf_index, what, strerror(-ret));
}

/*
 * Everything but the MAC, which the PF pins after the netdev took it from
 * its own side (vfmac_run): Intel PFs (igb, ixgbe) refuse a VF-side MAC
 * change while the PF holds an administrative MAC for the VF, even to the
 * same address. A MAC the PF reports for the VF already (igb shows the
 * netdev's own there, held or not) is cleared first, for the same reason;
 * an all-zero one (mlx5's "none") needs nothing.
 */
static int vfcfg_run(struct add_ctx *c, struct cni_error *err)
{
	struct pf_vf_config cfg = c->conf.vf;
	int ret;

	if (!c->pf)
		return 0;
	cfg.mask &= ~PF_VF_MAC;
	ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	if (ret == 0 && (c->conf.vf.mask & PF_VF_MAC) && (c->rec.vf_orig.mask & PF_VF_MAC) &&
	    !pf_mac_unset(c->rec.vf_orig.mac)) {
		cfg.mask = PF_VF_MAC;
		memset(cfg.mac, 0, 6);
		ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	}
	if (ret < 0) {
		vfcfg_refused(c, ret, &cfg, err);
		/* Some fields may be set already: undo them now, as this step's undo won't run. */
		vfcfg_undo(c);
		return -1;
	}
	return 0;
}

/*
 * What the PF held before, the MAC last and only where the PF does not
 * report it already: on igb a VF's own MAC shows on the PF without being
 * held, and holding it would refuse the VF's next change of its own.
 */
static void vfcfg_undo(struct add_ctx *c)
{
	struct pf_vf_config cfg = c->rec.vf_orig, now;
	int ret;

	if (!c->pf)
		return;
	cfg.mask &= ~PF_VF_MAC;
	ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	if (ret == 0 && (c->rec.vf_orig.mask & PF_VF_MAC)) {
		cfg.mask = PF_VF_MAC;
		if (pf_mac_unset(cfg.mac) || pf_get(c->pf, c->vf.vf_index, &now) < 0 ||
		    !(now.mask & PF_VF_MAC) || memcmp(now.mac, cfg.mac, 6))
			ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	}
	if (ret < 0)
		log_error("VF %s: cannot restore its settings on PF %s: %s", c->vf.bdf,
			  c->vf.pf_netdev, strerror(-ret));
}

/* The configured MAC on the PF, once the netdev carries it. */
static int vfmac_run(struct add_ctx *c, struct cni_error *err)
{
	struct pf_vf_config cfg = c->conf.vf;
	int ret;

	if (!c->pf || !(cfg.mask & PF_VF_MAC))
		return 0;
	cfg.mask = PF_VF_MAC;
	ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	return ret < 0 ? vfcfg_refused(c, ret, &cfg, err) : 0;
}

/* Released again, so that the netdev's undo can take its host MAC back from its side. */
static void vfmac_undo(struct add_ctx *c)
{
	struct pf_vf_config cfg = { .mask = PF_VF_MAC };
	int ret;

	if (!c->pf || !(c->conf.vf.mask & PF_VF_MAC))
		return;
	ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	if (ret < 0)
		log_error("VF %s: cannot clear its MAC on PF %s: %s", c->vf.bdf, c->vf.pf_netdev,
			  strerror(-ret));
}

/* ---- InfiniBand: the GUIDs, and the rebind that applies them ---- */

/*
 * The rebind gave the VF a new netdev and RDMA device (new ifindex, new
 * RDMA index, maybe new names): what the later steps move is looked at
 * again, and the record says so before they run.
 */
static int ib_after_rebind(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	rdma_sock_close(c->rdma);
	c->rdma = NULL;
	memset(c->rec.rdma_dev, 0, sizeof(c->rec.rdma_dev));
	memset(c->rec.rdma_pod_name, 0, sizeof(c->rec.rdma_pod_name));
	c->rec.rdma_index = 0;
	if (plan_run(c, err))
		return -1;
	ret = look_host_netdev(c);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_DEVICE_NOT_FOUND, "deviceID %s: netdev %s after the "
				  "rebind: %s", c->vf.bdf, c->vf.netdev, strerror(-ret));
	c->rec.rdma_moved = c->rdma != NULL;
	memcpy(c->rec.host_ifname, c->host_li.name, IFNAMSIZ);
	c->rec.host_mtu = c->host_li.mtu;
	c->rec.host_up = c->host_li.up;
	memcpy(c->me.host_ifname, c->rec.host_ifname, IFNAMSIZ);
	memset(c->me.rdma_dev, 0, sizeof(c->me.rdma_dev));
	c->me.rdma_index = 0;
	if (c->rec.rdma_moved) {
		snprintf(c->me.rdma_dev, sizeof(c->me.rdma_dev), "%s", c->rec.rdma_dev);
		c->me.rdma_index = c->rec.rdma_index;
	}
	/* The kernel's name of the new RDMA device, where no rdmaName replaces it. */
	if (devinfo_declare(c, err))
		return -1;
	ret = sriov_record_write(c->state_fd, &c->rec);
	if (ret == 0)
		ret = claim_mark(&c->claim, &c->me);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_IO, "stateDir %s: cannot record the attachment: %s",
				  c->conf.state_dir, strerror(-ret));
	return 0;
}

static void ibguid_undo(struct add_ctx *c);

static int ibguid_run(struct add_ctx *c, struct cni_error *err)
{
	if (!c->rec.ib.guid_set)
		return 0;
	if (sriov_ib_apply(&c->conf, &c->vf, c->pci_fd, &c->rec, err) ||
	    ib_after_rebind(c, err)) {
		/* No later undo runs for this step: the VF's own GUIDs go back now. */
		ibguid_undo(c);
		return -1;
	}
	return 0;
}

static void ibguid_undo(struct add_ctx *c)
{
	int ret = sriov_ib_restore(&c->rec, c->pci_fd, c->conf.paths.sysfs_root);

	if (ret < 0)
		log_error("VF %s: cannot restore its GUIDs on PF %s: %s", c->vf.bdf,
			  c->vf.pf_netdev, strerror(-ret));
}

/* ---- the RDMA device into the pod (decided by sriov_rdma_plan) ---- */

static int rdma_run(struct add_ctx *c, struct cni_error *err)
{
	if (!c->rdma)
		return 0;
	return sriov_rdma_to_pod(&c->conf, c->rdma, c->pod_fd, c->req->env.netns, &c->rec, err);
}

static void rdma_undo(struct add_ctx *c)
{
	int ret = sriov_rdma_to_host(&c->rec, c->pod_fd);

	if (ret < 0)
		log_error("VF %s: cannot return RDMA device %s to the host: %s", c->vf.bdf,
			  c->rec.rdma_dev, strerror(-ret));
}

/* ---- the netdev into the pod ---- */

static void netdev_undo(struct add_ctx *c);

static int ib_netdev_again(struct add_ctx *c, struct cni_error *err)
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

static int netdev_run(struct add_ctx *c, struct cni_error *err)
{
	const char *ifname = c->req->env.ifname;
	struct link_info pod_li;
	int ret;

	if (c->vf.dpdk) {
		log_info("VF %s is bound to %s (DPDK): no netdev to move", c->vf.bdf, c->vf.driver);
		return 0;
	}
	/*
	 * Moving an IB RDMA device recreates its IPoIB netdev (ib-sriov-cni's
	 * finding): the netdev to move is the one the VF's PCI address has now.
	 */
	if (c->conf.ib.is_ib && c->rdma && (ret = ib_netdev_again(c, err)) < 0)
		return ret;
	c->rail.held_down = sriov_rail_hold_down(&c->conf);
	ret = sriov_netdev_to_pod(&c->host_li, c->altnames, c->n_altnames, c->pod_fd, c->pod_ls,
				  ifname, c->conf.has_mac ? c->conf.mac : NULL, c->conf.mtu,
				  !c->rail.held_down, &pod_li);
	if (ret == -EEXIST)
		return cni_errorf(err, CNI_ERR_IFNAME_TAKEN,
				  "CNI_IFNAME %s: already exists in %s; the VF stays on the host as %s",
				  ifname, c->req->env.netns, c->vf.netdev);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot move %s into %s as %s: %s",
				  c->vf.bdf, c->vf.netdev, c->req->env.netns, ifname,
				  strerror(-ret));
	if (!c->conf.ib.is_ib)
		memcpy(c->rec.pod_mac, pod_li.mac, 6);
	c->rec.pod_mtu = pod_li.mtu;
	c->pod_ifindex = pod_li.ifindex;
	c->pod_carrier = pod_li.carrier;
	return 0;
}

static void netdev_undo(struct add_ctx *c)
{
	bool found;
	int ret;

	if (c->vf.dpdk)
		return;
	ret = sriov_netdev_to_host(&c->rec, c->pod_ls, c->conf.paths.sysfs_root, &found);
	if (ret < 0 || !found)
		log_error("VF %s: cannot return %s to the host: %s", c->vf.bdf, c->rec.host_ifname,
			  ret < 0 ? strerror(-ret) : "not found");
}

/* ---- multiRail and the config's sysctls, in the pod ---- */

/*
 * Inside the pod: the kernel sends the NA of each IPv6 address when its DAD
 * completes, and announces every address again on a later link-up or MAC
 * change. A VF that arrives without carrier (igbvf reports it a watchdog
 * tick after link-up, a PF whose link is down later still) would drop the
 * gratuitous ARPs of the neighbour probe (README, "Announcements"): its
 * probe is repeated for SRIOV_LATE_CARRIER_PROBES seconds instead of 3.
 * A config's own sysctl for it is written after this one and wins.
 */
static void pod_notify(struct add_ctx *c)
{
	const char *ifname = c->req->env.ifname;
	char name[SYSCTL_NAME_MAX + 1], probes[16];
	int ret;

	if (!c->pod_carrier) {
		snprintf(name, sizeof(name), "net.ipv4.neigh.%s.mcast_solicit", ifname);
		snprintf(probes, sizeof(probes), "%d", SRIOV_LATE_CARRIER_PROBES);
		ret = sysctl_write_in(-1, c->conf.paths.proc_root, name, probes);
		if (ret < 0)
			log_warn("mcast_solicit on %s: %s", ifname, strerror(-ret));
		else
			log_debug("%s has no carrier yet: its gratuitous ARPs go on for %s s",
				  ifname, probes);
	}

	snprintf(name, sizeof(name), "net.ipv4.conf.%s.arp_notify", ifname);
	ret = sysctl_write_in(-1, c->conf.paths.proc_root, name, "1");
	if (ret < 0)
		log_warn("arp_notify on %s: %s", ifname, strerror(-ret));
	snprintf(name, sizeof(name), "net.ipv6.conf.%s.ndisc_notify", ifname);
	ret = sysctl_write_in(-1, c->conf.paths.proc_root, name, "1");
	if (ret < 0 && ret != -ENOENT)
		log_warn("ndisc_notify on %s: %s", ifname, strerror(-ret));
}

struct sysctl_args {
	struct add_ctx *c;
	struct cni_error *err;
};

static int sysctl_cb(void *arg)
{
	struct sysctl_args *a = arg;
	struct add_ctx *c = a->c;
	int ret = 0;

	pod_notify(c);
	if (!sriov_rail_hold_down(&c->conf))
		return 0;
	ret = sriov_rail_sysctls(&c->conf, c->pod_ls, c->req->env.ifname, c->pod_ifindex,
				 &c->rail, a->err);
	/* No later undo runs for this step: what it changed goes back now. */
	if (ret < 0)
		sriov_rail_sysctls_undo(&c->conf, &c->rail);
	else
		sriov_rail_sysctls_made(&c->conf, c->req->env.ifname, &c->rec.rail);
	return ret;
}

/*
 * Every sysctl of the pod in one visit: /proc/sys/net answers for the
 * namespace of whoever opens it, and a setns per write (each a read too,
 * for the undo) was most of what this step cost.
 */
static int sysctl_run(struct add_ctx *c, struct cni_error *err)
{
	struct sysctl_args a = { .c = c, .err = err };
	int ret;

	if (c->vf.dpdk) {
		if (sriov_rail_hold_down(&c->conf))
			log_warn("VF %s is bound to %s (DPDK): multiRail and sysctl act on a netdev, "
				 "and it has none: nothing of them is set", c->vf.bdf, c->vf.driver);
		return 0;
	}
	ret = netns_do(c->pod_fd, sysctl_cb, &a);
	if (ret < 0 && !err->code)
		cni_errorf(err, CNI_ERR_PLUGIN, "CNI_NETNS %s: cannot enter it: %s",
			   c->req->env.netns, strerror(-ret));
	return ret;
}

static int sysctl_undo_cb(void *arg)
{
	struct add_ctx *c = arg;

	sriov_rail_sysctls_undo(&c->conf, &c->rail);
	return 0;
}

static void sysctl_undo(struct add_ctx *c)
{
	int ret;

	if (!c->rail.n_saved)
		return;
	ret = netns_do(c->pod_fd, sysctl_undo_cb, c);
	if (ret < 0 && !netns_stranded())
		log_error("cannot enter %s to put its sysctls back: %s", c->req->env.netns,
			  strerror(-ret));
}

static int routing_run(struct add_ctx *c, struct cni_error *err)
{
	if (c->vf.dpdk)
		return 0;
	return sriov_rail_routing(&c->conf, c->pod_ls, c->req->env.ifname, c->pod_ifindex,
				  &c->ipam, &c->rail, &c->rec.rail, err);
}

static void routing_undo(struct add_ctx *c)
{
	sriov_rail_routing_undo(c->pod_ls, &c->rail);
}

/* ---- IPAM ---- */

static void ipam_undo(struct add_ctx *c)
{
	struct cni_error ignored = { 0 };

	if (c->conf.ipam_type &&
	    cni_delegate(c->req, c->conf.ipam_type, CNI_CMD_DEL, NULL, &ignored))
		log_error("ipam %s DEL: %s", c->conf.ipam_type, ignored.msg);
}

/* Started before the moves, for an IPAM that does not need the netdev in the pod. */
static int ipam_spawn_run(struct add_ctx *c, struct cni_error *err)
{
	if (!c->conf.ipam_type || !sriov_ipam_overlaps(c->conf.ipam_type))
		return 0;
	return cni_delegate_start(c->req, c->conf.ipam_type, CNI_CMD_ADD, &c->ipam_d, err) ? -EIO : 0;
}

/* A step between failed: the IPAM may have reserved an address by now. */
static void ipam_spawn_undo(struct add_ctx *c)
{
	if (c->ipam_d.pid <= 0)
		return;
	cni_delegate_abandon(&c->ipam_d);
	ipam_undo(c);
}

static int ipam_run(struct add_ctx *c, struct cni_error *err)
{
	int ret;

	if (!c->conf.ipam_type)
		return 0;
	if (c->ipam_d.pid > 0)
		ret = cni_delegate_finish(&c->ipam_d, &c->ipam, err);
	else
		ret = cni_delegate(c->req, c->conf.ipam_type, CNI_CMD_ADD, &c->ipam, err);
	if (ret)
		return -EIO;
	if (c->ipam.n_ips < 1) {
		ipam_undo(c);
		cni_errorf(err, CNI_ERR_PLUGIN, "ipam %s returned no IP address", c->conf.ipam_type);
		cni_error_details(err, "a pool must give each attachment an address: check the ipam section");
		return -EINVAL;
	}
	return 0;
}

/* ---- addresses and routes in the pod ---- */

/*
 * IPv4 peers learn each address from the kernel (README, "Announcements"):
 * a neighbour probe of the address is a gratuitous ARP that the neighbour
 * timer repeats, so it reaches the wire when carrier comes after ADD, and
 * no socket of ours waits for a grace period on close. IPv6 needs nothing
 * here: ndisc_notify has the kernel send the NA when DAD completes, and DAD
 * waits for carrier.
 */
static void announce(struct add_ctx *c, int ifindex)
{
	int i, ret;

	for (i = 0; i < c->ipam.n_ips; i++) {
		if (!strchr(c->ipam.ips[i].address, '.'))
			continue;
		ret = link_addr_probe(c->pod_ls, ifindex, c->ipam.ips[i].address);
		if (ret < 0)
			log_warn("announcing %s: %s", c->ipam.ips[i].address, strerror(-ret));
	}
}

/* No undo: addresses and routes leave with the netdev when it changes namespace. */
static int addr_run(struct add_ctx *c, struct cni_error *err)
{
	const char *ifname = c->req->env.ifname;
	struct link_sock *ls = c->pod_ls;
	struct link_info li = { .ifindex = c->pod_ifindex };
	int i, ret = 0;

	if (c->prev.n_ips + c->ipam.n_ips > CNI_MAX_IPS ||
	    c->prev.n_routes + c->ipam.n_routes > CNI_MAX_ROUTES)
		return cni_errorf(err, CNI_ERR_PLUGIN,
				  "the chain's result would exceed %d addresses or %d routes",
				  CNI_MAX_IPS, CNI_MAX_ROUTES);
	for (i = 0; i < c->ipam.n_ips; i++)
		snprintf(c->rec.addrs[i], sizeof(c->rec.addrs[i]), "%s", c->ipam.ips[i].address);
	c->rec.n_addrs = c->ipam.n_ips;
	if (c->vf.dpdk || !c->ipam.n_ips)
		return 0;
	/* The netdev step knows its index: a request less under RTNL. */
	if (li.ifindex <= 0)
		ret = link_get_by_name(ls, ifname, &li);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "%s in %s: %s", ifname, c->req->env.netns,
				  strerror(-ret));
	for (i = 0; i < c->ipam.n_ips; i++) {
		ret = link_addr_add(ls, li.ifindex, c->ipam.ips[i].address);
		if (ret < 0) {
			cni_errorf(err, CNI_ERR_PLUGIN, "address %s on %s: %s",
				   c->ipam.ips[i].address, ifname, strerror(-ret));
			return ret;
		}
	}
	for (i = 0; i < c->ipam.n_routes; i++) {
		struct link_route rt;

		sriov_route_resolve(&c->ipam, &c->ipam.routes[i], &rt);
		ret = link_route_add(ls, li.ifindex, &rt);
		if (ret < 0) {
			cni_errorf(err, CNI_ERR_PLUGIN, "route to %s via %s on %s: %s",
				   rt.dst, rt.gw[0] ? rt.gw : "(link)", ifname, strerror(-ret));
			cni_error_details(err, "the gateway must be reachable through an address "
					  "the ipam gives this interface");
			return ret;
		}
	}
	/* Its frames are Ethernet's: IPoIB peers learn the address from the kernel's ARP. */
	if (!c->conf.ib.is_ib)
		announce(c, li.ifindex);
	return 0;
}

/* ---- device-info file ---- */

/*
 * Created where no file stands, or written over the device plugin's copy
 * that the checks found (Multus puts it there before ADD and reads the
 * path back for the pod's network-status): any other file is someone
 * else's, and stays.
 */
static int devinfo_run(struct add_ctx *c, struct cni_error *err)
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
static void devinfo_undo(struct add_ctx *c)
{
	if (c->rec.devinfo_file[0])
		sriov_devinfo_remove(c->rec.devinfo_file, c->rec.devinfo_text, c->vf.bdf,
				     &c->devinfo_prior);
}

/* ---- the record says the attachment is complete ---- */

static int commit_run(struct add_ctx *c, struct cni_error *err)
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

/*
 * In order; each undo reverts its own step. The claim comes first: a VF
 * another pod holds is refused as in use before anything else is asked
 * about it, its RDMA device included (the lock is dropped at the end,
 * whatever happened). The RDMA device moves just
 * before the netdev: a driver that refuses the move then costs no netdev
 * round trip, and drivers that tie their RDMA device to the netdev's
 * namespace (rxe, siw) unregister it as soon as the netdev leaves, which
 * would turn their refusal into a vanished device. The IPAM and everything
 * after it see both in the pod; an IPAM that never looks there (pool-ipam,
 * host-local, ...) is started before the moves and answers after them: a
 * move waits on the kernel's RCU grace periods, not on a CPU, and the IPAM
 * runs in that wait.
 */
static const struct add_step add_steps[] = {
	{ "claim",	claim_run,	NULL },
	{ "rdma-plan",	plan_run,	NULL },
	{ "record",	record_run,	record_undo },
	{ "vf-config",	vfcfg_run,	vfcfg_undo },
	{ "ib-guid",	ibguid_run,	ibguid_undo },
	{ "ipam-spawn",	ipam_spawn_run,	ipam_spawn_undo },
	{ "rdma",	rdma_run,	rdma_undo },
	{ "netdev",	netdev_run,	netdev_undo },
	{ "vf-mac",	vfmac_run,	vfmac_undo },
	{ "sysctl",	sysctl_run,	sysctl_undo },
	{ "ipam",	ipam_run,	ipam_undo },
	{ "address",	addr_run,	NULL },
	{ "routing",	routing_run,	routing_undo },
	{ "devinfo",	devinfo_run,	devinfo_undo },
	{ "commit",	commit_run,	NULL },
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

/* Our interface and the IPAM's addresses, after what earlier plugins of the chain reported. */
static void fill_result(struct add_ctx *c, struct cni_result *res)
{
	struct cni_iface *ifc;
	int idx, i;

	*res = c->prev;
	idx = res->n_ifaces++;
	ifc = &res->ifaces[idx];
	memset(ifc, 0, sizeof(*ifc));
	snprintf(ifc->name, sizeof(ifc->name), "%s", c->req->env.ifname);
	snprintf(ifc->sandbox, sizeof(ifc->sandbox), "%s", c->req->env.netns);
	snprintf(ifc->pci_id, sizeof(ifc->pci_id), "%s", c->vf.bdf);
	if (!c->vf.dpdk) {
		if (!c->conf.ib.is_ib)
			valid_mac_format(c->rec.pod_mac, ifc->mac);
		ifc->mtu = c->rec.pod_mtu;
	} else if (c->conf.has_mac) {
		valid_mac_format(c->conf.mac, ifc->mac);
	} else if (c->pf && (c->pf_before.mask & PF_VF_MAC)) {
		/* vf-config set no MAC: the one read before stands, without asking the PF again. */
		valid_mac_format(c->pf_before.mac, ifc->mac);
	}
	for (i = 0; i < c->ipam.n_ips; i++) {
		res->ips[res->n_ips] = c->ipam.ips[i];
		res->ips[res->n_ips++].iface = idx;
	}
	for (i = 0; i < c->ipam.n_routes; i++)
		res->routes[res->n_routes++] = c->ipam.routes[i];
	if (c->ipam.dns.n_nameservers || c->ipam.dns.domain[0] || c->ipam.dns.n_search)
		res->dns = c->ipam.dns;
}

/*
 * What a workload needs to name its HCA: the RDMA device as the pod sees it
 * and the RoCE v2 GID index of the pod's first address, which exists only
 * once the address is configured. Best effort: the attachment works without,
 * and libibverbs may lack the driver's provider on the host.
 */
static void rdma_summary(struct add_ctx *c, char *out, size_t len)
{
	const char *dev = c->rec.rdma_pod_name;
	const char *how = c->rec.rdma_moved ? "moved" : "shared";
	const char *addr = c->rec.n_addrs ? c->rec.addrs[0] : NULL;
	int gid, ret;

	if (!dev[0]) {
		snprintf(out, len, "rdma %s", c->conf.rdma == SRIOV_RDMA_OFF ? "off" : "none");
		return;
	}
	ret = sriov_rdma_pod_view(&c->rec, c->pod_fd, addr, &gid);
	if (ret == -ENODEV)
		log_warn("RDMA device %s: libibverbs does not list it in %s (is the provider of "
			 "its driver installed?)", dev, c->req->env.netns);
	else if (ret < 0)
		log_warn("RDMA device %s: no RoCE v2 GID for %s in %s: %s", dev, addr,
			 c->req->env.netns, strerror(-ret));
	if (gid >= 0)
		snprintf(out, len, "rdma %s (%s), NCCL_IB_HCA=%s NCCL_IB_GID_INDEX=%d", dev, how,
			 dev, gid);
	else
		snprintf(out, len, "rdma %s (%s), NCCL_IB_HCA=%s, GID index unknown%s", dev, how,
			 dev, addr ? "" : " (no address)");
}

/* ", trace <id>" when the runtime passed a valid TRACEPARENT, else "". */
static void trace_suffix(char *out, size_t len)
{
	char id[33];

	if (timing_trace_id(getenv("TRACEPARENT"), id))
		snprintf(out, len, ", trace %s", id);
	else if (len)
		out[0] = '\0';
}

static void log_success(struct add_ctx *c, const struct cni_result *res)
{
	char addrs[256] = "", rdma[256], steps[512], trace[48];
	size_t off = 0;
	int i;

	for (i = 0; i < c->rec.n_addrs && off < sizeof(addrs); i++)
		off += (size_t)snprintf(addrs + off, sizeof(addrs) - off, "%s%s", i ? "," : "",
					c->rec.addrs[i]);
	rdma_summary(c, rdma, sizeof(rdma));
	timing_lap(&c->timing, "result");
	timing_format(&c->timing, steps, sizeof(steps));
	trace_suffix(trace, sizeof(trace));
	log_info("VF %s: %s -> %s in %s, mac %s, addresses %s, %s; steps %s%s", c->vf.bdf,
		 c->vf.dpdk ? "(dpdk)" : c->rec.host_ifname, c->req->env.ifname,
		 c->req->env.netns, res->ifaces[0].mac[0] ? res->ifaces[0].mac : "unknown",
		 c->rec.n_addrs ? addrs : "none", rdma, steps, trace);
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
	if (lookup_vf(c, err) || sriov_ib_validate(&c->conf, &c->vf, err) || open_pod(c, err) ||
	    open_state(c, err) || look_at_devinfo(c, err)) {
		sriov_stranded(err);
		goto out;
	}
	timing_lap(&c->timing, "checks");
	snprintf(c->rec.network, sizeof(c->rec.network), "%s", req->name ? req->name : "");
	snprintf(c->rec.container_id, sizeof(c->rec.container_id), "%s", req->env.container_id);
	snprintf(c->rec.ifname, sizeof(c->rec.ifname), "%s", req->env.ifname);
	snprintf(c->rec.netns, sizeof(c->rec.netns), "%s", req->env.netns);
	sriov_owner_of(&c->rec, &c->me);
	memcpy(c->rec.bdf, c->vf.bdf, sizeof(c->rec.bdf));
	memcpy(c->rec.pf_bdf, c->vf.pf_bdf, sizeof(c->rec.pf_bdf));
	memcpy(c->rec.pf_netdev, c->vf.pf_netdev, sizeof(c->rec.pf_netdev));
	c->rec.vf_index = c->vf.vf_index;
	c->rec.dpdk = c->vf.dpdk;
	if (run_steps(c, err))
		goto out;
	fill_result(c, res);
	log_success(c, res);
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
