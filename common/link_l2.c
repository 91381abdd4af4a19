/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link, the layer-2 side that needs no rtnetlink: announcing an address
 * (packet and raw ICMPv6 sockets) and MAC addresses as text.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <net/if_arp.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include "link.h"
#include "valid.h"

/* ---- announcements ---- */

static int announce_v4(int ifindex, const uint8_t mac[6], const struct in_addr *ip)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ARP),
		.sll_ifindex = ifindex,
		.sll_halen = 6,
		.sll_addr = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};
	struct {
		struct arphdr h;
		uint8_t sha[6], spa[4], tha[6], tpa[4];
	} __attribute__((packed)) pkt = {
		.h = {
			.ar_hrd = htons(ARPHRD_ETHER),
			.ar_pro = htons(ETH_P_IP),
			.ar_hln = 6,
			.ar_pln = 4,
			.ar_op = htons(ARPOP_REQUEST),
		},
	};
	int fd, ret = 0;

	/* A request with sender = target, as the kernel's arp_notify sends. */
	memcpy(pkt.sha, mac, 6);
	memcpy(pkt.spa, ip, 4);
	memcpy(pkt.tpa, ip, 4);
	/*
	 * Protocol 0 and no bind: a send-only socket. One created for ETH_P_ARP
	 * hooks into every device's receive path, and binding it to ifindex
	 * re-hooks it, which waits for an RCU grace period (synchronize_net):
	 * that wait cost more than the whole netns move.
	 */
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int announce_v6(int ifindex, const uint8_t mac[6], const struct in6_addr *ip)
{
	struct sockaddr_in6 dst = { .sin6_family = AF_INET6, .sin6_scope_id = (uint32_t)ifindex };
	struct {
		struct nd_neighbor_advert na;
		struct nd_opt_hdr opt;
		uint8_t mac[6];
	} __attribute__((packed)) pkt;
	char ifname[IF_NAMESIZE];
	int hops = 255, fd, ret = 0;

	if (!if_indextoname((unsigned)ifindex, ifname))
		return -errno;
	memset(&pkt, 0, sizeof(pkt));
	pkt.na.nd_na_type = ND_NEIGHBOR_ADVERT;
	pkt.na.nd_na_flags_reserved = ND_NA_FLAG_OVERRIDE;
	pkt.na.nd_na_target = *ip;
	pkt.opt.nd_opt_type = ND_OPT_TARGET_LINKADDR;
	pkt.opt.nd_opt_len = 1;			/* in units of 8 bytes */
	memcpy(pkt.mac, mac, 6);
	inet_pton(AF_INET6, "ff02::1", &dst.sin6_addr);

	/* The kernel fills in the ICMPv6 checksum on raw ICMPv6 sockets. */
	fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
	if (fd < 0)
		return -errno;
	/* RFC 4861 7.1.2: receivers drop an NA whose hop limit is not 255. */
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &hops, sizeof(hops)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname) + 1) < 0 ||
	    sendto(fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&dst, sizeof(dst)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int link_announce(int ifindex, const uint8_t mac[6], const char *cidr)
{
	char ip[64];
	const char *slash = strchr(cidr, '/');
	size_t len = slash ? (size_t)(slash - cidr) : strlen(cidr);
	struct in_addr v4;
	struct in6_addr v6;

	if (ifindex <= 0 || len >= sizeof(ip))
		return -EINVAL;
	memcpy(ip, cidr, len);
	ip[len] = '\0';
	if (inet_pton(AF_INET, ip, &v4) == 1)
		return announce_v4(ifindex, mac, &v4);
	if (inet_pton(AF_INET6, ip, &v6) == 1)
		return announce_v6(ifindex, mac, &v6);
	return -EINVAL;
}
