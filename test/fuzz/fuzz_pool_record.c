/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: bytes, sealed with their checksum (so the fuzzer's
 * inputs reach the JSON), through pool-ipam's reservation record parser.
 * What it accepts must be within the ranges the store relies on: a set
 * index it can name an entry with, a creation time that is a time, and
 * strings that fit and end.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipam_conf.h"
#include "pool_record.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pool_record r;
	size_t len = size;
	char *buf;

	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (state_seal(&buf, &len) < 0) {
		free(buf);
		return 0;
	}
	if (pool_record_parse(buf, len, &r) == 0 &&
	    (r.set < 0 || r.set >= IPAM_MAX_SETS || r.created < 0 ||
	     (r.addr.family != AF_INET && r.addr.family != AF_INET6) ||
	     strnlen(r.container_id, sizeof(r.container_id)) == sizeof(r.container_id) ||
	     strnlen(r.ifname, sizeof(r.ifname)) == sizeof(r.ifname) ||
	     strnlen(r.netns, sizeof(r.netns)) == sizeof(r.netns) ||
	     strnlen(r.boot_id, sizeof(r.boot_id)) == sizeof(r.boot_id)))
		abort();
	free(buf);
	return 0;
}
