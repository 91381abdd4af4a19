/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Into the pod: the RDMA device, then the netdev, then the pod's sysctls
 * (multiRail's and the config's, in one visit of the namespace) and
 * multiRail's policy routing once the addresses are known.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "netns.h"
#include "sysctl.h"
#include "add.h"

int add_rdma_run(struct add_ctx *c, struct cni_error *err)
{
	if (!c->rdma)
		return 0;
	return sriov_rdma_to_pod(&c->conf, c->rdma, c->pod_fd, c->req->env.netns, &c->rec, err);
}

void add_rdma_undo(struct add_ctx *c)
{
	int ret = sriov_rdma_to_host(&c->rec, c->pod_fd);

	if (ret < 0)
		log_error("VF %s: cannot return RDMA device %s to the host: %s", c->vf.bdf,
			  c->rec.rdma_dev, strerror(-ret));
}

int add_netdev_run(struct add_ctx *c, struct cni_error *err)
{
	const char *ifname = c->req->env.ifname;
	struct link_info pod_li;
	int ret;

	if (c->vf.dpdk) {
		log_info("VF %s is bound to %s (DPDK): no netdev to move", c->vf.bdf, c->vf.driver);
		return 0;
	}
	/*
	 * Moving an IB RDMA device recreates its IPoIB netdev (ib-sriov-cni's
	 * finding): the netdev to move is the one the VF's PCI address has now.
	 */
	if (c->conf.ib.is_ib && c->rdma && (ret = add_ib_netdev_again(c, err)) < 0)
		return ret;
	c->rail.held_down = sriov_rail_hold_down(&c->conf);
	ret = sriov_netdev_to_pod(&c->host_li, c->altnames, c->n_altnames, c->pod_fd, c->pod_ls,
				  ifname, c->conf.has_mac ? c->conf.mac : NULL, c->conf.mtu,
				  !c->rail.held_down, &pod_li);
	if (ret == -EEXIST)
		return cni_errorf(err, CNI_ERR_IFNAME_TAKEN,
				  "CNI_IFNAME %s: already exists in %s; the VF stays on the host as %s",
				  ifname, c->req->env.netns, c->vf.netdev);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot move %s into %s as %s: %s",
				  c->vf.bdf, c->vf.netdev, c->req->env.netns, ifname,
				  strerror(-ret));
	if (!c->conf.ib.is_ib)
		memcpy(c->rec.pod_mac, pod_li.mac, 6);
	c->rec.pod_mtu = pod_li.mtu;
	c->pod_ifindex = pod_li.ifindex;
	c->pod_carrier = pod_li.carrier;
	return 0;
}

void add_netdev_undo(struct add_ctx *c)
{
	bool found;
	int ret;

	if (c->vf.dpdk)
		return;
	ret = sriov_netdev_to_host(&c->rec, c->pod_ls, c->conf.paths.sysfs_root, &found);
	if (ret < 0 || !found)
		log_error("VF %s: cannot return %s to the host: %s", c->vf.bdf, c->rec.host_ifname,
			  ret < 0 ? strerror(-ret) : "not found");
}

/*
 * Inside the pod: the kernel sends the NA of each IPv6 address when its DAD
 * completes, and announces every address again on a later link-up or MAC
 * change. A VF that arrives without carrier (igbvf reports it a watchdog
 * tick after link-up, a PF whose link is down later still) would drop the
 * gratuitous ARPs of the neighbour probe (docs/how-it-works.md
 * "Announcements"): its probe is repeated for SRIOV_LATE_CARRIER_PROBES
 * seconds instead of 3.
 * A config's own sysctl for it is written after this one and wins.
 */
