/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sriov-rdma's attachment record (plugins/sriov-rdma/record.c), compiled in
 * from the plugin: what ADD writes, DEL reads back whole; a record whose
 * numbers or names DEL would hand to the PF, the kernel or a path is
 * refused as unreadable (-EBADMSG), never half-used.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>

#include "check.h"
#include "sriov.h"
#include "state.h"

static char tmp[64];

/* An attachment with every field set, as ADD records one with RDMA in exclusive mode. */
static void full_record(struct sriov_record *r)
{
	static const uint8_t host_mac[6] = { 0x02, 0, 0, 0, 0, 0x05 };
	static const uint8_t pod_mac[6] = { 0x02, 0, 0, 0, 0xbb, 0x01 };

	memset(r, 0, sizeof(*r));
	snprintf(r->container_id, sizeof(r->container_id), "3f2a9c1d0b7e");
	snprintf(r->ifname, sizeof(r->ifname), "net1");
	snprintf(r->netns, sizeof(r->netns), "/var/run/netns/cni-1234");
	r->netns_id.dev = 4;
	r->netns_id.ino = 4026532913u;
	snprintf(r->bdf, sizeof(r->bdf), "0000:3b:00.2");
	snprintf(r->pf_bdf, sizeof(r->pf_bdf), "0000:3b:00.0");
	snprintf(r->pf_netdev, sizeof(r->pf_netdev), "enp59s0f0np0");
	r->vf_index = 65535;
	snprintf(r->host_ifname, sizeof(r->host_ifname), "enp59s0f0v0");
	memcpy(r->host_mac, host_mac, 6);
	r->host_mtu = 1500;
	r->host_up = true;
	memcpy(r->pod_mac, pod_mac, 6);
	r->pod_mtu = 9000;
	r->vf_applied.mask = PF_VF_MAC | PF_VF_VLAN | PF_VF_SPOOFCHK | PF_VF_TRUST |
			     PF_VF_LINK_STATE | PF_VF_RATE;
	memcpy(r->vf_applied.mac, pod_mac, 6);
	r->vf_applied.vlan = 100;
	r->vf_applied.qos = 2;
	r->vf_applied.vlan_proto = ETH_P_8021AD;
	r->vf_applied.spoofchk = true;
	r->vf_applied.trust = false;
	r->vf_applied.link_state = IFLA_VF_LINK_STATE_ENABLE;
	r->vf_applied.min_tx_rate = 10;
	r->vf_applied.max_tx_rate = 100;
	r->vf_orig.mask = PF_VF_MAC | PF_VF_TRUST;
	r->vf_orig.trust = true;
	snprintf(r->rdma_dev, sizeof(r->rdma_dev), "mlx5_2");
	r->rdma_index = 4294967295u;
	snprintf(r->rdma_pod_name, sizeof(r->rdma_pod_name), "rdma_net1");
	r->rdma_moved = true;
	r->rdma_renamed = true;
	r->no_rules = true;
	snprintf(r->network, sizeof(r->network), "rdma-rail0");
	snprintf(r->devinfo_file, sizeof(r->devinfo_file),
		 "/var/run/k8s.cni.cncf.io/devinfo/cni/pod-net1.json");
	r->n_addrs = 2;
	snprintf(r->addrs[0], sizeof(r->addrs[0]), "10.56.0.10/24");
	snprintf(r->addrs[1], sizeof(r->addrs[1]), "fd00::a/64");
	/* multiRail: two routes in table 101, two of its sysctls. */
	r->rail.known = true;
	r->rail.table = 101;
	r->rail.n_routes = 2;
	link_route_init(&r->rail.routes[0]);
	snprintf(r->rail.routes[0].dst, sizeof(r->rail.routes[0].dst), "10.56.0.0/24");
	link_route_init(&r->rail.routes[1]);
	snprintf(r->rail.routes[1].dst, sizeof(r->rail.routes[1].dst), "0.0.0.0/0");
	snprintf(r->rail.routes[1].gw, sizeof(r->rail.routes[1].gw), "10.56.0.1");
	r->rail.routes[1].priority = 7;
	r->rail.routes[0].table = r->rail.routes[1].table = 101;
	r->rail.n_sysctls = 2;
	snprintf(r->rail.sysctl_name[0], sizeof(r->rail.sysctl_name[0]),
		 "net.ipv4.conf.net1.rp_filter");
	snprintf(r->rail.sysctl_value[0], sizeof(r->rail.sysctl_value[0]), "0");
	snprintf(r->rail.sysctl_name[1], sizeof(r->rail.sysctl_name[1]),
		 "net.ipv4.conf.all.rp_filter");
	snprintf(r->rail.sysctl_value[1], sizeof(r->rail.sysctl_value[1]), "0");
}

static bool vf_config_eq(const struct pf_vf_config *a, const struct pf_vf_config *b)
{
	return a->mask == b->mask && !memcmp(a->mac, b->mac, 6) && a->vlan == b->vlan &&
	       a->qos == b->qos && a->vlan_proto == b->vlan_proto && a->spoofchk == b->spoofchk &&
	       a->trust == b->trust && a->link_state == b->link_state &&
	       a->min_tx_rate == b->min_tx_rate && a->max_tx_rate == b->max_tx_rate;
}

