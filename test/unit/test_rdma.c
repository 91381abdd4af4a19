/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rdma module without an RDMA kernel: requests are compared with the
 * bytes the kernel accepted, replies recorded from Linux 6.1 with rdma_rxe
 * (test/fixtures/rdma-*.hex, captured by test/vm/rdma_probe record) go
 * through the same decoders as live ones, and the recording fake stands in
 * for a driver that can change namespace (mlx5).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "check.h"
#include "fakes.h"
#include "rdma.h"

/* A fixture: '#' lines are comments, the rest is hex. */
static size_t load_hex(const char *name, unsigned char *out, size_t cap)
{
	char path[512], line[16384];
	size_t n = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES_DIR, name);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "  cannot open %s\n", path);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		for (i = 0; line[i] && line[i + 1] && line[i] != '\n' && n < cap; i += 2) {
			unsigned v;

			if (sscanf(&line[i], "%2x", &v) != 1)
				break;
			out[n++] = (unsigned char)v;
		}
	}
	fclose(f);
	return n;
}

struct devs_seen {
	int n;
	struct rdma_dev last;
};

static int count_dev(const struct rdma_dev *dev, void *data)
{
	struct devs_seen *s = data;

	s->n++;
	s->last = *dev;
	return 0;
}

struct ports_seen {
	int n;
	struct rdma_port last;
};

static int count_port(const struct rdma_port *port, void *data)
{
	struct ports_seen *s = data;

	s->n++;
	s->last = *port;
	return 0;
}

static void test_sys_reply_says_shared(void)
{
	unsigned char buf[4096];
	size_t len = load_hex("rdma-sys-get.hex", buf, sizeof(buf));
	bool excl = true;

	CHECK(len > 0);
	CHECK_INT(rdma_parse_sys(buf, len, 1, &excl), 0);
	CHECK(!excl);
	/* A reply to another request is not ours. */
	CHECK(rdma_parse_sys(buf, len, 77, &excl) < 0);
}

static void test_dev_dump_and_get_replies(void)
{
	unsigned char buf[4096];
	size_t len = load_hex("rdma-dev-dump.hex", buf, sizeof(buf));
	struct devs_seen s = { 0 };

	CHECK_INT(rdma_parse_devs(buf, len, 2, count_dev, &s), 0);
	CHECK_INT(s.n, 1);
	CHECK_STR(s.last.name, "rxe0");
	CHECK_INT(s.last.index, 0);
	CHECK_INT(s.last.ports, 1);
	CHECK_INT(s.last.node_type, RDMA_NODE_IB_CA);
	CHECK(s.last.node_guid != 0);

	memset(&s, 0, sizeof(s));
	len = load_hex("rdma-dev-get.hex", buf, sizeof(buf));
	CHECK_INT(rdma_parse_devs(buf, len, 3, count_dev, &s), 0);
	CHECK_INT(s.n, 1);
	CHECK_STR(s.last.name, "rxe0");
	CHECK_STR(s.last.protocol, "roce");
}

static void test_port_dump_names_the_netdev(void)
{
	unsigned char buf[4096];
	size_t len = load_hex("rdma-port-dump.hex", buf, sizeof(buf));
	struct ports_seen s = { 0 };

	CHECK_INT(rdma_parse_ports(buf, len, 4, count_port, &s), 0);
	CHECK_INT(s.n, 1);
	CHECK_STR(s.last.dev_name, "rxe0");
	CHECK_INT(s.last.port, 1);
	CHECK_STR(s.last.ndev_name, "rv0");
	CHECK(s.last.ndev_index > 0);
	CHECK_INT(s.last.state, 4);
}

static void test_kernel_errors_come_back_as_errno(void)
{
	unsigned char buf[4096];
	size_t len = load_hex("rdma-port-dump-nodev.hex", buf, sizeof(buf));
	struct ports_seen s = { 0 };

	/* A failed dump ends in NLMSG_DONE carrying the error, not in success. */
	CHECK_INT(rdma_parse_ports(buf, len, 5, count_port, &s), -EINVAL);
	CHECK_INT(s.n, 0);
	len = load_hex("rdma-dev-set-netns-eopnotsupp.hex", buf, sizeof(buf));
	CHECK_INT(rdma_parse_devs(buf, len, 6, count_dev, &s), -EOPNOTSUPP);
}

