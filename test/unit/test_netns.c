/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "netns.h"
#include "netns_anon.h"
#include "nlio.h"

static char tmpfile_path[64];
static int fd_not_netns = -1;

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

struct inside {
	int want;	/* the namespace fn must run in */
	int runs;
	bool was_in;
	int ret;
};

static int note_inside(void *arg)
{
	struct inside *in = arg;

	in->runs++;
	in->was_in = in_ns(in->want);
	return in->ret;
}

static void test_do_runs_inside_and_returns(void)
{
	int home, anon;
	struct inside in = { .ret = 0 };

	CHECK_INT(netns_open_current(&home), 0);
	CHECK_INT(anon_netns(&anon), 0);
	in.want = anon;
	CHECK_INT(netns_do(anon, note_inside, &in), 0);
	CHECK_INT(in.runs, 1);
	CHECK(in.was_in);
	CHECK(in_ns(home));
	/* fn's error is the caller's, and the way back is taken all the same. */
	in.ret = -ENOSPC;
	CHECK_INT(netns_do(anon, note_inside, &in), -ENOSPC);
	CHECK(in_ns(home));
	/* A file that is no namespace is not entered, and fn does not run. */
	in.runs = 0;
	fd_not_netns = open(tmpfile_path, O_RDONLY);
	CHECK_INT(netns_do(fd_not_netns, note_inside, &in), -EINVAL);
	CHECK_INT(in.runs, 0);
	CHECK(in_ns(home));
	CHECK_INT(netns_stranded(), 0);
	close(fd_not_netns);
	close(anon);
	close(home);
}

/* The way back refused, as a kernel refuses it (EPERM) to a caller that lost the right. */
static int set_no_return(int fd, bool back)
{
	if (back)
		return -EPERM;
	return setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
}

static const struct netns_backend no_return = { .set = set_no_return };

static int count_lines(const char *path, const char *needle)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* Run fn in a child: being stranded is for good, and the rest of the tests need home. */
static void in_child(void (*fn)(void))
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		check_failed_now = 0;
		fn();
		fflush(stderr);
		_exit(check_failed_now);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void stranded_stops_everything(void)
{
	char logpath[] = "/tmp/test_netns_log.XXXXXX";
	struct inside in = { .ret = 0 };
	struct nlio *s = NULL;
	int home, anon, fd, tmpfd;

	fd = mkstemp(logpath);
	CHECK(fd >= 0);
	close(fd);
	log_init("test_netns");
	tmpfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK_INT(log_set_file_at(tmpfd, logpath + strlen("/tmp/")), 0);
	close(tmpfd);
	CHECK_INT(netns_open_current(&home), 0);
	CHECK_INT(anon_netns(&anon), 0);
	netns_set_backend(&no_return);
	in.want = anon;
	CHECK_INT(netns_do(anon, note_inside, &in), -EPERM);
	CHECK_INT(in.runs, 1);
	CHECK_INT(netns_stranded(), -EPERM);
	CHECK(in_ns(anon));
	/* Nothing more runs: not in another namespace, and no "host" socket opens here. */
	CHECK_INT(netns_do(home, note_inside, &in), -EPERM);
	CHECK_INT(in.runs, 1);
	CHECK_INT(nlio_open(NETLINK_ROUTE, &s), -EPERM);
	CHECK(s == NULL);
	CHECK_INT(nlio_open_in(NETLINK_ROUTE, anon, &s), -EPERM);
	CHECK(s == NULL);
	log_close();
	CHECK_INT(count_lines(logpath, "cannot return to the host network namespace"), 1);
	unlink(logpath);
}

static void test_do_failed_return_is_final(void)
{
	in_child(stranded_stops_everything);
}

