/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node benchmarks' probe (scripts/bench-sriov-rdma, scripts/bench-igb-node):
 * another netlink user of the node, as kubelet, the cluster CNI or a
 * routing daemon. Every PERIOD_US it sends a fresh RTM_GETLINK for lo by
 * index (a request for one link takes RTNL; a dump may not) and waits for
 * the answer; until SIGTERM, one line per round trip: the wall clock at its
 * start (us, as EPOCHREALTIME) and how long it took (ns).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static long long now_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* probe OUT [PERIOD_US] */
int main(int argc, char **argv)
{
	struct { struct nlmsghdr nh; struct ifinfomsg ifi; } req;
	static char buf[65536];
	struct sigaction sa;
	struct timespec next;
	long period = argc > 2 ? atol(argv[2]) : 500;
	unsigned seq = 0;
	FILE *out;
	int fd;

	if (argc < 2 || period <= 0 || !(out = fopen(argv[1], "w")))
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		long long wall, t0, t1;
		int done = 0;

		memset(&req, 0, sizeof(req));
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
		req.nh.nlmsg_type = RTM_GETLINK;
		req.nh.nlmsg_flags = NLM_F_REQUEST;
		req.nh.nlmsg_seq = ++seq;
		req.ifi.ifi_family = AF_UNSPEC;
		req.ifi.ifi_index = 1;
		wall = now_ns(CLOCK_REALTIME);
		t0 = now_ns(CLOCK_MONOTONIC);
		if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
			return 1;
		while (!done) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);
			struct nlmsghdr *nh = (struct nlmsghdr *)buf;

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return 1;
			for (; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n))
				if (nh->nlmsg_seq == seq)
					done = 1;
		}
		t1 = now_ns(CLOCK_MONOTONIC);
		fprintf(out, "%lld %lld\n", wall / 1000, t1 - t0);
		/* The next slot; one missed while waiting is not made up. */
		next.tv_nsec += period * 1000;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		if (now_ns(CLOCK_MONOTONIC) > next.tv_sec * 1000000000LL + next.tv_nsec)
			clock_gettime(CLOCK_MONOTONIC, &next);
		else
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return fclose(out) ? 1 : 0;
}
