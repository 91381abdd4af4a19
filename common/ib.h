/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib: InfiniBand VFs in PCI sysfs: the link layer of a VF, its IPoIB mode,
 * the GUIDs its RDMA ports carry, and the driver rebind that makes a new
 * GUID take effect (mlx5 reads the GUID when the VF's driver probes).
 *
 * Everything is read from the injectable sysfs root, never from a config:
 * <bdf>/net/<if>/type (ARPHRD_INFINIBAND, 32, for IPoIB) and
 * <bdf>/infiniband/<dev>/ports/1/link_layer say what a VF is.
 */
#ifndef IB_H
#define IB_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#define IB_GUID_STR_LEN	24		/* "00:11:22:33:44:55:66:77" + NUL */
/* IPoIB MTUs: datagram mode carries the IB MTU less its 4-byte header; connected mode more. */
#define IB_MTU_DATAGRAM_MAX	4092
#define IB_MTU_CONNECTED_MAX	65520

/* "00:11:22:33:44:55:66:77" (ip link's form, and ib-sriov-cni's): -EINVAL otherwise. */
int ib_guid_parse(const char *s, uint64_t *guid);
void ib_guid_format(uint64_t guid, char out[IB_GUID_STR_LEN]);
/*
 * "auto": the PF's port GUID with bytes 3 and 4 (0x0300 in ConnectX
 * GUIDs, the same on every port) turned into 0x8000 | VF index + 1, so
 * the GUID is unique wherever the PF's is and never the PF's own.
 */
uint64_t ib_guid_auto(uint64_t pf_port_guid, int vf_index);

/*
 * The VF's link layer: its netdev's type (32 = InfiniBand) when it has a
 * netdev, else its RDMA device's port 1 link_layer. -ENOENT when neither
 * tells (no netdev, no RDMA device).
 */
int ib_vf_is_ib(const char *sysfs_root, const char *bdf, const char *netdev,
		const char *rdma_dev, bool *ib);
/*
 * The same of a PF (its netdev's type, else its first RDMA device's port):
 * a VF's link layer is its PF port's, and a VF without a driver shows
 * neither netdev nor RDMA device. -ENOENT when the PF shows neither.
 */
int ib_pf_is_ib(const char *sysfs_root, const char *pf_bdf, const char *pf_netdev, bool *ib);
/* <bdf>/net/<netdev>/mode: connected or datagram; -ENOENT without the file. */
int ib_ipoib_connected(const char *sysfs_root, const char *bdf, const char *netdev,
		       bool *connected);
/*
 * Port 1's GUID of a device's first RDMA device (the low half of GID 0,
 * <bdf>/infiniband/<dev>/ports/1/gids/0): the PF's, for "auto".
 */
int ib_port_guid(const char *sysfs_root, const char *bdf, uint64_t *guid);

/*
 * Unbind the VF from its driver (when bound), wait until its netdev and
 * RDMA device are gone, bind it to `driver`, and wait until the driver
 * has given it a netdev (and an RDMA device, if it had one) again and udev
 * has renamed the netdev (name_assign_type no longer 1, "enum"; after 3 s
 * the kernel's name is taken: a node may have no rename rule), at most
 * timeout_ms in all. Found by PCI address: netdev and rdma get the new
 * names. -ETIMEDOUT when the wait ran out (netdev/rdma hold what was
 * there then, "" for none).
 */
int ib_vf_rebind(const char *sysfs_root, const char *bdf, const char *driver, int timeout_ms,
		 char netdev[IFNAMSIZ], char rdma[64]);

#endif