static void check_same(const struct sriov_record *a, const struct sriov_record *b)
{
	int i;

	CHECK_INT(b->in_progress, a->in_progress);
	CHECK_STR(b->container_id, a->container_id);
	CHECK_STR(b->ifname, a->ifname);
	CHECK_STR(b->netns, a->netns);
	CHECK(b->netns_id.dev == a->netns_id.dev && b->netns_id.ino == a->netns_id.ino);
	CHECK_STR(b->bdf, a->bdf);
	CHECK_STR(b->pf_bdf, a->pf_bdf);
	CHECK_STR(b->pf_netdev, a->pf_netdev);
	CHECK_INT(b->vf_index, a->vf_index);
	CHECK_INT(b->dpdk, a->dpdk);
	CHECK_STR(b->host_ifname, a->host_ifname);
	CHECK(!memcmp(b->host_mac, a->host_mac, 6));
	CHECK_INT(b->host_mtu, a->host_mtu);
	CHECK_INT(b->host_up, a->host_up);
	CHECK(!memcmp(b->pod_mac, a->pod_mac, 6));
	CHECK_INT(b->pod_mtu, a->pod_mtu);
	CHECK(vf_config_eq(&b->vf_applied, &a->vf_applied));
	CHECK(vf_config_eq(&b->vf_orig, &a->vf_orig));
	CHECK_STR(b->rdma_dev, a->rdma_dev);
	CHECK_INT(b->rdma_index, a->rdma_index);
	CHECK_STR(b->rdma_pod_name, a->rdma_pod_name);
	CHECK_INT(b->rdma_moved, a->rdma_moved);
	CHECK_INT(b->rdma_renamed, a->rdma_renamed);
	CHECK_INT(b->no_rules, a->no_rules);
	CHECK_STR(b->network, a->network);
	CHECK_STR(b->devinfo_file, a->devinfo_file);
	CHECK_STR(b->pod_namespace, a->pod_namespace);
	CHECK_STR(b->pod_name, a->pod_name);
	CHECK_STR(b->pod_uid, a->pod_uid);
	CHECK_STR(b->ipam_conf, a->ipam_conf);
	CHECK_INT(b->n_addrs, a->n_addrs);
	for (i = 0; i < a->n_addrs && i < b->n_addrs; i++)
		CHECK_STR(b->addrs[i], a->addrs[i]);
	CHECK_INT(b->rail.known, a->rail.known);
	CHECK_INT(b->rail.table, a->rail.table);
	CHECK_INT(b->rail.n_routes, a->rail.n_routes);
	for (i = 0; i < a->rail.n_routes && i < b->rail.n_routes; i++) {
		CHECK_STR(b->rail.routes[i].dst, a->rail.routes[i].dst);
		CHECK_STR(b->rail.routes[i].gw, a->rail.routes[i].gw);
		CHECK_INT(b->rail.routes[i].priority, a->rail.routes[i].priority);
		CHECK_INT(b->rail.routes[i].table, a->rail.routes[i].table);
	}
	CHECK_INT(b->rail.n_sysctls, a->rail.n_sysctls);
	for (i = 0; i < a->rail.n_sysctls && i < b->rail.n_sysctls; i++) {
		CHECK_STR(b->rail.sysctl_name[i], a->rail.sysctl_name[i]);
		CHECK_STR(b->rail.sysctl_value[i], a->rail.sysctl_value[i]);
	}
}

static int open_tmp(void)
{
	int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(fd >= 0);
	return fd;
}

/* Write raw bytes as file `name` in the scratch directory. */
static void put_file(const char *name, const char *data, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* The record's JSON as ADD writes it: the object record.c makes, printed. */
static cJSON *record_json(const struct sriov_record *r)
{
	char name[512];
	cJSON *o = NULL;
	int dirfd = open_tmp();

	CHECK_INT(sriov_record_write(dirfd, r), 0);
	sriov_record_name(r->container_id, r->ifname, name, sizeof(name));
	CHECK_INT(state_read_json(dirfd, name, &o), 0);
	close(dirfd);
	return o;
}

/* Seal the JSON of o as a record file holds it and parse it: 0 or -errno. */
static int parse_json(const cJSON *o)
{
	struct sriov_record r;
	char *text = cJSON_PrintUnformatted(o);
	size_t len;
	int ret;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	ret = state_seal(&text, &len);
	if (ret == 0)
		ret = sriov_record_parse(text, len, &r);
	free(text);
	return ret;
}

/*
 * The full record with obj[key] (obj: the record, or one of its
 * "vfApplied"/"vfOriginal") replaced by `value` (JSON text; NULL
 * removes the key), parsed.
 */
static int parse_with(const char *sub, const char *key, const char *value)
{
	struct sriov_record r;
	cJSON *o, *obj;
	int ret;

	full_record(&r);
	o = record_json(&r);
	if (!o)
		return -ENOMEM;
	obj = sub ? cJSON_GetObjectItemCaseSensitive(o, sub) : o;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	if (value) {
		cJSON *v = cJSON_Parse(value);

		CHECK(v != NULL);
		cJSON_AddItemToObject(obj, key, v);
	}
	ret = parse_json(o);
	cJSON_Delete(o);
	return ret;
}

static void test_round_trip(void)
{
	struct sriov_record r, back;
	char name[512];
	int dirfd = open_tmp();

	full_record(&r);
	CHECK_INT(sriov_record_write(dirfd, &r), 0);
	sriov_record_name(r.container_id, r.ifname, name, sizeof(name));
	CHECK_STR(name, "3f2a9c1d0b7e:net1.json");
	memset(&back, 0xa5, sizeof(back));
	CHECK_INT(sriov_record_read(dirfd, name, &back), 0);
	check_same(&r, &back);

	/* The mark of an unfinished ADD survives too, and a DPDK attachment with no RDMA. */
	r.in_progress = true;
	r.dpdk = true;
	r.host_up = false;
	r.rdma_dev[0] = r.rdma_pod_name[0] = '\0';
	r.rdma_moved = r.rdma_renamed = false;
	r.rdma_index = 0;
	/* Nothing set on the PF yet: no field of it means anything. */
	memset(&r.vf_applied, 0, sizeof(r.vf_applied));
	r.n_addrs = 0;
	CHECK_INT(sriov_record_write(dirfd, &r), 0);
	CHECK_INT(sriov_record_read(dirfd, name, &back), 0);
	check_same(&r, &back);

	/* Written again without the mark (ADD finished): the mark is gone. */
	r.in_progress = false;
	CHECK_INT(sriov_record_write(dirfd, &r), 0);
	CHECK_INT(sriov_record_read(dirfd, name, &back), 0);
	CHECK(!back.in_progress);
	close(dirfd);
}

/*
 * multiRail's part: optional (records written before it lack it, and DEL
 * needs none of it); when present, a sysctl name must be one ADD could set
 * on the record's interface, since CHECK reads it under /proc/sys.
 */
static void test_rail(void)
{
	struct sriov_record r;
	cJSON *o;

	full_record(&r);
	o = record_json(&r);
	CHECK(o != NULL);
	cJSON_DeleteItemFromObjectCaseSensitive(o, "multiRail");
	CHECK_INT(parse_json(o), 0);
	cJSON_Delete(o);
	CHECK_INT(parse_with(NULL, "multiRail", NULL), 0);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 0}"), 0);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 100, \"routes\": [{\"dst\": "
			     "\"10.1.0.0/24\"}], \"sysctls\": {\"net.ipv4.conf.net1.arp_ignore\": "
			     "\"1\"}}"), 0);
	CHECK_INT(parse_with(NULL, "multiRail", "true"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": -1}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 4294967296}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 1, \"routes\": {}}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 1, \"routes\": [{\"gw\": "
			     "\"10.1.0.1\"}]}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 1, \"routes\": [{\"dst\": "
			     "\"10.1.0.0/24\", \"priority\": 1.5}]}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 1, \"sysctls\": {"
			     "\"net.ipv4.conf.eth0.arp_ignore\": \"1\"}}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 1, \"sysctls\": {"
			     "\"kernel.panic\": \"1\"}}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "multiRail", "{\"table\": 1, \"sysctls\": {"
			     "\"net.ipv4.conf.net1.arp_ignore\": 1}}"), -EBADMSG);
}

