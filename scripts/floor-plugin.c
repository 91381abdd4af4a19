/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The benchmarks' floor plugin (scripts/bench-sriov-rdma,
 * scripts/bench-pool-ipam): a CNI plugin that does only the kernel work no
 * plugin doing the job can skip, so that a floor goes through the same
 * client, exec'd the same way, as the plugins it is the floor of. It reads
 * its config on stdin, as a plugin does, and answers ADD with a fixed
 * result; the config's keys say which bare work to add to the exec:
 *
 *   (none)                  a no-op plugin: the client's exec and nothing else
 *   "device": "VF"          ADD: move VF into CNI_NETNS as CNI_IFNAME (one
 *   "floorAddress": "A/P"   RTM_NEWLINK), add the IPv4 address A/P, set it up;
 *                           DEL: in the pod, set it down and move it home as VF
 *   "floorStore": "DIR"     ADD: flock DIR/lock, write a temp file, link it as
 *                           a-CNI_CONTAINERID; DEL: flock, unlink it
 *
 * VERSION answers the versions it speaks. The keys are found by a plain
 * search of the text, which is all a benchmark's own configs need.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

struct req {
	struct nlmsghdr nh;
	union {
		struct ifinfomsg ifi;
		struct ifaddrmsg ifa;
	};
	char attrs[256];
};

static void put(struct nlmsghdr *nh, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static int talk(int fd, struct req *r)
{
	char buf[4096];
	struct nlmsgerr *e = NLMSG_DATA((struct nlmsghdr *)buf);

	r->nh.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (send(fd, r, r->nh.nlmsg_len, 0) < 0 || recv(fd, buf, sizeof(buf), 0) < 0)
		return -1;
	return e->error;
}

/* key's string value in the config text, copied to out; 0 if found */
static int conf_str(const char *conf, const char *key, char *out, size_t size)
{
	char pat[64];
	const char *p, *end;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(conf, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	p += strspn(p, " \t\n:");
	if (*p++ != '"' || !(end = strchr(p, '"')) || (size_t)(end - p) >= size)
		return -1;
	memcpy(out, p, end - p);
	out[end - p] = '\0';
	return 0;
}

static void link_req(struct req *r, int idx)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(sizeof(r->ifi));
	r->nh.nlmsg_type = RTM_NEWLINK;
	r->ifi.ifi_index = idx;
}

static int set_up(int fd, int idx, int up)
{
	struct req r;

	link_req(&r, idx);
	r.ifi.ifi_flags = up ? IFF_UP : 0;
	r.ifi.ifi_change = IFF_UP;
	return talk(fd, &r);
}

static int net_add(const char *dev, const char *netns, const char *ifname, const char *cidr)
{
	char addr[64], *slash;
	struct in_addr a;
	struct req r;
	int host, pod, ns, idx;

	idx = if_nametoindex(dev);
	ns = open(netns, O_RDONLY | O_CLOEXEC);
	host = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (!idx || ns < 0 || host < 0)
		return -1;
	link_req(&r, idx);
	put(&r.nh, IFLA_NET_NS_FD, &ns, 4);
	put(&r.nh, IFLA_IFNAME, ifname, strlen(ifname) + 1);
	if (talk(host, &r) || setns(ns, CLONE_NEWNET) < 0)
		return -1;
	pod = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	idx = if_nametoindex(ifname);
	snprintf(addr, sizeof(addr), "%s", cidr);
	slash = strchr(addr, '/');
	if (pod < 0 || !idx || !slash)
		return -1;
	*slash = '\0';
	if (inet_pton(AF_INET, addr, &a) != 1)
		return -1;
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(r.ifa));
	r.nh.nlmsg_type = RTM_NEWADDR;
	r.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	r.ifa.ifa_family = AF_INET;
	r.ifa.ifa_prefixlen = atoi(slash + 1);
	r.ifa.ifa_index = idx;
	put(&r.nh, IFA_LOCAL, &a, 4);
	put(&r.nh, IFA_ADDRESS, &a, 4);
	if (talk(pod, &r))
		return -1;
	return set_up(pod, idx, 1);
}

static int net_del(const char *dev, const char *netns, const char *ifname)
{
	struct req r;
	int home, ns, pod, idx;

	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns = open(netns, O_RDONLY | O_CLOEXEC);
	if (home < 0 || ns < 0 || setns(ns, CLONE_NEWNET) < 0)
		return -1;
	pod = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	idx = if_nametoindex(ifname);
	if (pod < 0 || !idx || set_up(pod, idx, 0))
		return -1;
	link_req(&r, idx);
	put(&r.nh, IFLA_NET_NS_FD, &home, 4);
	put(&r.nh, IFLA_IFNAME, dev, strlen(dev) + 1);
	return talk(pod, &r) ? -1 : 0;
}

static int store(const char *dir_path, const char *id, int add)
{
	char tmp[512], name[512], rec[256];
	int dir, lock, fd;

	dir = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	lock = dir < 0 ? -1 : openat(dir, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) < 0)
		return -1;
	snprintf(name, sizeof(name), "a-%s", id);
	if (!add)
		return unlinkat(dir, name, 0) < 0 ? -1 : 0;
	snprintf(tmp, sizeof(tmp), "tmp.%d", (int)getpid());
	snprintf(rec, sizeof(rec), "{\"containerID\":\"%s\"}\n#crc32=00000000\n", id);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, rec, strlen(rec)) < 0 || close(fd) < 0 ||
	    linkat(dir, tmp, dir, name, 0) < 0 || unlinkat(dir, tmp, 0) < 0)
		return -1;
	return 0;
}

int main(void)
{
	static char conf[65536];
	char ver[32] = "1.0.0", dev[IF_NAMESIZE], cidr[64] = "10.99.0.2/16", dir[256];
	const char *cmd = getenv("CNI_COMMAND"), *netns = getenv("CNI_NETNS");
	const char *ifname = getenv("CNI_IFNAME"), *id = getenv("CNI_CONTAINERID");
	size_t n = 0;
	ssize_t got;
	int add;

	while (n < sizeof(conf) - 1 && (got = read(0, conf + n, sizeof(conf) - 1 - n)) > 0)
		n += got;
	conf[n] = '\0';
	conf_str(conf, "cniVersion", ver, sizeof(ver));
	if (!cmd)
		return 1;
	if (!strcmp(cmd, "VERSION")) {
		printf("{\"cniVersion\":\"%s\",\"supportedVersions\":[\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}\n", ver);
		return 0;
	}
	add = !strcmp(cmd, "ADD");
	if (!add && strcmp(cmd, "DEL"))
		return 0;
	conf_str(conf, "floorAddress", cidr, sizeof(cidr));
	if (!conf_str(conf, "device", dev, sizeof(dev))) {
		if (!netns || !ifname)
			return 1;
		if (add ? net_add(dev, netns, ifname, cidr) : net_del(dev, netns, ifname))
			return 1;
	}
	if (!conf_str(conf, "floorStore", dir, sizeof(dir)) && (!id || store(dir, id, add)))
		return 1;
	if (add)
		printf("{\"cniVersion\":\"%s\",\"interfaces\":[{\"name\":\"%s\",\"sandbox\":\"%s\"}],"
		       "\"ips\":[{\"address\":\"%s\",\"interface\":0}]}\n",
		       ver, ifname ? ifname : "eth0", netns ? netns : "", cidr);
	return 0;
}
