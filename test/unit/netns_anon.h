/* SPDX-License-Identifier: Apache-2.0 */
/* A throwaway network namespace for the tests that need a second one. */
#ifndef NETNS_ANON_H
#define NETNS_ANON_H

#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include "netns.h"

/*
 * A new, anonymous namespace that lives as long as *fd stays open; the
 * caller stays in its own. Needs CAP_SYS_ADMIN: 0 or -errno (*fd = -1).
 */
static inline int anon_netns(int *fd)
{
	int cur = -1, nfd = -1, r;

	*fd = -1;
	r = netns_open_current(&cur);
	if (r)
		return r;
	if (unshare(CLONE_NEWNET) < 0) {
		r = -errno;
		goto out_close;
	}
	r = netns_open_current(&nfd);
	if (setns(cur, CLONE_NEWNET) < 0 && !r)
		r = -errno;
	if (r && nfd >= 0)
		close(nfd);
	if (!r)
		*fd = nfd;
out_close:
	close(cur);
	return r;
}

#endif
