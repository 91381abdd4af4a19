/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nlio: the reply decoder on built buffers, and the request loop against
 * the kernel's rtnetlink (sharing per namespace, errors with their
 * extended ACK text, dumps, leftovers of a request that stopped early).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "check.h"
#include "log.h"
#include "netns.h"
#include "netns_anon.h"
#include "nlio.h"

#define SEQ 77
#define PORT 4242

static struct nlmsghdr *put_msg(char *buf, size_t *off, uint16_t type, uint16_t flags,
				uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + *off);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = PORT;
	return nlh;
}

static void put_err(char *buf, size_t *off, int error, uint32_t seq)
{
	struct nlmsghdr *nlh = put_msg(buf, off, NLMSG_ERROR, 0, seq);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	e->error = error;
	e->msg.nlmsg_len = sizeof(e->msg);
	e->msg.nlmsg_seq = seq;
	*off += nlh->nlmsg_len;
}

static void put_done(char *buf, size_t *off, int32_t error)
{
	struct nlmsghdr *nlh = put_msg(buf, off, NLMSG_DONE, NLM_F_MULTI, SEQ);

	memcpy(mnl_nlmsg_put_extra_header(nlh, sizeof(error)), &error, sizeof(error));
	*off += nlh->nlmsg_len;
}

static void put_link(char *buf, size_t *off, int ifindex)
{
	struct nlmsghdr *nlh = put_msg(buf, off, RTM_NEWLINK, NLM_F_MULTI, SEQ);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_index = ifindex;
	*off += nlh->nlmsg_len;
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(int *)data)++;
	return MNL_CB_OK;
}

static void test_run_buffers(void)
{
	char buf[1024];
	size_t off;
	int n;

	memset(buf, 0, sizeof(buf));
	off = 0;
	put_err(buf, &off, 0, SEQ);
	CHECK_INT(nlio_run(buf, off, SEQ, PORT, NULL, NULL), 0);

	off = 0;
	put_err(buf, &off, -EEXIST, SEQ);
	CHECK_INT(nlio_run(buf, off, SEQ, PORT, NULL, NULL), -EEXIST);

	/* A dump: messages, then NLMSG_DONE; without it more is to come. */
	off = 0;
	n = 0;
	put_link(buf, &off, 1);
	put_link(buf, &off, 2);
	CHECK_INT(nlio_run(buf, off, SEQ, PORT, count_cb, &n), 1);
	CHECK_INT(n, 2);
	put_done(buf, &off, 0);
	n = 0;
	CHECK_INT(nlio_run(buf, off, SEQ, PORT, count_cb, &n), 0);
	CHECK_INT(n, 2);

	/* A dump that failed once started says so in its NLMSG_DONE. */
	off = 0;
	put_link(buf, &off, 1);
	put_done(buf, &off, -EBUSY);
	CHECK_INT(nlio_run(buf, off, SEQ, PORT, NULL, NULL), -EBUSY);

	/* Replies to another request are not these. */
	off = 0;
	put_err(buf, &off, 0, SEQ + 1);
	CHECK(nlio_run(buf, off, SEQ, PORT, NULL, NULL) < 0);
}

static struct nlmsghdr *getlink(char *buf, int ifindex, const char *name, uint16_t flags)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	memset(buf, 0, MNL_SOCKET_BUFFER_SIZE);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static int stop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(int *)data)++;
	return MNL_CB_STOP;
}

static void test_kernel(void)
{
	char *buf = calloc(1, MNL_SOCKET_BUFFER_SIZE);
	struct nlio *a = NULL, *b = NULL, *pod = NULL;
	struct nlmsghdr *nlh;
	struct nlattr *li;
	char logpath[] = "/tmp/test_nlio.XXXXXX", logtext[1024];
	int nsfd = -1, logfd, tmpfd, n;

	CHECK(buf);
	if (!buf)
		return;
	CHECK_INT(nlio_open(NETLINK_ROUTE, &a), 0);
	CHECK_INT(nlio_open(NETLINK_ROUTE, &b), 0);
	CHECK(a && a == b);			/* one socket per namespace */
	CHECK_INT(anon_netns(&nsfd), 0);
	CHECK_INT(nlio_open_in(NETLINK_ROUTE, nsfd, &pod), 0);
	CHECK(pod && pod != a);
	if (!a || !pod)
		goto out;

	n = 0;
	CHECK_INT(nlio_talk(a, getlink(buf, 1, NULL, 0), count_cb, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(nlio_talk(pod, getlink(buf, 0, "no-such-link0", 0), NULL, NULL), -ENODEV);

	/* A dump stopped after its first message, then a request whose replies follow the rest. */
	n = 0;
	CHECK_INT(nlio_talk(pod, getlink(buf, 0, NULL, NLM_F_DUMP), stop_cb, &n), 0);
	CHECK_INT(n, 1);
	n = 0;
	CHECK_INT(nlio_talk(pod, getlink(buf, 1, NULL, 0), count_cb, &n), 0);
	CHECK_INT(n, 1);

	/* The kernel's reason comes with the error, in the debug log; a success logs nothing. */
	log_init("test_nlio");
	log_set_level(LOG_LVL_DEBUG);
	logfd = mkstemp(logpath);
	CHECK(logfd >= 0);
	tmpfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK_INT(log_set_file_at(tmpfd, logpath + strlen("/tmp/")), 0);
	close(tmpfd);
	nlh = getlink(buf, 0, "nlio0", NLM_F_CREATE | NLM_F_EXCL);
	nlh->nlmsg_type = RTM_NEWLINK;
	li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "no-such-kind");
	mnl_attr_nest_end(nlh, li);
	CHECK(nlio_talk(pod, nlh, NULL, NULL) < 0);
	CHECK_INT(nlio_talk(pod, getlink(buf, 1, NULL, 0), NULL, NULL), 0);
	log_close();
	n = logfd >= 0 ? (int)pread(logfd, logtext, sizeof(logtext) - 1, 0) : -1;
	logtext[n > 0 ? n : 0] = '\0';
	CHECK(n > 0);
	CHECK(strstr(logtext, "DEBUG") && strstr(logtext, "netlink: "));
	/* One line: the failure's. */
	CHECK(n > 0 && strchr(logtext, '\n') == logtext + n - 1);
	if (logfd >= 0) {
		close(logfd);
		unlink(logpath);
	}
out:
	nlio_close(pod);
	nlio_close(b);
	nlio_close(a);
	if (nsfd >= 0)
		close(nsfd);
	free(buf);
}

int main(void)
{
	RUN(test_run_buffers);
	RUN(test_kernel);
	return check_summary();
}