static void test_malformed_attribute_is_refused(void)
{
	unsigned char buf[4096];
	size_t len = load_hex("rdma-dev-dump.hex", buf, sizeof(buf));
	struct devs_seen s = { 0 };

	/* Attributes start after the 16-byte header: DEV_INDEX (8), then DEV_NAME. */
	CHECK_INT(buf[16 + 8 + 2], RDMA_NLDEV_ATTR_DEV_NAME);
	buf[16 + 8] = 0xf0;	/* DEV_NAME's length now runs past the message */
	CHECK_INT(rdma_parse_devs(buf, len, 2, count_dev, &s), -EPROTO);
	CHECK_INT(s.n, 0);
}

static void test_set_netns_request_is_what_the_kernel_got(void)
{
	unsigned char reply[4096], req[RDMA_REQ_BUF];
	size_t len = load_hex("rdma-dev-set-netns-eopnotsupp.hex", reply, sizeof(reply));
	const struct nlmsghdr *echo = (const void *)(reply + NLMSG_HDRLEN + sizeof(int));
	struct nlmsghdr *nlh;
	uint32_t fd;

	/* The kernel's error reply echoes the request: encode the same one and compare. */
	CHECK(len >= NLMSG_HDRLEN + sizeof(int) + 32);
	memcpy(&fd, (const unsigned char *)echo + 16 + 8 + 4, sizeof(fd));
	nlh = rdma_req_dev_set_netns(req, 6, 0, (int)fd);
	CHECK_INT(nlh->nlmsg_len, echo->nlmsg_len);
	CHECK_INT(nlh->nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SET));
	CHECK(memcmp((const unsigned char *)nlh + 16, (const unsigned char *)echo + 16,
		     nlh->nlmsg_len - 16) == 0);
	CHECK_INT(nlh->nlmsg_flags, echo->nlmsg_flags);
}

static void test_set_requests_bytes(void)
{
	static const unsigned char sys_set[] = {
		0x18, 0, 0, 0,  0x07, 0x14,  0x05, 0,  9, 0, 0, 0,  0, 0, 0, 0,
		0x05, 0, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 0,  0, 0, 0, 0,
	};
	static const unsigned char rename[] = {
		0x28, 0, 0, 0,  0x02, 0x14,  0x05, 0,  10, 0, 0, 0,  0, 0, 0, 0,
		0x08, 0, RDMA_NLDEV_ATTR_DEV_INDEX, 0,  3, 0, 0, 0,
		0x0e, 0, RDMA_NLDEV_ATTR_DEV_NAME, 0,  'r', 'd', 'm', 'a', '_', 'n', 'e', 't', '1', 0, 0, 0,
	};
	unsigned char buf[RDMA_REQ_BUF];
	struct nlmsghdr *nlh;

	/* Exclusive is 0 on the wire: the attribute says "shared". */
	nlh = rdma_req_sys_set(buf, 9, true);
	CHECK_INT(nlh->nlmsg_len, sizeof(sys_set));
	CHECK(memcmp(buf, sys_set, sizeof(sys_set)) == 0);
	nlh = rdma_req_sys_set(buf, 9, false);
	CHECK_INT(buf[20], 1);
	nlh = rdma_req_dev_rename(buf, 10, 3, "rdma_net1");
	CHECK(nlh != NULL);
	CHECK_INT(nlh->nlmsg_len, sizeof(rename));
	CHECK(memcmp(buf, rename, sizeof(rename)) == 0);
	CHECK(rdma_req_dev_rename(buf, 11, 3, "bad/name") == NULL);
	nlh = rdma_req_port_dump(buf, 12, 3);
	CHECK(nlh->nlmsg_flags & NLM_F_DUMP);
}

