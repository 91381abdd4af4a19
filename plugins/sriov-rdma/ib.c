/* SPDX-License-Identifier: Apache-2.0 */
/*
 * InfiniBand VFs: what ib-sriov-cni does, inside this plugin's steps.
 *
 * A VF is InfiniBand when sysfs says so (its netdev's type, or its RDMA
 * port's link layer); the config only says what to set. Its GUIDs go to
 * the PF (pf_set_guids) and take effect once the VF is bound to its
 * driver again, which gives it a new netdev and RDMA device: both are
 * found again by PCI address. The original GUIDs are in the record before
 * the first change, so DEL puts them back whatever instant ADD died at.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conf.h"
#include "ib.h"
#include "link.h"
#include "log.h"
#include "sriov.h"

/* Settings that only an Ethernet VF has (the PF programs them on the e-switch). */
static const char *const eth_keys[] = {
	"mac", "vlan", "vlanQoS", "vlanProto", "spoofchk", "trust", "min_tx_rate", "max_tx_rate",
	NULL,
};

#define GUID_HOWTO "give it one: \"guid\": \"02:00:00:00:00:00:00:01\" (a GUID of your own), " \
	"\"guid\": \"auto\" (derived from the PF's port GUID and the VF index), or " \
	"ib-kubernetes (\"ibKubernetesEnabled\": true, with Multus passing " \
	"runtimeConfig.infinibandGUID)"

static int parse_guid(const char *field, const char *s, struct sriov_ib_conf *ib,
		      bool allow_auto, struct cni_error *err)
{
	ib->guid_field = field;
	if (allow_auto && !strcmp(s, "auto")) {
		ib->guid_auto = true;
		return 0;
	}
	if (ib_guid_parse(s, &ib->guid) < 0) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s \"%s\": not a GUID (want "
			   "00:11:22:33:44:55:66:77%s)", field, s, allow_auto ? ", or \"auto\"" : "");
		return -EINVAL;
	}
	/* All zeros is what the subnet manager refuses, all ones is no unicast GUID. */
	if (ib->guid == 0 || ib->guid == UINT64_MAX) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s \"%s\": the subnet manager takes no "
			   "all-%s GUID; give a unicast one", field, s, ib->guid ? "ones" : "zero");
		return -EINVAL;
	}
	return 0;
}

static int parse_pkey(const cJSON *conf, struct sriov_ib_conf *ib, struct cni_error *err)
{
	/* null is absent, as for every other member. */
	const cJSON *p = conf_member(conf, "pkey");
	char *end = NULL;
	unsigned long v = 0;

	if (!p)
		return 0;
	/* ib-sriov-cni's users write "0x8001"; a JSON number is taken too. */
	if (cJSON_IsString(p)) {
		errno = 0;
		v = strtoul(p->valuestring, &end, 16);
		if (errno || end == p->valuestring || *end || strncasecmp(p->valuestring, "0x", 2))
			end = NULL;
	} else if (cJSON_IsNumber(p) && p->valuedouble >= 0 && p->valuedouble <= 0xffff &&
		   p->valuedouble == (double)(long)p->valuedouble) {
		v = (unsigned long)p->valuedouble;
		end = "";
	}
	if (!end || v > 0xffff || !(v & 0x7fff)) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "pkey: not a partition key (want \"0x0001\" "
			   "to \"0xffff\", the top bit for full membership, e.g. \"0x8001\")");
		return -EINVAL;
	}
	ib->has_pkey = true;
	ib->pkey = (uint16_t)v;
	return 0;
}

int sriov_ib_parse(const struct cni_request *req, struct sriov_conf *conf, struct cni_error *err)
{
	struct sriov_ib_conf *ib = &conf->ib;
	const char *rt = NULL, *g = NULL;
	bool present = false;
	int i;

	memset(ib, 0, sizeof(*ib));
	if ((req->runtime_config &&
	     conf_string(req->runtime_config, "runtimeConfig", "infinibandGUID", &rt, false, err)) ||
	    conf_string(req->conf, "", "guid", &g, false, err) ||
	    conf_bool(req->conf, "", "ibKubernetesEnabled", &ib->k8s, &present, err) ||
	    parse_pkey(req->conf, ib, err))
		return -EINVAL;
	if (rt && !rt[0])
		rt = NULL;
	/* ib-sriov-cni's order: the capability (ib-kubernetes' choice) over the config. */
	if (rt && parse_guid("runtimeConfig.infinibandGUID", rt, ib, false, err))
		return -EINVAL;
	if (!rt && g && parse_guid("guid", g, ib, true, err))
		return -EINVAL;
	if (rt)
		ib->ib_key = "runtimeConfig.infinibandGUID";
	else if (g)
		ib->ib_key = "guid";
	else if (ib->has_pkey)
		ib->ib_key = "pkey";
	else if (ib->k8s)
		ib->ib_key = "ibKubernetesEnabled";
	for (i = 0; eth_keys[i] && !ib->eth_key; i++)
		if (cJSON_GetObjectItemCaseSensitive(req->conf, eth_keys[i]))
			ib->eth_key = eth_keys[i];
	if (!ib->eth_key && conf->has_mac)
		ib->eth_key = cni_env_arg(&req->env, "MAC") ? "CNI_ARGS MAC" : "runtimeConfig.mac";
	return 0;
}

