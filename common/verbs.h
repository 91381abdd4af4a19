/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verbs: RDMA devices through libibverbs, from the namespace the device is in.
 *
 * libibverbs lists devices through RDMA netlink in the caller's namespace
 * and opens /dev/infiniband/uverbsN, which the kernel allows only from the
 * device's namespace; GIDs then come over that file (ioctl), not from the
 * caller's sysfs mount, which still shows the host after a setns().
 *
 * The library is loaded on first use (docs/performance.md, "Start-up: what
 * each library costs"), and only this module touches it. The two rdma_
 * names predate the module: the plugin calls them by those names.
 */
#ifndef VERBS_H
#define VERBS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Load libibverbs.so.1 and resolve every function this module calls, by the
 * version it was written against: 0, or -ENOSYS when the library or one of
 * them is missing (said in the log). Later calls return the first answer.
 */
int verbs_load(void);

/* 0 when libibverbs lists the device here (and it opens), -ENODEV otherwise. */
int rdma_verbs_dev_present(const char *name);
/*
 * Index in the GID table of port `port` of the GID for address (IPv4 or
 * IPv6, a "/prefix" is ignored) of type RoCE v2 (or v1). The kernel fills
 * the table from the netdev's addresses asynchronously, so this polls for up
 * to wait_ms before -ENOENT. -ENODEV: no such device here; -EINVAL: bad
 * address or port.
 */
int rdma_gid_index_for(const char *dev_name, uint32_t port, const char *address, bool roce_v2,
		       unsigned wait_ms, int *index);

#endif
