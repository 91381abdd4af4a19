/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CHECK: is the attachment still what ADD made? The interface in the pod
 * under its name, MAC and MTU, its addresses, the RDMA device in the pod
 * (when ADD moved it), the VF properties on the PF, and the IPAM's own
 * reservation; with multiRail, the interface's rules, table and sysctls.
 * Any difference is code 107 naming it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "link.h"
#include "log.h"
#include "netns.h"
#include "state.h"
#include "sriov.h"

/*
 * What the pod interface should hold. The spec checks against the chain's
 * prevResult: a plugin after us (tuning) may have changed the MAC or the
 * MTU, and says so there. Without a prevResult, what ADD recorded.
 */
static void expected(const struct sriov_record *rec, const struct cni_result *prev,
		     bool from_prev, char mac[18], int *mtu)
{
	int i;

	link_mac_format(rec->pod_mac, mac);
	*mtu = rec->pod_mtu;
	/* IPoIB: a 20-byte address, which no result carries as a MAC. */
	if (rec->ib.ib)
		mac[0] = '\0';
	if (!from_prev)
		return;
	mac[0] = '\0';
	*mtu = 0;
	for (i = 0; i < prev->n_ifaces; i++)
		if (!strcmp(prev->ifaces[i].name, rec->ifname) && prev->ifaces[i].sandbox[0]) {
			snprintf(mac, 18, "%s", prev->ifaces[i].mac);
			*mtu = prev->ifaces[i].mtu;
			return;
		}
}

static int check_netdev(const struct cni_request *req, const struct sriov_conf *conf,
			const struct sriov_record *rec, const struct cni_result *prev,
			bool from_prev, struct cni_error *err)
{
	struct link_sock *ls = NULL;
	struct link_info li;
	char want[18], got[18];
	bool has;
	int pod_fd, i, ret, mtu;

	ret = netns_open(req->env.netns, &pod_fd);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_INVALID_NETNS, "CNI_NETNS %s: %s", req->env.netns,
				  strerror(-ret));
	ret = link_sock_open_in(pod_fd, &ls);
	if (ret < 0) {
		close(pod_fd);
		return cni_errorf(err, CNI_ERR_PLUGIN, "CNI_NETNS %s: %s", req->env.netns,
				  strerror(-ret));
	}
	ret = link_get_by_name(ls, rec->ifname, &li);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_DRIFT, "%s: not in %s (%s)", rec->ifname, req->env.netns,
			   strerror(-ret));
		goto out;
	}
	expected(rec, prev, from_prev, want, &mtu);
	link_mac_format(li.mac, got);
	ret = -1;
	if (want[0] && strcasecmp(want, got)) {
		cni_errorf(err, CNI_ERR_DRIFT, "%s: mac is %s, %s %s", rec->ifname, got,
			   from_prev ? "prevResult says" : "ADD set", want);
		goto out;
	}
	if (mtu && li.mtu != mtu) {
		cni_errorf(err, CNI_ERR_DRIFT, "%s: mtu is %d, %s %d", rec->ifname, li.mtu,
			   from_prev ? "prevResult says" : "ADD set", mtu);
		goto out;
	}
	if (!li.up) {
		cni_errorf(err, CNI_ERR_DRIFT, "%s: link is down", rec->ifname);
		goto out;
	}
	for (i = 0; i < prev->n_ips; i++) {
		int k = prev->ips[i].iface;

		/* A chain's prevResult may also carry other plugins' interfaces. */
		if (k >= 0 && k < prev->n_ifaces && strcmp(prev->ifaces[k].name, rec->ifname))
			continue;
		ret = link_addr_has(ls, li.ifindex, prev->ips[i].address, &has);
		if (ret < 0 || !has) {
			cni_errorf(err, CNI_ERR_DRIFT, "%s: address %s is missing", rec->ifname,
				   prev->ips[i].address);
			ret = -1;
			goto out;
		}
	}
	/* As ADD installed them: a route without gw goes via the IPAM's gateway. */
	for (i = 0; i < prev->n_routes; i++) {
		struct cni_route rt;

		cni_route_resolve(prev, &prev->routes[i], &rt);
		ret = link_route_has(ls, li.ifindex, &rt, &has);
		if (ret < 0 || !has) {
			cni_errorf(err, CNI_ERR_DRIFT, "%s: route to %s via %s is missing", rec->ifname,
				   rt.dst, rt.gw[0] ? rt.gw : "(link)");
			ret = -1;
			goto out;
		}
	}
	ret = sriov_rail_check(rec, conf->multi_rail, conf->proc_root, ls, pod_fd, li.ifindex,
			       req->env.netns, err);
out:
	link_sock_close(ls);
	close(pod_fd);
	return ret;
}

