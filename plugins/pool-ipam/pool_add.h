/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_add: ADD's side of the store (pool.h): an owner's reservations
 * found again, or new ones taken, the next free address of a range set
 * round-robin from last.<set>, or the address the runtime asked for.
 */
#ifndef POOL_ADD_H
#define POOL_ADD_H

#include "ipam.h"
#include "pool.h"

/*
 * One address per range set into out[] (conf->n_sets entries). An owner
 * that already holds reservations gets them back. req[] (n_req) are
 * static requests, each for the set that contains it.
 */
int pool_add(struct pool *p, const struct pool_owner *o, const struct ipam_addr *req, int n_req,
	     struct ipam_addr out[IPAM_MAX_SETS], struct pool_diag *d);

#endif
