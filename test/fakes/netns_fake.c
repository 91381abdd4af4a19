/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The namespace switch with a fault point, for tests of what a plugin does
 * when it cannot return from a pod's namespace (a kernel refuses it to a
 * caller that lost CAP_SYS_ADMIN over the host's, or runs out of memory).
 * Its files, in the directory SRIOV_RDMA_NETNS_FAKE_DIR names:
 *
 *   <dir>/fail_return  optional, a number N: the Nth return of each
 *                      process (counting from 1) fails with EPERM and the
 *                      process stays where it was, as after the kernel's
 *                      refusal. Every other switch is a real setns(2).
 *   <dir>/netns.calls  appended, one line per return: "<pid> return <n>",
 *                      or "<pid> return <n> refused" for the failed one.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fakes.h"
#include "netns.h"

static const char *fake_dir;
static long fail_at;
static long returns;

static void record(const char *line)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/netns.calls", fake_dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	/* One write per line: processes appending at once never interleave. */
	(void)!write(fd, line, strlen(line));
	close(fd);
}

static int fake_set(int fd, bool back)
{
	char line[96];

	if (back) {
		returns++;
		snprintf(line, sizeof(line), "%d return %ld%s\n", (int)getpid(), returns,
			 returns == fail_at ? " refused" : "");
		record(line);
		if (returns == fail_at)
			return -EPERM;
	}
	return setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
}

static const struct netns_backend fake_backend = { .set = fake_set };

void netns_fake_use(const char *dir)
{
	char path[4096], buf[32];
	ssize_t n;
	int fd;

	fake_dir = dir;
	fail_at = 0;
	returns = 0;
	netns_set_backend(dir ? &fake_backend : NULL);
	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/fail_return", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		fail_at = strtol(buf, NULL, 10);
	}
}

__attribute__((constructor)) static void netns_fake_from_env(void)
{
	const char *dir = getenv(NETNS_FAKE_ENV);

	if (dir && dir[0])
		netns_fake_use(dir);
}
