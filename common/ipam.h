/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam: addresses, prefixes, ranges and the pool-ipam config.
 *
 * Addresses of both families are 128-bit integers (IPv4 in the low 32
 * bits), so iteration, containment and capacity are plain arithmetic.
 *
 * The config is a superset of host-local's: "ranges" is a list of range
 * sets, each a list of {subnet, rangeStart, rangeEnd, gateway}; one address
 * is taken from each set (dual stack = one IPv4 set + one IPv6 set). The
 * single-range shorthand (subnet/rangeStart/rangeEnd/gateway at the ipam
 * level) is one set of one range. Errors are code 7 and name the field.
 *
 * A range may carry per-node blocks, "nodes": {"<node>": "10.1.2.0/24" or
 * {"rangeStart", "rangeEnd", "exclude"}}: a NAD is the same on every node,
 * and nodes sharing one fabric must not hand out the same address. The
 * parser keeps only this node's view: a range's start/end become its block
 * (subnet and gateway unchanged), ranges without one move to `off`. Since
 * reservations are found by owner, not by range, a block that shrank or
 * moved keeps what it handed out until released and gives nothing new
 * outside itself.
 *
 * With "ippool" the sets are left empty (n = 0, `cluster`) for the module
 * that reads the cluster's pools; it fills them and calls ipam_conf_finish.
 */
#ifndef IPAM_H
#define IPAM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "cni.h"

#define IPAM_MAX_SETS		8
#define IPAM_MAX_RANGES		16	/* per set */
#define IPAM_MAX_EXCLUDE	256	/* ipam.exclude and this node's block exclusions */
#define IPAM_NODE_NAME_MAX	253	/* a DNS-1123 subdomain */
#define IPAM_ADDR_STRLEN	46	/* INET6_ADDRSTRLEN */
#define IPAM_DEFAULT_DATA_DIR	"/var/lib/cni/pool-ipam"

typedef unsigned __int128 ipam_u128;

struct ipam_addr {
	int family;			/* AF_INET or AF_INET6 */
	ipam_u128 v;
};

struct ipam_prefix {
	struct ipam_addr addr;		/* the network address: host bits are zero */
	int len;
};

struct ipam_range {
	struct ipam_prefix subnet;
	struct ipam_addr start, end;	/* inclusive, inside subnet */
	bool has_gw;
	struct ipam_addr gw;
};

/* An inclusive span of addresses of one family. */
struct ipam_span {
	struct ipam_addr start, end;
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

struct ipam_conf {
	int n_sets;
	struct ipam_set sets[IPAM_MAX_SETS];
	int n_exclude;
	struct ipam_span exclude[IPAM_MAX_EXCLUDE];
	int n_routes;
	struct cni_route routes[CNI_MAX_ROUTES];
	struct cni_dns dns;
	char resolv_conf[PATH_MAX];	/* "" when unset; read by the caller */
	char data_dir[PATH_MAX];
	long long cooldown;		/* seconds */
	char log_level[16];
	char log_file[PATH_MAX];
	bool cluster;			/* "ippool": sets are filled by another module */
	/*
	 * The Kubernetes node name: ipam.nodeName, else $NODE_NAME, else the
	 * host name (lowercased, as the kubelet does). "" when the source
	 * held no valid node name and nothing in the config needs one.
	 */
	char node_name[IPAM_NODE_NAME_MAX + 1];
	const char *node_name_from;	/* "ipam.nodeName", "NODE_NAME", "MULTUS_NODE_NAME" or "the host name" */
};

/* ---- addresses ---- */

/* Dotted quad or RFC 4291 text; no prefix. 0 or -EINVAL. */
int ipam_addr_parse(const char *s, struct ipam_addr *a);
/* Canonical text (inet_ntop); buf of at least IPAM_ADDR_STRLEN. */
void ipam_addr_format(const struct ipam_addr *a, char *buf, size_t len);
int ipam_addr_cmp(const struct ipam_addr *a, const struct ipam_addr *b);
int ipam_family_bits(int family);

/* "a.b.c.d/n": the address is masked to the network. 0 or -EINVAL. */
int ipam_prefix_parse(const char *s, struct ipam_prefix *p);
/* An address with an optional "/n" (static requests): the prefix is ignored. */
int ipam_addr_parse_cidr(const char *s, struct ipam_addr *a);
struct ipam_addr ipam_prefix_last(const struct ipam_prefix *p);
bool ipam_prefix_contains(const struct ipam_prefix *p, const struct ipam_addr *a);
bool ipam_prefix_overlap(const struct ipam_prefix *a, const struct ipam_prefix *b);

/* ---- the config ---- */

/* A Kubernetes node name: a DNS-1123 subdomain (lowercase, at most 253 bytes). */
bool ipam_valid_node_name(const char *s);

/*
 * Parse conf["ipam"] (the object itself). Fills every default (dataDir,
 * rangeStart/rangeEnd from the subnet), resolves the node name, narrows
 * per-node ranges to this node's blocks and validates: family mix inside a
 * set, overlaps between ranges and sets and between the blocks of nodes,
 * gateways and ranges outside their subnet, subnets too small to hand out
 * an address (/31, /32, /127, /128), typo-like unknown keys. Then calls
 * ipam_conf_finish, unless "ippool" leaves the sets to be filled.
 * -EINVAL, or -ENOENT when only this node is the problem (no block for it
 * in "nodes", no usable node name): *err is filled either way, and with
 * -ENOENT every other field is parsed, so DEL and GC, which need only the
 * store, can still release what the node holds.
 */
int ipam_conf_parse(const cJSON *ipam, struct ipam_conf *c, struct cni_error *err);

/*
 * The checks that need every set filled: defaults for a range whose start
 * or end is still zero, ranges and gateways inside their subnet, one family
 * per set, overlaps between ranges and sets, a usable address in every
 * set. For sets filled by code; messages name them "range set 0
 * (10.0.0.0/24)". 0 or -EINVAL with *err (code 7).
 */
int ipam_conf_finish(struct ipam_conf *c, struct cni_error *err);

/*
 * Exclude [start, end] from allocation. 0, -EINVAL (start after end, or
 * two families), -ENOSPC (IPAM_MAX_EXCLUDE spans already).
 */
int ipam_conf_exclude(struct ipam_conf *c, const struct ipam_addr *start,
		      const struct ipam_addr *end);

/* "nameserver", "domain", "search", "options" lines of a resolv.conf. */
void ipam_resolv_conf_parse(const char *text, struct cni_dns *dns);

/* ---- allocation policy ---- */

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
