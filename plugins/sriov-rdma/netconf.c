/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The network configuration of sriov-rdma: every field is read and checked
 * here, before anything on the host changes, and every error names the
 * field and the fix (code 7).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include "conf.h"
#include "ipam_conf.h"
#include "link.h"
#include "log.h"
#include "log_conf.h"
#include "policy.h"
#include "sriov.h"

static const char *const known_keys[] = {
	"cniVersion", "cniVersions", "name", "type", "ipam", "dns", "args", "runtimeConfig",
	"prevResult", "capabilities", "deviceID", "pciBusID", "vlan", "vlanQoS", "vlanProto",
	"mac", "spoofchk", "trust", "link_state", "min_tx_rate", "max_tx_rate", "mtu",
	"rdma", "rdmaName", "stateDir", "logLevel", "logFile",
	"multiRail", "routeTable", "sysctl", "guid", "pkey", "ibKubernetesEnabled", NULL,
};

/* The capabilities read from runtimeConfig, which carries other plugins' too. */
static const char *const runtime_keys[] = {
	"deviceID", "mac", "ips", "CNIDeviceInfoFile", "infinibandGUID", NULL,
};

static const char *const vlan_protos[] = { "802.1q", "802.1ad", NULL };
static const char *const link_states[] = { "auto", "enable", "disable", NULL };
/* In the order of enum sriov_rdma_mode. */
static const char *const rdma_modes[] = { "auto", "exclusive", "off", NULL };

int sriov_state_dir(const struct cni_request *req, char *dir, size_t size, struct cni_error *err)
{
	const char *s = SRIOV_DEFAULT_STATE_DIR;
	char why[768];

	if (conf_string(req->conf, "", "stateDir", &s, false, err))
		return -EINVAL;
	if (!valid_abs_path(s)) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "stateDir: \"%s\" must be an absolute path without \"..\"", s);
		cni_error_details(err, "use a directory such as %s", SRIOV_DEFAULT_STATE_DIR);
		return -EINVAL;
	}
	if (policy_resolve(POLICY_STATE, s, dir, size, why, sizeof(why)) < 0) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "stateDir: %s", why);
		return -EPERM;
	}
	return 0;
}

int sriov_log_setup(const struct cni_request *req, struct cni_error *err)
{
	const char *level = NULL, *file = NULL;
	char why[1024];
	int ret;

	if (conf_string(req->conf, "", "logLevel", &level, false, err) ||
	    conf_string(req->conf, "", "logFile", &file, false, err))
		return -EINVAL;
	ret = log_configure(level, file, "", why, sizeof(why));
	if (ret < 0)
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s", why);
	return ret;
}

const char *sriov_ipam_type(const struct cni_request *req)
{
	const cJSON *ipam = cJSON_GetObjectItemCaseSensitive(req->conf, "ipam");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(ipam, "type");

	return cJSON_IsString(type) && type->valuestring[0] ? type->valuestring : NULL;
}

const char *sriov_ipam_type_to_release(const struct cni_request *req)
{
	const char *as_written;
	const cJSON *ipam = conf_member_any_case(req->conf, "ipam", &as_written);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(ipam, "type");

	if (!cJSON_IsString(type) || !type->valuestring[0] ||
	    !valid_network_name(type->valuestring))
		return NULL;
	if (strcmp(as_written, "ipam"))
		log_warn("%s: keys are case-sensitive (ADD refuses it), but it is the config's only "
			 "IPAM: releasing through %s", as_written, type->valuestring);
	return type->valuestring;
}

bool sriov_ipam_overlaps(const char *type)
{
	/*
	 * These keep their state in files or behind an API and never look at
	 * the pod's namespace. dhcp's daemon (and an IPAM we do not know)
	 * may need CNI_IFNAME in the pod, so they run after the move.
	 */
	static const char *const known[] = {
		"pool-ipam", "host-local", "static", "whereabouts", "nv-ipam", NULL,
	};

	for (int i = 0; type && known[i]; i++)
		if (!strcmp(type, known[i]))
			return true;
	return false;
}

