/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_gc: GC's side of the store (pool.h): every reservation whose owner
 * is gone is released, every one kept gets its index back, and resting
 * addresses past their cooldown go.
 */
#ifndef POOL_GC_H
#define POOL_GC_H

#include <stdbool.h>
#include "pool.h"

/*
 * Release the reservations of an earlier boot, and those whose owner
 * owned(container_id, ifname, arg) does not name: the runtime's list of
 * valid attachments, which the store need not know the shape of.
 */
int pool_gc(struct pool *p, bool (*owned)(const char *container_id, const char *ifname, void *arg),
	    void *arg, int *released, struct pool_diag *d);

#endif
