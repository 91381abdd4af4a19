/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ADD's context and its steps, shared by the files that implement them:
 * add.c runs the steps in order and undoes them on failure, add_claim.c
 * takes the VF (add_orphan.c from an earlier sandbox of the same pod that
 * its runtime forgot), add_record.c snapshots it and records the
 * attachment, add_vf.c sets the VF's properties on the PF, add_ib.c an
 * InfiniBand VF's GUIDs, add_pod.c moves the devices into the pod and sets
 * its sysctls and routing, add_ipam.c delegates to the IPAM, add_addr.c
 * configures and announces the addresses, add_result.c answers and logs.
 */
#ifndef ADD_H
#define ADD_H

#include <stdbool.h>
#include "sriov.h"

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
	struct sriov_record rec;	/* add_record_fill's, and what later steps made */
	/* Another attachment's record: a repeated ADD's, or that of a stale claim taken over. */
	struct sriov_record old;
	bool old_newer;			/* the holder's record is a newer release's (old.written) */
	struct sriov_devinfo_prior devinfo_prior;	/* the device plugin's copy at the path */
	struct cni_result ipam;
	struct cni_delegation ipam_d;	/* the IPAM's ADD, while the VF moves */
	struct cni_result prev;		/* prevResult of the chain, or empty */
	struct sriov_rail rail;		/* what the sysctl and routing steps changed */
	int pod_ifindex;		/* the netdev's, in the pod, once moved */
	bool pod_carrier;		/* it had carrier when it arrived there */
	struct timing timing;		/* per step, for the log line that ends ADD */
	unsigned vf_never_set;		/* PF_VF_* the driver refused in this ADD: never set */
	/* PF fields the undo could not put back: the record and the marker stay for DEL. */
	unsigned vf_unrestored;
	char unrestored_text[256];
	/* The IPAM ran and its DEL failed: the record and the marker stay for the runtime's DEL. */
	bool ipam_unreleased;
	char ipam_del_msg[512];
};

/*
 * A step returns 0 or fails with err set; its undo, run only when a later
 * step fails, reverts it. A step that fails undoes its own part first.
 */

/* add_claim.c */
int add_claim_run(struct add_ctx *c, struct cni_error *err);
/* What happens to the RDMA device, now that the VF is ours (sriov_rdma_plan). */
int add_plan_run(struct add_ctx *c, struct cni_error *err);

/* add_orphan.c */
/*
 * With the VF's lock held, the VF held by another attachment whose
 * namespace is alive: is it an earlier sandbox of this pod that its runtime
 * forgot (same K8S_POD_UID, same interface, no process in its namespace)?
 * c->old gets its record. Why not is logged.
 */
bool add_orphan_found(struct add_ctx *c);
/* Release it as its DEL would have (its address, the VF, its record); -EIO with err set. */
int add_orphan_take(struct add_ctx *c, struct cni_error *err);

/* add_record.c */
/* The VF's netdev on the host, with its altnames, into host_li. */
int add_look_host_netdev(struct add_ctx *c);
int add_record_fill(struct add_ctx *c, struct cni_error *err);
int add_record_run(struct add_ctx *c, struct cni_error *err);
void add_record_undo(struct add_ctx *c);
int add_devinfo_run(struct add_ctx *c, struct cni_error *err);
void add_devinfo_undo(struct add_ctx *c);
int add_commit_run(struct add_ctx *c, struct cni_error *err);

/* add_vf.c */
int add_vfcfg_run(struct add_ctx *c, struct cni_error *err);
void add_vfcfg_undo(struct add_ctx *c);
int add_vfmac_run(struct add_ctx *c, struct cni_error *err);
void add_vfmac_undo(struct add_ctx *c);

/*
 * add_ib.c. Once the VF is known, before anything changes: its link layer
 * from sysfs, the settings of the other link layer refused (code 7 naming
 * the first), an IPoIB MTU its mode cannot carry refused.
 */
int add_ib_validate(struct sriov_conf *conf, const struct vf_dev *vf, struct cni_error *err);
/* The GUIDs set and the VF rebound, then its new devices found and recorded. */
int add_ib_guid_run(struct add_ctx *c, struct cni_error *err);
void add_ib_guid_undo(struct add_ctx *c);
/* Its IPoIB netdev again, once its RDMA device moved (which recreates the netdev). */
int add_ib_netdev_again(struct add_ctx *c, struct cni_error *err);

/* add_pod.c */
int add_rdma_run(struct add_ctx *c, struct cni_error *err);
void add_rdma_undo(struct add_ctx *c);
int add_netdev_run(struct add_ctx *c, struct cni_error *err);
void add_netdev_undo(struct add_ctx *c);
int add_sysctl_run(struct add_ctx *c, struct cni_error *err);
void add_sysctl_undo(struct add_ctx *c);
int add_routing_run(struct add_ctx *c, struct cni_error *err);
void add_routing_undo(struct add_ctx *c);

/* add_ipam.c */
int add_ipam_spawn_run(struct add_ctx *c, struct cni_error *err);
void add_ipam_spawn_undo(struct add_ctx *c);
int add_ipam_run(struct add_ctx *c, struct cni_error *err);
void add_ipam_undo(struct add_ctx *c);

/* add_addr.c */
int add_addr_run(struct add_ctx *c, struct cni_error *err);

/* add_result.c */
/* Our interface and the IPAM's addresses, after what earlier plugins of the chain reported. */
void add_result_fill(struct add_ctx *c, struct cni_result *res);
/* The line that ends a successful ADD: what went where, the RDMA device for NCCL, the steps. */
void add_log_success(struct add_ctx *c, const struct cni_result *res);

#endif