/*
 * Our own IPAM's section is validated here, before the first host change,
 * with pool-ipam's own parser: an ADD refused after the VF was configured
 * and moved would be rolled back anyway, at the cost of every step. What
 * only the node can tell (its name, its block) is left to pool-ipam.
 */
static int check_pool_ipam(const cJSON *ipam, const struct sriov_conf *conf,
			   struct cni_error *err)
{
	char path[PATH_MAX], why[768];
	struct ipam_conf *c;
	int ret;

	if (strcmp(conf->ipam_type, "pool-ipam"))
		return 0;
	c = malloc(sizeof(*c));
	if (!c)
		return cni_errorf(err, CNI_ERR_PLUGIN, "out of memory");
	ret = ipam_conf_parse(ipam, c, err);
	if (ret == -ENOENT) {
		memset(err, 0, sizeof(*err));
		ret = 0;
	}
	if (ret == 0 &&
	    policy_resolve(POLICY_DATA, c->data_dir, path, sizeof(path), why, sizeof(why)) < 0)
		ret = cni_errorf(err, CNI_ERR_INVALID_CONFIG, "ipam.dataDir: %s", why);
	free(c);
	return ret < 0 ? -EINVAL : 0;
}

static int parse_ipam(const struct cni_request *req, struct sriov_conf *conf,
		      struct cni_error *err)
{
	/* The rest of the section is the IPAM's to check. */
	static const char *const ipam_type_key[] = { "type", NULL };
	const cJSON *ipam;

	if (conf_object(req->conf, "", "ipam", &ipam, err))
		return -EINVAL;
	conf->ipam_type = NULL;
	/* "Type" would pass for no IPAM: an attach without an address, and no error. */
	if (conf_check_case(ipam, "ipam", ipam_type_key, err))
		return -EINVAL;
	if (!ipam || !cJSON_GetObjectItemCaseSensitive(ipam, "type"))
		return 0;
	if (conf_string(ipam, "ipam", "type", &conf->ipam_type, true, err))
		return -EINVAL;
	if (!valid_network_name(conf->ipam_type)) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "ipam.type: \"%s\" is not a plugin name", conf->ipam_type);
		cni_error_details(err, "name a plugin binary in CNI_PATH, e.g. \"pool-ipam\"");
		return -EINVAL;
	}
	return req->env.command == CNI_CMD_ADD ? check_pool_ipam(ipam, conf, err) : 0;
}

/*
 * Where the VF comes from, most trusted first. Multus writes deviceID and
 * pciBusID from the device plugin's allocation over whatever the NAD has
 * there; it puts the same address in runtimeConfig.deviceID only when the
 * NAD declares the capability, and a NAD that declares none keeps its own
 * runtimeConfig, which libcni passes through untouched. So each source
 * given must name the same VF: one that differs is a NAD choosing a VF the
 * device plugin did not give its pod (-EXDEV, bdf the most trusted one).
 * Alone, any of them is the caller's word (DRA's deviceID, a runtime's
 * runtimeConfig.deviceID, a hand-written pciBusID).
 */
int sriov_device_id(const struct cni_request *req, char bdf[VF_BDF_LEN], struct cni_error *err)
{
	static const char *const field[] = { "deviceID", "pciBusID", "runtimeConfig.deviceID" };
	const char *id[3] = { NULL, NULL, NULL };
	char canon[VF_BDF_LEN];
	int first = -1;

	if (conf_string(req->conf, "", "deviceID", &id[0], false, err) ||
	    conf_string(req->conf, "", "pciBusID", &id[1], false, err) ||
	    (req->runtime_config &&
	     conf_string(req->runtime_config, "runtimeConfig", "deviceID", &id[2], false, err)))
		return -EINVAL;
	for (int i = 0; i < 3; i++) {
		if (!id[i])
			continue;
		if (vf_bdf_parse(id[i], first < 0 ? bdf : canon) < 0)
			return conf_invalid(err, "%s \"%s\": not a PCI address (want DDDD:BB:DD.F)",
					    field[i], id[i]);
		if (first < 0) {
			first = i;
		} else if (strcmp(canon, bdf)) {
			conf_invalid(err, "%s \"%s\" and %s \"%s\" name different VFs", field[first],
				     id[first], field[i], id[i]);
			cni_error_details(err, "Multus sets deviceID and pciBusID from the device "
					  "plugin's allocation; drop %s from the NAD (declare the "
					  "\"deviceID\" capability to have Multus pass it)", field[i]);
			return -EXDEV;
		}
	}
	if (first < 0) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "deviceID: required: the VF's PCI address (want DDDD:BB:DD.F)");
		cni_error_details(err, "Multus fills it from the device plugin's allocation; "
				  "set it in the config when calling the plugin directly");
		return -EINVAL;
	}
	return 0;
}