/* Every number is checked against what its consumer takes, at both ends. */
static void test_numbers_in_range(void)
{
	static const struct { const char *sub, *key, *value; int want; } cases[] = {
		{ NULL, "vfIndex", "0", 0 },
		{ NULL, "vfIndex", "65535", 0 },
		{ NULL, "vfIndex", "65536", -EBADMSG },
		{ NULL, "vfIndex", "-1", -EBADMSG },
		{ NULL, "vfIndex", "1.5", -EBADMSG },
		{ NULL, "vfIndex", "\"7\"", -EBADMSG },
		{ NULL, "vfIndex", "1e300", -EBADMSG },
		{ NULL, "vfIndex", NULL, -EBADMSG },
		{ NULL, "hostMtu", "0", 0 },
		{ NULL, "hostMtu", "68", 0 },
		{ NULL, "hostMtu", "65535", 0 },
		{ NULL, "hostMtu", "67", -EBADMSG },
		{ NULL, "hostMtu", "65536", -EBADMSG },
		{ NULL, "hostMtu", NULL, 0 },
		{ NULL, "podMtu", "1", -EBADMSG },
		{ NULL, "podMtu", "70000", -EBADMSG },
		{ NULL, "rdmaIndex", "4294967295", 0 },
		{ NULL, "rdmaIndex", "4294967296", -EBADMSG },
		{ NULL, "rdmaIndex", "-1", -EBADMSG },
		/* The namespace's identity: optional (older records), exact up to 2^53. */
		{ NULL, "netnsIno", NULL, 0 },
		{ NULL, "netnsIno", "9007199254740992", 0 },
		{ NULL, "netnsIno", "9007199254740994", -EBADMSG },
		{ NULL, "netnsIno", "-1", -EBADMSG },
		{ NULL, "netnsDev", "0.5", -EBADMSG },
		{ NULL, "netnsDev", "\"4\"", -EBADMSG },
		{ "vfApplied", "vlan", "4094", 0 },
		{ "vfApplied", "vlan", "4095", -EBADMSG },
		{ "vfApplied", "vlan", "-1", -EBADMSG },
		{ "vfApplied", "vlanQoS", "7", 0 },
		{ "vfApplied", "vlanQoS", "8", -EBADMSG },
		{ "vfApplied", "vlanQoS", NULL, -EBADMSG },
		{ "vfApplied", "vlanProto", "33024", 0 },
		{ "vfApplied", "vlanProto", "4660", -EBADMSG },
		{ "vfApplied", "vlanProto", "65536", -EBADMSG },
		{ "vfApplied", "linkState", "2", 0 },
		{ "vfApplied", "linkState", "3", -EBADMSG },
		{ "vfApplied", "linkState", "-1", -EBADMSG },
		{ "vfApplied", "minTxRate", "100", 0 },
		{ "vfApplied", "minTxRate", "101", -EBADMSG },
		{ "vfApplied", "maxTxRate", "4294967295", 0 },
		{ "vfApplied", "maxTxRate", "4294967296", -EBADMSG },
		{ "vfApplied", "spoofchk", "1", -EBADMSG },
		{ "vfApplied", "mac", "\"02:00:00:00:bb\"", -EBADMSG },
		{ "vfOriginal", "vlan", "5000", -EBADMSG },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = parse_with(cases[i].sub, cases[i].key, cases[i].value);

		if (ret != cases[i].want)
			fprintf(stderr, "  %s%s%s = %s: got %d, want %d\n",
				cases[i].sub ? cases[i].sub : "", cases[i].sub ? "." : "",
				cases[i].key, cases[i].value ? cases[i].value : "(absent)",
				ret, cases[i].want);
		CHECK_INT(ret, cases[i].want);
	}
}

/* VLAN 0 (untagged) with a priority or 802.1ad is nothing the PF can be asked for. */
static void test_vlan_zero(void)
{
	struct sriov_record r;
	cJSON *o, *vf;

	full_record(&r);
	o = record_json(&r);
	CHECK(o != NULL);
	if (!o)
		return;
	vf = cJSON_GetObjectItemCaseSensitive(o, "vfApplied");
	cJSON_ReplaceItemInObjectCaseSensitive(vf, "vlan", cJSON_CreateNumber(0));
	CHECK_INT(parse_json(o), -EBADMSG);	/* QoS 2, 802.1ad */
	cJSON_ReplaceItemInObjectCaseSensitive(vf, "vlanQoS", cJSON_CreateNumber(0));
	CHECK_INT(parse_json(o), -EBADMSG);	/* 802.1ad */
	cJSON_ReplaceItemInObjectCaseSensitive(vf, "vlanProto", cJSON_CreateNumber(ETH_P_8021Q));
	CHECK_INT(parse_json(o), 0);
	cJSON_Delete(o);
}

