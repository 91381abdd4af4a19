/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam_ranges_int: what ipam_ranges.c shares with ipam_ranges_check.c, and
 * nothing outside the module includes.
 */
#ifndef IPAM_RANGES_INT_H
#define IPAM_RANGES_INT_H

#include "cni_error.h"
#include "ipam.h"
#include "ipam_ranges.h"

/*
 * This node's view of set s: each range narrows to its block, ranges
 * without one move to `off`, the block's exclusions join the config's.
 */
int ipam_ranges_narrow(struct ipam_conf *c, struct ipam_ranges_ctx *x, int s,
		       struct cni_error *err);

#endif
