/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link: netdev operations over rtnetlink. Links are encoded and decoded
 * with libmnl; addresses, routes and rules are libnl-route-3 objects
 * (link_ip.c). Both travel on the namespace's one rtnetlink socket (nlio).
 *
 * A struct link_sock is bound to the namespace it was opened in: open one
 * in the host namespace and one inside the pod's (link_sock_open_in) and
 * each keeps talking to its own namespace whatever the process does after.
 * Functions return 0 or -errno: the kernel's for links, libnl's NLE_*
 * codes mapped to errno for addresses, routes and rules.
 */
#ifndef LINK_H
#define LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

struct link_sock;
struct nlattr;
struct nlmsghdr;

struct link_info {
	int ifindex;
	char name[IFNAMSIZ];
	uint8_t mac[6];
	int mtu;
	bool up;			/* IFF_UP */
	bool carrier;			/* IFF_LOWER_UP */
	bool loopback;			/* IFF_LOOPBACK */
	char alias[256];		/* IFLA_IFALIAS, "" when unset */
	/*
	 * The device under the link, as the kernel names it (5.15 and later:
	 * IFLA_PARENT_DEV_BUS_NAME, IFLA_PARENT_DEV_NAME): "pci" and
	 * "0000:3b:00.2" for a VF; "" for a virtual link, or an older kernel.
	 */
	char parent_bus[32];
	char parent_dev[64];
};

int link_sock_open(struct link_sock **ls);			/* current namespace */
int link_sock_open_in(int netns_fd, struct link_sock **ls);	/* a given namespace */
void link_sock_close(struct link_sock *ls);

/*
 * The rtnetlink requests this process sent so far (each dump counts one),
 * on sockets of the current namespace (host) and of another (pod).
 */
void link_requests(unsigned *host, unsigned *pod);

/* One RTM_GETLINK each; -ENODEV when absent. */
int link_get_by_name(struct link_sock *ls, const char *name, struct link_info *info);
int link_get_by_index(struct link_sock *ls, int ifindex, struct link_info *info);
/* Every link of the socket's namespace, one dump: *links (malloc'd, the caller frees) of *n. */
int link_list(struct link_sock *ls, struct link_info **links, int *n);
/*
 * link_get_by_name and link_altnames in one RTM_GETLINK: the link and its
 * first `max` alternative names (*n of them). -ENODEV when absent.
 */
int link_get_by_name_alt(struct link_sock *ls, const char *name, struct link_info *info,
			 char names[][128], int max, int *n);
/*
 * One RTM_NEWLINK as a link_info (the decoder of every link read here). An
 * address that is not 6 bytes (IPoIB's 20) is no MAC: info->mac stays zero.
 * -EPROTO: not an RTM_NEWLINK, or too short for one.
 */
int link_info_parse(const struct nlmsghdr *nlh, struct link_info *info);

/*
 * The device under link li, read in the namespace of ls: its bus and
 * address. From li's parent attributes where the kernel gives them, else
 * from the bus-info its driver reports to ethtool (an address alone, bus
 * ""), asked by name and taken only if the name still names li's index
 * after the answer: a link renamed in between is not answered for
 * (-EAGAIN). Both "" for a link without a device (virtual links, lo).
 */
int link_parent(struct link_sock *ls, const struct link_info *li, char bus[32], char dev[64]);

/*
 * Where a link has no device, a test build's stand-in may name one
 * (test/fakes/standin_fake.c: a veth playing a VF); the default build has
 * none, and such a link has no device.
 */
struct link_parent_backend {
	int (*parent)(const struct link_info *li, char bus[32], char dev[64]);
};
/* NULL: none. */
void link_set_parent_backend(const struct link_parent_backend *b);

/* One RTM_NEWLINK each, nothing read first: -ENODEV when ifindex is gone. */
int link_set_name(struct link_sock *ls, int ifindex, const char *name);
int link_set_mtu(struct link_sock *ls, int ifindex, int mtu);
int link_set_mac(struct link_sock *ls, int ifindex, const uint8_t mac[6]);
/*
 * Set or clear IFF_UP. Down ahead of a move to another namespace: the
 * move closes an up link itself, but then waits longer in the kernel (an
 * RCU barrier after the close): down, then move, took 13.7 ms where the
 * move of the up link took 17.7 (medians of 300, alternating, kernel 6.18;
 * docs/performance.md, "How the benchmark compares"). A caller may ignore
 * a failure of that down: the move closes the link anyway.
 */
