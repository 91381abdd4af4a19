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
 * The encoded requests go through a backend: the kernel (NETLINK_ROUTE),
 * unless a test build of the plugins registers a stand-in (test/fakes/)
 * for kernels without SR-IOV, which decodes the requests with
 * vf_info_parse and answers as the kernel does, so that the same encoding
 * and decoding code runs in both.
 */
#ifndef VF_H
#define VF_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
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
	VF_CFG_ALL		= (1 << 6) - 1,
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

struct vf_pf;				/* a PF and the backend to reach it */
struct nlmsghdr;
struct nlattr;

/*
 * How the requests on a PF travel. open: -ENODEV when there is no PF
 * netdev of that name. xfer sends req (one RTM_GETLINK or RTM_SETLINK
 * carrying one VF field, as vf_pf_get and vf_pf_set build them), asks for
 * the ACK and runs cb (may be NULL) over every reply up to it: 0 or -errno.
 */
struct vf_pf_backend {
	int (*open)(const char *pf_netdev, void **priv);
	int (*xfer)(void *priv, struct nlmsghdr *req,
		    int (*cb)(const struct nlmsghdr *nlh, void *data), void *data);
	void (*close)(void *priv);
};
/* For the PFs opened from now on; NULL: the kernel (the default, and all the default build uses). */
void vf_pf_set_backend(const struct vf_pf_backend *b);
/*
 * One IFLA_VF_INFO, from a kernel reply or a request: *vf gets the VF
 * index the attributes carry, cfg->mask the fields present. The kernel
 * reports -1 for a setting the driver does not implement: left out.
 */
int vf_info_parse(const struct nlattr *info, int *vf, struct vf_config *cfg);

/*
 * -ENODEV when the PF has no netdev of that name (any later call on a PF
 * that vanished says the same).
 */
int vf_pf_open(const char *pf_netdev, struct vf_pf **pf);
void vf_pf_close(struct vf_pf *pf);
/*
 * From now on vf_pf_set holds a flock of <dirfd>/<pf_bdf>.pf.lock around
 * its requests, and only around them: some PF drivers (i40e, sriov-cni
 * #34) cannot take the configuration of two VFs at once. dirfd stays the
 * caller's, open as long as pf is.
 */
int vf_pf_lock_at(struct vf_pf *pf, int dirfd, const char *pf_bdf);
#define VF_PF_LOCK_TIMEOUT_MS	30000
/*
 * All the fields of VF vf_index as the PF reports them (mask set to what
 * was reported), from one RTM_GETLINK without VF stats; -ENOENT when the
 * PF has no such VF (sriov_numvfs lowered), -EOVERFLOW when it has but its
 * IFLA_VFINFO_LIST stopped short of it (with many VFs the nest outgrows
 * what the kernel can put in one message): vf_sysfs_config may tell.
 */
int vf_pf_get(struct vf_pf *pf, int vf_index, struct vf_config *cfg);
/*
 * The fields of one VF from <sysfs>/bus/pci/devices/<pf_bdf>/sriov/<N>/config,
 * where the ConnectX driver of NVIDIA's OFED reports them ("MAC : ...",
 * "VLAN : ...", "SpoofCheck : ON", ...): -ENOENT when the driver has no
 * such file.
 */
int vf_sysfs_config(const char *sysfs_root, const char *pf_bdf, int vf_index,
		    struct vf_config *cfg);
/* The requests sent to PFs so far by this process (gets and sets). */
unsigned vf_pf_requests(void);
/*
 * One RTM_SETLINK per field in cfg->mask, in sriov-cni's order: vlan, mac,
 * rate, spoofchk, trust, link state; under the PF's lock when
 * vf_pf_lock_at named one (-ETIMEDOUT when it stays taken).
 */
int vf_pf_set(struct vf_pf *pf, int vf_index, const struct vf_config *cfg);

/*
 * The driver's defaults for a VF's PF-side settings, as mlx5 reports a VF
 * nobody configured: it zeroes a VF's e-switch vport info when it creates
 * the VF (admin MAC 00:00:00:00:00:00, vlan 0 qos 0, spoof check off, trust
 * off, rates 0) and sets its link state to auto. What DEL puts back when
 * the settings from before the attachment are unknown.
 */
void vf_config_default(struct vf_config *cfg);

/* ---- claiming a VF: lock + in-use marker ---- */

/*
 * The attachment that holds a VF, as its in-use marker <dir>/<bdf> names
 * it (checksummed JSON). The marker also keeps the VF's identity on the
 * host from before the attachment, a second copy of what the attachment
 * record holds, for a DEL whose record is lost.
 */
struct vf_owner {
	char container_id[256];		/* "": a marker of an older version (a netns path alone) */
	char ifname[IFNAMSIZ];
	char netns[4096];
	char host_ifname[IFNAMSIZ];	/* "": unknown (or a DPDK VF) */
	uint8_t host_mac[6];
	int host_mtu;			/* 0: unknown */
	char rdma_dev[64];		/* the RDMA device's host name, "" when none moves */
	uint32_t rdma_index;
};

enum vf_marker {
	VF_MARKER_NONE = 0,		/* the VF is free */
	VF_MARKER_READ,			/* claim->owner holds what it says */
	VF_MARKER_UNREADABLE,		/* torn or not a file: its owner is unknown */
};

struct vf_claim {
	int lock_fd;			/* flock held on <dir>/<bdf>.lock, close-on-exec */
	int dirfd;
	char bdf[VF_BDF_LEN];
	enum vf_marker marker;		/* the marker when the lock was taken */
	struct vf_owner owner;
};

/* Lock the VF (waiting up to timeout_ms: -ETIMEDOUT) and read its marker; nothing is decided. */
int vf_claim_lock(int dirfd, const char *bdf, unsigned timeout_ms, struct vf_claim *claim);
/*
 * vf_claim_lock, then -EBUSY (the lock dropped, claim->owner set) when the
 * marker names another attachment, or a namespace alone (an older
 * marker), whose namespace is still alive: also another attachment of the
 * same pod. A marker whose namespace is gone, or that cannot be read, is
 * stale and may be taken over.
 */
int vf_claim_take(int dirfd, const char *bdf, const struct vf_owner *me, unsigned timeout_ms,
		  struct vf_claim *claim);
/* Does the marker read at lock time name `me` (by container ID and ifname; an older one by netns)? */
bool vf_claim_held_by(const struct vf_claim *claim, const struct vf_owner *me);
/* Write the marker (atomically) naming owner; the lock must be held. */
int vf_claim_mark(struct vf_claim *claim, const struct vf_owner *owner);
/*
 * Remove the marker when it names `me`, as read now under the lock: only
 * the attachment that wrote a marker clears it (one that cannot be read
 * names nobody, and goes too). 0 also when there is none; -EBUSY, the
 * marker left in place, when it names another attachment.
 */
int vf_claim_clear(struct vf_claim *claim, const struct vf_owner *me);
/* Drop the lock (the marker stays as it is). */
void vf_claim_release(struct vf_claim *claim);
/* "<netns> (container <id>, interface <ifname>)", or the netns alone for an older marker. */
void vf_owner_format(const struct vf_owner *o, char *out, size_t len);

#endif