static int parse_vlan(const struct cni_request *req, struct sriov_conf *conf,
		      struct cni_error *err)
{
	long long vlan = 0, qos = 0;
	bool has_vlan = false, has_qos = false;
	int proto = -1;

	if (conf_int(req->conf, "", "vlan", 0, 4094, &vlan, &has_vlan, err) ||
	    conf_int(req->conf, "", "vlanQoS", 0, 7, &qos, &has_qos, err) ||
	    conf_enum(req->conf, "", "vlanProto", vlan_protos, &proto, err))
		return -EINVAL;
	if (!has_vlan && !has_qos && proto < 0)
		return 0;
	if (qos && !vlan) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "vlanQoS: %lld needs a vlan: set vlan to 1..4094, or drop vlanQoS", qos);
		return -EINVAL;
	}
	if (proto == 1 && !vlan) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "vlanProto: \"802.1ad\" needs a vlan: set vlan to 1..4094, or drop vlanProto");
		return -EINVAL;
	}
	conf->vf.mask |= PF_VF_VLAN;
	conf->vf.vlan = (int)vlan;
	conf->vf.qos = (int)qos;
	conf->vf.vlan_proto = proto == 1 ? ETH_P_8021AD : ETH_P_8021Q;
	return 0;
}

static int parse_mac_string(const char *field, const char *s, uint8_t mac[6],
			    struct cni_error *err)
{
	if (valid_mac_parse(s, mac) < 0) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "%s \"%s\": not a MAC address (want aa:bb:cc:dd:ee:ff)", field, s);
		return -EINVAL;
	}
	if (mac[0] & 1) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "%s \"%s\": a multicast address cannot name a VF; use a unicast MAC "
			   "(lowest bit of the first byte clear)", field, s);
		return -EINVAL;
	}
	if (!(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5])) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "%s \"%s\": the all-zero address cannot name a VF; use a unicast MAC",
			   field, s);
		return -EINVAL;
	}
	return 0;
}

/* The effective MAC: runtimeConfig.mac, else CNI_ARGS MAC=, else mac (sriov-cni's order). */
static int parse_mac(const struct cni_request *req, struct sriov_conf *conf,
		     struct cni_error *err)
{
	const char *mac = NULL, *field = "runtimeConfig.mac";

	if (req->runtime_config &&
	    conf_string(req->runtime_config, "runtimeConfig", "mac", &mac, false, err))
		return -EINVAL;
	if (!mac) {
		mac = cni_env_arg(&req->env, "MAC");
		field = "CNI_ARGS MAC";
	}
	if (!mac) {
		if (conf_string(req->conf, "", "mac", &mac, false, err))
			return -EINVAL;
		field = "mac";
	}
	if (!mac)
		return 0;
	if (parse_mac_string(field, mac, conf->mac, err))
		return -EINVAL;
	conf->has_mac = true;
	/* As sriov-cni: the PF's admin MAC follows, so the VF keeps it across resets. */
	conf->vf.mask |= PF_VF_MAC;
	memcpy(conf->vf.mac, conf->mac, 6);
	return 0;
}

