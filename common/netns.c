/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/nsfs.h>

#include "log.h"
#include "netns.h"

static int kernel_set(int fd, bool back)
{
	(void)back;
	return setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
}

static const struct netns_backend kernel_backend = { .set = kernel_set };
static const struct netns_backend *backend = &kernel_backend;
static int stranded;

void netns_set_backend(const struct netns_backend *b)
{
	backend = b ? b : &kernel_backend;
}

int netns_stranded(void)
{
	return stranded;
}

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

int netns_do(int fd, int (*fn)(void *arg), void *arg)
{
	int home, ret, back;

	/* Stranded, "home" would be the wrong namespace: nothing more runs anywhere. */
	if (stranded)
		return stranded;
	ret = netns_open_current(&home);
	if (ret)
		return ret;
	ret = backend->set(fd, false);
	if (ret == 0) {
		ret = fn(arg);
		back = backend->set(home, true);
		if (back < 0) {
			stranded = back;
			log_error("cannot return to the host network namespace: %s; "
				  "nothing more is done in this process", strerror(-back));
			ret = back;
		}
	}
	close(home);
	return ret;
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