/*
 * docs/upgrading.md: a record says the oldest format that releases it and
 * the release that wrote it; this version reads up to its own format,
 * ignoring members it does not know, and refuses a newer one by name.
 */
static void test_version(void)
{
	struct sriov_record r, back;
	struct cni_error err = { 0 };
	char text[] = "{\"version\":2,\"writtenBy\":\"sriov-rdma-cni 9.1.0\",\"futureMember\":{}}";
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	cJSON *o;

	full_record(&r);
	o = record_json(&r);
	CHECK(o != NULL);
	CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "version")), 1);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "writtenBy")),
		  "sriov-rdma-cni " PROJECT_VERSION);
	cJSON_Delete(o);

	CHECK_INT(parse_with(NULL, "version", "1"), 0);
	CHECK_INT(parse_with(NULL, "version", "0"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "version", "1.5"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "version", "1e300"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "version", "\"1\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "version", NULL), -EBADMSG);
	CHECK_INT(parse_with(NULL, "writtenBy", NULL), 0);
	CHECK_INT(parse_with(NULL, "writtenBy", "3"), -EBADMSG);
	/* What a newer release may add while it still writes version 1: read, ignored. */
	CHECK_INT(parse_with(NULL, "podNetnsId", "{\"dev\":4,\"ino\":4026532890}"), 0);
	CHECK_INT(parse_with(NULL, "futureMember", "[1, \"x\", null]"), 0);
	/* A version this one does not read: refused, whatever else it holds. */
	CHECK_INT(parse_with(NULL, "version", "2"), -EPROTO);
	CHECK_INT(parse_with(NULL, "version", "2147483647"), -EPROTO);

	/* The refusal names the writer, the versions and what to run. */
	CHECK(buf != NULL);
	if (!buf)
		return;
	memcpy(buf, text, len + 1);
	CHECK_INT(state_seal(&buf, &len), 0);
	CHECK_INT(sriov_record_parse(buf, len, &back), -EPROTO);
	CHECK_INT(back.written.version, 2);
	CHECK_STR(back.written.written_by, "sriov-rdma-cni 9.1.0");
	CHECK_INT(sriov_record_newer(&back, "/var/lib/cni/sriov-rdma", "c1:net1.json",
				     "nothing was changed", &err), -1);
	CHECK_INT(err.code, CNI_ERR_TRY_AGAIN);
	CHECK_STR(err.msg, "stateDir /var/lib/cni/sriov-rdma: the record c1:net1.json was written "
		  "by sriov-rdma-cni 9.1.0 as attachment record version 2; this sriov-rdma-cni "
		  PROJECT_VERSION " reads attachment records up to version 1, and cannot release it "
		  "safely: nothing was changed");
	CHECK_STR(err.details, "install sriov-rdma-cni 9.1.0 or later again (docs/upgrading.md, "
		  "\"Rolling back\"): the runtime's next DEL then releases it");
	free(buf);
}

/* The names DEL hands to the kernel and to paths must still be valid ones. */
static void test_names_checked(void)
{
	CHECK_INT(parse_with(NULL, "containerID", "\"../etc\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "containerID", NULL), -EBADMSG);
	CHECK_INT(parse_with(NULL, "ifname", "\"a/b\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "ifname", "\"abcdefghijklmnop\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "netns", "\"relative/ns\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "netns", "\"\""), 0);
	CHECK_INT(parse_with(NULL, "deviceID", "\"0000:3B:00.2\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "deviceID", "\"3b:00.2\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "deviceID", NULL), -EBADMSG);
	CHECK_INT(parse_with(NULL, "pfDeviceID", "\"pf\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "pfDeviceID", "\"\""), 0);
	CHECK_INT(parse_with(NULL, "pfNetdev", "\"a b\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "hostIfname", "\"x/y\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "hostMac", "\"zz:00:00:00:00:05\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "podMac", NULL), -EBADMSG);
	CHECK_INT(parse_with(NULL, "rdmaDevice", "\"mlx5 2\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "rdmaPodName", "\"a/b\""), -EBADMSG);
	/* DEL would move back a device it cannot name. */
	CHECK_INT(parse_with(NULL, "rdmaDevice", "\"\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "vfApplied", NULL), -EBADMSG);
	CHECK_INT(parse_with(NULL, "vfOriginal", "[]"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "inProgress", "\"yes\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "addresses", "\"10.0.0.1/24\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "addresses", "[1]"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "addresses",
			     "[\"1:2:3:4:5:6:7:8/64-and-a-tail-that-makes-it-longer-than-64-bytes\"]"),
		  -EBADMSG);
	CHECK_INT(parse_with(NULL, "addresses", NULL), 0);
	CHECK_INT(parse_with(NULL, "deviceInfoFile", "7"), -EBADMSG);
}

/*
 * The pod and the IPAM config, which a takeover of a forgotten sandbox
 * acts on: a pod field a shell or a path would mind, or an IPAM config
 * naming no plugin, makes the record unreadable; both are optional.
 */
static void test_pod_and_ipam(void)
{
	struct sriov_record r, back;
	char name[512];
	int dirfd = open_tmp();

	full_record(&r);
	snprintf(r.pod_namespace, sizeof(r.pod_namespace), "train");
	snprintf(r.pod_name, sizeof(r.pod_name), "worker-0");
	snprintf(r.pod_uid, sizeof(r.pod_uid), "6f1c0f2e-5d1b-4b9f-9d4e-3c2f7a1b8e90");
	snprintf(r.ipam_conf, sizeof(r.ipam_conf), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\","
		 "\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.0.0.0/24\"}}");
	CHECK_INT(sriov_record_write(dirfd, &r), 0);
	sriov_record_name(r.container_id, r.ifname, name, sizeof(name));
	CHECK_INT(sriov_record_read(dirfd, name, &back), 0);
	check_same(&r, &back);
	close(dirfd);

	CHECK(sriov_pod_field_ok("a.b-c_9"));
	CHECK(!sriov_pod_field_ok(""));
	CHECK(!sriov_pod_field_ok("a;b"));
	CHECK(!sriov_pod_field_ok("a/b"));
	CHECK(!sriov_pod_field_ok("a b"));
	CHECK_INT(parse_with(NULL, "pod", "{\"uid\": \"u;rm\"}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "pod", "{\"namespace\": \"a/b\"}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "pod", "{\"name\": 7}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "pod", "\"u\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "pod", "{\"uid\": \"u-1\"}"), 0);
	CHECK_INT(parse_with(NULL, "pod", NULL), 0);
	CHECK_INT(parse_with(NULL, "ipamConf", "{\"ipam\": {\"type\": \"../x\"}}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "ipamConf", "{\"ipam\": {}}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "ipamConf", "\"{}\""), -EBADMSG);
	CHECK_INT(parse_with(NULL, "ipamConf", "{\"ipam\": {\"type\": \"host-local\"}}"), 0);
	CHECK_INT(parse_with(NULL, "ipamConf", NULL), 0);
}

static void test_too_many_addresses(void)
{
	struct sriov_record r;
	cJSON *o, *arr;

	full_record(&r);
	o = record_json(&r);
	CHECK(o != NULL);
	if (!o)
		return;
	arr = cJSON_GetObjectItemCaseSensitive(o, "addresses");
	while (cJSON_GetArraySize(arr) < CNI_MAX_IPS)
		cJSON_AddItemToArray(arr, cJSON_CreateString("10.0.0.1/24"));
	CHECK_INT(parse_json(o), 0);
	cJSON_AddItemToArray(arr, cJSON_CreateString("10.0.0.2/24"));
	CHECK_INT(parse_json(o), -EBADMSG);
	cJSON_Delete(o);
}

/* A record that is not whole is unreadable: never a record with fields missing. */
static void test_corrupt_and_truncated(void)
{
	struct sriov_record r, back;
	char name[512], *data = NULL, *buf;
	size_t len = 0, cut;
	int dirfd = open_tmp(), bad = 0;

	full_record(&r);
	CHECK_INT(sriov_record_write(dirfd, &r), 0);
	sriov_record_name(r.container_id, r.ifname, name, sizeof(name));
	CHECK_INT(state_read(dirfd, name, &data, &len, STATE_MAX_FILE), 0);
	CHECK(len > 100);
	buf = malloc(len + 1);
	CHECK(buf != NULL);
	for (cut = 0; buf && data && cut < len; cut++) {
		memcpy(buf, data, cut);
		buf[cut] = '\0';
		if (sriov_record_parse(buf, cut, &back) != -EBADMSG)
			bad++;
	}
	CHECK_INT(bad, 0);
	/* Cut short on disk, as a full disk or a copy would leave it. */
	if (data) {
		put_file("short.json", data, len / 2);
		CHECK_INT(sriov_record_read(dirfd, "short.json", &back), -EBADMSG);
		/* One byte changed in the JSON: the checksum tells. */
		memcpy(buf, data, len + 1);
		CHECK(strstr(buf, "65535") != NULL);	/* vfIndex, and nothing else */
		if (strstr(buf, "65535"))
			strstr(buf, "65535")[1] = '4';
		CHECK_INT(sriov_record_parse(buf, len, &back), -EBADMSG);
		put_file("flipped.json", buf, len);
		CHECK_INT(sriov_record_read(dirfd, "flipped.json", &back), -EBADMSG);
		/* The JSON alone, without its checksum line. */
		memcpy(buf, data, len + 1);
		CHECK_INT(state_unseal(buf, &cut), 0);
		put_file("unsealed.json", buf, cut);
		CHECK_INT(sriov_record_read(dirfd, "unsealed.json", &back), -EBADMSG);
		/* The untouched bytes still read. */
		memcpy(buf, data, len + 1);
		CHECK_INT(sriov_record_parse(buf, len, &back), 0);
	}
	put_file("empty.json", "", 0);
	CHECK_INT(sriov_record_read(dirfd, "empty.json", &back), -EBADMSG);
	free(buf);
	free(data);
	close(dirfd);
}

/* Sealed, so only the content can be wrong: not JSON, not an object. */
static void test_sealed_garbage(void)
{
	static const char *const texts[] = { "not json", "[]", "{}", "null", "{\"version\":1}" };
	struct sriov_record back;
	size_t i, len;
	char *buf;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		buf = strdup(texts[i]);
		len = strlen(buf);
		CHECK_INT(state_seal(&buf, &len), 0);
		CHECK_INT(sriov_record_parse(buf, len, &back), -EBADMSG);
		free(buf);
	}
}

/* DEL tells "no record" (nothing to undo) from "a record it cannot read". */
static void test_read_errors(void)
{
	struct sriov_record back;
	char path[128];
	int dirfd = open_tmp();

	CHECK_INT(sriov_record_read(dirfd, "absent:net1.json", &back), -ENOENT);
	snprintf(path, sizeof(path), "%s/dir:net1.json", tmp);
	CHECK_INT(mkdir(path, 0700), 0);
	CHECK_INT(sriov_record_read(dirfd, "dir:net1.json", &back), -EBADMSG);
	snprintf(path, sizeof(path), "%s/link:net1.json", tmp);
	CHECK_INT(symlink("3f2a9c1d0b7e:net1.json", path), 0);
	CHECK_INT(sriov_record_read(dirfd, "link:net1.json", &back), -EBADMSG);
	close(dirfd);
}

static void test_remove(void)
{
	struct sriov_record r, back;
	char name[512];
	int dirfd = open_tmp();

	full_record(&r);
	snprintf(r.container_id, sizeof(r.container_id), "gone");
	CHECK_INT(sriov_record_write(dirfd, &r), 0);
	sriov_record_name(r.container_id, r.ifname, name, sizeof(name));
	CHECK_INT(sriov_record_read(dirfd, name, &back), 0);
	CHECK_INT(sriov_record_remove(dirfd, &r), 0);
	CHECK_INT(sriov_record_read(dirfd, name, &back), -ENOENT);
	/* DEL run twice: the second finds nothing and still succeeds. */
	CHECK_INT(sriov_record_remove(dirfd, &r), 0);
	close(dirfd);
}

/*
 * ADD creates a device-info file only where none stands, and DEL removes
 * it only while it holds what ADD wrote: anyone else's file stays.
 */
static void test_devinfo(void)
{
	char path[128], resolved[PATH_MAX], text[1024], other[1024], *data = NULL;
	struct cni_error err;
	size_t len;
	int devfd;

	snprintf(path, sizeof(path), "%s/devinfo", tmp);
	devfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(devfd >= 0);
	snprintf(path, sizeof(path), "%s/devinfo/pod-net1.json", tmp);
	/* cni_errorf keeps the first error: each call gets a fresh one. */
	memset(&err, 0, sizeof(err));
	CHECK_INT(sriov_devinfo_validate(path, resolved, &err), 0);
	CHECK_INT(sriov_devinfo_validate("/etc/passwd", resolved, &err), -EPERM);
	CHECK_HAS(err.msg, "runtimeConfig.CNIDeviceInfoFile");
	memset(&err, 0, sizeof(err));
	CHECK_INT(sriov_devinfo_validate("devinfo/x.json", resolved, &err), -EINVAL);
	CHECK_HAS(err.msg, "absolute");
	CHECK_INT(sriov_devinfo_text(NULL, "0000:3b:00.2", "0000:3b:00.0", "rdma_net1", NULL, text,
				     sizeof(text)), 0);
	CHECK_INT(sriov_devinfo_text(NULL, "0000:3b:00.2", "0000:3b:00.0", NULL, NULL, other,
				     sizeof(other)), 0);
	CHECK(!strstr(text, "infiniband"));
	{
		/* An IB VF: the GUIDs it runs with (its own unless ADD set others), pkey if given. */
		struct sriov_ib_rec ib = { .ib = true, .has_pkey = true, .pkey = 0x8001,
					   .orig = { 0x1111, 0x2222 },
					   .applied = { 0x02c90300abcd01, 0x02c90300abcd02 } };
		char ibtext[1024];

		CHECK_INT(sriov_devinfo_text(NULL, "0000:3b:00.2", "0000:3b:00.0", "mlx5_4", &ib, ibtext,
					     sizeof(ibtext)), 0);
		CHECK_STR(ibtext, "{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":{\"pci-address\":"
			  "\"0000:3b:00.2\",\"pf-pci-address\":\"0000:3b:00.0\",\"rdma-device\":"
			  "\"mlx5_4\"},\"infiniband\":{\"pkey\":\"0x8001\",\"port-guid\":"
			  "\"00:02:c9:03:00:ab:cd:02\",\"node-guid\":\"00:02:c9:03:00:ab:cd:01\"}}");
		ib.has_pkey = false;
		ib.applied.node = ib.applied.port = 0;
		CHECK_INT(sriov_devinfo_text(NULL, "0000:3b:00.2", "0000:3b:00.0", NULL, &ib, ibtext,
					     sizeof(ibtext)), 0);
		CHECK_HAS(ibtext, "\"infiniband\":{\"port-guid\":\"00:00:00:00:00:00:22:22\","
			  "\"node-guid\":\"00:00:00:00:00:00:11:11\"}");
		/* An Ethernet VF's record: no such object. */
		ib.ib = false;
		CHECK_INT(sriov_devinfo_text(NULL, "0000:3b:00.2", "0000:3b:00.0", NULL, &ib, ibtext,
					     sizeof(ibtext)), 0);
		CHECK(!strstr(ibtext, "infiniband"));
	}
	CHECK_INT(sriov_devinfo_write(resolved, text, NULL), 0);
	CHECK_INT(state_read(devfd, "pod-net1.json", &data, &len, STATE_MAX_FILE), 0);
	CHECK_HAS(data, "\"pci-address\":\"0000:3b:00.2\"");
	CHECK_HAS(data, "\"rdma-device\":\"rdma_net1\"");
	free(data);
	data = NULL;
	/* A second write finds the file there: it is not replaced. */
	CHECK_INT(sriov_devinfo_write(resolved, other, NULL), -EEXIST);
	CHECK_INT(state_read(devfd, "pod-net1.json", &data, &len, STATE_MAX_FILE), 0);
	CHECK_HAS(data, "rdma_net1");
	free(data);
	data = NULL;
	/* Not what was written (even naming the same VF): it stays. */
	CHECK_INT(sriov_devinfo_remove(path, other, "0000:3b:00.2", NULL), -EPERM);
	CHECK(access(resolved, F_OK) == 0);
	CHECK_INT(sriov_devinfo_remove(path, text, "0000:3b:00.2", NULL), 0);
	CHECK(access(resolved, F_OK) < 0);
	CHECK_INT(sriov_devinfo_remove(path, text, "0000:3b:00.2", NULL), 0);
	/* An older record, without the text: only a file naming this VF goes. */
	CHECK_INT(sriov_devinfo_write(resolved, other, NULL), 0);
	CHECK_INT(sriov_devinfo_remove(path, "", "0000:3b:00.3", NULL), -EPERM);
	CHECK(access(resolved, F_OK) == 0);
	CHECK_INT(sriov_devinfo_remove(path, "", "0000:3b:00.2", NULL), 0);
	CHECK(access(resolved, F_OK) < 0);
	/* No temporary is left behind: the directory is empty again. */
	{
		DIR *d = fdopendir(dup(devfd));
		struct dirent *de;
		int n = 0;

		CHECK(d != NULL);
		while (d && (de = readdir(d)))
			n += de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."));
		if (d)
			closedir(d);
		CHECK_INT(n, 0);
	}
	/*
	 * A record naming a file outside the allowed directories (the node
	 * config was narrowed since ADD): DEL leaves it alone. Under valgrind
	 * this also proves the refusal reads no uninitialised error.
	 */
	CHECK_INT(sriov_devinfo_remove("/etc/passwd", "", "0000:3b:00.2", NULL), -EPERM);
	CHECK(access("/etc/passwd", F_OK) == 0);
	close(devfd);
}

static void put_str(const char *name, const char *text)
{
	put_file(name, text, strlen(text));
}

/*
 * The device plugin's copy for this VF, which Multus puts at the path
 * before ADD: taken over (its members kept, the pod-side RDMA name set),
 * written over atomically with its mode, put back by ADD's undo, removed
 * by DEL only while it holds what ADD wrote. Anything else stays.
 */
static void test_devinfo_device_plugin(void)
{
	static const char dp[] = "{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":{\"pci-address\":"
				 "\"0000:3b:00.2\",\"rdma-device\":\"mlx5_2\",\"vendor\":\"x\"}}";
	struct sriov_devinfo_prior prior, none;
	char path[512], target[512], text[SRIOV_DEVINFO_MAX], other[64];
	struct stat st;
	char *data = NULL;
	size_t len;
	int devfd;

	snprintf(path, sizeof(path), "%s/devinfo", tmp);
	devfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(devfd >= 0);
	snprintf(path, sizeof(path), "%s/devinfo/ml-rail0-c1_net1", tmp);

	/* Free: nothing to take over. */
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3b:00.2", &none, other, sizeof(other)), 0);
	CHECK(none.text == NULL);

	put_str("devinfo/ml-rail0-c1_net1", dp);
	CHECK_INT(fchmodat(devfd, "ml-rail0-c1_net1", 0444, 0), 0);
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3B:00.2", &prior, other, sizeof(other)), 0);
	CHECK(prior.text != NULL);
	CHECK_INT((int)prior.mode, 0444);
	CHECK_INT(sriov_devinfo_text(prior.text, "0000:3b:00.2", "0000:3b:00.0", "rdma_net1", NULL,
				     text, sizeof(text)), 0);
	CHECK_STR(text, "{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":{\"pci-address\":"
		  "\"0000:3b:00.2\",\"rdma-device\":\"rdma_net1\",\"vendor\":\"x\","
		  "\"pf-pci-address\":\"0000:3b:00.0\"}}");
	/* No RDMA name of its own: the copy's stands. */
	{
		char keep[SRIOV_DEVINFO_MAX];

		CHECK_INT(sriov_devinfo_text(prior.text, "0000:3b:00.2", "", NULL, NULL, keep,
					     sizeof(keep)), 0);
		CHECK_HAS(keep, "\"rdma-device\":\"mlx5_2\"");
	}
	CHECK_INT(sriov_devinfo_write(path, text, &prior), 0);
	CHECK_INT(state_read(devfd, "ml-rail0-c1_net1", &data, &len, STATE_MAX_FILE), 0);
	CHECK_STR(data, text);
	free(data);
	data = NULL;
	CHECK_INT(fstatat(devfd, "ml-rail0-c1_net1", &st, 0), 0);
	CHECK_INT((int)(st.st_mode & 0777), 0444);
	/* ADD's undo: the copy comes back as the device plugin wrote it. */
	CHECK_INT(sriov_devinfo_remove(path, text, "0000:3b:00.2", &prior), 0);
	CHECK_INT(state_read(devfd, "ml-rail0-c1_net1", &data, &len, STATE_MAX_FILE), 0);
	CHECK_STR(data, dp);
	free(data);
	data = NULL;
	/* Changed since ADD looked: not written over. */
	put_str("devinfo/ml-rail0-c1_net1", "{\"type\":\"pci\"}");
	CHECK_INT(sriov_devinfo_write(path, text, &prior), -EEXIST);
	CHECK_INT(state_read(devfd, "ml-rail0-c1_net1", &data, &len, STATE_MAX_FILE), 0);
	CHECK_STR(data, "{\"type\":\"pci\"}");
	free(data);
	data = NULL;
	/* Written again, then DEL: gone (Multus removes its own copy after). */
	put_str("devinfo/ml-rail0-c1_net1", dp);
	CHECK_INT(sriov_devinfo_write(path, text, &prior), 0);
	CHECK_INT(sriov_devinfo_remove(path, text, "0000:3b:00.2", NULL), 0);
	CHECK(faccessat(devfd, "ml-rail0-c1_net1", F_OK, 0) < 0);
	free(prior.text);

	/* What is not the device plugin's copy for this VF is refused, and stays. */
	put_str("devinfo/ml-rail0-c1_net1", "{\"type\":\"pci\",\"pci\":{\"pci-address\":"
		"\"0000:3b:00.3\"}}");
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3b:00.2", &prior, other, sizeof(other)), -EXDEV);
	CHECK_STR(other, "0000:3b:00.3");
	CHECK(prior.text == NULL);
	put_str("devinfo/ml-rail0-c1_net1", "not json");
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3b:00.2", &prior, other, sizeof(other)),
		  -EBADMSG);
	put_str("devinfo/ml-rail0-c1_net1", "{\"type\":\"net\",\"pci\":{\"pci-address\":"
		"\"0000:3b:00.2\"}}");
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3b:00.2", &prior, other, sizeof(other)),
		  -EBADMSG);
	CHECK_INT(unlinkat(devfd, "ml-rail0-c1_net1", 0), 0);
	snprintf(target, sizeof(target), "%s/devinfo/real", tmp);
	put_str("devinfo/real", dp);
	CHECK_INT(symlinkat("real", devfd, "ml-rail0-c1_net1"), 0);
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3b:00.2", &prior, other, sizeof(other)), -ELOOP);
	CHECK_INT(unlinkat(devfd, "ml-rail0-c1_net1", 0), 0);
	CHECK_INT(mkfifoat(devfd, "ml-rail0-c1_net1", 0600), 0);
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3b:00.2", &prior, other, sizeof(other)), -EINVAL);
	CHECK_INT(unlinkat(devfd, "ml-rail0-c1_net1", 0), 0);
	CHECK_INT(mkdirat(devfd, "ml-rail0-c1_net1", 0700), 0);
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3b:00.2", &prior, other, sizeof(other)), -EINVAL);
	CHECK_INT(unlinkat(devfd, "ml-rail0-c1_net1", AT_REMOVEDIR), 0);
	CHECK_INT(unlink(target), 0);
	close(devfd);
}

/*
 * An InfiniBand VF's part: the GUIDs DEL puts back and the driver it binds
 * the VF to again (a name that reaches bus/pci/drivers/<driver>/bind).
 */
static void test_infiniband(void)
{
	struct sriov_record r, back;
	char name[512];
	int dirfd = open_tmp();

	full_record(&r);
	r.ib.ib = true;
	r.ib.guid_set = true;
	r.ib.orig.node = 0;
	r.ib.orig.port = 0x0011223344556677ull;
	r.ib.applied.node = r.ib.applied.port = 0x02c903000000abcdull;
	snprintf(r.ib.driver, sizeof(r.ib.driver), "mlx5_core");
	r.ib.has_pkey = true;
	r.ib.pkey = 0x8001;
	CHECK_INT(sriov_record_write(dirfd, &r), 0);
	sriov_record_name(r.container_id, r.ifname, name, sizeof(name));
	memset(&back, 0xa5, sizeof(back));
	CHECK_INT(sriov_record_read(dirfd, name, &back), 0);
	CHECK(back.ib.ib && back.ib.guid_set && back.ib.has_pkey);
	CHECK(back.ib.orig.node == 0 && back.ib.orig.port == 0x0011223344556677ull);
	CHECK(back.ib.applied.node == 0x02c903000000abcdull &&
	      back.ib.applied.port == 0x02c903000000abcdull);
	CHECK_STR(back.ib.driver, "mlx5_core");
	CHECK_INT(back.ib.pkey, 0x8001);
	close(dirfd);
	/* An Ethernet VF's record has none, and reads back without. */
	CHECK_INT(parse_with(NULL, "infiniband", NULL), 0);
	CHECK_INT(parse_with(NULL, "infiniband", "{\"guidSet\": false, \"nodeGuid\": "
			     "\"00:00:00:00:00:00:00:01\", \"portGuid\": \"00:00:00:00:00:00:00:01\", "
			     "\"origNodeGuid\": \"00:00:00:00:00:00:00:00\", \"origPortGuid\": "
			     "\"00:00:00:00:00:00:00:00\", \"driver\": \"\"}"), 0);
	CHECK_INT(parse_with(NULL, "infiniband", "true"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "infiniband", "{}"), -EBADMSG);
	/* A driver name that climbs out of bus/pci/drivers, a GUID not in ip's form, a pkey of 0. */
	CHECK_INT(parse_with(NULL, "infiniband", "{\"guidSet\": true, \"nodeGuid\": "
			     "\"00:00:00:00:00:00:00:01\", \"portGuid\": \"00:00:00:00:00:00:00:01\", "
			     "\"origNodeGuid\": \"00:00:00:00:00:00:00:00\", \"origPortGuid\": "
			     "\"00:00:00:00:00:00:00:00\", \"driver\": \"../../../x\"}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "infiniband", "{\"guidSet\": true, \"nodeGuid\": "
			     "\"00:00:00:00:00:00:00:01\", \"portGuid\": \"00:00:00:00:00:00:00:01\", "
			     "\"origNodeGuid\": \"0\", \"origPortGuid\": "
			     "\"00:00:00:00:00:00:00:00\", \"driver\": \"mlx5_core\"}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "infiniband", "{\"guidSet\": true, \"nodeGuid\": "
			     "\"00:00:00:00:00:00:00:01\", \"portGuid\": \"00:00:00:00:00:00:00:01\", "
			     "\"origNodeGuid\": \"00:00:00:00:00:00:00:00\", \"origPortGuid\": "
			     "\"00:00:00:00:00:00:00:00\", \"driver\": \"\"}"), -EBADMSG);
	CHECK_INT(parse_with(NULL, "infiniband", "{\"guidSet\": false, \"nodeGuid\": "
			     "\"00:00:00:00:00:00:00:01\", \"portGuid\": \"00:00:00:00:00:00:00:01\", "
			     "\"origNodeGuid\": \"00:00:00:00:00:00:00:00\", \"origPortGuid\": "
			     "\"00:00:00:00:00:00:00:00\", \"driver\": \"\", \"pkey\": 0}"), -EBADMSG);
}

int main(void)
{
	char cmd[128], conf[256], dir[128];

	snprintf(tmp, sizeof(tmp), "/tmp/test-record.XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	snprintf(dir, sizeof(dir), "%s/devinfo", tmp);
	snprintf(conf, sizeof(conf), "{\"allowedDeviceInfoDirs\": [\"%s\"]}", dir);
	if (mkdir(dir, 0700) < 0)
		return 1;
	put_file("node-config.json", conf, strlen(conf));
	snprintf(conf, sizeof(conf), "%s/node-config.json", tmp);
	setenv("SRIOV_RDMA_CNI_NODE_CONFIG", conf, 1);
	RUN(test_round_trip);
	RUN(test_numbers_in_range);
	RUN(test_rail);
	RUN(test_infiniband);
	RUN(test_vlan_zero);
	RUN(test_version);
	RUN(test_names_checked);
	RUN(test_pod_and_ipam);
	RUN(test_too_many_addresses);
	RUN(test_corrupt_and_truncated);
	RUN(test_sealed_garbage);
	RUN(test_read_errors);
	RUN(test_remove);
	RUN(test_devinfo);
	RUN(test_devinfo_device_plugin);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_summary();
}
