/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam_ranges: the range sets of the pool-ipam config, for ipam_conf.
 *
 * Reads "ranges" (or the single-range shorthand), each range's per-node
 * blocks and exclusions, and resolves which node this is; then narrows the
 * sets to this node's blocks and runs the checks that need every set
 * filled. Blocks are checked whichever node reads the config, so that a
 * mistake fails on every node alike. Errors are code 7 and name the field.
 */
#ifndef IPAM_RANGES_H
#define IPAM_RANGES_H

#include <stdbool.h>
#include <cjson/cJSON.h>
#include "cni_error.h"
#include "ipam.h"

/*
 * What the parse keeps between reading the sets and narrowing them to this
 * node. The names are written as each set and range is parsed, and read
 * for those only: ipam_ranges_ctx_init clears the rest, which comes first,
 * so that an exec touches one page of the 5.6 KiB (a page fault each).
 */
struct ipam_ranges_ctx {
	bool has_nodes[IPAM_MAX_SETS];
	char bad_node[IPAM_NODE_NAME_MAX + 8];		/* an unusable NODE_NAME or host name */
	const cJSON *mine[IPAM_MAX_SETS][IPAM_MAX_RANGES];	/* this node's block, or NULL */
	char names[IPAM_MAX_SETS][32];			/* JSON path of each set */
	char where[IPAM_MAX_SETS][IPAM_MAX_RANGES][32];	/* ... and of each range */
};

void ipam_ranges_ctx_init(struct ipam_ranges_ctx *x);

/* A Kubernetes node name: a DNS-1123 subdomain (lowercase, at most 253 bytes). */
bool ipam_valid_node_name(const char *s);

/*
 * c->node_name from ipam.nodeName, $NODE_NAME, $MULTUS_NODE_NAME or the
 * host name. Only an invalid ipam.nodeName is -EINVAL; another unusable
 * source is kept in x and reported by ipam_ranges_need_node.
 */
int ipam_ranges_node_name(const cJSON *ipam, struct ipam_conf *c, struct ipam_ranges_ctx *x,
			  struct cni_error *err);
/* Where this node's name is needed (`field`): -EINVAL with *err when it has none. */
int ipam_ranges_need_node(const struct ipam_conf *c, const struct ipam_ranges_ctx *x,
			  const char *field, struct cni_error *err);

/* obj["exclude"] (where: its JSON path) into c's exclusions, or only checked when c is NULL. */
int ipam_ranges_parse_exclude(const cJSON *obj, const char *where, struct ipam_conf *c,
			      struct cni_error *err);

/* The shorthand range and "ranges" into c->sets, with every range's blocks checked. */
int ipam_ranges_parse(const cJSON *ipam, struct ipam_conf *c, struct ipam_ranges_ctx *x,
		      struct cni_error *err);

/*
 * This node's view of the parsed sets (each range narrowed to its block,
 * the block's exclusions added), then ipam_ranges_finish. -ENOENT when
 * only this node is the problem (no name, no block).
 */
int ipam_ranges_for_node(struct ipam_conf *c, struct ipam_ranges_ctx *x, struct cni_error *err);

/* ipam_conf_finish: the checks on sets filled by code. */
int ipam_ranges_finish(struct ipam_conf *c, struct cni_error *err);

#endif
