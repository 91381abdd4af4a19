/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam_conf: the pool-ipam config (the "ipam" object), read into the
 * struct ipam_conf of ipam.h.
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
 *
 * The range sets themselves (ranges, per-node blocks, this node's name,
 * exclusions) are read by ipam_ranges; this module reads the rest of the
 * section (routes, dns, paths, cooldown, logging, "ippool") and calls it.
 */
#ifndef IPAM_CONF_H
#define IPAM_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <cjson/cJSON.h>
#include "cni_error.h"
#include "cni_result.h"
#include "ipam.h"

#define IPAM_DEFAULT_DATA_DIR	"/var/lib/cni/pool-ipam"

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

/* "nameserver", "domain", "search", "options" lines of a resolv.conf. */
void ipam_resolv_conf_parse(const char *text, struct cni_dns *dns);

#endif
