/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam: the allocation policy over a parsed config (ipam_conf): which
 * addresses of a range set may be handed out, the next one round-robin,
 * how many there are, and the result entry for one. Pure arithmetic on
 * struct ipam_conf: the store that records what is taken is pool's.
 */
#ifndef IPAM_H
#define IPAM_H

#include <stdbool.h>
#include "cni.h"
#include "ipam_addr.h"
#include "ipam_conf.h"

/*
 * Every call below is safe on a set of 0 ranges (nothing usable).
 * May addr be handed out from set s? (in a range, not gateway, network,
 * broadcast or excluded; an IPv4 /31 or /32 has no network or broadcast
 * address, RFC 3021)
 */
bool ipam_usable(const struct ipam_conf *c, int s, const struct ipam_addr *a);
/* The set containing addr (inside one of its ranges), or -1. */
int ipam_set_of(const struct ipam_conf *c, const struct ipam_addr *a);
/* The range of set s containing addr, or NULL. */
const struct ipam_range *ipam_range_of(const struct ipam_conf *c, int s, const struct ipam_addr *a);
/*
 * The usable address after *cur in set s, round-robin over its ranges
 * (wrapping from the last range's end to the first's start); excluded
 * blocks are jumped over, not walked. A *cur outside the set starts at
 * the first usable address. -ENOSPC when the set has none.
 */
int ipam_next(const struct ipam_conf *c, int s, const struct ipam_addr *cur, struct ipam_addr *next);
/* Exact number of usable addresses of set s. */
ipam_u128 ipam_capacity(const struct ipam_conf *c, int s);

/*
 * "a.b.c.d/len" of the subnet holding a, and its gateway, into a result ip:
 * the range whose start..end holds a, else one whose subnet does (a
 * reservation made before this node's block moved). -EINVAL when none.
 */
int ipam_result_ip(const struct ipam_conf *c, int s, const struct ipam_addr *a, struct cni_ip *ip);

#endif
