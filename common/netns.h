/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netns: network namespaces by path and by fd.
 *
 * A path is accepted only if it opens to a namespace file (nsfs), so a
 * config can never make us setns() into, or bind state to, an arbitrary
 * file. The process is single-threaded, so setns() switches the whole
 * plugin; sockets opened inside a namespace stay bound to it after we leave.
 */
#ifndef NETNS_H
#define NETNS_H

#include <stdbool.h>
#include <sys/types.h>

/* Open a netns path O_RDONLY|O_CLOEXEC: -ENOENT missing, -EINVAL not a netns file. */
int netns_open(const char *path, int *fd);
/* The current namespace (/proc/self/ns/net). */
int netns_open_current(int *fd);
/* setns() into fd, returning the namespace we came from in *saved. */
int netns_enter(int fd, int *saved);
/* setns() back into saved and close it. */
int netns_leave(int saved);
/* Same namespace? (device + inode of the nsfs files) */
bool netns_same(int fd_a, int fd_b);
/* Does the path still name a live namespace? */
bool netns_alive(const char *path);

#endif
