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
#include <stdint.h>
#include <sys/types.h>

/*
 * A namespace's identity: the device and inode of its nsfs file, which no
 * other namespace has while it lives. Kept beside a path, which a runtime
 * may bind to another namespace once the first is gone. {0, 0}: not known
 * (what an older version recorded).
 */
struct netns_id {
	uint64_t dev;
	uint64_t ino;
};
/* The largest dev or ino a state file keeps: its numbers are JSON's, doubles. */
#define NETNS_ID_MAX	9007199254740992.0

/* Open a netns path O_RDONLY|O_CLOEXEC: -ENOENT missing, -EINVAL not a netns file. */
int netns_open(const char *path, int *fd);
/*
 * netns_open, then -ESTALE (nothing opened) when id is known (may be NULL)
 * and path names another namespace than the one id was taken from.
 */
int netns_open_id(const char *path, const struct netns_id *id, int *fd);
int netns_id_of(int fd, struct netns_id *id);
bool netns_id_known(const struct netns_id *id);
/* The current namespace (/proc/self/ns/net). */
int netns_open_current(int *fd);
/*
 * Run fn(arg) inside the namespace fd and come back, as containernetworking's
 * ns.Do: fn's result, or -errno when fd cannot be entered (fn did not run).
 * When the way back fails, the process stays in fd's namespace, where every
 * later "host" socket would open: that is logged once, this and every later
 * netns_do return netns_stranded()'s error, and the caller must stop.
 */
int netns_do(int fd, int (*fn)(void *arg), void *arg);
/* 0, or the -errno of the failed return that left the process in another namespace. */
int netns_stranded(void);
/* Same namespace? (device + inode of the nsfs files) */
bool netns_same(int fd_a, int fd_b);
/* Does the path still name a live namespace (the one of id, when known)? */
bool netns_alive(const char *path, const struct netns_id *id);
/*
 * Does any process (any of its threads) of proc_root (a procfs, "/proc" or
 * a test's model of one) live in the namespace at path (the one of id,
 * when known)? 1 with *pid one of them, 0 none, -ENOENT when path is not
 * that namespace or proc_root lists no process at all, -errno when
 * proc_root cannot be read.
 */
int netns_find_process(const char *proc_root, const char *path, const struct netns_id *id,
		       pid_t *pid);

/*
 * How a switch reaches the kernel: setns(2), unless a test build registers
 * a stand-in (test/fakes/netns_fake.c) that makes a switch fail. back: the
 * switch returns to the namespace netns_do was called from.
 */
struct netns_backend {
	int (*set)(int fd, bool back);	/* 0 or -errno */
};
/* NULL: setns(2). */
void netns_set_backend(const struct netns_backend *b);

#endif
