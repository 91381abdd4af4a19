/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The IPAM's addresses and routes on the pod's netdev, and the IPv4
 * addresses announced to the peers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "link.h"
#include "log.h"
#include "add.h"

/*
 * IPv4 peers learn each address from the kernel (docs/how-it-works.md
 * "Announcements"): a neighbour probe of the address is a gratuitous ARP
 * that the neighbour timer repeats, so it reaches the wire when carrier
 * comes after ADD, and no socket of ours waits for a grace period on
 * close. IPv6 needs nothing here: ndisc_notify has the kernel send the NA
 * when DAD completes, and DAD waits for carrier.
 */
static void announce(struct add_ctx *c, int ifindex)
{
	int i, ret;

	for (i = 0; i < c->ipam.n_ips; i++) {
		if (!strchr(c->ipam.ips[i].address, '.'))
			continue;
		ret = link_addr_probe(c->pod_ls, ifindex, c->ipam.ips[i].address);
		if (ret < 0)
			log_warn("announcing %s: %s", c->ipam.ips[i].address, strerror(-ret));
	}
}

/* No undo: addresses and routes leave with the netdev when it changes namespace. */
int add_addr_run(struct add_ctx *c, struct cni_error *err)
{
	const char *ifname = c->req->env.ifname;
	struct link_sock *ls = c->pod_ls;
	struct link_info li = { .ifindex = c->pod_ifindex };
	int i, ret = 0;

	if (c->prev.n_ips + c->ipam.n_ips > CNI_MAX_IPS ||
	    c->prev.n_routes + c->ipam.n_routes > CNI_MAX_ROUTES)
		return cni_errorf(err, CNI_ERR_PLUGIN,
				  "the chain's result would exceed %d addresses or %d routes",
				  CNI_MAX_IPS, CNI_MAX_ROUTES);
	for (i = 0; i < c->ipam.n_ips; i++)
		snprintf(c->rec.addrs[i], sizeof(c->rec.addrs[i]), "%s", c->ipam.ips[i].address);
	c->rec.n_addrs = c->ipam.n_ips;
	if (c->vf.dpdk || !c->ipam.n_ips)
		return 0;
	/* The netdev step knows its index: a request less under RTNL. */
	if (li.ifindex <= 0)
		ret = link_get_by_name(ls, ifname, &li);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "%s in %s: %s", ifname, c->req->env.netns,
				  strerror(-ret));
	for (i = 0; i < c->ipam.n_ips; i++) {
		ret = link_addr_add(ls, li.ifindex, c->ipam.ips[i].address);
		if (ret < 0) {
			cni_errorf(err, CNI_ERR_PLUGIN, "address %s on %s: %s",
				   c->ipam.ips[i].address, ifname, strerror(-ret));
			return ret;
		}
	}
	for (i = 0; i < c->ipam.n_routes; i++) {
		struct link_route rt;

		sriov_route_resolve(&c->ipam, &c->ipam.routes[i], &rt);
		ret = link_route_add(ls, li.ifindex, &rt);
		if (ret < 0) {
			cni_errorf(err, CNI_ERR_PLUGIN, "route to %s via %s on %s: %s",
				   rt.dst, rt.gw[0] ? rt.gw : "(link)", ifname, strerror(-ret));
			cni_error_details(err, "the gateway must be reachable through an address "
					  "the ipam gives this interface");
			return ret;
		}
	}
	/* Its frames are Ethernet's: IPoIB peers learn the address from the kernel's ARP. */
	if (!c->conf.ib.is_ib)
		announce(c, li.ifindex);
	return 0;
}
