/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"

static volatile sig_atomic_t lock_deadline_hit;

static void on_alarm(int sig)
{
	(void)sig;
	lock_deadline_hit = 1;
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long long tv_us(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000 + tv->tv_usec;
}

static struct timeval us_tv(long long us)
{
	return (struct timeval){ .tv_sec = us / 1000000, .tv_usec = us % 1000000 };
}

/*
 * Block in flock() until the holder lets go or SIGALRM interrupts it: the
 * waiter wakes the instant the lock is free. The timer repeats after the
 * deadline so an alarm landing between the check and flock() cannot leave
 * us blocked forever. The caller's SIGALRM handler, mask and timer are
 * restored, the timer minus the time we spent.
 */
static int wait_lock(int fd, unsigned timeout_ms)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old_sa;
	struct itimerval it = { 0 }, old_it, off = { 0 };
	sigset_t alrm, old_mask;
	long long start = now_us(), left;
	int r = 0;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	lock_deadline_hit = 0;
	if (sigaction(SIGALRM, &sa, &old_sa) < 0)
		return -errno;
	sigprocmask(SIG_UNBLOCK, &alrm, &old_mask);
	it.it_value = us_tv((long long)timeout_ms * 1000);
	it.it_interval = us_tv(10000);
	if (setitimer(ITIMER_REAL, &it, &old_it) < 0) {
		r = -errno;
		goto out_restore;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			r = -errno;
			break;
		}
		if (lock_deadline_hit) {
			r = -ETIMEDOUT;
			break;
		}
	}
	setitimer(ITIMER_REAL, &off, NULL);
	if (timerisset(&old_it.it_value)) {
		left = tv_us(&old_it.it_value) - (now_us() - start);
		/* The caller's timer expired while we waited: it fires right away. */
		old_it.it_value = us_tv(left > 0 ? left : 1);
		setitimer(ITIMER_REAL, &old_it, NULL);
	}
out_restore:
	sigaction(SIGALRM, &old_sa, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return r;
}

int lock_take_waited(int dirfd, const char *name, unsigned timeout_ms, double *waited_ms)
{
	long long start;
	int fd, r;

	if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return -EINVAL;
	fd = openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	r = errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
	if (r == -ETIMEDOUT && timeout_ms > 0) {
		start = now_us();
		r = wait_lock(fd, timeout_ms);
		if (waited_ms)
			*waited_ms += (double)(now_us() - start) / 1000.0;
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int lock_take(int dirfd, const char *name, unsigned timeout_ms)
{
	return lock_take_waited(dirfd, name, timeout_ms, NULL);
}

void lock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}
