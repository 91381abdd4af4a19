/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/nsfs.h>

#include "netns.h"

int netns_open(const char *path, int *fd)
{
	struct statfs sfs;
	int nfd, type;

	if (!path || !*path)
		return -EINVAL;
	nfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (nfd < 0)
		return -errno;
	if (fstatfs(nfd, &sfs) < 0 || sfs.f_type != NSFS_MAGIC)
		goto not_netns;
	/* nsfs also holds pid, mount, user... namespaces; kernels before 4.11 cannot tell. */
	type = ioctl(nfd, NS_GET_NSTYPE);
	if (type >= 0 && type != CLONE_NEWNET)
		goto not_netns;
	if (type < 0 && errno != ENOTTY && errno != EINVAL)
		goto not_netns;
	*fd = nfd;
	return 0;
not_netns:
	close(nfd);
	return -EINVAL;
}

int netns_open_current(int *fd)
{
	int nfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (nfd < 0)
		return -errno;
	*fd = nfd;
	return 0;
}

int netns_enter(int fd, int *saved)
{
	int cur = -1, r;

	r = netns_open_current(&cur);
	if (r)
		return r;
	if (setns(fd, CLONE_NEWNET) < 0) {
		r = -errno;
		close(cur);
		return r;
	}
	*saved = cur;
	return 0;
}

int netns_leave(int saved)
{
	int r = 0;

	if (setns(saved, CLONE_NEWNET) < 0)
		r = -errno;
	close(saved);
	return r;
}

bool netns_same(int fd_a, int fd_b)
{
	struct stat a, b;

	if (fstat(fd_a, &a) < 0 || fstat(fd_b, &b) < 0)
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool netns_alive(const char *path)
{
	int fd;

	if (netns_open(path, &fd))
		return false;
	close(fd);
	return true;
}