static int parse_vf_props(const struct cni_request *req, struct sriov_conf *conf,
			  struct cni_error *err)
{
	static const int states[] = {
		IFLA_VF_LINK_STATE_AUTO, IFLA_VF_LINK_STATE_ENABLE, IFLA_VF_LINK_STATE_DISABLE,
	};
	long long min = 0, max = 0;
	bool has_min = false, has_max = false;
	int spoofchk = -1, trust = -1, state = -1;

	if (conf_onoff(req->conf, "", "spoofchk", &spoofchk, err) ||
	    conf_onoff(req->conf, "", "trust", &trust, err) ||
	    conf_enum(req->conf, "", "link_state", link_states, &state, err) ||
	    conf_int(req->conf, "", "min_tx_rate", 0, UINT32_MAX, &min, &has_min, err) ||
	    conf_int(req->conf, "", "max_tx_rate", 0, UINT32_MAX, &max, &has_max, err))
		return -EINVAL;
	if (spoofchk >= 0) {
		conf->vf.mask |= PF_VF_SPOOFCHK;
		conf->vf.spoofchk = spoofchk;
	}
	if (trust >= 0) {
		conf->vf.mask |= PF_VF_TRUST;
		conf->vf.trust = trust;
	}
	if (state >= 0) {
		conf->vf.mask |= PF_VF_LINK_STATE;
		conf->vf.link_state = states[state];
	}
	if (has_min && has_max && max && min > max) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "min_tx_rate: %lld Mbps is above max_tx_rate (%lld Mbps); "
			   "lower it or raise max_tx_rate (0 = no limit)", min, max);
		return -EINVAL;
	}
	if (has_min || has_max) {
		conf->vf.mask |= PF_VF_RATE;
		conf->vf.min_tx_rate = (unsigned)min;
		conf->vf.max_tx_rate = (unsigned)max;
	}
	return 0;
}

static int env_path(const char *var, const char *fallback, const char **out,
		    struct cni_error *err)
{
	const char *v = getenv(var);

	*out = v && v[0] ? v : fallback;
	if (*out && !valid_abs_path(*out)) {
		cni_errorf(err, CNI_ERR_INVALID_ENV,
			   "%s: \"%s\" must be an absolute path without \"..\"", var, *out);
		return -EINVAL;
	}
	return 0;
}

int sriov_env_paths(struct sriov_paths *paths, struct cni_error *err)
{
	if (env_path(SRIOV_ENV_SYSFS_ROOT, SRIOV_DEFAULT_SYSFS, &paths->sysfs_root, err) ||
	    env_path(SRIOV_ENV_PROC_ROOT, SYSCTL_DEFAULT_PROC_ROOT, &paths->proc_root, err))
		return -EINVAL;
	return 0;
}

void sriov_env_paths_lenient(struct sriov_paths *paths)
{
	struct cni_error err = { 0 };

	/* Production nodes do not set them: the defaults are the real host. */
	if (env_path(SRIOV_ENV_SYSFS_ROOT, SRIOV_DEFAULT_SYSFS, &paths->sysfs_root, &err)) {
		log_error("%s: ignored, using %s", err.msg, SRIOV_DEFAULT_SYSFS);
		paths->sysfs_root = SRIOV_DEFAULT_SYSFS;
	}
	memset(&err, 0, sizeof(err));
	if (env_path(SRIOV_ENV_PROC_ROOT, SYSCTL_DEFAULT_PROC_ROOT, &paths->proc_root, &err)) {
		log_error("%s: ignored, using %s", err.msg, SYSCTL_DEFAULT_PROC_ROOT);
		paths->proc_root = SYSCTL_DEFAULT_PROC_ROOT;
	}
}

int sriov_rdma_mode(const struct cni_request *req, enum sriov_rdma_mode *mode,
		    struct cni_error *err)
{
	int idx;

	if (conf_enum(req->conf, "", "rdma", rdma_modes, &idx, err))
		return -EINVAL;
	*mode = idx < 0 ? SRIOV_RDMA_AUTO : (enum sriov_rdma_mode)idx;
	return 0;
}

