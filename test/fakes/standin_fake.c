/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PCI device under a stand-in VF. The netns suite plays a VF's netdev
 * with a veth end, which has no device: the default build never takes
 * such a link for a VF (sriov_link_is_vf), wherever it is and whatever
 * its name. A real VF's device moves with its netdev across namespaces
 * and renames, and no pod can give a link one. The stand-in carries the
 * same in its ifalias, which moves and survives renames as a device does:
 * "standin-pci:<PCI address>", written by test/fixtures/mksysfs, with
 * the sysfs tree that models the VF's PCI device, for each --vf netdev
 * that exists as a link (and by the tests that make a stand-in's netdev
 * anew, as a driver rebind does).
 *
 * Registered before main() in every test build. A veth a test makes in a
 * pod, as a tenant would, has no such alias: it has no device, as it has
 * none on a node. (A tenant can set an ifalias, but not a device: the
 * alias only stands in for what no tenant can write.)
 */
#include <stdio.h>
#include <string.h>
#include "fakes.h"
#include "link.h"

#define STANDIN_PREFIX	"standin-pci:"

static int standin_parent(const struct link_info *li, char bus[32], char dev[64])
{
	const char *addr = li->alias + strlen(STANDIN_PREFIX);

	if (strncmp(li->alias, STANDIN_PREFIX, strlen(STANDIN_PREFIX)) || !addr[0] ||
	    strlen(addr) >= 64)
		return 0;
	snprintf(bus, 32, "pci");
	snprintf(dev, 64, "%s", addr);
	return 0;
}

static const struct link_parent_backend standin_backend = { .parent = standin_parent };

void standin_fake_use(bool on)
{
	link_set_parent_backend(on ? &standin_backend : NULL);
}

__attribute__((constructor)) static void standin_fake_register(void)
{
	standin_fake_use(true);
}