/* A "pod": a child in a network namespace of its own, waiting to be killed. */
static pid_t fork_in_own_netns(void)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready) < 0)
		return -1;
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
	if (pid > 0 && read(ready[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

/*
 * The kernel's own refusal: a process whose privileges are those of a user
 * namespace of its own may enter a namespace that user namespace owns, and
 * not come back to one of the host's.
 */
static void kernel_refuses_return(void)
{
	struct inside in = { .ret = 0 };
	int ready[2], pod, cur;
	char path[64], c;
	pid_t pid;

	if (unshare(CLONE_NEWUSER) < 0) {
		fprintf(stderr, "  no user namespaces (%s): the kernel's refusal is not tried\n",
			strerror(errno));
		return;
	}
	CHECK_INT(pipe(ready), 0);
	pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) < 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(read(ready[0], &c, 1) == 1);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	CHECK_INT(netns_open(path, &pod), 0);
	in.want = pod;
	CHECK(netns_do(pod, note_inside, &in) < 0);
	CHECK_INT(in.runs, 1);
	CHECK(in.was_in);
	CHECK(netns_stranded() < 0);
	CHECK_INT(netns_open_current(&cur), 0);
	CHECK(netns_same(cur, pod));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_do_kernel_refuses_return(void)
{
	in_child(kernel_refuses_return);
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
	pid_t pid;

	CHECK(netns_alive("/proc/self/ns/net", NULL));
	CHECK(!netns_alive(tmpfile_path, NULL));
	CHECK(!netns_alive("/nonexistent", NULL));

	/* A "pod" with its own namespace: alive while it runs, gone once reaped. */
	pid = fork_in_own_netns();
	CHECK(pid > 0);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	CHECK(netns_alive(path, NULL));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(!netns_alive(path, NULL));
}

/*
 * A path outlives its namespace: bound to another one since, it is not
 * the namespace its id was taken from (a runtime's netns path reused).
 */
static void test_id(void)
{
	char path[128], target[64];
	struct netns_id a, none = { 0 };
	pid_t pa, pb, found;
	int fd;

	pa = fork_in_own_netns();
	pb = fork_in_own_netns();
	CHECK(pa > 0 && pb > 0);
	snprintf(path, sizeof(path), "%s.ns", tmpfile_path);
	snprintf(target, sizeof(target), "/proc/%d/ns/net", (int)pa);
	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(netns_open(path, &fd), 0);
	CHECK_INT(netns_id_of(fd, &a), 0);
	close(fd);
	CHECK(netns_id_known(&a));
	CHECK(!netns_id_known(&none));
	CHECK(!netns_id_known(NULL));
	CHECK_INT(netns_open_id(path, &a, &fd), 0);
	close(fd);
	CHECK(netns_alive(path, &a));
	CHECK_INT(netns_find_process("/proc", path, &a, &found), 1);
	CHECK_INT(found, pa);

	/* The path now names pod b's namespace. */
	unlink(path);
	snprintf(target, sizeof(target), "/proc/%d/ns/net", (int)pb);
	CHECK_INT(symlink(target, path), 0);
	fd = -1;
	CHECK_INT(netns_open_id(path, &a, &fd), -ESTALE);
	CHECK_INT(fd, -1);
	CHECK(!netns_alive(path, &a));
	CHECK_INT(netns_find_process("/proc", path, &a, &found), -ENOENT);
	/* Without an id (an older record), the path is all there is. */
	CHECK_INT(netns_open_id(path, &none, &fd), 0);
	close(fd);
	CHECK(netns_alive(path, NULL));
	CHECK_INT(netns_find_process("/proc", path, NULL, &found), 1);
	CHECK_INT(found, pb);
	unlink(path);
	kill(pa, SIGKILL);
	kill(pb, SIGKILL);
	waitpid(pa, NULL, 0);
	waitpid(pb, NULL, 0);
}

/*
 * Who lives in a namespace: a process in it, found through the real /proc
 * and through a model of one; nobody once it is gone; a procfs that lists
 * no process cannot say "nobody".
 */
static void test_find_process(void)
{
	char path[64], model[128], link[256], cmd[300];
	pid_t pid, found;
	int pin;

	CHECK_INT(netns_find_process("/proc", "/proc/self/ns/net", NULL, &found), 1);
	CHECK_INT(netns_find_process("/proc", tmpfile_path, NULL, &found), -ENOENT);
	pid = fork_in_own_netns();
	CHECK(pid > 0);
	/* Pinned, as a runtime pins it, so the namespace outlives the process. */
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	pin = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(pin >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pin);
	CHECK_INT(netns_find_process("/proc", path, NULL, &found), 1);
	CHECK_INT(found, pid);

	snprintf(model, sizeof(model), "%s.proc", tmpfile_path);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/42/ns", model);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(netns_find_process(model, path, NULL, &found), 0);
	snprintf(link, sizeof(link), "%s/42/ns/net", model);
	snprintf(cmd, sizeof(cmd), "/proc/%d/ns/net", (int)getpid());
	CHECK_INT(symlink(cmd, link), 0);
	CHECK_INT(netns_find_process(model, "/proc/self/ns/net", NULL, &found), 1);
	CHECK_INT(found, 42);
	CHECK_INT(netns_find_process(model, path, NULL, &found), 0);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK_INT(netns_find_process("/proc", path, NULL, &found), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", model);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(mkdir(model, 0700), 0);
	CHECK_INT(netns_find_process(model, path, NULL, &found), -ENOENT);
	rmdir(model);
	close(pin);
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
	RUN(test_do_runs_inside_and_returns);
	RUN(test_do_failed_return_is_final);
	RUN(test_do_kernel_refuses_return);
	RUN(test_open_rejects_non_netns);
	RUN(test_alive);
	RUN(test_id);
	RUN(test_find_process);
	ret = check_summary();
	unlink(tmpfile_path);
	return ret;
}
