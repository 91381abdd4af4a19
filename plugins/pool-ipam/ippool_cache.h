/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ippool_cache: this node's block (ippool.h) kept in the network's store
 * directory as <store>/ippool.<set>, so that ADD works without the API
 * server and most ADDs never ask it.
 */
#ifndef IPPOOL_CACHE_H
#define IPPOOL_CACHE_H

#include "ippool.h"

/* The newest cache this version reads (docs/upgrading.md). */
#define IPPOOL_CACHE_VERSION	1

/* Write the block atomically (0600, checksummed). */
int ippool_cache_write(int store_dirfd, int set, const struct ippool_conf *pc, const char *node,
		       const struct ippool_block *b);
/*
 * Read it back: -ENOENT when absent, when it belongs to another pool or
 * node (a renamed pool or node must not inherit a block) or when a newer
 * release wrote it in a version this one does not read; -EBADMSG when
 * corrupt.
 */
int ippool_cache_read(int store_dirfd, int set, const struct ippool_conf *pc, const char *node,
		      struct ippool_block *b);
int ippool_cache_remove(int store_dirfd, int set);

#endif