static int check_rdma(const struct cni_request *req, const struct sriov_record *rec,
		      struct cni_error *err)
{
	int pod_fd, ret;

	if (!rec->rdma_moved)
		return 0;
	ret = netns_open(req->env.netns, &pod_fd);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_INVALID_NETNS, "CNI_NETNS %s: %s", req->env.netns,
				  strerror(-ret));
	ret = sriov_rdma_check(rec, pod_fd, req->env.netns, err);
	close(pod_fd);
	return ret;
}

static bool vfcfg_differs(const struct pf_vf_config *want, const struct pf_vf_config *got,
			  const char **field)
{
	unsigned m = want->mask;

	*field = NULL;
	if ((m & PF_VF_MAC) && memcmp(want->mac, got->mac, 6))
		*field = "mac";
	else if ((m & PF_VF_VLAN) && (want->vlan != got->vlan || want->qos != got->qos ||
				       want->vlan_proto != got->vlan_proto))
		*field = "vlan";
	else if ((m & PF_VF_SPOOFCHK) && want->spoofchk != got->spoofchk)
		*field = "spoofchk";
	else if ((m & PF_VF_TRUST) && want->trust != got->trust)
		*field = "trust";
	else if ((m & PF_VF_LINK_STATE) && want->link_state != got->link_state)
		*field = "link_state";
	else if ((m & PF_VF_RATE) && (want->min_tx_rate != got->min_tx_rate ||
				       want->max_tx_rate != got->max_tx_rate))
		*field = "min_tx_rate/max_tx_rate";
	return *field != NULL;
}

static int check_vf_config(const struct sriov_record *rec, struct cni_error *err)
{
	struct pf_vf_config now;
	struct pf *pf;
	const char *field;
	int ret;

	if (!rec->vf_applied.mask)
		return 0;
	ret = pf_open(rec->pf_netdev, &pf);
	if (ret == 0) {
		ret = pf_get(pf, rec->vf_index, &now);
		pf_close(pf);
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot read VF %d on PF %s: %s",
				  rec->bdf, rec->vf_index, rec->pf_netdev, strerror(-ret));
	if (vfcfg_differs(&rec->vf_applied, &now, &field))
		return cni_errorf(err, CNI_ERR_DRIFT,
				  "deviceID %s: VF %d %s on PF %s no longer holds what ADD set",
				  rec->bdf, rec->vf_index, field, rec->pf_netdev);
	return 0;
}

int sriov_cmd_check(struct cni_request *req, struct cni_error *err)
{
	struct sriov_conf conf;
	struct sriov_record rec;
	struct cni_result *prev;
	char name[512];
	int dirfd = -1, ret = -1, i;

	prev = calloc(1, sizeof(*prev));
	if (!prev)
		return cni_errorf(err, CNI_ERR_PLUGIN, "out of memory");
	cni_result_init(prev);
	if (sriov_conf_parse(req, &conf, err))
		goto out;
	if (state_dir_open(conf.state_dir, &dirfd) < 0) {
		cni_errorf(err, CNI_ERR_IO, "stateDir %s: cannot open it", conf.state_dir);
		goto out;
	}
	sriov_record_name(req->env.container_id, req->env.ifname, name, sizeof(name));
	ret = sriov_record_read(dirfd, name, &rec);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_UNKNOWN_CONTAINER, "no attachment %s:%s in stateDir %s (%s)",
			   req->env.container_id, req->env.ifname, conf.state_dir, strerror(-ret));
		goto out;
	}
	ret = -1;
	if (strcmp(rec.bdf, conf.bdf)) {
		cni_errorf(err, CNI_ERR_DRIFT, "deviceID %s: the attachment holds VF %s", conf.bdf,
			   rec.bdf);
		goto out;
	}
	/* The spec: verify against prevResult; without one, against what ADD recorded. */
	if (req->prev_result) {
		if (cni_result_parse(req->prev_result, prev, err))
			goto out;
	} else {
		prev->n_ips = rec.n_addrs;
		for (i = 0; i < rec.n_addrs; i++)
			memcpy(prev->ips[i].address, rec.addrs[i], sizeof(prev->ips[i].address));
	}
	if ((!rec.dpdk && check_netdev(req, &conf, &rec, prev, req->prev_result != NULL, err)) ||
	    check_rdma(req, &rec, err) ||
	    check_vf_config(&rec, err) ||
	    sriov_ib_check(&rec, err))
		goto out;
	if (conf.ipam_type && cni_delegate(req, conf.ipam_type, CNI_CMD_CHECK, NULL, err))
		goto out;
	ret = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	free(prev);
	return ret < 0 ? -1 : 0;
}
