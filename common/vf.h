/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vf: SR-IOV Virtual Functions, from PCI sysfs and through their PF.
 *
 * Discovery reads <sysfs>/bus/pci/devices/<bdf>/{net/,physfn,driver,
 * infiniband/,vendor,device} and the PF's virtfnN links. The sysfs root is
 * a parameter (the plugin takes it from SRIOV_RDMA_SYSFS_ROOT) so tests run
 * on a tree that models a ConnectX VF.
 *
 * VF properties live on the PF: they are read and written with RTM_GETLINK
 * / RTM_SETLINK on the PF carrying IFLA_VFINFO_LIST, encoded with libmnl.
 * The encoded requests go through a transport: the kernel (NETLINK_ROUTE),
 * or, for tests on kernels without SR-IOV, a recording fake that appends
 * every request to <dir>/<pf>.calls in a readable form, keeps the VFs'
 * state in <dir>/<pf>.vfs and answers RTM_GETLINK from it, so that the same
 * encoding and decoding code runs in both.
 */
#ifndef VF_H
#define VF_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#define VF_BDF_LEN 13			/* "0000:3b:02.1" + NUL */

struct vf_dev {
	char bdf[VF_BDF_LEN];
	char netdev[IFNAMSIZ];		/* "" when the VF has none (DPDK, or moved away) */
	char pf_bdf[VF_BDF_LEN];
	char pf_netdev[IFNAMSIZ];
	int vf_index;			/* N of the PF's virtfnN link to us */
	char driver[64];		/* "" when unbound */
	bool dpdk;			/* vfio-pci, uio_pci_generic, igb_uio */
	char rdma_dev[64];		/* first entry of <bdf>/infiniband/, "" if none */
	uint16_t vendor, device;
};

/* Accept "DDDD:BB:DD.F" (or "BB:DD.F", domain 0000); out is lower-case, canonical. -EINVAL. */
int vf_bdf_parse(const char *s, char out[VF_BDF_LEN]);

/* Fill *vf from sysfs: -ENODEV when <bdf> does not exist, -ENOTSUP when it is not a VF (no physfn). */
int vf_lookup(const char *sysfs_root, const char *bdf, struct vf_dev *vf);
/* Re-read just the VF's netdev name ("" when none): after renames and moves. */
int vf_netdev_name(const char *sysfs_root, const char *bdf, char name[IFNAMSIZ]);

/* ---- VF properties on the PF ---- */

enum {
	VF_CFG_MAC		= 1 << 0,
	VF_CFG_VLAN		= 1 << 1,	/* vlan, qos and proto together */
	VF_CFG_SPOOFCHK		= 1 << 2,
	VF_CFG_TRUST		= 1 << 3,
	VF_CFG_LINK_STATE	= 1 << 4,
	VF_CFG_RATE		= 1 << 5,	/* min and max together */
};

struct vf_config {
	unsigned mask;			/* which fields mean something */
	uint8_t mac[6];
	int vlan;			/* 0..4094, 0 = none */
	int qos;			/* 0..7 */
	uint16_t vlan_proto;		/* ETH_P_8021Q or ETH_P_8021AD (host order) */
	bool spoofchk;
	bool trust;
	int link_state;			/* IFLA_VF_LINK_STATE_AUTO/ENABLE/DISABLE */
	unsigned min_tx_rate, max_tx_rate;	/* Mbps, 0 = no limit */
};

struct vf_pf;				/* a PF and the transport to reach it */

/*
 * fake_dir NULL: the kernel. Otherwise the recording fake in fake_dir
 * (the plugin takes it from SRIOV_RDMA_PF_FAKE_DIR; documented as a test hook).
 */
int vf_pf_open(const char *pf_netdev, const char *fake_dir, struct vf_pf **pf);
void vf_pf_close(struct vf_pf *pf);
/* All the fields of VF vf_index as the PF reports them (mask set to what was reported). */
int vf_pf_get(struct vf_pf *pf, int vf_index, struct vf_config *cfg);
/* One RTM_SETLINK per field in cfg->mask, in sriov-cni's order: vlan, mac, rate, spoofchk, trust, link state. */
int vf_pf_set(struct vf_pf *pf, int vf_index, const struct vf_config *cfg);

/* ---- claiming a VF: lock + in-use marker ---- */

struct vf_claim {
	int lock_fd;			/* flock held on <dir>/<bdf>.lock, close-on-exec */
	int dirfd;
	char bdf[VF_BDF_LEN];
	char owner[4096];		/* netns path recorded in the marker when the claim was taken over */
};

/*
 * Lock the VF (waiting up to timeout_ms: -ETIMEDOUT) and read its in-use
 * marker <dir>/<bdf>: if it names a namespace that is still alive and is not
 * `netns`, return -EBUSY with claim->owner set (the lock is dropped). A
 * marker whose namespace is gone is stale and is taken over.
 */
int vf_claim_take(int dirfd, const char *bdf, const char *netns, unsigned timeout_ms,
		  struct vf_claim *claim);
/* Write the marker (atomically) naming netns as the owner. */
int vf_claim_mark(struct vf_claim *claim, const char *netns);
/* Remove the marker. */
int vf_claim_clear(struct vf_claim *claim);
/* Drop the lock (the marker stays as it is). */
void vf_claim_release(struct vf_claim *claim);
/* Lock only, for DEL/GC: the marker is not checked. */
int vf_claim_lock(int dirfd, const char *bdf, unsigned timeout_ms, struct vf_claim *claim);

#endif
