/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam: what a pool-ipam config becomes (struct ipam_conf, filled by
 * ipam_conf_parse and ipam_ranges), and the allocation policy over it:
 * which addresses of a range set may be handed out, the next one
 * round-robin, how many there are, and the result entry for one. Pure
 * arithmetic on struct ipam_conf: the store that records what is taken is
 * pool's.
 */
#ifndef IPAM_H
#define IPAM_H

#include <limits.h>
#include <stdbool.h>
#include "cni_result.h"
#include "ipam_addr.h"

#define IPAM_MAX_SETS		8
#define IPAM_MAX_RANGES		16	/* per set */
#define IPAM_MAX_EXCLUDE	256	/* ipam.exclude and this node's block exclusions */
#define IPAM_NODE_NAME_MAX	253	/* a DNS-1123 subdomain */

struct ipam_range {
	struct ipam_prefix subnet;
	struct ipam_addr start, end;	/* inclusive, inside subnet */
	bool has_gw;
	struct ipam_addr gw;
};

struct ipam_set {
	int n;
	struct ipam_range r[IPAM_MAX_RANGES];
	/*
	 * Ranges of the set where this node has no block: nothing is handed
	 * out there, but their subnets and gateways still describe what was
	 * reserved before the node's block moved out of them.
	 */
	int n_off;
	struct ipam_range off[IPAM_MAX_RANGES];
};

/*
 * The scalars and the strings every exec writes first, the large arrays
 * last: an exec touches a page of the config's 80 KiB wherever it reads or
 * writes, and each first touch is a page fault.
 */
struct ipam_conf {
	int n_sets;
	int n_exclude;
	int n_routes;
	bool cluster;			/* "ippool": sets are filled by another module */
	long long cooldown;		/* seconds */
	const char *node_name_from;	/* "ipam.nodeName", "NODE_NAME", "MULTUS_NODE_NAME" or "the host name" */
	char log_level[16];
	/*
	 * The Kubernetes node name: ipam.nodeName, else $NODE_NAME, else the
	 * host name (lowercased, as the kubelet does). "" when the source
	 * held no valid node name and nothing in the config needs one.
	 */
	char node_name[IPAM_NODE_NAME_MAX + 1];
	char data_dir[PATH_MAX];
	/*
	 * NULL when unset; else into the config's JSON, valid while it is:
	 * as arrays of PATH_MAX, their clearing alone touched two pages.
	 */
	const char *resolv_conf;	/* read by the caller */
	const char *log_file;
	struct cni_dns dns;
	struct ipam_set sets[IPAM_MAX_SETS];
	struct cni_route routes[CNI_MAX_ROUTES];
	struct ipam_span exclude[IPAM_MAX_EXCLUDE];
};

/*
 * Exclude [start, end] from allocation. 0, -EINVAL (start after end, or
 * two families), -ENOSPC (IPAM_MAX_EXCLUDE spans already).
 */
int ipam_exclude(struct ipam_conf *c, const struct ipam_addr *start,
		 const struct ipam_addr *end);

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
