/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link_int: what link.c shares with link_ip.c, and nothing outside the link
 * module includes. The socket's requests are counted in one place (link.c)
 * however they are built.
 */
#ifndef LINK_INT_H
#define LINK_INT_H

#include <libmnl/libmnl.h>
#include "link.h"

/* Send req on the socket of ls, counted for link_requests (see nlio_talk). */
int link_xfer(struct link_sock *ls, struct nlmsghdr *req, mnl_cb_t cb, void *data);

#endif
