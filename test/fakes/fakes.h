/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fakes: recording stand-ins for the kernel, for the test build of the
 * plugins (meson -Dtest_fakes=true) and the unit tests; never in the
 * default build, scripts/install, scripts/package or the image.
 *
 * Linked into a plugin, each registers itself before main() when its
 * variable names a directory: SRIOV_RDMA_PF_FAKE_DIR for the PF (VF
 * properties, see pf_fake.c), SRIOV_RDMA_RDMA_FAKE_DIR for RDMA netlink
 * (see rdma_fake.c), SRIOV_RDMA_NETNS_FAKE_DIR for the namespace switch
 * (a fault point on the way back, see netns_fake.c). Unset, the plugin
 * talks to the kernel as the default build does; but for one stand-in,
 * always there: the PCI device under a veth playing a VF, which the
 * kernel names for a real VF (see standin_fake.c).
 *
 * Several processes may use one fake directory at once, and be killed at
 * any instant: each fake changes its state under a flock of a lock file of
 * its own and replaces a file only through a temporary of a unique name
 * and a rename.
 */
#ifndef FAKES_H
#define FAKES_H

#include <stdbool.h>

#define PF_FAKE_ENV	"SRIOV_RDMA_PF_FAKE_DIR"
#define RDMA_FAKE_ENV	"SRIOV_RDMA_RDMA_FAKE_DIR"
#define NETNS_FAKE_ENV	"SRIOV_RDMA_NETNS_FAKE_DIR"

/* Route the PF requests of the PFs opened from now on to the fake in dir (NULL: the kernel). */
void pf_fake_use(const char *dir);
/* Route the RDMA sockets opened from now on to the fake in dir (NULL: the kernel). */
void rdma_fake_use(const char *dir);
/* Make the returns of netns_do follow the fault point in dir (NULL: setns(2) alone). */
void netns_fake_use(const char *dir);
/* Take "standin-pci:<address>" in the ifalias of a link with no device as its PCI device. */
void standin_fake_use(bool on);

#endif
