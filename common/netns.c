/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
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

int netns_id_of(int fd, struct netns_id *id)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

bool netns_id_known(const struct netns_id *id)
{
	return id && (id->dev || id->ino);
}

int netns_open_id(const char *path, const struct netns_id *id, int *fd)
{
	struct netns_id now;
	int nfd = -1, ret;

	ret = netns_open(path, &nfd);
	if (ret < 0 || !netns_id_known(id))
		goto out;
	ret = netns_id_of(nfd, &now);
	if (ret == 0 && (now.dev != id->dev || now.ino != id->ino))
		ret = -ESTALE;
	if (ret < 0)
		close(nfd);
out:
	if (ret == 0)
		*fd = nfd;
	return ret;
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

bool netns_alive(const char *path, const struct netns_id *id)
{
	int fd;

	if (netns_open_id(path, id, &fd))
		return false;
	close(fd);
	return true;
}

/* A thread's namespace: 1 when it is `ns`, 0 otherwise (a thread that exited meanwhile too). */
static int thread_in(int task_fd, const char *tid, const struct stat *ns)
{
	char path[sizeof(((struct dirent *)0)->d_name) + 8];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ns/net", tid);
	if (fstatat(task_fd, path, &st, 0) < 0)
		return 0;
	return st.st_dev == ns->st_dev && st.st_ino == ns->st_ino;
}

/*
 * Every thread of process pid, since a thread may enter a namespace on its
 * own (setns(2) is per thread); a procfs model without task/ has its
 * <pid>/ns/net alone.
 */
static int process_in(int proc_fd, const char *pid, const struct stat *ns)
{
	int pid_fd, task_fd, found = 0;
	struct dirent *de;
	DIR *d;

	pid_fd = openat(proc_fd, pid, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pid_fd < 0)
		return 0;
	task_fd = openat(pid_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (task_fd < 0) {
		found = thread_in(pid_fd, ".", ns);
		close(pid_fd);
		return found;
	}
	close(pid_fd);
	d = fdopendir(task_fd);
	if (!d) {
		close(task_fd);
		return 0;
	}
	while (!found && (de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			found = thread_in(task_fd, de->d_name, ns);
	closedir(d);
	return found;
}

int netns_find_process(const char *proc_root, const char *path, const struct netns_id *id,
		       pid_t *pid)
{
	int fd, proc_fd, seen = 0, found = 0;
	struct dirent *de;
	struct stat ns;
	char *end;
	DIR *d;

	*pid = 0;
	if (netns_open_id(path, id, &fd) < 0)
		return -ENOENT;
	if (fstat(fd, &ns) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	proc_fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0)
		return -errno;
	d = fdopendir(proc_fd);
	if (!d) {
		close(proc_fd);
		return -errno;
	}
	while (!found && (de = readdir(d))) {
		long n = strtol(de->d_name, &end, 10);

		if (*end || n <= 0 || de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		seen++;
		if (process_in(dirfd(d), de->d_name, &ns)) {
			*pid = (pid_t)n;
			found = 1;
		}
	}
	closedir(d);
	/* A procfs that lists no process at all is not one: it cannot say "nobody". */
	return found ? 1 : seen ? 0 : -ENOENT;
}
