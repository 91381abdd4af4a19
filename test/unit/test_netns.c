/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "netns.h"
#include "netns_anon.h"

static char tmpfile_path[64];

static bool in_ns(int fd)
{
	int cur;
	bool same;

	if (netns_open_current(&cur))
		return false;
	same = netns_same(cur, fd);
	close(cur);
	return same;
}

static void test_same(void)
{
	int home, anon, anon2;

	CHECK_INT(netns_open_current(&home), 0);
	CHECK_INT(anon_netns(&anon), 0);
	CHECK(!netns_same(home, anon));
	CHECK(in_ns(home));
	CHECK_INT(anon_netns(&anon2), 0);
	CHECK(!netns_same(anon, anon2));
	CHECK(netns_same(anon, anon));
	CHECK(fcntl(anon, F_GETFD) & FD_CLOEXEC);
	close(anon2);
	close(anon);
	close(home);
}

static void test_enter_and_leave(void)
{
	int home, anon, saved;

	CHECK_INT(netns_open_current(&home), 0);
	CHECK_INT(anon_netns(&anon), 0);
	CHECK_INT(netns_enter(anon, &saved), 0);
	CHECK(in_ns(anon));
	CHECK(netns_same(saved, home));
	CHECK_INT(netns_leave(saved), 0);
	CHECK(in_ns(home));
	close(anon);
	close(home);
}

static void test_open_rejects_non_netns(void)
{
	int fd = -1;

	CHECK_INT(netns_open(tmpfile_path, &fd), -EINVAL);
	CHECK_INT(netns_open("/proc/self/ns/pid", &fd), -EINVAL);
	CHECK_INT(netns_open("/proc/self/ns/mnt", &fd), -EINVAL);
	CHECK_INT(netns_open("/", &fd), -EINVAL);
	CHECK_INT(netns_open("/nonexistent/netns", &fd), -ENOENT);
	CHECK_INT(netns_open("", &fd), -EINVAL);
	CHECK_INT(fd, -1);
	CHECK_INT(netns_open("/proc/self/ns/net", &fd), 0);
	CHECK(fd >= 0 && in_ns(fd));
	close(fd);
}

static void test_alive(void)
{
	char path[64];
	int ready[2];
	pid_t pid;
	char c;

	CHECK(netns_alive("/proc/self/ns/net"));
	CHECK(!netns_alive(tmpfile_path));
	CHECK(!netns_alive("/nonexistent"));

	/* A "pod" with its own namespace: alive while it runs, gone once reaped. */
	CHECK_INT(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		if (unshare(CLONE_NEWNET) < 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	CHECK(netns_alive(path));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(!netns_alive(path));
}

int main(void)
{
	int fd, ret;

	if (geteuid() != 0) {
		printf("SKIP: needs root\n");
		return 77;
	}
	/* Everything below happens in a namespace of our own, never the host's. */
	if (unshare(CLONE_NEWNET) < 0) {
		printf("SKIP: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return 77;
	}
	snprintf(tmpfile_path, sizeof(tmpfile_path), "/tmp/test_netns.XXXXXX");
	fd = mkstemp(tmpfile_path);
	if (fd < 0)
		return 1;
	close(fd);
	RUN(test_same);
	RUN(test_enter_and_leave);
	RUN(test_open_rejects_non_netns);
	RUN(test_alive);
	ret = check_summary();
	unlink(tmpfile_path);
	return ret;
}
