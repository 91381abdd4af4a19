/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link: every operation on a real veth pair in a private network
 * namespace, and the kernel transport of the VF module against a link
 * without VFs. Needs root (exit 77, skipped, otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if_arp.h>
#include <netinet/icmp6.h>
#include <netinet/ip6.h>
#include <netpacket/packet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/if_addr.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include "check.h"
#include "link.h"
#include "netns.h"
#include "netns_anon.h"
#include "sysctl.h"
#include "pf.h"
#include "vf.h"

static const uint8_t mac_a[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* A fresh veth pair name_a <-> name_b in the test's namespace. */
static int veth(const char *a, const char *b)
{
	return sh("ip link add %s type veth peer name %s", a, b);
}

static void test_get_set(void)
{
	struct link_sock *ls;
	struct link_info i;
	unsigned before, after, pod;
	int idx;

	CHECK_INT(veth("gs0", "gs1"), 0);
	CHECK_INT(link_sock_open(&ls), 0);
	CHECK_INT(link_get_by_name(ls, "gs0", &i), 0);
	idx = i.ifindex;
	CHECK(idx > 0);
	CHECK_STR(i.name, "gs0");
	CHECK(!i.up);
	CHECK_STR(i.alias, "");

	CHECK_INT(link_set_mtu(ls, idx, 1400), 0);
	CHECK_INT(link_set_mac(ls, idx, mac_a), 0);
	CHECK_INT(sh("ip link set dev gs0 alias enp59s0f0v3"), 0);
	CHECK_INT(link_get_by_index(ls, idx, &i), 0);
	CHECK_INT(i.mtu, 1400);
	CHECK(!memcmp(i.mac, mac_a, 6));
	CHECK_STR(i.alias, "enp59s0f0v3");
	CHECK_INT(sh("ip link set dev gs0 alias ''"), 0);
	CHECK_INT(link_get_by_index(ls, idx, &i), 0);
	CHECK_STR(i.alias, "");

	CHECK_INT(link_set_name(ls, idx, "net1"), 0);
	CHECK_INT(link_get_by_name(ls, "gs0", &i), -ENODEV);
	CHECK_INT(link_get_by_name(ls, "net1", &i), 0);
	CHECK_INT(i.ifindex, idx);
	CHECK_INT(link_set_name(ls, idx, "bad/name"), -EINVAL);
	CHECK_INT(link_set_name(ls, idx, "gs1"), -EEXIST);

	CHECK_INT(link_set_up(ls, idx, true), 0);
	CHECK_INT(link_get_by_index(ls, idx, &i), 0);
	CHECK(i.up);
	/* A veth has carrier only when its peer is up too. */
	CHECK(!i.carrier);
	CHECK_INT(link_set_up(ls, idx, false), 0);
	CHECK_INT(link_get_by_index(ls, idx, &i), 0);
	CHECK(!i.up);
	/* One request each, the link not read first. */
	link_requests(&before, &pod);
	CHECK_INT(link_set_up(ls, idx, true), 0);
	CHECK_INT(link_set_mtu(ls, idx, 1500), 0);
	CHECK_INT(link_get_by_index(ls, idx, &i), 0);
	link_requests(&after, &pod);
	CHECK_INT(after - before, 3);
	CHECK(i.up);
	CHECK_INT(i.mtu, 1500);
	CHECK_INT(link_set_up(ls, idx, false), 0);
	CHECK_INT(link_set_up(ls, 99999, true), -ENODEV);
	/* By name: one request, this link and no other. */
	link_requests(&before, &pod);
	CHECK_INT(link_set_up_named(ls, "net1", true), 0);
	link_requests(&after, &pod);
	CHECK_INT(after - before, 1);
	CHECK_INT(link_get_by_index(ls, idx, &i), 0);
	CHECK(i.up);
	CHECK_INT(link_get_by_name(ls, "gs1", &i), 0);
	CHECK(!i.up);
	CHECK_INT(link_set_up_named(ls, "net1", false), 0);
	CHECK_INT(link_get_by_index(ls, idx, &i), 0);
	CHECK(!i.up);
	CHECK_INT(link_set_up_named(ls, "no-such-link", true), -ENODEV);
	CHECK_INT(link_set_up_named(ls, "bad/name", true), -EINVAL);

	CHECK_INT(link_get_by_index(ls, 99999, &i), -ENODEV);
	CHECK_INT(link_set_mtu(ls, 99999, 1500), -ENODEV);
	CHECK_INT(link_set_mtu(ls, idx, 100000), -EINVAL);
	link_sock_close(ls);
	sh("ip link del net1");
}

/*
 * What says which device a link is: the kernel's parent attributes, else
 * the bus-info the driver reports (none for a veth or lo), else a test
 * build's stand-in; lo by its flag. Asked in the namespace of the socket.
 */
static int stub_parent(const struct link_info *li, char bus[32], char dev[64])
{
	if (!strcmp(li->alias, "marked")) {
		strcpy(bus, "pci");
		strcpy(dev, "0000:3b:00.2");
	}
	return 0;
}

static void test_parent(void)
{
	static const struct link_parent_backend stub = { .parent = stub_parent };
	struct link_sock *ls, *other = NULL;
	struct link_info i, t;
	char bus[32], dev[64];
	int fd;

	CHECK_INT(veth("bi0", "bi1"), 0);
	CHECK_INT(link_sock_open(&ls), 0);
	CHECK_INT(link_get_by_name(ls, "bi0", &i), 0);
	CHECK(!i.loopback);
	strcpy(dev, "junk");
	CHECK_INT(link_parent(ls, &i, bus, dev), 0);
	CHECK_STR(dev, "");
	CHECK_STR(bus, "");
	CHECK_INT(link_get_by_name(ls, "lo", &i), 0);
	CHECK(i.loopback);
	CHECK_INT(link_parent(ls, &i, bus, dev), 0);
	CHECK_STR(dev, "");

	/* A stand-in answers only for a link the kernel names no device for. */
	link_set_parent_backend(&stub);
	CHECK_INT(sh("ip link set dev bi0 alias marked"), 0);
	CHECK_INT(link_get_by_name(ls, "bi0", &i), 0);
	CHECK_STR(i.alias, "marked");
	CHECK_INT(link_parent(ls, &i, bus, dev), 0);
	CHECK_STR(bus, "pci");
	CHECK_STR(dev, "0000:3b:00.2");
	link_set_parent_backend(NULL);
	CHECK_INT(link_parent(ls, &i, bus, dev), 0);
	CHECK_STR(dev, "");

	/* tun's driver reports a bus-info ("tun"): taken only while the name is the same link's. */
	CHECK_INT(sh("ip tuntap add dev bt0 mode tun"), 0);
	CHECK_INT(link_get_by_name(ls, "bt0", &t), 0);
	CHECK_INT(link_parent(ls, &t, bus, dev), 0);
	CHECK_STR(dev, "tun");
	CHECK_STR(bus, "");
	/*
	 * Read as bi0's index, but by the time ethtool asks, its name is
	 * bt0's: the answer is another link's, and is not taken.
	 */
	CHECK_INT(link_get_by_name(ls, "bi0", &i), 0);
	t.ifindex = i.ifindex;
	CHECK_INT(link_parent(ls, &t, bus, dev), -EAGAIN);
	CHECK_STR(dev, "");
	/* Gone by then. */
	CHECK_INT(sh("ip link set dev bt0 name bt1"), 0);
	CHECK_INT(link_parent(ls, &t, bus, dev), -ENODEV);

	/* bi0 is not in a fresh namespace: a socket there does not see it. */
	CHECK_INT(link_get_by_name(ls, "bi0", &i), 0);
	CHECK_INT(anon_netns(&fd), 0);
	CHECK_INT(link_sock_open_in(fd, &other), 0);
	CHECK_INT(link_get_by_name(other, "bi0", &i), -ENODEV);
	link_sock_close(other);
	close(fd);
	link_sock_close(ls);
	sh("ip link del bi0; ip link del bt1");
}

/* The kernel's parent attributes (5.15 and later) as they come in a reply. */
static void test_parent_parse(void)
{
	char buf[512];
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct link_info i;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = 7;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "enp59s0f0v0");
	mnl_attr_put_strz(nlh, 56 /* IFLA_PARENT_DEV_NAME */, "0000:3b:00.2");
	mnl_attr_put_strz(nlh, 57 /* IFLA_PARENT_DEV_BUS_NAME */, "pci");
	CHECK_INT(link_info_parse(nlh, &i), 0);
	CHECK_INT(i.ifindex, 7);
	CHECK_STR(i.parent_dev, "0000:3b:00.2");
	CHECK_STR(i.parent_bus, "pci");
}

static void test_altnames(void)
{
	char names[4][128];
	struct link_sock *ls;
	struct link_info i, j;
	int n;

	CHECK_INT(veth("an0", "an1"), 0);
	CHECK_INT(link_sock_open(&ls), 0);
	CHECK_INT(link_get_by_name(ls, "an0", &i), 0);
	CHECK_INT(link_altnames(ls, i.ifindex, names, 4, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(sh("ip link property add dev an0 altname enp59s0f0v3 altname pod-side-name-longer-than-ifnamsiz"), 0);
	CHECK_INT(link_altnames(ls, i.ifindex, names, 4, &n), 0);
	CHECK_INT(n, 2);
	CHECK_STR(names[0], "enp59s0f0v3");
	CHECK_STR(names[1], "pod-side-name-longer-than-ifnamsiz");
	CHECK_INT(link_altnames(ls, i.ifindex, names, 1, &n), -ENOSPC);
	CHECK_INT(n, 1);
	/* The link and its altnames in one request: as link_get_by_name, plus the names. */
	CHECK_INT(link_get_by_name_alt(ls, "an0", &j, names, 4, &n), 0);
	CHECK_INT(j.ifindex, i.ifindex);
	CHECK_STR(j.name, "an0");
	CHECK_INT(j.mtu, i.mtu);
	CHECK(!memcmp(j.mac, i.mac, 6));
	CHECK_INT(j.up, i.up);
	CHECK_INT(n, 2);
	CHECK_STR(names[1], "pod-side-name-longer-than-ifnamsiz");
	CHECK_INT(link_get_by_name_alt(ls, "an0", &j, names, 1, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(link_get_by_name_alt(ls, "no-such-an", &j, names, 4, &n), -ENODEV);

	CHECK_INT(link_del_altname(ls, i.ifindex, "enp59s0f0v3"), 0);
	CHECK_INT(link_altnames(ls, i.ifindex, names, 4, &n), 0);
	CHECK_INT(n, 1);
	CHECK_STR(names[0], "pod-side-name-longer-than-ifnamsiz");
	/* The freed name can be given to another link (what a rename back needs). */
	CHECK_INT(link_get_by_name(ls, "an1", &i), 0);
	CHECK_INT(link_set_name(ls, i.ifindex, "enp59s0f0v3"), 0);
	CHECK(link_del_altname(ls, i.ifindex, "no-such-altname") < 0);
	link_sock_close(ls);
	sh("ip link del an0");
}

static void test_move_netns(void)
{
	struct link_sock *host, *pod;
	struct link_info i;
	int nsfd, here, idx;
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0x4d, 0x01 };
	struct link_shape in = { .name = "net1", .mac = mac, .mtu = 1400, .up = true };
	struct link_shape out = { .name = "mv0", .mtu = 1500, .up = false };

	CHECK_INT(veth("mv0", "mv1"), 0);
	CHECK_INT(netns_open_current(&here), 0);
	CHECK_INT(anon_netns(&nsfd), 0);
	CHECK_INT(link_sock_open(&host), 0);
	CHECK_INT(link_get_by_name(host, "mv0", &i), 0);
	CHECK_INT(link_move_shaped(host, i.ifindex, nsfd, &in), 0);
	CHECK_INT(link_get_by_name(host, "mv0", &i), -ENODEV);
	CHECK_INT(link_get_by_name(host, "net1", &i), -ENODEV);

	CHECK_INT(link_sock_open_in(nsfd, &pod), 0);
	CHECK_INT(link_get_by_name(pod, "mv0", &i), -ENODEV);
	/* Renamed, shaped and up in the target, from the one request. */
	CHECK_INT(link_get_by_name(pod, "net1", &i), 0);
	CHECK(!memcmp(i.mac, mac, 6));
	CHECK_INT(i.mtu, 1400);
	CHECK(i.up);
	idx = i.ifindex;
	/* Opening the pod socket left us where we were. */
	{
		int now;

		CHECK_INT(netns_open_current(&now), 0);
		CHECK(netns_same(now, here));
		close(now);
	}
	/* Its current name taken in the target: the kernel moves it under the new one. */
	CHECK_INT(veth("net1", "mv2"), 0);
	CHECK_INT(link_move_shaped(pod, idx, here, &out), 0);
	CHECK_INT(link_get_by_name(pod, "net1", &i), -ENODEV);
	CHECK_INT(link_get_by_name(host, "mv0", &i), 0);
	CHECK_INT(i.mtu, 1500);
	CHECK(!i.up);
	sh("ip link del net1");
	CHECK_INT(link_move_shaped(host, i.ifindex, -1, &out), -EBADF);
	out.name = "";
	CHECK_INT(link_move_shaped(host, i.ifindex, nsfd, &out), -EINVAL);
	link_sock_close(pod);
	link_sock_close(host);
	close(nsfd);
	close(here);
	sh("ip link del mv0");
}

static struct link_route route(const char *dst, const char *gw)
{
	struct link_route rt;

	link_route_init(&rt);
	snprintf(rt.dst, sizeof(rt.dst), "%s", dst);
	snprintf(rt.gw, sizeof(rt.gw), "%s", gw);
	return rt;
}

static void test_addr_route(void)
{
	struct link_sock *ls;
	struct link_info i;
	struct link_route rt;
	bool has;
	int idx;

	CHECK_INT(veth("ar0", "ar1"), 0);
	CHECK_INT(link_sock_open(&ls), 0);
	CHECK_INT(link_get_by_name(ls, "ar0", &i), 0);
	idx = i.ifindex;
	CHECK_INT(sysctl_write_in(-1, "/proc", "net.ipv6.conf.ar0.accept_dad", "0"), 0);
	CHECK_INT(link_set_up(ls, idx, true), 0);

	CHECK_INT(link_addr_add(ls, idx, "10.9.0.2/24"), 0);
	CHECK_INT(link_addr_add(ls, idx, "10.9.0.2/24"), 0);
	CHECK_INT(link_addr_has(ls, idx, "10.9.0.2/24", &has), 0);
	CHECK(has);
	CHECK_INT(link_addr_has(ls, idx, "10.9.0.2/25", &has), 0);
	CHECK(!has);
	CHECK_INT(link_addr_has(ls, idx, "10.9.0.3/24", &has), 0);
	CHECK(!has);
	CHECK(sh("ip -4 addr show dev ar0 | grep -q 'inet 10.9.0.2/24 brd 10.9.0.255'") == 0);
	CHECK_INT(link_addr_add(ls, idx, "fd00::2/64"), 0);
	CHECK_INT(link_addr_has(ls, idx, "fd00::2/64", &has), 0);
	CHECK(has);
	CHECK_INT(link_addr_add(ls, idx, "10.9.0.300/24"), -EINVAL);
	CHECK_INT(link_addr_add(ls, idx, "10.9.0.3"), -EINVAL);

	rt = route("10.20.0.0/16", "10.9.0.1");
	CHECK_INT(link_route_has(ls, idx, &rt, &has), 0);
	CHECK(!has);
	CHECK_INT(link_route_add(ls, idx, &rt), 0);
	CHECK_INT(link_route_add(ls, idx, &rt), 0);
	CHECK_INT(link_route_has(ls, idx, &rt, &has), 0);
	CHECK(has);
	rt = route("10.20.0.0/16", "10.9.0.9");
	CHECK_INT(link_route_has(ls, idx, &rt, &has), 0);
	CHECK(!has);

	rt = route("0.0.0.0/0", "10.9.0.1");
	CHECK_INT(link_route_add(ls, idx, &rt), 0);
	CHECK_INT(link_route_has(ls, idx, &rt, &has), 0);
	CHECK(has);
	CHECK(sh("ip route show default | grep -q 'default via 10.9.0.1 dev ar0'") == 0);

	rt = route("10.30.0.0/16", "");
	rt.priority = 120;
	rt.mtu = 1300;
	rt.advmss = 1260;
	CHECK_INT(link_route_add(ls, idx, &rt), 0);
	CHECK_INT(link_route_has(ls, idx, &rt, &has), 0);
	CHECK(has);
	CHECK(sh("ip route show 10.30.0.0/16 | grep 'scope link metric 120' | grep -q 'mtu 1300 advmss 1260'") == 0);

	rt = route("::/0", "fd00::1");
	CHECK_INT(link_route_add(ls, idx, &rt), 0);
	CHECK_INT(link_route_has(ls, idx, &rt, &has), 0);
	CHECK(has);
	rt = route("10.40.0.0/16", "fd00::1");
	CHECK_INT(link_route_add(ls, idx, &rt), -EINVAL);
	link_sock_close(ls);
	sh("ip link del ar0");
}

static void test_sysctl(void)
{
	char buf[8] = "";
	int fd;

	CHECK_INT(veth("sy0", "sy1"), 0);
	CHECK_INT(sysctl_write_in(-1, "/proc", "net.ipv4.conf.sy0.arp_notify", "1"), 0);
	fd = open("/proc/sys/net/ipv4/conf/sy0/arp_notify", O_RDONLY);
	CHECK(fd >= 0);
	CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	CHECK_STR(buf, "1\n");
	CHECK_INT(sysctl_write_in(-1, "/proc", "net.ipv4.conf.../../x.arp_notify", "1"), -EINVAL);
	CHECK_INT(sysctl_write_in(-1, "/proc", "net.ipv4.conf.sy0.arp_notify/../x", "1"), -EINVAL);
	CHECK_INT(sysctl_write_in(-1, "/proc", "net.ipv4/...conf.sy0.arp_notify", "1"), -EINVAL);
	CHECK_INT(sysctl_write_in(-1, "/proc", "net.ipv4.conf.sy0.no_such_key", "1"), -ENOENT);
	sh("ip link del sy0");
}

/* A packet socket on the peer, bound to proto, with a receive bound so a missing packet fails the test. */
static int capture(int ifindex, int proto)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(proto), .sll_ifindex = ifindex,
	};
	struct timeval tv = { .tv_sec = 3 };
	int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(proto));

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The kernel's own gratuitous ARP: a neighbour probe of the link's address
 * leaves as an ARP request whose sender and target are that address, from
 * the link's MAC, and is repeated by the neighbour timer (a second one seen).
 */
static void test_addr_probe(void)
{
	struct link_sock *ls;
	struct link_info a, b;
	uint8_t pkt[1500], ip4[4];
	ssize_t n;
	int seen = 0, fd, k;

	CHECK_INT(veth("ga0", "ga1"), 0);
	CHECK_INT(link_sock_open(&ls), 0);
	CHECK_INT(link_get_by_name(ls, "ga0", &a), 0);
	CHECK_INT(link_get_by_name(ls, "ga1", &b), 0);
	CHECK_INT(link_set_mac(ls, a.ifindex, mac_a), 0);
	CHECK_INT(link_set_up(ls, b.ifindex, true), 0);
	CHECK_INT(link_set_up(ls, a.ifindex, true), 0);
	CHECK_INT(link_addr_add(ls, a.ifindex, "10.9.1.2/24"), 0);

	fd = capture(b.ifindex, ETH_P_ARP);
	CHECK(fd >= 0);
	CHECK_INT(link_addr_probe(ls, a.ifindex, "10.9.1.2/24"), 0);
	inet_pton(AF_INET, "10.9.1.2", ip4);
	for (k = 0; k < 20 && seen < 2; k++) {
		n = recv(fd, pkt, sizeof(pkt), 0);
		if (n < 0)
			break;
		/* arphdr (8) + sha (6) + spa (4) + tha (6) + tpa (4) */
		if (n >= 28 && pkt[6] == 0 && pkt[7] == ARPOP_REQUEST &&
		    !memcmp(pkt + 8, mac_a, 6) && !memcmp(pkt + 14, ip4, 4) &&
		    !memcmp(pkt + 24, ip4, 4))
			seen++;
	}
	CHECK_INT(seen, 2);
	close(fd);

	CHECK_INT(link_addr_probe(ls, a.ifindex, "fd00:1::2/64"), -EINVAL);
	CHECK_INT(link_addr_probe(ls, a.ifindex, "not-an-ip/24"), -EINVAL);
	CHECK_INT(link_addr_probe(ls, 0, "10.9.1.2/24"), -EINVAL);
	link_sock_close(ls);
	sh("ip link del ga0");
}

/* The VF module's kernel transport: real RTM_GETLINK/SETLINK, real ACKs and errors. */
static void test_vf_kernel_transport(void)
{
	struct pf_vf_config c = { .mask = PF_VF_TRUST, .trust = true };
	struct pf *pf;

	CHECK_INT(veth("pf0", "pf1"), 0);
	CHECK_INT(pf_open("pf0", &pf), 0);
	/* A veth has no VFs: the reply parses, VF 0 is not in it. */
	CHECK_INT(pf_get(pf, 0, &c), -ENOENT);
	c.mask = PF_VF_TRUST;
	/* veth has no ndo_set_vf_trust: the kernel's error comes back through the ACK. */
	CHECK_INT(pf_set(pf, 0, &c), -EOPNOTSUPP);
	CHECK_INT(pf_refused(pf), PF_VF_TRUST);
	{
		unsigned before = pf_requests();

		/*
		 * Three fields in one request, refused at the first the kernel
		 * applies; then that one alone names it, and the rest are not sent.
		 */
		c.mask = PF_VF_TRUST | PF_VF_SPOOFCHK | PF_VF_VLAN;
		c.vlan = 5;
		c.qos = 0;
		c.vlan_proto = 0x8100;
		CHECK_INT(pf_set(pf, 0, &c), -EOPNOTSUPP);
		CHECK_INT(pf_refused(pf), PF_VF_VLAN);
		CHECK_INT(pf_requests() - before, 2);
		c.mask = PF_VF_TRUST;
	}
	{
		struct pf_vf_guids g = { 0x0011223344556677ull, 0x0011223344556678ull };

		/* No VF to report GUIDs of; no ndo_set_vf_guid: the kernel parsed the request. */
		CHECK_INT(pf_get_guids(pf, 0, &g), -ENOENT);
		CHECK_INT(pf_set_guids(pf, 0, &g), -EOPNOTSUPP);
	}
	pf_close(pf);
	/* A PF that is gone says so, at open or later: DEL tells it from a PF that fails. */
	CHECK_INT(pf_open("nopf0", &pf), -ENODEV);
	CHECK_INT(pf_open("pf0", &pf), 0);
	sh("ip link del pf0");
	CHECK_INT(pf_get(pf, 0, &c), -ENODEV);
	CHECK_INT(pf_set(pf, 0, &c), -ENODEV);
	pf_close(pf);
}

/*
 * An RTM_NEWLINK as the kernel sends it for an IPoIB netdev: a 20-byte
 * IFLA_ADDRESS (4 bytes of QPN and flags, the 16-byte port GID) and
 * IFLA_BROADCAST, the MTU after them. No kernel here has such a device.
 */
static const uint8_t ipoib_addr[20] = {
	0x00, 0x00, 0x10, 0x49, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0xc9, 0x03, 0x00, 0x00, 0xab, 0xcd, 0x01,
};

static struct nlmsghdr *ipoib_msg(char *buf, const uint8_t *addr, size_t addr_len)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_type = ARPHRD_INFINIBAND;
	ifi->ifi_index = 42;
	ifi->ifi_flags = IFF_UP;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "ib0v3");
	mnl_attr_put(nlh, IFLA_ADDRESS, addr_len, addr);
	mnl_attr_put(nlh, IFLA_BROADCAST, addr_len, addr);
	mnl_attr_put_u32(nlh, IFLA_MTU, 4092);
	return nlh;
}

