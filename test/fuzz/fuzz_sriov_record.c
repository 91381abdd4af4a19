/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: bytes, sealed with their checksum (so the fuzzer's
 * inputs reach the JSON), through the parser of sriov-rdma's attachment
 * record. What it accepts must be within the ranges DEL relies on (the PF
 * and the kernel get those numbers), and must survive a write and a read
 * unchanged: a record ADD writes is one DEL can read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>

#include "sriov.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_vf_config(const struct pf_vf_config *c)
{
	if ((c->mask & PF_VF_VLAN) &&
	    (c->vlan < 0 || c->vlan > 4094 || c->qos < 0 || c->qos > 7 ||
	     (c->vlan_proto != ETH_P_8021Q && c->vlan_proto != ETH_P_8021AD) ||
	     (!c->vlan && (c->qos || c->vlan_proto != ETH_P_8021Q))))
		abort();
	if ((c->mask & PF_VF_LINK_STATE) &&
	    (c->link_state < IFLA_VF_LINK_STATE_AUTO || c->link_state > IFLA_VF_LINK_STATE_DISABLE))
		abort();
	if ((c->mask & PF_VF_RATE) && c->max_tx_rate && c->min_tx_rate > c->max_tx_rate)
		abort();
}

/* A scratch directory for the round trip, made once. */
static int scratch_dir(void)
{
	static int fd = -1;
	char tmpl[] = "/tmp/fuzz_sriov_record.XXXXXX";

	if (fd < 0 && mkdtemp(tmpl))
		fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sriov_record rec, again;
	char *buf, name[512];
	size_t len = size;
	int dirfd;

	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (state_seal(&buf, &len) < 0) {
		free(buf);
		return 0;
	}
	if (sriov_record_parse(buf, len, &rec) == 0) {
		if (rec.vf_index < 0 || rec.vf_index > 65535 ||
		    (rec.host_mtu && (rec.host_mtu < 68 || rec.host_mtu > 65535)) ||
		    (rec.pod_mtu && (rec.pod_mtu < 68 || rec.pod_mtu > 65535)) ||
		    rec.n_addrs < 0 || rec.n_addrs > CNI_MAX_IPS)
			abort();
		check_vf_config(&rec.vf_orig);
		check_vf_config(&rec.vf_applied);
		dirfd = scratch_dir();
		if (dirfd >= 0 && sriov_record_write(dirfd, &rec) == 0) {
			sriov_record_name(rec.container_id, rec.ifname, name, sizeof(name));
			/* What it says of its writer is the writer's: this one writes its own. */
			if (sriov_record_read(dirfd, name, &again) != 0 ||
			    again.written.version != SRIOV_RECORD_VERSION ||
			    strcmp(again.written.written_by, STATE_WRITTEN_BY))
				abort();
			again.written = rec.written;
			if (memcmp(&rec, &again, sizeof(rec)) != 0)
				abort();
			unlinkat(dirfd, name, 0);
		}
	}
	free(buf);
	return 0;
}