static void pod_notify(struct add_ctx *c)
{
	const char *ifname = c->req->env.ifname;
	char name[SYSCTL_NAME_MAX + 1], probes[16];
	int ret;

	if (!c->pod_carrier) {
		snprintf(name, sizeof(name), "net.ipv4.neigh.%s.mcast_solicit", ifname);
		snprintf(probes, sizeof(probes), "%d", SRIOV_LATE_CARRIER_PROBES);
		ret = sysctl_write_in(-1, c->conf.paths.proc_root, name, probes);
		if (ret < 0)
			log_warn("mcast_solicit on %s: %s", ifname, strerror(-ret));
		else
			log_debug("%s has no carrier yet: its gratuitous ARPs go on for %s s",
				  ifname, probes);
	}

	snprintf(name, sizeof(name), "net.ipv4.conf.%s.arp_notify", ifname);
	ret = sysctl_write_in(-1, c->conf.paths.proc_root, name, "1");
	if (ret < 0)
		log_warn("arp_notify on %s: %s", ifname, strerror(-ret));
	snprintf(name, sizeof(name), "net.ipv6.conf.%s.ndisc_notify", ifname);
	ret = sysctl_write_in(-1, c->conf.paths.proc_root, name, "1");
	if (ret < 0 && ret != -ENOENT)
		log_warn("ndisc_notify on %s: %s", ifname, strerror(-ret));
}

struct sysctl_args {
	struct add_ctx *c;
	struct cni_error *err;
};

static int sysctl_cb(void *arg)
{
	struct sysctl_args *a = arg;
	struct add_ctx *c = a->c;
	int ret = 0;

	pod_notify(c);
	if (!sriov_rail_hold_down(&c->conf))
		return 0;
	ret = sriov_rail_sysctls(&c->conf, c->pod_ls, c->req->env.ifname, c->pod_ifindex,
				 &c->rail, a->err);
	/* No later undo runs for this step: what it changed goes back now. */
	if (ret < 0)
		sriov_rail_sysctls_undo(&c->conf, &c->rail);
	else
		sriov_rail_sysctls_made(&c->conf, c->req->env.ifname, &c->rec.rail);
	return ret;
}

/*
 * Every sysctl of the pod in one visit: /proc/sys/net answers for the
 * namespace of whoever opens it, and a setns per write (each a read too,
 * for the undo) was most of what this step cost.
 */
int add_sysctl_run(struct add_ctx *c, struct cni_error *err)
{
	struct sysctl_args a = { .c = c, .err = err };
	int ret;

	if (c->vf.dpdk) {
		if (sriov_rail_hold_down(&c->conf))
			log_warn("VF %s is bound to %s (DPDK): multiRail and sysctl act on a netdev, "
				 "and it has none: nothing of them is set", c->vf.bdf, c->vf.driver);
		return 0;
	}
	ret = netns_do(c->pod_fd, sysctl_cb, &a);
	if (ret < 0 && !err->code)
		cni_errorf(err, CNI_ERR_PLUGIN, "CNI_NETNS %s: cannot enter it: %s",
			   c->req->env.netns, strerror(-ret));
	return ret;
}

static int sysctl_undo_cb(void *arg)
{
	struct add_ctx *c = arg;

	sriov_rail_sysctls_undo(&c->conf, &c->rail);
	return 0;
}

void add_sysctl_undo(struct add_ctx *c)
{
	int ret;

	if (!c->rail.n_saved)
		return;
	ret = netns_do(c->pod_fd, sysctl_undo_cb, c);
	if (ret < 0 && !netns_stranded())
		log_error("cannot enter %s to put its sysctls back: %s", c->req->env.netns,
			  strerror(-ret));
}

int add_routing_run(struct add_ctx *c, struct cni_error *err)
{
	if (c->vf.dpdk)
		return 0;
	return sriov_rail_routing(&c->conf, c->pod_ls, c->req->env.ifname, c->pod_ifindex,
				  &c->ipam, &c->rail, &c->rec.rail, err);
}

void add_routing_undo(struct add_ctx *c)
{
	sriov_rail_routing_undo(c->pod_ls, &c->rail);
}