static void test_ipoib_address(void)
{
	static const uint8_t zero[6];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct link_info i;
	struct nlmsghdr *nlh;

	/* Heap copies of exactly the message's length: ASan sees any read past it. */
	nlh = ipoib_msg(buf, ipoib_addr, sizeof(ipoib_addr));
	{
		struct nlmsghdr *m = malloc(nlh->nlmsg_len);

		CHECK(m != NULL);
		if (!m)
			return;
		memcpy(m, nlh, nlh->nlmsg_len);
		memset(&i, 0xaa, sizeof(i));
		CHECK_INT(link_info_parse(m, &i), 0);
		CHECK_INT(i.ifindex, 42);
		CHECK_STR(i.name, "ib0v3");
		CHECK_INT(i.mtu, 4092);
		CHECK(i.up);
		CHECK(!memcmp(i.mac, zero, 6));
		free(m);
	}
	/* An Ethernet address is a MAC. */
	nlh = ipoib_msg(buf, mac_a, sizeof(mac_a));
	CHECK_INT(link_info_parse(nlh, &i), 0);
	CHECK(!memcmp(i.mac, mac_a, 6));
	/* Not a link, or cut short: refused, nothing read past the message. */
	nlh->nlmsg_type = RTM_NEWADDR;
	CHECK_INT(link_info_parse(nlh, &i), -EPROTO);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_len = NLMSG_HDRLEN + 4;
	CHECK_INT(link_info_parse(nlh, &i), -EPROTO);
}

int main(void)
{
	/* Decoders only: no kernel, no root. */
	RUN(test_ipoib_address);
	if (geteuid() != 0) {
		fprintf(stderr, "test_link: needs root, the rest skipped\n");
		return check_summary() ? 1 : 77;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		perror("unshare(CLONE_NEWNET)");
		return 77;
	}
	sh("ip link set lo up");
	RUN(test_get_set);
	RUN(test_parent);
	RUN(test_parent_parse);
	RUN(test_altnames);
	RUN(test_move_netns);
	RUN(test_addr_route);
	RUN(test_sysctl);
	RUN(test_addr_probe);
	RUN(test_vf_kernel_transport);
	return check_summary();
}