static void test_names(void)
{
	char long_name[RDMA_NAME_MAX + 1];

	CHECK(rdma_dev_name_valid("rdma_net1"));
	CHECK(rdma_dev_name_valid("mlx5_3"));
	CHECK(!rdma_dev_name_valid(""));
	CHECK(!rdma_dev_name_valid("."));
	CHECK(!rdma_dev_name_valid(".."));
	CHECK(!rdma_dev_name_valid("a/b"));
	CHECK(!rdma_dev_name_valid("a b"));
	CHECK(!rdma_dev_name_valid("mlx5_%d"));
	memset(long_name, 'a', RDMA_NAME_MAX);
	long_name[RDMA_NAME_MAX] = '\0';
	CHECK(!rdma_dev_name_valid(long_name));
	long_name[RDMA_NAME_MAX - 1] = '\0';
	CHECK(rdma_dev_name_valid(long_name));
}

static void test_no_rdma_in_this_kernel(void)
{
	struct rdma_sock *s = NULL;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	int kernel = fd >= 0 ? 0 : -errno;
	int ret = rdma_sock_open(&s);

	if (fd >= 0)
		close(fd);
	/* Whatever the kernel says, the caller gets it unchanged, so -EPROTONOSUPPORT means "no RDMA". */
	CHECK_INT(ret, kernel);
	if (ret == 0)
		rdma_sock_close(s);
	else
		CHECK_INT(ret, -EPROTONOSUPPORT);
}

/* ---- the fake ---- */

static char fake_dir[] = "/tmp/test_rdma.XXXXXX";

static void fake_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fake_dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void fake_read(const char *name, char *out, size_t size)
{
	char path[256];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fake_dir, name);
	f = fopen(path, "r");
	if (f) {
		n = fread(out, 1, size - 1, f);
		fclose(f);
	}
	out[n] = '\0';
}

static unsigned long my_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

static void fake_reset(bool exclusive)
{
	char devs[256], path[256];

	snprintf(devs, sizeof(devs), "3 mlx5_3 lo %lu\n7 mlx5_7 nosuchnetdev0 12345\n", my_netns());
	fake_file("rdma.devs", devs);
	fake_file("rdma.mode", exclusive ? "exclusive\n" : "shared\n");
	fake_file("rdma.calls", "");
	snprintf(path, sizeof(path), "%s/rdma.fail-netns", fake_dir);
	unlink(path);
}

static void test_fake_lookup_and_mode(void)
{
	struct rdma_sock *s = NULL;
	struct rdma_dev dev;
	struct rdma_port port;
	bool excl = false;

	fake_reset(true);
	CHECK_INT(rdma_sock_open(&s), 0);
	if (!s)
		return;
	CHECK_INT(rdma_sys_get_netns_mode(s, &excl), 0);
	CHECK(excl);
	CHECK_INT(rdma_dev_get_by_name(s, "mlx5_3", &dev), 0);
	CHECK_INT(dev.index, 3);
	/* Exclusive: a device of another namespace is invisible. */
	CHECK_INT(rdma_dev_get_by_name(s, "mlx5_7", &dev), -ENODEV);
	CHECK_INT(rdma_dev_get_by_index(s, 7, &dev), -ENODEV);
	CHECK_INT(rdma_dev_find_by_netdev(s, 1, NULL, &port), 0);
	CHECK_STR(port.dev_name, "mlx5_3");
	CHECK_STR(port.ndev_name, "lo");
	CHECK_INT(rdma_dev_find_by_netdev(s, 0, "nosuchnetdev0", &port), -ENODEV);
	fake_file("rdma.mode", "shared\n");
	CHECK_INT(rdma_sys_get_netns_mode(s, &excl), 0);
	CHECK(!excl);
	CHECK_INT(rdma_dev_get_by_name(s, "mlx5_7", &dev), 0);
	rdma_sock_close(s);
}

