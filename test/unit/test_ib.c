/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib: GUID text as ip link writes it, "auto" GUIDs, and an InfiniBand VF
 * told from an Ethernet one by its sysfs attributes alone (a tree made by
 * test/fixtures/mksysfs --ib).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "ib.h"

static char tmp[64];

static void test_guid_text(void)
{
	char s[IB_GUID_STR_LEN];
	uint64_t g = 1;

	CHECK_INT(ib_guid_parse("02:C9:03:00:00:ab:cd:01", &g), 0);
	CHECK(g == 0x02c9030000abcd01ull);
	ib_guid_format(g, s);
	CHECK_STR(s, "02:c9:03:00:00:ab:cd:01");
	CHECK_INT(ib_guid_parse("02:c9:03:00:00:ab:cd", &g), -EINVAL);
	CHECK_INT(ib_guid_parse("02:c9:03:00:00:ab:cd:0g", &g), -EINVAL);
	CHECK_INT(ib_guid_parse("02-c9-03-00-00-ab-cd-01", &g), -EINVAL);
	CHECK_INT(ib_guid_parse("02:c9:03:00:00:ab:cd:011", &g), -EINVAL);
	CHECK_INT(ib_guid_parse("", &g), -EINVAL);
}

/* Unique per VF, never the PF's own, the PF's OUI and low 24 bits kept. */
static void test_guid_auto(void)
{
	uint64_t pf = 0x1070fd0300a1b2c0ull;

	CHECK(ib_guid_auto(pf, 0) == 0x1070fd8001a1b2c0ull);
	CHECK(ib_guid_auto(pf, 1) == 0x1070fd8002a1b2c0ull);
	CHECK(ib_guid_auto(pf, 126) != ib_guid_auto(pf, 127));
	CHECK(ib_guid_auto(pf, 0) != pf);
}

static void test_link_layer(void)
{
	char cmd[512], root[128];
	bool ib = false, connected = true;
	uint64_t g = 0;

	snprintf(root, sizeof(root), "%s/ib", tmp);
	snprintf(cmd, sizeof(cmd), "%s/mksysfs %s --ib --pf 0000:3b:00.0 ibp0 --vf 0 0000:3b:00.2 ib0 "
		 "--vf 1 0000:3b:00.3 - --guid 1 02:00:00:00:00:00:00:11", FIXTURES_DIR, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(ib_vf_is_ib(root, "0000:3b:00.2", "ib0", "mlx5_2", &ib), 0);
	CHECK(ib);
	/* No netdev: the RDMA port's link layer says it. */
	ib = false;
	CHECK_INT(ib_vf_is_ib(root, "0000:3b:00.3", "", "mlx5_3", &ib), 0);
	CHECK(ib);
	CHECK_INT(ib_vf_is_ib(root, "0000:3b:00.3", "", "", &ib), -ENOENT);
	CHECK_INT(ib_ipoib_connected(root, "0000:3b:00.2", "ib0", &connected), 0);
	CHECK(!connected);
	CHECK_INT(ib_port_guid(root, "0000:3b:00.0", &g), 0);
	CHECK(g == 0x1070fd0300a1b2c0ull);
	CHECK_INT(ib_port_guid(root, "0000:3b:00.3", &g), 0);
	CHECK(g == 0x0200000000000011ull);

	snprintf(root, sizeof(root), "%s/eth", tmp);
	snprintf(cmd, sizeof(cmd), "%s/mksysfs %s --pf 0000:3b:00.0 enp0 --vf 0 0000:3b:00.2 enp0v0",
		 FIXTURES_DIR, root);
	CHECK_INT(system(cmd), 0);
	ib = true;
	CHECK_INT(ib_vf_is_ib(root, "0000:3b:00.2", "enp0v0", "mlx5_2", &ib), 0);
	CHECK(!ib);
	/* A name from elsewhere never climbs out of the device's directory. */
	CHECK_INT(ib_vf_is_ib(root, "0000:3b:00.2", "../../x", "../y", &ib), -ENOENT);
}

int main(void)
{
	char cmd[128];

	snprintf(tmp, sizeof(tmp), "/tmp/test-ib.XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	RUN(test_guid_text);
	RUN(test_guid_auto);
	RUN(test_link_layer);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_summary();
}