int link_set_up(struct link_sock *ls, int ifindex, bool up);
/* The same for the link of that name: one request, no lookup of its index first. */
int link_set_up_named(struct link_sock *ls, const char *name, bool up);
/* What a link should look like once it arrives in its new namespace. */
struct link_shape {
	const char *name;		/* required */
	const uint8_t *mac;		/* NULL: keep */
	int mtu;			/* 0: keep */
	bool up;
};

/*
 * Move a link out of this socket's namespace into netns_fd and give it
 * name, mac, mtu and state there, in one RTM_SETLINK: the kernel moves
 * first (which takes the link down), then sets mac, mtu, name and flags,
 * all under RTNL, so the new name is only ever taken in the target
 * namespace and no other rtnetlink request sees a half-done link. If the
 * link's current name is taken in the target, the kernel uses the new
 * name for the move itself. On an error after the move the link may be
 * in the target under either name: the caller looks for both.
 */
int link_move_shaped(struct link_sock *ls, int ifindex, int netns_fd, const struct link_shape *s);
/*
 * A request on one link (ifindex, or 0 to name it by attribute) with
 * NLM_F_REQUEST, built at the start of buf, for the requests of link and
 * pf. libmnl 1.0.4 leaves the alignment padding after an attribute
 * unwritten: the whole buffer is zeroed, so no stale bytes reach the kernel.
 */
struct nlmsghdr *link_msg_hdr(char *buf, size_t size, uint16_t type, int ifindex);
/* The first top-level attribute of type in a link message (after its ifinfomsg), or NULL. */
const struct nlattr *link_msg_attr(const struct nlmsghdr *nlh, uint16_t type);

/* Alternative names (IFLA_PROP_LIST / IFLA_ALT_IFNAME). */
int link_altnames(struct link_sock *ls, int ifindex, char names[][128], int max, int *n);
int link_del_altname(struct link_sock *ls, int ifindex, const char *altname);

#define LINK_UNSET	(-1)

/* A route through one link: dst, an optional gateway, and what the caller sets. */
struct link_route {
	char dst[64];			/* CIDR */
	char gw[48];			/* "" for on-link */
	int mtu, advmss, priority, table, scope;	/* LINK_UNSET: not set (table: main) */
};

/* Every optional field LINK_UNSET, dst and gw empty. */
void link_route_init(struct link_route *rt);

/* Addresses and routes, inside the socket's namespace. -EEXIST is success. */
int link_addr_add(struct link_sock *ls, int ifindex, const char *cidr);
int link_addr_has(struct link_sock *ls, int ifindex, const char *cidr, bool *has);
int link_route_add(struct link_sock *ls, int ifindex, const struct link_route *rt);
int link_route_has(struct link_sock *ls, int ifindex, const struct link_route *rt, bool *has);

/*
 * Policy routing: "from <cidr's address> lookup <table>" rules (the prefix
 * length of cidr is ignored: a rule matches the one address). Add is
 * idempotent; del removes every such rule pointing at table (0: any).
 * link_rule_free_table: the first table from `first` no rule of the
 * namespace points at, as sbr picks it.
 */
int link_rule_add(struct link_sock *ls, const char *cidr, uint32_t table);
int link_rule_has(struct link_sock *ls, const char *cidr, uint32_t table, bool *has);
int link_rule_del(struct link_sock *ls, const char *cidr, uint32_t table);
int link_rule_free_table(struct link_sock *ls, uint32_t first, uint32_t *table);
/*
 * One dump each, for a caller that verifies many at once: *missing is the
 * index of the first of cidrs[n] without a "from" rule to table, or of the
 * first of rts[n] (each in its .table, on ifindex) that no table holds;
 * -1 when none is missing. Two routes to one destination in one table (a
 * pod's rails sharing an IPAM route) are both seen. At most 128 routes.
 */
int link_rules_missing(struct link_sock *ls, const char *const *cidrs, int n, uint32_t table,
		       int *missing);
int link_routes_missing(struct link_sock *ls, int ifindex, const struct link_route *rts, int n,
			int *missing);

/*
 * Gratuitous ARP for the IPv4 address of `cidr` on ifindex, sent and
 * repeated by the kernel's neighbour timer (link_ip.c says how); -EINVAL
 * for an IPv6 address, which the kernel announces itself (ndisc_notify).
 */
int link_addr_probe(struct link_sock *ls, int ifindex, const char *cidr);

#endif