static void test_fake_records_moves_and_renames(void)
{
	char calls[1024], want[256], devs[256];
	struct rdma_sock *s = NULL;
	int nsfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	fake_reset(false);
	CHECK_INT(rdma_sock_open(&s), 0);
	if (!s || nsfd < 0)
		goto out;
	/* Shared mode: the kernel refuses to move any device. */
	CHECK_INT(rdma_dev_set_netns(s, 3, nsfd), -EOPNOTSUPP);
	fake_file("rdma.mode", "exclusive\n");
	CHECK_INT(rdma_dev_set_netns(s, 3, nsfd), 0);
	CHECK_INT(rdma_dev_rename(s, 3, "rdma_net1"), 0);
	CHECK_INT(rdma_dev_rename(s, 3, "mlx5_7"), -EEXIST);
	CHECK_INT(rdma_dev_rename(s, 3, "bad/name"), -EINVAL);
	fake_file("rdma.fail-netns", "95\n");
	CHECK_INT(rdma_dev_set_netns(s, 3, nsfd), -EOPNOTSUPP);
	fake_read("rdma.calls", calls, sizeof(calls));
	snprintf(want, sizeof(want),
		 "dev-set 3 netns %lu\ndev-set 3 netns %lu\n"
		 "dev-set 3 name rdma_net1\ndev-set 3 name mlx5_7\ndev-set 3 netns %lu\n",
		 my_netns(), my_netns(), my_netns());
	CHECK_STR(calls, want);
	fake_read("rdma.devs", devs, sizeof(devs));
	CHECK_HAS(devs, "3 rdma_net1 lo");
	CHECK_HAS(devs, "7 mlx5_7 nosuchnetdev0 12345");
out:
	rdma_sock_close(s);
	if (nsfd >= 0)
		close(nsfd);
}

#define WRITERS 8
#define RENAMES 25

/*
 * Plugins run side by side on one fake: each of WRITERS processes renames
 * its own device RENAMES times. Every rename must be recorded and none may
 * undo another's (a load-change-save without the lock loses updates, and
 * a temporary file shared between writers fails their renames).
 */
static void test_fake_concurrent_writers(void)
{
	char devs[WRITERS * 64] = "", calls[WRITERS * RENAMES * 40], want[64];
	size_t off = 0;
	int i, k, status, lines = 0;
	pid_t pids[WRITERS];

	fake_reset(false);
	for (i = 0; i < WRITERS; i++)
		off += (size_t)snprintf(devs + off, sizeof(devs) - off, "%d dev%d lo %lu\n", i + 1, i,
					my_netns());
	fake_file("rdma.devs", devs);
	for (i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct rdma_sock *s;
			char name[32];

			for (k = 0; k < RENAMES; k++) {
				snprintf(name, sizeof(name), "w%d_%d", i, k);
				if (rdma_sock_open(&s) < 0)
					_exit(1);
				if (rdma_dev_rename(s, (uint32_t)i + 1, name) < 0)
					_exit(2);
				rdma_sock_close(s);
			}
			_exit(0);
		}
		CHECK(pids[i] > 0);
	}
	for (i = 0; i < WRITERS; i++) {
		if (pids[i] <= 0)
			continue;
		CHECK_INT(waitpid(pids[i], &status, 0), pids[i]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	fake_read("rdma.devs", devs, sizeof(devs));
	for (i = 0; i < WRITERS; i++) {
		snprintf(want, sizeof(want), "%d w%d_%d lo", i + 1, i, RENAMES - 1);
		CHECK_HAS(devs, want);
	}
	fake_read("rdma.calls", calls, sizeof(calls));
	for (off = 0; calls[off]; off++)
		lines += calls[off] == '\n';
	CHECK_INT(lines, WRITERS * RENAMES);
}

int main(void)
{
	char path[256];
	const char *const files[] = { "rdma.devs", "rdma.mode", "rdma.calls", "rdma.fail-netns",
				      "rdma.lock" };
	size_t i;

	RUN(test_sys_reply_says_shared);
	RUN(test_dev_dump_and_get_replies);
	RUN(test_port_dump_names_the_netdev);
	RUN(test_kernel_errors_come_back_as_errno);
	RUN(test_malformed_attribute_is_refused);
	RUN(test_set_netns_request_is_what_the_kernel_got);
	RUN(test_set_requests_bytes);
	RUN(test_names);
	RUN(test_no_rdma_in_this_kernel);
	if (!mkdtemp(fake_dir)) {
		perror("mkdtemp");
		return 1;
	}
	rdma_fake_use(fake_dir);
	RUN(test_fake_lookup_and_mode);
	RUN(test_fake_records_moves_and_renames);
	RUN(test_fake_concurrent_writers);
	rdma_fake_use(NULL);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", fake_dir, files[i]);
		unlink(path);
	}
	rmdir(fake_dir);
	return check_summary();
}
