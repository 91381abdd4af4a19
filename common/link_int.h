/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link_int: what link.c shares with link_ip.c, and nothing outside the link
 * module includes. The socket's requests are counted in one place (link.c)
 * however they are built.
 */
#ifndef LINK_INT_H
#define LINK_INT_H

#include <stddef.h>
#include <stdint.h>
#include <netlink/netlink.h>
#include <netlink/cache.h>
#include "link.h"

struct rtnl_link;

/* A libnl link object as a link_info (link_get_by_name's decoder). */
void link_info_fill(struct rtnl_link *l, struct link_info *info);
/* A libnl error (NLE_*, either sign) as -errno. */
int link_nle_errno(int nle);
/* Send what libnl built: built is the builder's return, *msg its message (freed here). */
int link_msg_xfer(struct link_sock *ls, int built, struct nl_msg **msg);
/*
 * A dump of one kind of object into a libnl cache ("route/addr", ...); a
 * dump the kernel reports interrupted (a change meanwhile) starts over.
 */
int link_dump_cache(struct link_sock *ls, const char *kind, uint16_t type, uint8_t family,
		    size_t hdrlen, struct nl_cache **cache);
/*
 * A dump without a cache: fn sees every object, duplicates by libnl's key
 * included. A dump the kernel reports interrupted starts over here, as
 * link_dump_cache's does, so fn may see some objects twice.
 */
int link_dump_each(struct link_sock *ls, uint16_t type, uint8_t family, size_t hdrlen,
		   void (*fn)(struct nl_object *obj, void *arg), void *arg);

#endif
