/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ippool_convert: an IPPool or CIDRPool as the API server sends it, turned
 * into this node's block (ippool.h) as nv-ipam's node daemon reads it:
 * status.allocations' entry for the node, spec's gateway, exclusions and
 * routes.
 */
#ifndef IPPOOL_CONVERT_H
#define IPPOOL_CONVERT_H

#include <stddef.h>
#include "ippool.h"

/*
 * Convert a resource (the API server's JSON) into node's block.
 * -ENOENT: node is not in status.allocations (msg says so);
 * -EBADMSG: the object is not a usable IPPool/CIDRPool (msg names the field).
 */
int ippool_convert(const struct ippool_conf *pc, const char *node, const char *json, size_t len,
		   struct ippool_block *b, char *msg, size_t msglen);

#endif