/*
 * RDMA device names are node-wide, across namespaces too: rdmaName alone
 * would serve one attachment per node. The VF's PCI address, as systemd
 * names netdevs (0000:3b:00.2 -> p59s0f2, d<domain> when not 0), makes it
 * unique and predictable; NCCL_IB_HCA matches by prefix.
 */
void sriov_rdma_pod_name(const char *prefix, const char *bdf, char out[RDMA_NAME_MAX])
{
	unsigned dom = 0, bus = 0, slot = 0, fn = 0;
	char d[16] = "";

	if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4)
		dom = bus = slot = fn = 0;
	if (dom)
		snprintf(d, sizeof(d), "d%u", dom);
	snprintf(out, RDMA_NAME_MAX, "%s_%sp%us%uf%u", prefix, d, bus, slot, fn);
}

static int parse_rdma(const struct cni_request *req, struct sriov_conf *conf,
		      struct cni_error *err)
{
	if (sriov_rdma_mode(req, &conf->rdma, err) ||
	    conf_string(req->conf, "", "rdmaName", &conf->rdma_name, false, err))
		return -EINVAL;
	if (!conf->rdma_name)
		return 0;
	if (!rdma_dev_name_valid(conf->rdma_name) ||
	    strlen(conf->rdma_name) > SRIOV_RDMA_NAME_PREFIX_MAX) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "rdmaName \"%s\": not an RDMA device name prefix (want 1 to %d of "
			   "A-Z a-z 0-9 _ . -, e.g. \"rdma_net1\"; a suffix naming the VF follows)",
			   conf->rdma_name, SRIOV_RDMA_NAME_PREFIX_MAX);
		return -EINVAL;
	}
	sriov_rdma_pod_name(conf->rdma_name, conf->bdf, conf->rdma_name_buf);
	conf->rdma_name = conf->rdma_name_buf;
	if (conf->rdma == SRIOV_RDMA_OFF) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "rdmaName \"%s\": renames the RDMA device in the pod, but rdma is "
			   "\"off\"; set rdma to \"exclusive\" or drop rdmaName", conf->rdma_name);
		return -EINVAL;
	}
	return 0;
}

int sriov_conf_parse(const struct cni_request *req, struct sriov_conf *conf,
		     struct cni_error *err)
{
	long long mtu = 0;
	bool has_mtu = false;

	memset(conf, 0, sizeof(*conf));
	if (conf_check_keys(req->conf, "", known_keys, err) ||
	    conf_check_case(req->runtime_config, "runtimeConfig", runtime_keys, err))
		return -EINVAL;
	if (sriov_env_paths(&conf->paths, err) ||
	    sriov_device_id(req, conf->bdf, err) ||
	    parse_vlan(req, conf, err) ||
	    parse_mac(req, conf, err) ||
	    parse_vf_props(req, conf, err) ||
	    sriov_ib_parse(req, conf, err) ||
	    parse_ipam(req, conf, err) ||
	    parse_rdma(req, conf, err) ||
	    sriov_rail_parse(req, conf, err) ||
	    sriov_state_dir(req, conf->state_dir, sizeof(conf->state_dir), err))
		return -EINVAL;
	/* 68: the IPv4 minimum (RFC 791); 65535: the largest any netdev takes. */
	if (conf_int(req->conf, "", "mtu", 68, 65535, &mtu, &has_mtu, err))
		return -EINVAL;
	conf->mtu = has_mtu ? (int)mtu : 0;
	if (req->runtime_config &&
	    conf_string(req->runtime_config, "runtimeConfig", "CNIDeviceInfoFile",
			&conf->devinfo_file, false, err))
		return -EINVAL;
	if (conf->devinfo_file && !conf->devinfo_file[0])
		conf->devinfo_file = NULL;
	if (conf->devinfo_file &&
	    sriov_devinfo_validate(conf->devinfo_file, conf->devinfo_buf, err))
		return -EINVAL;
	if (conf->devinfo_file)
		conf->devinfo_file = conf->devinfo_buf;
	return 0;
}
