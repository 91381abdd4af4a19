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
#define IPAM_MAX_EXCLUDE	64
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

struct ipam_set {
	int n;
	struct ipam_range r[IPAM_MAX_RANGES];
};

struct ipam_conf {
	int n_sets;
	struct ipam_set sets[IPAM_MAX_SETS];
	int n_exclude;
	struct ipam_prefix exclude[IPAM_MAX_EXCLUDE];
	int n_routes;
	struct cni_route routes[CNI_MAX_ROUTES];
	struct cni_dns dns;
	char resolv_conf[PATH_MAX];	/* "" when unset; read by the caller */
	char data_dir[PATH_MAX];
	long long cooldown;		/* seconds */
	char log_level[16];
	char log_file[PATH_MAX];
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

/*
 * Parse conf["ipam"] (the object itself). Fills every default (dataDir,
 * rangeStart/rangeEnd from the subnet) and validates: family mix inside a
 * set, overlaps between ranges and sets, gateways and ranges outside their
 * subnet, subnets too small to hand out an address (/31, /32, /127, /128),
 * typo-like unknown keys.
 */
int ipam_conf_parse(const cJSON *ipam, struct ipam_conf *c, struct cni_error *err);

/* "nameserver", "domain", "search", "options" lines of a resolv.conf. */
void ipam_resolv_conf_parse(const char *text, struct cni_dns *dns);

/* ---- allocation policy ---- */

/* May addr be handed out from set s? (in a range, not gateway, network, broadcast or excluded) */
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

/* "a.b.c.d/len" of the subnet holding a, and its gateway, into a result ip. */
int ipam_result_ip(const struct ipam_conf *c, int s, const struct ipam_addr *a, struct cni_ip *ip);

#endif
