/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sysctl: name and value rules, name-to-path mapping, reads and writes
 * under an injected proc root, and (as root) a write inside a private
 * network namespace that the namespace it came from does not see.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "netns.h"
#include "netns_anon.h"
#include "sysctl.h"

static int name_ok(const char *name, const char *ifname)
{
	char why[256];

	return sysctl_name_check(name, ifname, why, sizeof(why));
}

static void test_names(void)
{
	char why[256];

	CHECK_INT(name_ok("net.ipv4.conf.net1.arp_ignore", "net1"), 0);
	CHECK_INT(name_ok("net.ipv4.conf.all.rp_filter", "net1"), 0);
	CHECK_INT(name_ok("net.ipv6.conf.default.accept_ra", "net1"), 0);
	CHECK_INT(name_ok("net.ipv4.neigh.net1.gc_stale_time", "net1"), 0);
	CHECK_INT(name_ok("net.ipv4.conf.net1.100.arp_ignore", "net1.100"), 0);
	CHECK_INT(name_ok("net.core.somaxconn", "net1"), 0);
	CHECK_INT(name_ok("net.ipv4.tcp_keepalive_time", "net1"), 0);
	/* Another interface of the pod belongs to another attachment. */
	CHECK_INT(sysctl_name_check("net.ipv4.conf.eth0.arp_ignore", "net1", why, sizeof(why)),
		  -EINVAL);
	CHECK_HAS(why, "\"eth0\"");
	CHECK_INT(sysctl_name_check("kernel.panic", "net1", why, sizeof(why)), -EINVAL);
	CHECK_HAS(why, "\"net.\"");
	CHECK_INT(name_ok("net.ipv4..conf", "net1"), -EINVAL);
	CHECK_INT(name_ok("net.core/../../kernel", "net1"), -EINVAL);
	CHECK_INT(name_ok("net.core.", "net1"), -EINVAL);
	CHECK_INT(name_ok("net.ipv4.conf.net1.", "net1"), -EINVAL);
	CHECK_INT(name_ok("net.ipv4.conf.net1", "net1"), -EINVAL);
	CHECK_INT(name_ok("net.ipv4.conf.net1.a/b", "net1"), -EINVAL);
	CHECK_INT(name_ok("net. core", "net1"), -EINVAL);
	CHECK_INT(name_ok("", "net1"), -EINVAL);
}

static void test_values(void)
{
	char big[SYSCTL_VALUE_MAX + 2];

	CHECK_INT(sysctl_value_check("1"), 0);
	CHECK_INT(sysctl_value_check("32768\t60999"), 0);
	CHECK_INT(sysctl_value_check(""), -EINVAL);
	CHECK_INT(sysctl_value_check("1\n2"), -EINVAL);
	CHECK_INT(sysctl_value_check("\x7f"), -EINVAL);
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(sysctl_value_check(big), -EINVAL);
}

static void test_paths(void)
{
	char p[256];

	CHECK_INT(sysctl_path("/proc", "net.ipv4.conf.net1.arp_ignore", p, sizeof(p)), 0);
	CHECK_STR(p, "/proc/sys/net/ipv4/conf/net1/arp_ignore");
	CHECK_INT(sysctl_path("/r", "net.ipv4.conf.net1.100.rp_filter", p, sizeof(p)), 0);
	CHECK_STR(p, "/r/sys/net/ipv4/conf/net1.100/rp_filter");
	CHECK_INT(sysctl_path("/r", "net.core.somaxconn", p, sizeof(p)), 0);
	CHECK_STR(p, "/r/sys/net/core/somaxconn");
	CHECK_INT(sysctl_path("/r", "net.core.somaxconn", p, 10), -ENAMETOOLONG);
}

static void test_root_tree(void)
{
	char root[] = "/tmp/test_sysctl.XXXXXX", cmd[512], buf[64];
	FILE *f;

	if (!mkdtemp(root)) {
		CHECK(0);
		return;
	}
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/net/ipv4/conf/net1", root);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/sys/net/ipv4/conf/net1/arp_ignore", root);
	f = fopen(cmd, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("0\n", f);
		fclose(f);
	}
	CHECK_INT(sysctl_read_in(-1, root, "net.ipv4.conf.net1.arp_ignore", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "0");
	CHECK_INT(sysctl_write_in(-1, root, "net.ipv4.conf.net1.arp_ignore", "1"), 0);
	CHECK_INT(sysctl_read_in(-1, root, "net.ipv4.conf.net1.arp_ignore", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "1");
	CHECK_INT(sysctl_write_in(-1, root, "net.ipv4.conf.net2.arp_ignore", "1"), -ENOENT);
	/* What sysctl_name_check refuses never reaches a path. */
	CHECK_INT(sysctl_write_in(-1, root, "net.ipv4..conf", "1"), -EINVAL);
	CHECK_INT(sysctl_write_in(-1, root, "kernel.panic", "1"), -EINVAL);
	CHECK_INT(sysctl_write_in(-1, root, "net.ipv4.conf.net1.arp_ignore", "1\n"), -EINVAL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
}

/* The write lands in the pod's namespace and not in the caller's. */
static void test_netns(void)
{
	char before[64], after[64], inside[64];
	int pod;

	if (geteuid() != 0 || anon_netns(&pod) < 0) {
		printf("# skipped: needs root for a private network namespace\n");
		return;
	}
	CHECK_INT(sysctl_read_in(-1, "/proc", "net.ipv4.conf.lo.arp_ignore", before, sizeof(before)), 0);
	CHECK_INT(sysctl_write_in(pod, "/proc", "net.ipv4.conf.lo.arp_ignore",
				  strcmp(before, "2") ? "2" : "1"), 0);
	CHECK_INT(sysctl_read_in(pod, "/proc", "net.ipv4.conf.lo.arp_ignore", inside, sizeof(inside)), 0);
	CHECK_STR(inside, strcmp(before, "2") ? "2" : "1");
	CHECK_INT(sysctl_read_in(-1, "/proc", "net.ipv4.conf.lo.arp_ignore", after, sizeof(after)), 0);
	CHECK_STR(after, before);
	CHECK_INT(sysctl_write_in(pod, "/proc", "net.ipv4.conf.nosuch0.arp_ignore", "1"), -ENOENT);
	close(pod);
}

int main(void)
{
	RUN(test_names);
	RUN(test_values);
	RUN(test_paths);
	RUN(test_root_tree);
	RUN(test_netns);
	return check_summary();
}
