/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ippool_resolve: this node's block (ippool.h) as ADD needs it, from the
 * cache (ippool_cache), the API server (kube, ippool_convert), or the
 * cache again when the API server fails.
 */
#ifndef IPPOOL_RESOLVE_H
#define IPPOOL_RESOLVE_H

#include "cni_error.h"
#include "ippool.h"

enum ippool_source {
	IPPOOL_FROM_CACHE = 0,		/* fresh cache, no request */
	IPPOOL_FROM_API,		/* fetched now, cache rewritten */
	IPPOOL_FROM_STALE_CACHE,	/* the API server failed; warning logged */
};

/*
 * This node's block of pool pc for range set `set`, as ADD needs it:
 * fresh cache, else a GET (at most pc->timeout), else the cache of any
 * age when the failure says nothing about the pool. `now` is the clock
 * (epoch seconds). Errors fill *err: code 11 when there is no block to
 * use yet (API unreachable and no cache, node not allocated), code 7 for
 * a pool that does not exist, refused credentials or a broken object.
 */
int ippool_resolve(const struct ippool_conf *pc, int set, const char *node, int store_dirfd,
		   long long now, struct ippool_block *b, enum ippool_source *src,
		   struct cni_error *err);

#endif
