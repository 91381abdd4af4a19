/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rdma_probe: the rdma module from the command line, for the VM tests.
 *
 *	rdma_probe mode                      shared | exclusive
 *	rdma_probe set-mode shared|exclusive
 *	rdma_probe get NAME                  "NAME index=I ports=P protocol=X"
 *	rdma_probe find NETDEV               "DEV index=I port=P netdev=NETDEV"
 *	rdma_probe set-netns NAME NETNS_PATH
 *	rdma_probe rename NAME NEWNAME
 *	rdma_probe present NAME              libibverbs sees and opens it
 *	rdma_probe gid NAME PORT ADDRESS     index of the RoCE v2 GID of ADDRESS
 *	rdma_probe record NAME               raw replies, one "file: hex" line each
 *
 * Errors print "error: <what>: <strerror> (-<errno>)" and exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "nlio.h"
#include "rdma.h"
#include "verbs.h"

static int fail(const char *what, int ret)
{
	printf("error: %s: %s (%d)\n", what, strerror(-ret), ret);
	return 1;
}

static void print_hex(const char *file, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	printf("%s: ", file);
	for (i = 0; i < len; i++)
		printf("%02x", p[i]);
	printf("\n");
}

/* Send one request on a fresh socket and print every reply byte until the end. */
static int record_one(const char *file, const struct nlmsghdr *req)
{
	char buf[32768], all[65536];
	struct mnl_socket *nl;
	size_t len = 0;
	int ret = 0;

	nl = mnl_socket_open(NETLINK_RDMA);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_sendto(nl, req, req->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		const struct nlmsghdr *last;
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n < 0 || len + (size_t)n > sizeof(all)) {
			ret = n < 0 ? -errno : -ENOBUFS;
			goto out;
		}
		memcpy(all + len, buf, (size_t)n);
		len += (size_t)n;
		/* The reply ends with the ACK (or an error) or NLMSG_DONE. */
		for (last = (const void *)buf; mnl_nlmsg_ok(last, (int)n);
		     last = mnl_nlmsg_next(last, (int *)&n)) {
			if (last->nlmsg_type == NLMSG_DONE || last->nlmsg_type == NLMSG_ERROR) {
				print_hex(file, all, len);
				goto out;
			}
		}
	}
out:
	mnl_socket_close(nl);
	return ret;
}

static int record(const char *name)
{
	char req[RDMA_REQ_BUF];
	struct rdma_sock *s = NULL;
	struct rdma_dev dev;
	int ret, nsfd;

	ret = rdma_sock_open(&s);
	if (ret == 0) {
		ret = rdma_dev_get_by_name(s, name, &dev);
		rdma_sock_close(s);
	}
	if (ret < 0)
		return fail(name, ret);
	printf("index: %u\n", dev.index);
	nsfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return fail("/proc/self/ns/net", -errno);
	if ((ret = record_one("rdma-sys-get.hex", rdma_req_sys_get(req, 1))) < 0 ||
	    (ret = record_one("rdma-dev-dump.hex", rdma_req_dev_dump(req, 2))) < 0 ||
	    (ret = record_one("rdma-dev-get.hex", rdma_req_dev_get(req, 3, dev.index))) < 0 ||
	    (ret = record_one("rdma-port-dump.hex", rdma_req_port_dump(req, 4, dev.index))) < 0 ||
	    (ret = record_one("rdma-port-dump-nodev.hex", rdma_req_port_dump(req, 5, 999999))) < 0 ||
	    (ret = record_one("rdma-dev-set-netns-eopnotsupp.hex",
			      rdma_req_dev_set_netns(req, 6, dev.index,
						     nsfd))) < 0) {
		close(nsfd);
		return fail("record", ret);
	}
	close(nsfd);
	return 0;
}

/*
 * The plugin never changes the netns mode (it is the node's choice, made
 * when ib_core loads); the VM tests do, with the request the kernel takes.
 * It is refused (-EBUSY) while a namespace other than the initial one exists.
 */
static int set_mode(bool exclusive)
{
	char req[RDMA_REQ_BUF];
	struct nlio *s;
	int ret = nlio_open(NETLINK_RDMA, &s);

	if (ret < 0)
		return ret;
	ret = nlio_talk(s, rdma_req_sys_set(req, 0, exclusive), NULL, NULL);
	nlio_close(s);
	return ret;
}

int main(int argc, char **argv)
{
	struct rdma_sock *s = NULL;
	const char *cmd = argc > 1 ? argv[1] : "";
	int ret, rc = 0;

	if (!strcmp(cmd, "record") && argc == 3)
		return record(argv[2]);
	if (!strcmp(cmd, "present") && argc == 3) {
		ret = rdma_verbs_dev_present(argv[2]);
		return ret < 0 ? fail(argv[2], ret) : (printf("present\n"), 0);
	}
	if (!strcmp(cmd, "gid") && argc == 5) {
		int index;

		ret = rdma_gid_index_for(argv[2], (uint32_t)atoi(argv[3]), argv[4], true, 2000, &index);
		return ret < 0 ? fail(argv[4], ret) : (printf("%d\n", index), 0);
	}
	ret = rdma_sock_open(&s);
	if (ret < 0)
		return fail("open", ret);
	if (!strcmp(cmd, "mode") && argc == 2) {
		bool excl;

		ret = rdma_sys_get_netns_mode(s, &excl);
		if (ret == 0)
			printf("%s\n", excl ? "exclusive" : "shared");
	} else if (!strcmp(cmd, "set-mode") && argc == 3) {
		ret = set_mode(!strcmp(argv[2], "exclusive"));
	} else if (!strcmp(cmd, "get") && argc == 3) {
		struct rdma_dev d;

		ret = rdma_dev_get_by_name(s, argv[2], &d);
		if (ret == 0)
			printf("%s index=%u ports=%u protocol=%s\n", d.name, d.index, d.ports,
			       d.protocol);
	} else if (!strcmp(cmd, "find") && argc == 3) {
		struct rdma_port p;

		ret = rdma_dev_find_by_netdev(s, 0, argv[2], &p);
		if (ret == 0)
			printf("%s index=%u port=%u netdev=%s\n", p.dev_name, p.dev_index, p.port,
			       p.ndev_name);
	} else if (!strcmp(cmd, "set-netns") && argc == 4) {
		struct rdma_dev d;
		int fd = open(argv[3], O_RDONLY | O_CLOEXEC);

		ret = fd < 0 ? -errno : rdma_dev_get_by_name(s, argv[2], &d);
		if (ret == 0)
			ret = rdma_dev_set_netns(s, d.index, fd);
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(cmd, "rename") && argc == 4) {
		struct rdma_dev d;

		ret = rdma_dev_get_by_name(s, argv[2], &d);
		if (ret == 0)
			ret = rdma_dev_rename(s, d.index, argv[3]);
	} else {
		fprintf(stderr, "usage: see the top of rdma_probe.c\n");
		rc = 2;
	}
	rdma_sock_close(s);
	if (ret < 0)
		return fail(cmd, ret);
	return rc;
}
