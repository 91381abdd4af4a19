/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vf: SR-IOV Virtual Functions in PCI sysfs.
 *
 * Discovery reads <sysfs>/bus/pci/devices/<bdf>/{net/,physfn,driver,
 * infiniband/,vendor,device} and the PF's virtfnN links. The sysfs root is
 * a parameter (the plugin takes it from SRIOV_RDMA_SYSFS_ROOT) so tests run
 * on a tree that models a ConnectX VF. A VF's properties are reached
 * through its PF (pf.h); which attachment holds a VF is claim.h's.
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
	char pf_driver[64];		/* the PF's driver ("igb", "mlx5_core"), "" when unknown */
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
/*
 * Re-read just the netdev name of PCI device bdf ("" when none): a VF's
 * after renames and moves, a PF's after a rename. -ENODEV: no such device.
 */
int vf_netdev_name(const char *sysfs_root, const char *bdf, char name[IFNAMSIZ]);

#endif
