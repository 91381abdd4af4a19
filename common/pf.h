/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pf: the VF properties a PF holds (MAC, VLAN, spoof check, trust, link
 * state, rates), read and written with RTM_GETLINK / RTM_SETLINK on the PF
 * carrying IFLA_VFINFO_LIST, encoded with libmnl. The encoded requests go
 * through a backend: the kernel (NETLINK_ROUTE, over nlio), unless a test
 * build of the plugins registers a stand-in (test/fakes/) for kernels
 * without SR-IOV, which decodes the requests with pf_vf_info_parse and
 * answers as the kernel does, so that the same encoding and decoding code
 * runs in both.
 */
#ifndef PF_H
#define PF_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

enum {
	PF_VF_MAC		= 1 << 0,
	PF_VF_VLAN		= 1 << 1,	/* vlan, qos and proto together */
	PF_VF_SPOOFCHK		= 1 << 2,
	PF_VF_TRUST		= 1 << 3,
	PF_VF_LINK_STATE	= 1 << 4,
	PF_VF_RATE		= 1 << 5,	/* min and max together */
	PF_VF_ALL		= (1 << 6) - 1,
};

struct pf_vf_config {
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

struct pf;				/* a PF and the backend to reach it */
struct nlmsghdr;
struct nlattr;

/*
 * How the requests on a PF travel. open: -ENODEV when there is no PF
 * netdev of that name. xfer sends req (one RTM_GETLINK or RTM_SETLINK
 * carrying the fields of one VF, as pf_get and pf_set build them), asks for
 * the ACK and runs cb (may be NULL) over every reply up to it: 0 or -errno.
 */
struct pf_backend {
	int (*open)(const char *pf_netdev, void **priv);
	int (*xfer)(void *priv, struct nlmsghdr *req,
		    int (*cb)(const struct nlmsghdr *nlh, void *data), void *data);
	void (*close)(void *priv);
};
/* For the PFs opened from now on; NULL: the kernel (the default, and all the default build uses). */
void pf_set_backend(const struct pf_backend *b);
/*
 * One IFLA_VF_INFO, from a kernel reply or a request: *vf gets the VF
 * index the attributes carry, cfg->mask the fields present. The kernel
 * reports -1 for a setting the driver does not implement: left out.
 */
int pf_vf_info_parse(const struct nlattr *info, int *vf, struct pf_vf_config *cfg);

/*
 * -ENODEV when the PF has no netdev of that name (any later call on a PF
 * that vanished says the same).
 */
int pf_open(const char *pf_netdev, struct pf **pf);
void pf_close(struct pf *pf);
/*
 * From now on pf_set holds a flock of <dirfd>/<pf_bdf>.pf.lock around
 * its requests, and only around them: some PF drivers (i40e, sriov-cni
 * #34) cannot take the configuration of two VFs at once. dirfd stays the
 * caller's, open as long as pf is.
 */
int pf_lock_at(struct pf *pf, int dirfd, const char *pf_bdf);
#define PF_LOCK_TIMEOUT_MS	30000
/*
 * The PF's lock (pf_lock_at) taken once for several requests, until
 * pf_close: settings that must go as two requests in their
 * order queue once behind the node's other VFs, not once per request, and
 * no other VF's settings come between them. Without pf_lock_at, nothing
 * is taken; -ETIMEDOUT when the lock stays taken.
 */
int pf_lock(struct pf *pf);
/*
 * All the fields of VF vf_index as the PF reports them (mask set to what
 * was reported), from one RTM_GETLINK without VF stats; -ENOENT when the
 * PF has no such VF (sriov_numvfs lowered), -EOVERFLOW when it has but its
 * IFLA_VFINFO_LIST stopped short of it (with many VFs the nest outgrows
 * what the kernel can put in one message): pf_sysfs_config may tell.
 */
int pf_get(struct pf *pf, int vf_index, struct pf_vf_config *cfg);
/*
 * The fields of one VF from <sysfs>/bus/pci/devices/<pf_bdf>/sriov/<N>/config,
 * where the ConnectX driver of NVIDIA's OFED reports them ("MAC : ...",
 * "VLAN : ...", "SpoofCheck : ON", ...): -ENOENT when the driver has no
 * such file.
 */
int pf_sysfs_config(const char *sysfs_root, const char *pf_bdf, int vf_index,
		    struct pf_vf_config *cfg);
/* The requests sent to PFs so far by this process (gets and sets). */
unsigned pf_requests(void);
/*
 * The fields in cfg->mask in one RTM_SETLINK, which the kernel applies in
 * its order (MAC, VLAN, rate, spoof check, link state, trust): a caller
 * that needs another order, as the MAC after the rest, makes two calls.
 * Under the PF's lock when pf_lock_at named one (-ETIMEDOUT when it stays
 * taken). When the request fails, the fields are sent again one by one
 * up to the refused one, which pf_refused names; the ones before it have
 * taken effect.
 */
int pf_set(struct pf *pf, int vf_index, const struct pf_vf_config *cfg);
/*
 * pf_set, but past a refusal: every field the driver takes is set, and
 * pf_refused names each one it refused. For putting settings back, where
 * one refused field must not leave the others as the pod had them.
 */
int pf_set_each(struct pf *pf, int vf_index, const struct pf_vf_config *cfg);
/*
 * pf_set's one request and no more: a refusal is returned as it is, the
 * fields the kernel applied before the refused one kept. For a caller
 * with an order of its own to fall back on.
 */
int pf_set_once(struct pf *pf, int vf_index, const struct pf_vf_config *cfg);
/*
 * cfg's fields with an all-zero MAC in place of cfg's (the PF then holds
 * none for the VF), under the PF's lock throughout: one request when the
 * kernel's order allows it. Else, or when the driver refuses the one, set
 * (pf_set or pf_set_each) with all but the MAC, then the MAC alone; where
 * spoof checking is to stay on, off with the rest and back on with the
 * MAC, or, when cfg has a MAC of its own (which the caller pins next),
 * with that MAC instead of an all-zero one: mlx4 and older mlx5 refuse an
 * all-zero MAC while spoof checking is on, and spoof checking on without
 * a MAC. A cfg that turns spoof checking off clears the MAC after it
 * without trying the one request. pf_refused names what the requests
 * after the one refused.
 */
int pf_set_mac_cleared(struct pf *pf, int vf_index, const struct pf_vf_config *cfg,
		       int (*set)(struct pf *, int, const struct pf_vf_config *));
/*
 * The fields (PF_VF_*) whose requests the last pf_set or pf_set_each saw
 * fail, 0 when none failed on a request (or it succeeded): drivers
 * implement a subset (igb has no link state, no min rate, no 802.1ad), and
 * the error must say which setting the driver refused.
 */
unsigned pf_refused(const struct pf *pf);
/* How long this handle's pf_set and pf_set_guids waited for the PF's lock, in all. */
double pf_lock_waited_ms(const struct pf *pf);

/* An all-zero MAC: the PF holds none for the VF (mlx5's default; clearing one on igb). */
bool pf_mac_unset(const uint8_t mac[6]);

/*
 * The driver's defaults for a VF's PF-side settings, as mlx5 reports a VF
 * nobody configured: it zeroes a VF's e-switch vport info when it creates
 * the VF (admin MAC 00:00:00:00:00:00, vlan 0 qos 0, spoof check off, trust
 * off, rates 0) and sets its link state to auto. What DEL puts back when
 * the settings from before the attachment are unknown.
 */
void pf_vf_config_default(struct pf_vf_config *cfg);

/*
 * InfiniBand VFs: the node and port GUID of a VF, as the PF holds them
 * (IFLA_VF_IB_NODE_GUID / IFLA_VF_IB_PORT_GUID, struct ifla_vf_guid).
 * The kernel reports them in IFLA_VF_INFO for an IB PF whose driver can
 * (5.5 and later); a driver such as mlx5 applies a new GUID to the VF
 * only once the VF is bound to its driver again (ib.h).
 */
struct pf_vf_guids {
	uint64_t node;
	uint64_t port;
};
/*
 * From one RTM_GETLINK without VF stats: -ENOENT when the PF has no such
 * VF, -ENODATA when the PF lists it without GUIDs (an Ethernet PF, or a
 * kernel or driver that does not report them).
 */
int pf_get_guids(struct pf *pf, int vf_index, struct pf_vf_guids *g);
/*
 * Both GUIDs in one RTM_SETLINK, byte for byte as `ip link set PF vf N
 * node_guid G port_guid G` sends them; under the PF's lock when
 * pf_lock_at named one.
 */
int pf_set_guids(struct pf *pf, int vf_index, const struct pf_vf_guids *g);

#endif
