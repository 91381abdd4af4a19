/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: bytes as a prevResult, through the result parser every
 * CHECK and chained ADD runs on what another plugin wrote. What it accepts
 * must stay within the result's bounds, and must come back the same when
 * written in any version and read again: a result we print is one we read.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const versions[] = { "0.3.1", "0.4.0", "1.0.0", "1.1.0" };
	static struct cni_result r, again;
	struct cni_error err;
	cJSON *j, *o;
	size_t v;

	j = cJSON_ParseWithLength((const char *)data, size);
	if (!j)
		return 0;
	memset(&err, 0, sizeof(err));
	cni_result_init(&r);
	if (cni_result_parse(j, &r, &err) == 0) {
		if (r.n_ifaces < 0 || r.n_ifaces > CNI_MAX_IFACES || r.n_ips < 0 ||
		    r.n_ips > CNI_MAX_IPS || r.n_routes < 0 || r.n_routes > CNI_MAX_ROUTES)
			abort();
		for (v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
			o = cni_result_encode(&r, versions[v]);
			if (!o)
				continue;
			cni_result_init(&again);
			if (cni_result_parse(o, &again, &err) != 0 || again.n_ips != r.n_ips ||
			    again.n_ifaces != r.n_ifaces || again.n_routes != r.n_routes)
				abort();
			cJSON_Delete(o);
		}
	} else if (!err.code || !err.msg[0] ||
		   (strstr(err.msg, "(null)") && !memmem(data, size, "(null)", 6))) {
		/* A refusal always says why, naming what it read. */
		abort();
	}
	cJSON_Delete(j);
	return 0;
}
