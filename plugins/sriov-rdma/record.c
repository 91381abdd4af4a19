/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The attachment record (<stateDir>/<containerID>:<ifname>.json). It holds
 * what DEL needs to undo an ADD even when the config it gets differs or the
 * pod's namespace is gone. ADD writes it before its first change on the
 * host, marked "inProgress", and again without the mark once it succeeded,
 * so a DEL after ADD was killed knows everything that may have changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include "cni.h"
#include "ib.h"
#include "link.h"
#include "state.h"
#include "sysctl.h"
#include "sriov.h"

void sriov_record_name(const char *container_id, const char *ifname, char *out, size_t len)
{
	/* ':' is in neither a container ID nor an ifname, so the name is unambiguous. */
	snprintf(out, len, "%s:%s.json", container_id, ifname);
}

static int add_mac(cJSON *obj, const char *key, const uint8_t mac[6])
{
	char s[18];

	valid_mac_format(mac, s);
	return cJSON_AddStringToObject(obj, key, s) ? 0 : -ENOMEM;
}

static cJSON *vfcfg_to_json(const struct pf_vf_config *c)
{
	cJSON *o = cJSON_CreateObject();
	bool ok = o != NULL;

	if (ok && (c->mask & PF_VF_MAC))
		ok = add_mac(o, "mac", c->mac) == 0;
	if (ok && (c->mask & PF_VF_VLAN))
		ok = cJSON_AddNumberToObject(o, "vlan", c->vlan) &&
		     cJSON_AddNumberToObject(o, "vlanQoS", c->qos) &&
		     cJSON_AddNumberToObject(o, "vlanProto", c->vlan_proto);
	if (ok && (c->mask & PF_VF_SPOOFCHK))
		ok = cJSON_AddBoolToObject(o, "spoofchk", c->spoofchk) != NULL;
	if (ok && (c->mask & PF_VF_TRUST))
		ok = cJSON_AddBoolToObject(o, "trust", c->trust) != NULL;
	if (ok && (c->mask & PF_VF_LINK_STATE))
		ok = cJSON_AddNumberToObject(o, "linkState", c->link_state) != NULL;
	if (ok && (c->mask & PF_VF_RATE))
		ok = cJSON_AddNumberToObject(o, "minTxRate", c->min_tx_rate) &&
		     cJSON_AddNumberToObject(o, "maxTxRate", c->max_tx_rate);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/*
 * An integer in [min, max] under key: -ENOENT when absent, -EBADMSG for
 * anything else (a string, NaN, a fraction, a value out of range), so no
 * conversion below ever sees a number it cannot represent.
 */
static int get_int(const cJSON *o, const char *key, double min, double max, long long *v)
{
	const cJSON *n = get(o, key);

	if (!n)
		return -ENOENT;
	if (!cJSON_IsNumber(n) || !(n->valuedouble >= min && n->valuedouble <= max) ||
	    n->valuedouble != (double)(long long)n->valuedouble)
		return -EBADMSG;
	*v = (long long)n->valuedouble;
	return 0;
}

/* Present and in range (an optional key may be absent: *v is then def). */
static bool int_ok(const cJSON *o, const char *key, double min, double max, bool required,
		   long long def, long long *v)
{
	int ret = get_int(o, key, min, max, v);

	if (ret == -ENOENT && !required) {
		*v = def;
		return true;
	}
	return ret == 0;
}

static int get_str(const cJSON *o, const char *key, char *out, size_t len, bool required)
{
	const cJSON *s = get(o, key);

	if (!s && !required) {
		out[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(s) || strlen(s->valuestring) >= len)
		return -EBADMSG;
	memcpy(out, s->valuestring, strlen(s->valuestring) + 1);
	return 0;
}

static int get_mac(const cJSON *o, const char *key, uint8_t mac[6])
{
	const cJSON *s = get(o, key);

	if (!cJSON_IsString(s) || valid_mac_parse(s->valuestring, mac) < 0)
		return -EBADMSG;
	return 0;
}

/* A field the record has must hold a value pf_set accepts: DEL sends it to the PF. */
static int vfcfg_from_json(const cJSON *o, struct pf_vf_config *c)
{
	long long vlan, qos, proto, state, min, max;

	memset(c, 0, sizeof(*c));
	if (!cJSON_IsObject(o))
		return -EBADMSG;
	if (get(o, "mac")) {
		if (get_mac(o, "mac", c->mac))
			return -EBADMSG;
		c->mask |= PF_VF_MAC;
	}
	if (get(o, "vlan") || get(o, "vlanQoS") || get(o, "vlanProto")) {
		if (!int_ok(o, "vlan", 0, 4094, true, 0, &vlan) ||
		    !int_ok(o, "vlanQoS", 0, 7, true, 0, &qos) ||
		    !int_ok(o, "vlanProto", 0, 0xffff, true, 0, &proto) ||
		    (proto != ETH_P_8021Q && proto != ETH_P_8021AD) ||
		    (!vlan && (qos || proto != ETH_P_8021Q)))
			return -EBADMSG;
		c->vlan = (int)vlan;
		c->qos = (int)qos;
		c->vlan_proto = (uint16_t)proto;
		c->mask |= PF_VF_VLAN;
	}
	if (get(o, "spoofchk")) {
		if (!cJSON_IsBool(get(o, "spoofchk")))
			return -EBADMSG;
		c->spoofchk = cJSON_IsTrue(get(o, "spoofchk"));
		c->mask |= PF_VF_SPOOFCHK;
	}
	if (get(o, "trust")) {
		if (!cJSON_IsBool(get(o, "trust")))
			return -EBADMSG;
		c->trust = cJSON_IsTrue(get(o, "trust"));
		c->mask |= PF_VF_TRUST;
	}
	if (get(o, "linkState")) {
		if (!int_ok(o, "linkState", IFLA_VF_LINK_STATE_AUTO, IFLA_VF_LINK_STATE_DISABLE,
			    true, 0, &state))
			return -EBADMSG;
		c->link_state = (int)state;
		c->mask |= PF_VF_LINK_STATE;
	}
	if (get(o, "minTxRate") || get(o, "maxTxRate")) {
		if (!int_ok(o, "minTxRate", 0, UINT32_MAX, true, 0, &min) ||
		    !int_ok(o, "maxTxRate", 0, UINT32_MAX, true, 0, &max) || (max && min > max))
			return -EBADMSG;
		c->min_tx_rate = (unsigned)min;
		c->max_tx_rate = (unsigned)max;
		c->mask |= PF_VF_RATE;
	}
	return 0;
}

/*
 * "multiRail": {"table": 101, "routes": [{"dst", "gw", "priority"}],
 * "sysctls": {"<name>": "<value>"}}: what CHECK verifies. Absent from
 * records written before it, which CHECK then skips (DEL needs none of it).
 */
static cJSON *rail_to_json(const struct sriov_rail_made *m)
{
	cJSON *o = cJSON_CreateObject(), *routes, *rt, *sysctls;
	bool ok = o != NULL;
	int i;

	ok = ok && cJSON_AddNumberToObject(o, "table", m->table);
	routes = ok ? cJSON_AddArrayToObject(o, "routes") : NULL;
	for (i = 0, ok = routes != NULL; ok && i < m->n_routes; i++) {
		rt = cJSON_CreateObject();
		ok = rt && cJSON_AddItemToArray(routes, rt) &&
		     cJSON_AddStringToObject(rt, "dst", m->routes[i].dst) &&
		     (!m->routes[i].gw[0] || cJSON_AddStringToObject(rt, "gw", m->routes[i].gw)) &&
		     (m->routes[i].priority == LINK_UNSET ||
		      cJSON_AddNumberToObject(rt, "priority", m->routes[i].priority));
	}
	sysctls = ok ? cJSON_AddObjectToObject(o, "sysctls") : NULL;
	for (i = 0, ok = sysctls != NULL; ok && i < m->n_sysctls; i++)
		ok = cJSON_AddStringToObject(sysctls, m->sysctl_name[i], m->sysctl_value[i]) != NULL;
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Names reach paths under /proc/sys: the record's must be ones ADD could have set on ifname. */
static int rail_from_json(const cJSON *o, const char *ifname, struct sriov_rail_made *m)
{
	const cJSON *it, *routes = get(o, "routes"), *sysctls = get(o, "sysctls");
	long long table, prio;
	char why[128];
	struct link_route *rt;

	if (!o)
		return 0;
	if (!cJSON_IsObject(o) || !int_ok(o, "table", 0, UINT32_MAX, true, 0, &table) ||
	    (routes && !cJSON_IsArray(routes)) || (sysctls && !cJSON_IsObject(sysctls)))
		return -EBADMSG;
	m->known = true;
	m->table = (uint32_t)table;
	cJSON_ArrayForEach(it, routes) {
		if (m->n_routes >= SRIOV_MAX_RAIL_ROUTES)
			return -EBADMSG;
		rt = &m->routes[m->n_routes++];
		link_route_init(rt);
		if (!cJSON_IsObject(it) || get_str(it, "dst", rt->dst, sizeof(rt->dst), true) ||
		    get_str(it, "gw", rt->gw, sizeof(rt->gw), false) ||
		    !int_ok(it, "priority", 0, INT32_MAX, false, LINK_UNSET, &prio))
			return -EBADMSG;
		rt->priority = (int)prio;
		rt->table = (int)m->table;
	}
	cJSON_ArrayForEach(it, sysctls) {
		if (m->n_sysctls >= SRIOV_RAIL_SYSCTLS || !cJSON_IsString(it) ||
		    strlen(it->string) > SYSCTL_NAME_MAX ||
		    sysctl_name_check(it->string, ifname, why, sizeof(why)) < 0 ||
		    sysctl_value_check(it->valuestring) < 0)
			return -EBADMSG;
		strcpy(m->sysctl_name[m->n_sysctls], it->string);
		strcpy(m->sysctl_value[m->n_sysctls++], it->valuestring);
	}
	return 0;
}

/*
 * "infiniband": {"guidSet", "nodeGuid", "portGuid", "origNodeGuid",
 * "origPortGuid", "driver", "pkey"}: an InfiniBand VF's, absent otherwise.
 */
static cJSON *ib_to_json(const struct sriov_ib_rec *ib)
{
	char g[4][IB_GUID_STR_LEN];
	cJSON *o = cJSON_CreateObject();
	bool ok = o != NULL;

	ib_guid_format(ib->applied.node, g[0]);
	ib_guid_format(ib->applied.port, g[1]);
	ib_guid_format(ib->orig.node, g[2]);
	ib_guid_format(ib->orig.port, g[3]);
	ok = ok && cJSON_AddBoolToObject(o, "guidSet", ib->guid_set) &&
	     cJSON_AddStringToObject(o, "nodeGuid", g[0]) &&
	     cJSON_AddStringToObject(o, "portGuid", g[1]) &&
	     cJSON_AddStringToObject(o, "origNodeGuid", g[2]) &&
	     cJSON_AddStringToObject(o, "origPortGuid", g[3]) &&
	     cJSON_AddStringToObject(o, "driver", ib->driver) &&
	     (!ib->has_pkey || cJSON_AddNumberToObject(o, "pkey", ib->pkey));
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int get_guid(const cJSON *o, const char *key, uint64_t *g)
{
	const cJSON *s = get(o, key);

	return cJSON_IsString(s) && ib_guid_parse(s->valuestring, g) == 0 ? 0 : -EBADMSG;
}

/* The driver's name reaches a sysfs path (bus/pci/drivers/<driver>/bind). */
static int ib_from_json(const cJSON *o, struct sriov_ib_rec *ib)
{
	const cJSON *set = get(o, "guidSet");
	long long pkey;

	if (!o)
		return 0;
	if (!cJSON_IsObject(o) || !cJSON_IsBool(set) ||
	    get_guid(o, "nodeGuid", &ib->applied.node) || get_guid(o, "portGuid", &ib->applied.port) ||
	    get_guid(o, "origNodeGuid", &ib->orig.node) ||
	    get_guid(o, "origPortGuid", &ib->orig.port) ||
	    get_str(o, "driver", ib->driver, sizeof(ib->driver), true) ||
	    strchr(ib->driver, '/') || !strcmp(ib->driver, ".") || !strcmp(ib->driver, "..") ||
	    !int_ok(o, "pkey", 1, 0xffff, false, 0, &pkey))
		return -EBADMSG;
	ib->guid_set = cJSON_IsTrue(set);
	/* A rebind needs the driver to bind to again. */
	if (ib->guid_set && !ib->driver[0])
		return -EBADMSG;
	ib->ib = true;
	ib->has_pkey = pkey != 0;
	ib->pkey = (uint16_t)pkey;
	return 0;
}

/* "pod": {"namespace", "name", "uid"}, each present when known. */
static cJSON *pod_to_json(const struct sriov_record *r)
{
	cJSON *o = cJSON_CreateObject();
	bool ok = o != NULL;

	ok = ok && (!r->pod_namespace[0] ||
		    cJSON_AddStringToObject(o, "namespace", r->pod_namespace)) &&
	     (!r->pod_name[0] || cJSON_AddStringToObject(o, "name", r->pod_name)) &&
	     (!r->pod_uid[0] || cJSON_AddStringToObject(o, "uid", r->pod_uid));
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* A pod's namespace, name or UID: what Kubernetes gives them, nothing a shell or a path minds. */
bool sriov_pod_field_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_");

	return n > 0 && s[n] == '\0' && n < SRIOV_POD_FIELD_MAX;
}

static int pod_from_json(const cJSON *o, struct sriov_record *r)
{
	if (!o)
		return 0;
	if (!cJSON_IsObject(o) ||
	    get_str(o, "namespace", r->pod_namespace, sizeof(r->pod_namespace), false) ||
	    get_str(o, "name", r->pod_name, sizeof(r->pod_name), false) ||
	    get_str(o, "uid", r->pod_uid, sizeof(r->pod_uid), false) ||
	    (r->pod_namespace[0] && !sriov_pod_field_ok(r->pod_namespace)) ||
	    (r->pod_name[0] && !sriov_pod_field_ok(r->pod_name)) ||
	    (r->pod_uid[0] && !sriov_pod_field_ok(r->pod_uid)))
		return -EBADMSG;
	return 0;
}

/*
 * "ipamConf": the object ADD gave its IPAM. Its "ipam.type" names the
 * plugin a takeover runs: it must be one a config could name.
 */
static int ipam_conf_from_json(const cJSON *o, struct sriov_record *r)
{
	const cJSON *type = get(get(o, "ipam"), "type");

	if (!o)
		return 0;
	if (!cJSON_IsObject(o) || !cJSON_IsString(type) || !valid_plugin_type(type->valuestring))
		return -EBADMSG;
	/* A config that no longer fits is not the record's fault: released by hand, as before. */
	if (!cJSON_PrintPreallocated((cJSON *)o, r->ipam_conf, sizeof(r->ipam_conf), false))
		memset(r->ipam_conf, 0, sizeof(r->ipam_conf));
	return 0;
}

static cJSON *record_to_json(const struct sriov_record *r)
{
	cJSON *o = cJSON_CreateObject(), *addrs;
	bool ok = o != NULL;
	int i;

	/* Every member this version adds is one an older reader may ignore: still version 1. */
	ok = ok && state_version_put(o, SRIOV_RECORD_VERSION) == 0 &&
	     cJSON_AddStringToObject(o, "containerID", r->container_id) &&
	     cJSON_AddStringToObject(o, "ifname", r->ifname) &&
	     cJSON_AddStringToObject(o, "netns", r->netns) &&
	     (!netns_id_known(&r->netns_id) ||
	      (cJSON_AddNumberToObject(o, "netnsDev", (double)r->netns_id.dev) &&
	       cJSON_AddNumberToObject(o, "netnsIno", (double)r->netns_id.ino))) &&
	     cJSON_AddStringToObject(o, "deviceID", r->bdf) &&
	     cJSON_AddStringToObject(o, "pfDeviceID", r->pf_bdf) &&
	     cJSON_AddStringToObject(o, "pfNetdev", r->pf_netdev) &&
	     cJSON_AddNumberToObject(o, "vfIndex", r->vf_index) &&
	     cJSON_AddBoolToObject(o, "dpdk", r->dpdk) &&
	     cJSON_AddStringToObject(o, "hostIfname", r->host_ifname) &&
	     add_mac(o, "hostMac", r->host_mac) == 0 &&
	     cJSON_AddNumberToObject(o, "hostMtu", r->host_mtu) &&
	     cJSON_AddBoolToObject(o, "hostUp", r->host_up) &&
	     add_mac(o, "podMac", r->pod_mac) == 0 &&
	     cJSON_AddNumberToObject(o, "podMtu", r->pod_mtu) &&
	     cJSON_AddStringToObject(o, "rdmaDevice", r->rdma_dev) &&
	     cJSON_AddNumberToObject(o, "rdmaIndex", r->rdma_index) &&
	     cJSON_AddStringToObject(o, "rdmaPodName", r->rdma_pod_name) &&
	     cJSON_AddBoolToObject(o, "rdmaMoved", r->rdma_moved) &&
	     cJSON_AddBoolToObject(o, "rdmaRenamed", r->rdma_renamed) &&
	     cJSON_AddStringToObject(o, "deviceInfoFile", r->devinfo_file) &&
	     (!r->devinfo_text[0] ||
	      cJSON_AddStringToObject(o, "deviceInfoWritten", r->devinfo_text)) &&
	     (!r->network[0] || cJSON_AddStringToObject(o, "network", r->network)) &&
	     (!r->ipam_type[0] || cJSON_AddStringToObject(o, "ipam", r->ipam_type)) &&
	     (!r->in_progress || cJSON_AddBoolToObject(o, "inProgress", true)) &&
	     (!r->no_rules || cJSON_AddBoolToObject(o, "noRules", true));
	if (ok)
		ok = cJSON_AddItemToObject(o, "vfApplied", vfcfg_to_json(&r->vf_applied)) &&
		     cJSON_AddItemToObject(o, "vfOriginal", vfcfg_to_json(&r->vf_orig));
	if (ok && r->rail.known)
		ok = cJSON_AddItemToObject(o, "multiRail", rail_to_json(&r->rail));
	if (ok && r->ib.ib)
		ok = cJSON_AddItemToObject(o, "infiniband", ib_to_json(&r->ib));
	if (ok && (r->pod_namespace[0] || r->pod_name[0] || r->pod_uid[0]))
		ok = cJSON_AddItemToObject(o, "pod", pod_to_json(r));
	if (ok && r->ipam_conf[0])
		ok = cJSON_AddItemToObject(o, "ipamConf", cJSON_Parse(r->ipam_conf));
	addrs = ok ? cJSON_AddArrayToObject(o, "addresses") : NULL;
	for (i = 0; addrs && i < r->n_addrs; i++)
		if (!cJSON_AddItemToArray(addrs, cJSON_CreateString(r->addrs[i])))
			addrs = NULL;
	if (!addrs) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* 0 (a device's MTU unknown), else what a netdev can take. */
static bool mtu_ok(long long mtu)
{
	return mtu == 0 || (mtu >= 68 && mtu <= 65535);
}

static bool bdf_ok(const char *bdf, bool required)
{
	char canon[VF_BDF_LEN];

	if (!bdf[0])
		return !required;
	return vf_bdf_parse(bdf, canon) == 0 && !strcmp(canon, bdf);
}

static int record_from_json(const cJSON *o, struct sriov_record *r)
{
	const cJSON *addrs, *a, *flag;
	long long index, host_mtu, pod_mtu, rdma_index, ns_dev, ns_ino;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(o))
		return -EBADMSG;
	/* A newer one is not read further: what it holds is not this version's to judge. */
	ret = state_version_get(o, SRIOV_RECORD_VERSION, true, &r->written);
	if (ret < 0)
		return ret;
	if (get_str(o, "network", r->network, sizeof(r->network), false) ||
	    get_str(o, "ipam", r->ipam_type, sizeof(r->ipam_type), false) ||
	    get_str(o, "containerID", r->container_id, sizeof(r->container_id), true) ||
	    get_str(o, "ifname", r->ifname, sizeof(r->ifname), true) ||
	    get_str(o, "netns", r->netns, sizeof(r->netns), false) ||
	    get_str(o, "deviceID", r->bdf, sizeof(r->bdf), true) ||
	    get_str(o, "pfDeviceID", r->pf_bdf, sizeof(r->pf_bdf), false) ||
	    get_str(o, "pfNetdev", r->pf_netdev, sizeof(r->pf_netdev), false) ||
	    get_str(o, "hostIfname", r->host_ifname, sizeof(r->host_ifname), false) ||
	    get_str(o, "deviceInfoFile", r->devinfo_file, sizeof(r->devinfo_file), false) ||
	    get_str(o, "deviceInfoWritten", r->devinfo_text, sizeof(r->devinfo_text), false) ||
	    get_str(o, "rdmaDevice", r->rdma_dev, sizeof(r->rdma_dev), false) ||
	    get_str(o, "rdmaPodName", r->rdma_pod_name, sizeof(r->rdma_pod_name), false) ||
	    get_mac(o, "hostMac", r->host_mac) || get_mac(o, "podMac", r->pod_mac) ||
	    vfcfg_from_json(get(o, "vfApplied"), &r->vf_applied) ||
	    vfcfg_from_json(get(o, "vfOriginal"), &r->vf_orig) ||
	    ib_from_json(get(o, "infiniband"), &r->ib) || pod_from_json(get(o, "pod"), r) ||
	    ipam_conf_from_json(get(o, "ipamConf"), r))
		return -EBADMSG;
	/* Every number is checked before it is converted: a garbled one makes the record unreadable. */
	if (!int_ok(o, "vfIndex", 0, 65535, true, 0, &index) ||
	    !int_ok(o, "hostMtu", 0, 65535, false, 0, &host_mtu) || !mtu_ok(host_mtu) ||
	    !int_ok(o, "podMtu", 0, 65535, false, 0, &pod_mtu) || !mtu_ok(pod_mtu) ||
	    !int_ok(o, "rdmaIndex", 0, UINT32_MAX, false, 0, &rdma_index) ||
	    !int_ok(o, "netnsDev", 0, NETNS_ID_MAX, false, 0, &ns_dev) ||
	    !int_ok(o, "netnsIno", 0, NETNS_ID_MAX, false, 0, &ns_ino))
		return -EBADMSG;
	r->vf_index = (int)index;
	r->host_mtu = (int)host_mtu;
	r->pod_mtu = (int)pod_mtu;
	r->rdma_index = (uint32_t)rdma_index;
	r->netns_id.dev = (uint64_t)ns_dev;
	r->netns_id.ino = (uint64_t)ns_ino;
	r->dpdk = cJSON_IsTrue(get(o, "dpdk"));
	r->host_up = cJSON_IsTrue(get(o, "hostUp"));
	r->rdma_moved = cJSON_IsTrue(get(o, "rdmaMoved"));
	r->rdma_renamed = cJSON_IsTrue(get(o, "rdmaRenamed"));
	/* Written before the first change on the host; absent once ADD finished. */
	flag = get(o, "inProgress");
	if (flag && !cJSON_IsBool(flag))
		return -EBADMSG;
	r->in_progress = cJSON_IsTrue(flag);
	flag = get(o, "noRules");
	if (flag && !cJSON_IsBool(flag))
		return -EBADMSG;
	r->no_rules = cJSON_IsTrue(flag);
	addrs = get(o, "addresses");
	if (addrs && !cJSON_IsArray(addrs))
		return -EBADMSG;
	cJSON_ArrayForEach(a, addrs) {
		if (r->n_addrs >= CNI_MAX_IPS || !cJSON_IsString(a) ||
		    strlen(a->valuestring) >= sizeof(r->addrs[0]))
			return -EBADMSG;
		strcpy(r->addrs[r->n_addrs++], a->valuestring);
	}
	/* Names came from a file and reach the kernel and paths: they must still be valid. */
	/* DEL runs the plugin of that name from CNI_PATH. */
	if ((r->ipam_type[0] && !valid_network_name(r->ipam_type)) ||
	    !valid_container_id(r->container_id) || !valid_ifname(r->ifname) ||
	    rail_from_json(get(o, "multiRail"), r->ifname, &r->rail) ||
	    (r->netns[0] && !valid_netns_path(r->netns)) || !bdf_ok(r->bdf, true) ||
	    !bdf_ok(r->pf_bdf, false) || (r->pf_netdev[0] && !valid_ifname(r->pf_netdev)) ||
	    (r->host_ifname[0] && !valid_ifname(r->host_ifname)))
		return -EBADMSG;
	/* DEL renames the RDMA device back to this name: it must be one the kernel takes. */
	if ((r->rdma_dev[0] && !rdma_dev_name_valid(r->rdma_dev)) ||
	    (r->rdma_pod_name[0] && !rdma_dev_name_valid(r->rdma_pod_name)) ||
	    (r->rdma_moved && !r->rdma_dev[0]))
		return -EBADMSG;
	return 0;
}

int sriov_record_write(int dirfd, const struct sriov_record *rec)
{
	char name[512];
	cJSON *o = record_to_json(rec);
	int ret;

	if (!o)
		return -ENOMEM;
	sriov_record_name(rec->container_id, rec->ifname, name, sizeof(name));
	/*
	 * Atomic, but not fsync'd: the record describes where a netdev and an
	 * RDMA device are, which no reboot preserves, and a rename is never
	 * torn by a killed writer. A power loss can leave a garbled record for
	 * a pod that no longer exists; DEL removes an unreadable record and
	 * succeeds. Two fsyncs less per ADD.
	 */
	ret = state_write_json(dirfd, name, o, false);
	cJSON_Delete(o);
	return ret;
}

int sriov_record_parse(char *buf, size_t len, struct sriov_record *rec)
{
	cJSON *o;
	int ret;

	if (state_unseal(buf, &len) < 0)
		return -EBADMSG;
	o = cJSON_ParseWithLength(buf, len);
	if (!o)
		return -EBADMSG;
	ret = record_from_json(o, rec);
	cJSON_Delete(o);
	return ret;
}

int sriov_record_read(int dirfd, const char *name, struct sriov_record *rec)
{
	char *buf;
	size_t len;
	int ret;

	ret = state_read(dirfd, name, &buf, &len, STATE_MAX_FILE);
	if (ret == -ENOENT)
		return ret;
	/* Not a regular file, too big, a symlink: as unreadable as a garbled one. */
	if (ret < 0)
		return -EBADMSG;
	ret = sriov_record_parse(buf, len, rec);
	free(buf);
	return ret;
}

int sriov_record_newer(const struct sriov_record *rec, const char *state_dir, const char *name,
		       const char *what, struct cni_error *err)
{
	const char *by = rec->written.written_by;
	char who[256];

	state_version_format(&rec->written, "attachment record", SRIOV_RECORD_VERSION, who,
			     sizeof(who));
	cni_errorf(err, CNI_ERR_TRY_AGAIN, "stateDir %s: the record %s was written by %s, and "
		   "cannot release it safely: %s", state_dir, name, who, what);
	cni_error_details(err, "install %s%s again (docs/upgrading.md, \"Rolling back\"): the "
			  "runtime's next DEL then releases it", by[0] ? by : "the release that wrote it",
			  by[0] ? " or later" : "");
	return -1;
}

int sriov_record_remove(int dirfd, const struct sriov_record *rec)
{
	char name[512];

	sriov_record_name(rec->container_id, rec->ifname, name, sizeof(name));
	/*
	 * Not fsync'd, as it was not when written: a removal a power loss
	 * undoes brings back the record of a pod of an earlier boot, which no
	 * longer exists; GC removes it, and a marker that came back with it
	 * names a namespace that is gone, which the next ADD of the VF takes
	 * over as stale.
	 */
	return state_remove(dirfd, name);
}

/* The config's words for one PF_VF_* field, for the error naming what a driver refused. */
static void vf_field_format(unsigned field, const struct pf_vf_config *v, char *buf, size_t len)
{
	static const char *const states[] = { "auto", "enable", "disable" };

	switch (field) {
	case PF_VF_MAC:
		snprintf(buf, len, "mac %02x:%02x:%02x:%02x:%02x:%02x", v->mac[0], v->mac[1],
			 v->mac[2], v->mac[3], v->mac[4], v->mac[5]);
		break;
	case PF_VF_VLAN:
		snprintf(buf, len, "vlan %d, vlanQoS %d, vlanProto %s", v->vlan, v->qos,
			 v->vlan_proto == ETH_P_8021AD ? "802.1ad" : "802.1q");
		break;
	case PF_VF_RATE:
		snprintf(buf, len, "min_tx_rate %u, max_tx_rate %u", v->min_tx_rate, v->max_tx_rate);
		break;
	case PF_VF_SPOOFCHK:
		snprintf(buf, len, "spoofchk %s", v->spoofchk ? "on" : "off");
		break;
	case PF_VF_TRUST:
		snprintf(buf, len, "trust %s", v->trust ? "on" : "off");
		break;
	case PF_VF_LINK_STATE:
		snprintf(buf, len, "link_state %s", v->link_state >= 0 && v->link_state < 3 ?
			 states[v->link_state] : "?");
		break;
	default:
		snprintf(buf, len, "settings");
	}
}

void sriov_vf_fields_format(unsigned mask, const struct pf_vf_config *v, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned bit = 1; bit <= PF_VF_ALL && n < len; bit <<= 1) {
		if (!(mask & bit))
			continue;
		if (n)
			n += (size_t)snprintf(buf + n, len - n, "; ");
		if (n < len)
			vf_field_format(bit, v, buf + n, len - n);
		n += strlen(buf + n);
	}
	if (!buf[0])
		vf_field_format(0, v, buf, len);
}
