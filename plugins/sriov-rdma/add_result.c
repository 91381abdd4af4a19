/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ADD's answer: the chain's result with this interface added, and the log
 * line that says what the pod got.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "timing.h"
#include "add.h"

/* Our interface and the IPAM's addresses, after what earlier plugins of the chain reported. */
void add_result_fill(struct add_ctx *c, struct cni_result *res)
{
	struct cni_iface *ifc;
	int idx, i;

	*res = c->prev;
	idx = res->n_ifaces;
	ifc = cni_result_add_iface(res);
	snprintf(ifc->name, sizeof(ifc->name), "%s", c->req->env.ifname);
	snprintf(ifc->sandbox, sizeof(ifc->sandbox), "%s", c->req->env.netns);
	snprintf(ifc->pci_id, sizeof(ifc->pci_id), "%s", c->vf.bdf);
	if (!c->vf.dpdk) {
		if (!c->conf.ib.is_ib)
			valid_mac_format(c->rec.pod_mac, ifc->mac);
		ifc->mtu = c->rec.pod_mtu;
	} else if (c->conf.has_mac) {
		valid_mac_format(c->conf.mac, ifc->mac);
	} else if (c->pf && (c->pf_before.mask & PF_VF_MAC)) {
		/* vf-config set no MAC: the one read before stands, without asking the PF again. */
		valid_mac_format(c->pf_before.mac, ifc->mac);
	}
	for (i = 0; i < c->ipam.n_ips; i++) {
		res->ips[res->n_ips] = c->ipam.ips[i];
		res->ips[res->n_ips++].iface = idx;
	}
	for (i = 0; i < c->ipam.n_routes; i++)
		res->routes[res->n_routes++] = c->ipam.routes[i];
	if (c->ipam.dns.n_nameservers || c->ipam.dns.domain[0] || c->ipam.dns.n_search)
		res->dns = c->ipam.dns;
}

/*
 * What a workload needs to name its HCA: the RDMA device as the pod sees it
 * and the RoCE v2 GID index of the pod's first address, which exists only
 * once the address is configured. Best effort: the attachment works without,
 * and libibverbs may lack the driver's provider on the host.
 */
static void rdma_summary(struct add_ctx *c, char *out, size_t len)
{
	const char *dev = c->rec.rdma_pod_name;
	const char *how = c->rec.rdma_moved ? "moved" : "shared";
	const char *addr = c->rec.n_addrs ? c->rec.addrs[0] : NULL;
	int gid, ret;

	if (!dev[0]) {
		snprintf(out, len, "rdma %s", c->conf.rdma == SRIOV_RDMA_OFF ? "off" : "none");
		return;
	}
	ret = sriov_rdma_pod_view(&c->rec, c->pod_fd, addr, &gid);
	if (ret == -ENODEV)
		log_warn("RDMA device %s: libibverbs does not list it in %s (is the provider of "
			 "its driver installed?)", dev, c->req->env.netns);
	else if (ret < 0)
		log_warn("RDMA device %s: no RoCE v2 GID for %s in %s: %s", dev, addr,
			 c->req->env.netns, strerror(-ret));
	if (gid >= 0)
		snprintf(out, len, "rdma %s (%s), NCCL_IB_HCA=%s NCCL_IB_GID_INDEX=%d", dev, how,
			 dev, gid);
	else
		snprintf(out, len, "rdma %s (%s), NCCL_IB_HCA=%s, GID index unknown%s", dev, how,
			 dev, addr ? "" : " (no address)");
}

/* ", trace <id>" when the runtime passed a valid TRACEPARENT, else "". */
static void trace_suffix(char *out, size_t len)
{
	char id[33];

	if (timing_trace_id(getenv("TRACEPARENT"), id))
		snprintf(out, len, ", trace %s", id);
	else if (len)
		out[0] = '\0';
}

void add_log_success(struct add_ctx *c, const struct cni_result *res)
{
	char addrs[256] = "", rdma[256], steps[512], trace[48];
	size_t off = 0;
	int i;

	for (i = 0; i < c->rec.n_addrs && off < sizeof(addrs); i++)
		off += (size_t)snprintf(addrs + off, sizeof(addrs) - off, "%s%s", i ? "," : "",
					c->rec.addrs[i]);
	rdma_summary(c, rdma, sizeof(rdma));
	timing_lap(&c->timing, "result");
	timing_wait(&c->timing, "pf", c->pf ? pf_lock_waited_ms(c->pf) : 0);
	timing_format(&c->timing, steps, sizeof(steps));
	trace_suffix(trace, sizeof(trace));
	log_info("VF %s: %s -> %s in %s, mac %s, addresses %s, %s; steps %s%s", c->vf.bdf,
		 c->vf.dpdk ? "(dpdk)" : c->rec.host_ifname, c->req->env.ifname,
		 c->req->env.netns, res->ifaces[0].mac[0] ? res->ifaces[0].mac : "unknown",
		 c->rec.n_addrs ? addrs : "none", rdma, steps, trace);
}
