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
 * What the pod interface should hold. Without a prevResult, what ADD
 * recorded. With one, the spec's rule: the chain's prevResult, since a
 * plugin after us (tuning) may have changed the MAC or the MTU and says so
 * there; but only where it names the field. Where it does not (below
 * 1.1.0 a result has no mtu, and libcni 1.1.2 drops it from its cache),
 * what ADD set from the config (mac, mtu) is taken from the record; a
 * value ADD did not set (the VF's own) is then not checked, as a later
 * plugin may have changed it without a word. *mac_from_prev and
 * *mtu_from_prev say where each came from, for the message.
 */
static void expected(const struct sriov_conf *conf, const struct sriov_record *rec,
		     const struct cni_result *prev, bool from_prev, char mac[18], int *mtu,
		     bool *mac_from_prev, bool *mtu_from_prev)
{
	int i;

	valid_mac_format(rec->pod_mac, mac);
	*mtu = rec->pod_mtu;
	*mac_from_prev = *mtu_from_prev = false;
	/* IPoIB: a 20-byte address, which no result carries as a MAC. */
	if (rec->ib.ib)
		mac[0] = '\0';
	if (!from_prev)
		return;
	if (!conf->has_mac)
		mac[0] = '\0';
	if (conf->mtu <= 0)
		*mtu = 0;
	for (i = 0; i < prev->n_ifaces; i++)
		if (!strcmp(prev->ifaces[i].name, rec->ifname) && prev->ifaces[i].sandbox[0]) {
			if (prev->ifaces[i].mac[0]) {
				snprintf(mac, 18, "%s", prev->ifaces[i].mac);
				*mac_from_prev = true;
			}
			if (prev->ifaces[i].mtu > 0) {
				*mtu = prev->ifaces[i].mtu;
				*mtu_from_prev = true;
			}
			return;
		}
}

static int check_netdev(const struct cni_request *req, const struct sriov_conf *conf,
			const struct sriov_record *rec, const struct cni_result *prev,
			bool from_prev, struct cni_error *err)
{
	struct link_sock *ls = NULL;
	struct link_info li;
	char want[18], got[18], what[96];
	bool has, mac_prev, mtu_prev;
	int pod_fd, i, ret, mtu;

	ret = netns_open_id(req->env.netns, &rec->netns_id, &pod_fd);
	if (ret == -ESTALE)
		return cni_errorf(err, CNI_ERR_DRIFT, "CNI_NETNS %s names another namespace than "
				  "the one ADD moved %s into", req->env.netns, rec->ifname);
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
	/* By its device: a pod may have renamed the VF and given its name to a link of its own. */
	ret = sriov_link_is_vf(ls, &li, rec->bdf, what);
	if (ret != 1) {
		if (ret == -EXDEV)
			cni_errorf(err, CNI_ERR_DRIFT, "%s in %s is %s, not VF %s", rec->ifname,
				   req->env.netns, what, rec->bdf);
		else
			cni_errorf(err, CNI_ERR_PLUGIN, "%s in %s: cannot read its device: %s",
				   rec->ifname, req->env.netns, strerror(-ret));
		ret = -1;
		goto out;
	}
	expected(conf, rec, prev, from_prev, want, &mtu, &mac_prev, &mtu_prev);
	valid_mac_format(li.mac, got);
	ret = -1;
	if (want[0] && strcasecmp(want, got)) {
		cni_errorf(err, CNI_ERR_DRIFT, "%s: mac is %s, %s %s", rec->ifname, got,
			   mac_prev ? "prevResult says" : "ADD set", want);
		goto out;
	}
	if (mtu && li.mtu != mtu) {
		cni_errorf(err, CNI_ERR_DRIFT, "%s: mtu is %d, %s %d", rec->ifname, li.mtu,
			   mtu_prev ? "prevResult says" : "ADD set", mtu);
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
		struct link_route rt;

		sriov_route_resolve(prev, &prev->routes[i], &rt);
		ret = link_route_has(ls, li.ifindex, &rt, &has);
		if (ret < 0 || !has) {
			cni_errorf(err, CNI_ERR_DRIFT, "%s: route to %s via %s is missing", rec->ifname,
				   rt.dst, rt.gw[0] ? rt.gw : "(link)");
			ret = -1;
			goto out;
		}
	}
	ret = sriov_rail_check(rec, conf->multi_rail, conf->paths.proc_root, ls, pod_fd, li.ifindex,
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

static const struct {
	unsigned field;
	const char *name;
} vf_fields[] = {
	{ PF_VF_MAC, "mac" },
	{ PF_VF_VLAN, "vlan" },
	{ PF_VF_SPOOFCHK, "spoofchk" },
	{ PF_VF_TRUST, "trust" },
	{ PF_VF_LINK_STATE, "link_state" },
	{ PF_VF_RATE, "min_tx_rate/max_tx_rate" },
};

static bool vf_field_differs(unsigned field, const struct pf_vf_config *want,
			     const struct pf_vf_config *got)
{
	switch (field) {
	case PF_VF_MAC:
		return memcmp(want->mac, got->mac, 6) != 0;
	case PF_VF_VLAN:
		return want->vlan != got->vlan || want->qos != got->qos ||
		       want->vlan_proto != got->vlan_proto;
	case PF_VF_SPOOFCHK:
		return want->spoofchk != got->spoofchk;
	case PF_VF_TRUST:
		return want->trust != got->trust;
	case PF_VF_LINK_STATE:
		return want->link_state != got->link_state;
	case PF_VF_RATE:
		return want->min_tx_rate != got->min_tx_rate ||
		       want->max_tx_rate != got->max_tx_rate;
	}
	return false;
}

/*
 * The fields ADD set, compared where the PF reports them (got->mask): the
 * first that differs in *differs, and in unreported the ones a driver (or
 * a driver reloaded since) does not report, which are unknown, not equal.
 */
static void vfcfg_compare(const struct pf_vf_config *want, const struct pf_vf_config *got,
			  const char **differs, char *unreported, size_t len)
{
	size_t i, off = 0;

	*differs = NULL;
	unreported[0] = '\0';
	for (i = 0; i < sizeof(vf_fields) / sizeof(vf_fields[0]); i++) {
		unsigned f = vf_fields[i].field;

		if (!(want->mask & f))
			continue;
		if (!(got->mask & f)) {
			if (off < len)
				off += (size_t)snprintf(unreported + off, len - off, "%s%s",
							off ? ", " : "", vf_fields[i].name);
		} else if (!*differs && vf_field_differs(f, want, got)) {
			*differs = vf_fields[i].name;
		}
	}
}

static int check_vf_config(const struct sriov_record *rec, const char *sysfs_root,
			   struct cni_error *err)
{
	char pf_name[IFNAMSIZ];
	struct pf_vf_config now;
	struct pf *pf;
	const char *differs;
	char unreported[128], also[160] = "";
	int ret;

	if (!rec->vf_applied.mask)
		return 0;
	ret = sriov_pf_name(rec, sysfs_root, pf_name);
	if (ret == 0)
		ret = pf_open(pf_name, &pf);
	if (ret == 0) {
		ret = pf_get(pf, rec->vf_index, &now);
		pf_close(pf);
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot read VF %d on PF %s: %s",
				  rec->bdf, rec->vf_index, pf_name, strerror(-ret));
	vfcfg_compare(&rec->vf_applied, &now, &differs, unreported, sizeof(unreported));
	if (differs && unreported[0])
		snprintf(also, sizeof(also), "; the PF no longer reports %s", unreported);
	if (differs)
		return cni_errorf(err, CNI_ERR_DRIFT,
				  "deviceID %s: VF %d %s on PF %s no longer holds what ADD set%s",
				  rec->bdf, rec->vf_index, differs, pf_name, also);
	if (unreported[0])
		return cni_errorf(err, CNI_ERR_DRIFT,
				  "deviceID %s: PF %s no longer reports VF %d's %s, which ADD set: "
				  "CHECK cannot tell whether it still holds", rec->bdf,
				  pf_name, rec->vf_index, unreported);
	return 0;
}

/* What CHECK compares: the config, ADD's record, and the result to verify. */
struct check_ctx {
	struct sriov_conf conf;
	struct sriov_record rec;
	struct cni_result prev;
};

int sriov_cmd_check(struct cni_request *req, struct cni_error *err)
{
	struct sriov_record *rec;
	struct sriov_conf *conf;
	struct cni_result *prev;
	struct check_ctx *c;
	char name[512];
	int dirfd = -1, ret = -1, i;

	c = calloc(1, sizeof(*c));
	if (!c)
		return cni_errorf(err, CNI_ERR_PLUGIN, "out of memory");
	conf = &c->conf;
	rec = &c->rec;
	prev = &c->prev;
	cni_result_init(prev);
	if (sriov_conf_parse(req, conf, err))
		goto out;
	/* CHECK changes nothing: a stateDir that is not there holds no attachment. */
	ret = state_dir_open_existing(conf->state_dir, &dirfd);
	if (ret == -ENOENT) {
		cni_errorf(err, CNI_ERR_UNKNOWN_CONTAINER, "no attachment %s:%s: stateDir %s does "
			   "not exist (%s)", req->env.container_id, req->env.ifname, conf->state_dir,
			   strerror(-ret));
		goto out;
	}
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_IO, "stateDir %s: cannot open it: %s", conf->state_dir,
			   strerror(-ret));
		goto out;
	}
	sriov_record_name(req->env.container_id, req->env.ifname, name, sizeof(name));
	ret = sriov_record_read(dirfd, name, rec);
	if (ret == -EPROTO) {
		sriov_record_newer(rec, conf->state_dir, name, "nothing was checked", err);
		goto out;
	}
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_UNKNOWN_CONTAINER, "no attachment %s:%s in stateDir %s (%s)",
			   req->env.container_id, req->env.ifname, conf->state_dir, strerror(-ret));
		goto out;
	}
	ret = -1;
	if (strcmp(rec->bdf, conf->bdf)) {
		cni_errorf(err, CNI_ERR_DRIFT, "deviceID %s: the attachment holds VF %s", conf->bdf,
			   rec->bdf);
		goto out;
	}
	/* The spec: verify against prevResult; without one, against what ADD recorded. */
	if (req->prev_result) {
		if (cni_result_parse(req->prev_result, prev, err))
			goto out;
	} else {
		prev->n_ips = rec->n_addrs;
		for (i = 0; i < rec->n_addrs; i++)
			memcpy(prev->ips[i].address, rec->addrs[i], sizeof(prev->ips[i].address));
	}
	if ((!rec->dpdk && check_netdev(req, conf, rec, prev, req->prev_result != NULL, err)) ||
	    check_rdma(req, rec, err) ||
	    check_vf_config(rec, conf->paths.sysfs_root, err) ||
	    sriov_ib_check(rec, conf->paths.sysfs_root, err))
		goto out;
	if (conf->ipam_type && cni_delegate(req, conf->ipam_type, CNI_CMD_CHECK, NULL, err))
		goto out;
	ret = 0;
out:
	if (sriov_stranded(err))
		ret = -1;
	if (dirfd >= 0)
		close(dirfd);
	free(c);
	return ret < 0 ? -1 : 0;
}