/*
 * A VF whose devices are in the pod shows neither netdev nor RDMA device
 * on the host, nor does one a killed ADD left unbound: its PF tells then.
 */
int sriov_ib_link_is_ib(const char *sysfs_root, const struct vf_dev *vf, bool *ib)
{
	int ret = ib_vf_is_ib(sysfs_root, vf->bdf, vf->netdev, vf->rdma_dev, ib);

	return ret == -ENOENT ? ib_pf_is_ib(sysfs_root, vf->pf_bdf, vf->pf_netdev, ib) : ret;
}

int sriov_ib_open_pf(const struct vf_dev *vf, int pci_fd, struct pf **pf, struct cni_error *err)
{
	int ret = pf_open(vf->pf_netdev, pf);

	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot reach its PF %s: %s",
				  vf->bdf, vf->pf_netdev, strerror(-ret));
	ret = pci_fd >= 0 ? pf_lock_at(*pf, pci_fd, vf->pf_bdf) : 0;
	if (ret < 0) {
		pf_close(*pf);
		*pf = NULL;
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: PF address %s: %s", vf->bdf,
				  vf->pf_bdf, strerror(-ret));
	}
	return 0;
}

int sriov_ib_snapshot(const struct sriov_conf *conf, const struct vf_dev *vf, int pci_fd,
		      struct sriov_record *rec, struct cni_error *err)
{
	const struct sriov_ib_conf *ib = &conf->ib;
	struct sriov_ib_rec *r = &rec->ib;
	char now[IB_GUID_STR_LEN], want[IB_GUID_STR_LEN];
	struct pf *pf = NULL;
	uint64_t pf_guid, guid;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!ib->is_ib)
		return 0;
	r->ib = true;
	r->has_pkey = ib->has_pkey;
	r->pkey = ib->pkey;
	snprintf(r->driver, sizeof(r->driver), "%s", vf->driver);
	if (sriov_ib_open_pf(vf, pci_fd, &pf, err))
		return -1;
	ret = pf_get_guids(pf, vf->vf_index, &r->orig);
	pf_close(pf);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot read the GUIDs of VF %d on PF "
			   "%s: %s", vf->bdf, vf->vf_index, vf->pf_netdev,
			   ret == -ENODATA ? "the PF does not report them (a kernel before 5.5?)" :
			   strerror(-ret));
		return -1;
	}
	if (ib->guid_auto) {
		ret = ib_port_guid(conf->paths.sysfs_root, vf->pf_bdf, &pf_guid);
		if (ret < 0 || !pf_guid) {
			cni_errorf(err, CNI_ERR_PLUGIN, "guid \"auto\": cannot read the port GUID of PF "
				   "%s in %s/bus/pci/devices/%s/infiniband/*/ports/1/gids/0: %s",
				   vf->pf_netdev, conf->paths.sysfs_root, vf->pf_bdf,
				   ret < 0 ? strerror(-ret) : "it is all zeros");
			cni_error_details(err, "set a GUID of your own in \"guid\" instead");
			return -1;
		}
		guid = ib_guid_auto(pf_guid, vf->vf_index);
	} else if (ib->guid_field) {
		guid = ib->guid;
	} else if (!r->orig.node || !r->orig.port) {
		ib_guid_format(r->orig.node ? r->orig.port : r->orig.node, now);
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "deviceID %s: VF %d of PF %s has the all-zero "
			   "%s GUID %s, which the subnet manager never brings up, and the config "
			   "gives it none", vf->bdf, vf->vf_index, vf->pf_netdev,
			   r->orig.node ? "port" : "node", now);
		cni_error_details(err, GUID_HOWTO);
		return -EINVAL;
	} else {
		return 0;
	}
	r->applied.node = r->applied.port = guid;
	if (r->orig.node == guid && r->orig.port == guid) {
		ib_guid_format(guid, now);
		log_info("VF %s already has GUID %s: no change, no rebind", vf->bdf, now);
		return 0;
	}
	r->guid_set = true;
	ib_guid_format(r->orig.port, now);
	ib_guid_format(guid, want);
	log_info("VF %s: GUID %s -> %s (%s)", vf->bdf, now, want,
		 ib->guid_auto ? "auto" : ib->guid_field);
	return 0;
}

