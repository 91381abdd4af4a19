/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ippool: this node's address block from nvidia-k8s-ipam's IPPool and
 * CIDRPool resources, and the cache that lets pool-ipam work without them.
 *
 * nv-ipam's controller carves a cluster pool into per-node blocks and
 * writes them into the resource's status.allocations. This module reads
 * the resource (GET .../namespaces/NS/ippools/NAME or cidrpools/NAME),
 * turns this node's entry and the pool's spec into one range (subnet,
 * rangeStart, rangeEnd, gateway), exclusion spans and routes, exactly as
 * nv-ipam's node daemon does (pkg/ipam-node/controllers/{ippool,cidrpool}),
 * and keeps the result in the network's store directory:
 *
 *   <dataDir>/<network>/ippool.<set>   checksummed JSON (state_write_json):
 *                                      kind, namespace, name, node,
 *                                      resourceVersion, fetched (epoch s),
 *                                      and the converted block
 *
 * A cache younger than cacheMaxAge means no request at all. An older one,
 * or none, means one GET bounded by apiTimeout; when the API server does
 * not answer usefully (timeout, connection refused or dropped, TLS error,
 * 5xx, 429, credentials refused), a cache of any age is used with one
 * warning. An authoritative "no block" (404, or the node absent from
 * status.allocations) removes the cache and fails.
 *
 * This module holds the config and the block; ippool_convert reads the
 * resource, ippool_cache keeps the file, ippool_resolve puts them together.
 */
#ifndef IPPOOL_H
#define IPPOOL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "cni_error.h"
#include "ipam.h"

#define IPPOOL_MAX			2	/* as nv-ipam: one pool per family */
#define IPPOOL_MAX_EXCLUDE		128	/* spans that intersect this node's block */
#define IPPOOL_MAX_ROUTES		32
#define IPPOOL_NAME_MAX			253	/* DNS-1123 subdomain */
#define IPPOOL_NAMESPACE_MAX		63	/* DNS-1123 label */
#define IPPOOL_DEFAULT_NAMESPACE	"kube-system"	/* ipam-node --ippools-namespace */
#define IPPOOL_DEFAULT_KUBECONFIG	"/etc/cni/net.d/multus.d/multus.kubeconfig"
#define IPPOOL_DEFAULT_MAX_AGE		60	/* seconds */
#define IPPOOL_DEFAULT_TIMEOUT		2	/* seconds */
#define IPPOOL_MAX_TIMEOUT		30
#define IPPOOL_GROUP_PATH		"/apis/nv-ipam.nvidia.com/v1alpha1"

enum ippool_kind {
	IPPOOL_KIND_IPPOOL = 0,
	IPPOOL_KIND_CIDRPOOL,
};

/* One entry of ipam.ippool. */
struct ippool_conf {
	char name[IPPOOL_NAME_MAX + 1];
	char ns[IPPOOL_NAMESPACE_MAX + 1];	/* namespace */
	enum ippool_kind kind;
	char kubeconfig[PATH_MAX];
	long long max_age;		/* seconds: cacheMaxAge */
	long long timeout;		/* seconds: apiTimeout */
};

/* This node's block of one pool, converted: what ippool_apply puts into a range set. */
struct ippool_block {
	struct ipam_prefix subnet;
	struct ipam_addr start, end;
	bool has_gw;
	struct ipam_addr gw;
	int n_exclude;
	struct ipam_span exclude[IPPOOL_MAX_EXCLUDE];
	int n_routes;			/* destinations, all via gw */
	struct ipam_prefix routes[IPPOOL_MAX_ROUTES];
	char resource_version[64];
	long long fetched;		/* epoch seconds */
};

/* "IPPool" / "CIDRPool", and the resource's plural in API paths. */
const char *ippool_kind_name(enum ippool_kind kind);
const char *ippool_kind_plural(enum ippool_kind kind);

/* DNS-1123 subdomain (object names) and label (namespaces), as the API server validates them. */
bool ippool_valid_name(const char *s);
bool ippool_valid_namespace(const char *s);

/*
 * ipam.ippool: one object or an array of one or two. Every key is
 * validated; errors are code 7 naming the field ("ipam.ippool[1].kind").
 */
int ippool_conf_parse(const cJSON *ipam, struct ippool_conf pools[IPPOOL_MAX], int *n,
		      struct cni_error *err);

/* "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/NS/ippools/NAME" into buf. */
int ippool_api_path(const struct ippool_conf *pc, char *buf, size_t len);

/*
 * Put the block into range set `set` of c (one range), its exclusions
 * into c's exclusions and its routes into c->routes. -ENOSPC when c has
 * no room left (msg says which table).
 */
int ippool_apply(const struct ippool_block *b, struct ipam_conf *c, int set, char *msg,
		 size_t msglen);

#endif
