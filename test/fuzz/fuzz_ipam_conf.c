/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: bytes -> JSON -> the pool-ipam config parser, then the
 * allocation math on whatever it accepted (capacity and one walk step per
 * set), since a parser that accepts a config the allocator cannot serve is
 * the bug that matters.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipam.h"
#include "ipam_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ipam_conf conf;
	struct cni_error err;
	struct ipam_addr cur, next;
	cJSON *json;
	int s;

	json = cJSON_ParseWithLength((const char *)data, size);
	if (!json)
		return 0;
	memset(&err, 0, sizeof(err));
	if (ipam_conf_parse(json, &conf, &err) == 0) {
		/* "ippool" leaves the sets empty for the module that reads the cluster's pools */
		for (s = 0; s < conf.n_sets && !conf.cluster; s++) {
			if (ipam_capacity(&conf, s) == 0)
				abort();
			cur.family = 0;
			if (ipam_next(&conf, s, &cur, &next) < 0 || !ipam_usable(&conf, s, &next))
				abort();
			if (ipam_next(&conf, s, &next, &cur) < 0 || !ipam_usable(&conf, s, &cur))
				abort();
		}
	} else if (err.code != CNI_ERR_INVALID_CONFIG || !err.msg[0] ||
		   (strstr(err.msg, "(null)") && !memmem(data, size, "(null)", 6))) {
		/* every rejection is a code-7 error with a message that names what it read */
		abort();
	}
	cJSON_Delete(json);
	return 0;
}