int sriov_ib_rebind_ms(void)
{
	const char *v = getenv(SRIOV_ENV_REBIND_MS);
	long ms;
	char *end;

	if (!v || !v[0])
		return SRIOV_IB_REBIND_MS;
	ms = strtol(v, &end, 10);
	return *end || ms <= 0 || ms > 600000 ? SRIOV_IB_REBIND_MS : (int)ms;
}

int sriov_ib_restore(const struct sriov_record *rec, int pf_lock_dirfd, const char *sysfs_root,
		     struct timing *timing)
{
	char netdev[IFNAMSIZ], rdma[64], guid[IB_GUID_STR_LEN];
	struct pf *pf = NULL;
	struct vf_dev vf;
	int ret;

	if (!rec->ib.guid_set)
		return 0;
	ret = vf_lookup(sysfs_root, rec->bdf, &vf);
	if (ret == -ENODEV || ret == -ENOTSUP) {
		log_warn("VF %s is gone: no GUID to restore", rec->bdf);
		return 0;
	}
	/* The PF as sysfs names it now, by the VF's physfn: a renamed PF is the same PF. */
	ret = pf_open(vf.pf_netdev, &pf);
	if (ret == -ENODEV) {
		log_warn("VF %s: its PF %s is gone: no GUID to restore", rec->bdf, vf.pf_netdev);
		return 0;
	}
	if (ret < 0)
		return ret;
	if (pf_lock_dirfd >= 0 && (ret = pf_lock_at(pf, pf_lock_dirfd, rec->pf_bdf)) < 0)
		log_warn("VF %s: PF address %s: %s: its GUIDs go back without the PF's lock",
			 rec->bdf, rec->pf_bdf, strerror(-ret));
	ret = pf_set_guids(pf, rec->vf_index, &rec->ib.orig);
	timing_wait(timing, "pf", pf_lock_waited_ms(pf));
	pf_close(pf);
	if (ret < 0)
		return ret;
	/*
	 * Always rebound: the GUID above may equal the PF's already while the
	 * VF still runs with the other (a kill between a set and its rebind).
	 */
	ret = ib_vf_rebind(sysfs_root, rec->bdf, rec->ib.driver, sriov_ib_rebind_ms(), netdev, rdma);
	ib_guid_format(rec->ib.orig.port, guid);
	if (ret < 0)
		log_warn("VF %s: GUID %s restored on PF %s, but rebinding it to %s: %s (it takes "
			 "effect at the VF's next probe)", rec->bdf, guid, vf.pf_netdev,
			 rec->ib.driver, strerror(-ret));
	else
		log_info("VF %s: GUID %s restored, rebound: netdev %s", rec->bdf, guid, netdev);
	return 0;
}

void sriov_ib_fallback(const struct sriov_paths *paths, const struct vf_dev *vf,
		       struct sriov_record *rec)
{
	bool ib = false;
	int ret;

	ret = sriov_ib_link_is_ib(paths->sysfs_root, vf, &ib);
	if (ret < 0 || !ib)
		return;
	rec->ib.ib = true;
	rec->vf_orig.mask &= PF_VF_LINK_STATE;
	memset(rec->host_mac, 0, sizeof(rec->host_mac));
}

int sriov_ib_check(const struct sriov_record *rec, const char *sysfs_root, struct cni_error *err)
{
	char want[IB_GUID_STR_LEN], got[IB_GUID_STR_LEN], pf_name[IFNAMSIZ];
	struct pf_vf_guids now;
	struct pf *pf;
	int ret;

	if (!rec->ib.ib || (!rec->ib.applied.node && !rec->ib.applied.port))
		return 0;
	/* The PF by its recorded PCI address, as DEL finds it: a renamed PF is the same PF. */
	ret = sriov_pf_name(rec, sysfs_root, pf_name);
	if (ret == 0)
		ret = pf_open(pf_name, &pf);
	if (ret == 0) {
		ret = pf_get_guids(pf, rec->vf_index, &now);
		pf_close(pf);
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: cannot read the GUIDs of VF %d "
				  "on PF %s: %s", rec->bdf, rec->vf_index, pf_name,
				  strerror(-ret));
	if (now.node != rec->ib.applied.node || now.port != rec->ib.applied.port) {
		bool node = now.node != rec->ib.applied.node;

		ib_guid_format(node ? rec->ib.applied.node : rec->ib.applied.port, want);
		ib_guid_format(node ? now.node : now.port, got);
		return cni_errorf(err, CNI_ERR_DRIFT, "deviceID %s: VF %d %s GUID on PF %s is %s, "
				  "ADD set %s", rec->bdf, rec->vf_index, node ? "node" : "port",
				  pf_name, got, want);
	}
	return 0;
}
