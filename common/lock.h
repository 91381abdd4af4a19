/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lock: exclusive advisory file locks (flock) with a timeout.
 *
 * Lock fds are close-on-exec, so a delegated IPAM plugin never inherits a
 * lock it could hold after we die. A lock is released when its fd closes,
 * also when the holder is SIGKILLed: no stale lock survives its owner.
 */
#ifndef LOCK_H
#define LOCK_H

/* Open (creating 0600, O_NOFOLLOW) dirfd/name and flock it LOCK_EX, waiting up to timeout_ms.
 * Returns the fd (>= 0), -ETIMEDOUT, or -errno. */
int lock_take(int dirfd, const char *name, unsigned timeout_ms);
/*
 * lock_take, adding to *waited_ms how long it waited for another holder
 * (nothing when the lock was free): what a node's attachments cost each
 * other, for the log line of the command that waited.
 */
int lock_take_waited(int dirfd, const char *name, unsigned timeout_ms, double *waited_ms);
/* Close the fd (which drops the lock); -1 is ignored. */
void lock_release(int fd);

#endif
