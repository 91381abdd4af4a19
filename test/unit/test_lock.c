/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "lock.h"

static char root[64];
static int rootfd;

struct holder {
	pid_t pid;
	int release;		/* write end: closing it lets the child release and exit */
};

/* A child process that holds the lock on name until told to let go. */
static struct holder hold(const char *name)
{
	int ready[2], go[2];
	struct holder h = { -1, -1 };
	char c;

	if (pipe(ready) || pipe(go))
		return h;
	fflush(stdout);
	h.pid = fork();
	if (h.pid == 0) {
		int fd = lock_take(rootfd, name, 0);

		close(ready[0]);
		close(go[1]);
		if (fd < 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		/* Blocks until the parent closes its end. */
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1)
		h.pid = -1;
	close(ready[0]);
	h.release = go[1];
	return h;
}

static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_uncontended(void)
{
	struct stat st;
	int fd = lock_take(rootfd, "free.lock", 1000);

	CHECK(fd >= 0);
	CHECK_INT(fstat(fd, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	/* A delegated plugin must not inherit our lock. */
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	lock_release(fd);
	lock_release(-1);
}

static void test_timeout_while_held(void)
{
	struct holder h = hold("held.lock");

	CHECK(h.pid > 0);
	CHECK_INT(lock_take(rootfd, "held.lock", 0), -ETIMEDOUT);
	CHECK_INT(lock_take(rootfd, "held.lock", 50), -ETIMEDOUT);
	/* Another file is another lock. */
	int other = lock_take(rootfd, "other.lock", 0);

	CHECK(other >= 0);
	lock_release(other);
	close(h.release);
	CHECK_INT(reap(h.pid), 0);
}

static void test_waiter_gets_released_lock(void)
{
	struct holder h = hold("handoff.lock");
	pid_t releaser;
	int fd;

	CHECK(h.pid > 0);
	/* Let go only once we are (very likely) already blocked in lock_take. */
	fflush(stdout);
	releaser = fork();
	if (releaser == 0) {
		usleep(100000);
		close(h.release);
		_exit(0);
	}
	close(h.release);
	fd = lock_take(rootfd, "handoff.lock", 60000);
	CHECK(fd >= 0);
	CHECK_INT(reap(releaser), 0);
	CHECK_INT(reap(h.pid), 0);
	lock_release(fd);
}

/* Whether /proc/locks lists a waiter ("->") for the file of inode ino. */
static int waiter_listed(unsigned long ino)
{
	char line[256], tail[32];
	int found = 0;
	FILE *f;

	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	snprintf(tail, sizeof(tail), ":%lu ", ino);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "->") && strstr(line, tail);
	fclose(f);
	return found;
}

/*
 * The time waited is reported when the lock was held, and nothing is added
 * when it was free. The holder lets go only once the kernel lists us as
 * waiting: no guess at how long the machine takes to get there.
 */
static void test_waited_is_reported(void)
{
	struct holder h = hold("waited.lock");
	double waited = 0;
	struct stat st;
	pid_t releaser;
	int fd, i;

	CHECK(h.pid > 0);
	CHECK_INT(fstatat(rootfd, "waited.lock", &st, 0), 0);
	fflush(stdout);
	releaser = fork();
	if (releaser == 0) {
		/* A hang guard of ten minutes, not a bound on the machine's speed. */
		for (i = 0; i < 600000 && !waiter_listed((unsigned long)st.st_ino); i++)
			usleep(1000);
		close(h.release);
		_exit(0);
	}
	close(h.release);
	fd = lock_take_waited(rootfd, "waited.lock", 3600000, &waited);
	CHECK(fd >= 0);
	CHECK(waited > 0);
	CHECK_INT(reap(releaser), 0);
	CHECK_INT(reap(h.pid), 0);
	lock_release(fd);
	/* Free now: nothing is added to what the caller had. */
	waited = 7;
	fd = lock_take_waited(rootfd, "waited.lock", 1000, &waited);
	CHECK(fd >= 0);
	CHECK(waited == 7);
	lock_release(fd);
}

static void test_killed_holder_releases(void)
{
	struct holder h = hold("killed.lock");
	int fd;

	CHECK(h.pid > 0);
	kill(h.pid, SIGKILL);
	CHECK_INT(reap(h.pid), 128 + SIGKILL);
	close(h.release);
	fd = lock_take(rootfd, "killed.lock", 0);
	CHECK(fd >= 0);
	lock_release(fd);
}

static volatile sig_atomic_t caller_alarms;

static void caller_handler(int sig)
{
	(void)sig;
	caller_alarms++;
}

static void test_restores_caller_alarm(void)
{
	struct sigaction sa = { .sa_handler = caller_handler }, now;
	struct itimerval it = { .it_value = { .tv_sec = 100 } }, left;
	struct holder h = hold("alarm.lock");

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK_INT(lock_take(rootfd, "alarm.lock", 20), -ETIMEDOUT);
	sigaction(SIGALRM, NULL, &now);
	CHECK(now.sa_handler == caller_handler);
	getitimer(ITIMER_REAL, &left);
	CHECK(left.it_value.tv_sec > 0 && left.it_value.tv_sec <= 100);
	CHECK_INT(caller_alarms, 0);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	close(h.release);
	CHECK_INT(reap(h.pid), 0);
}

static void test_bad_names(void)
{
	CHECK_INT(lock_take(rootfd, "../x.lock", 0), -EINVAL);
	CHECK_INT(lock_take(rootfd, "a/b", 0), -EINVAL);
	CHECK_INT(lock_take(rootfd, "", 0), -EINVAL);
	CHECK_INT(symlinkat("/etc/passwd", rootfd, "evil.lock"), 0);
	CHECK_INT(lock_take(rootfd, "evil.lock", 0), -ELOOP);
}

int main(void)
{
	char cmd[128];
	int ret;

	snprintf(root, sizeof(root), "/tmp/test_lock.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	RUN(test_uncontended);
	RUN(test_timeout_while_held);
	RUN(test_waiter_gets_released_lock);
	RUN(test_waited_is_reported);
	RUN(test_killed_holder_releases);
	RUN(test_restores_caller_alarm);
	RUN(test_bad_names);
	ret = check_summary();
	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return ret;
}
