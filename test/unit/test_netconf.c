/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sriov-rdma's own logic, below the plugin: the config parser (netconf.c)
 * and the attachment record (record.c), without a host to change.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sriov.h"

static char tmp[64];

/* Parse `json` as the config of `cmd`: 0, or the CNI error code. */
static int parse(const char *json, enum cni_cmd cmd, struct sriov_conf *c, struct cni_error *err)
{
	struct cni_request req;
	int ret;

	memset(&req, 0, sizeof(req));
	memset(err, 0, sizeof(*err));
	req.env.command = cmd;
	req.conf = cJSON_Parse(json);
	if (!req.conf)
		return -1;
	req.runtime_config = cJSON_GetObjectItemCaseSensitive(req.conf, "runtimeConfig");
	ret = sriov_conf_parse(&req, c, err);
	/* The conf keeps pointers into the JSON: the tests read only its own buffers and codes. */
	cJSON_Delete(req.conf);
	return ret ? err->code : 0;
}

static void test_device_and_vf_fields(void)
{
	struct sriov_conf c;
	struct cni_error err;

	CHECK_INT(parse("{\"deviceID\":\"3b:00.2\",\"vlan\":100,\"vlanQoS\":3}", CNI_CMD_ADD, &c, &err), 0);
	CHECK_STR(c.bdf, "0000:3b:00.2");
	CHECK_INT(c.vf.vlan, 100);
	CHECK_INT(c.vf.qos, 3);
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"vlan\":4095}", CNI_CMD_ADD, &c, &err), 7);
	CHECK_STR(err.msg, "vlan: 4095 is out of range (0-4094)");
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"vlanQoS\":3}", CNI_CMD_ADD, &c, &err), 7);
	CHECK_HAS(err.msg, "vlanQoS");
	CHECK_INT(parse("{\"vlan\":1}", CNI_CMD_ADD, &c, &err), 7);
	CHECK_HAS(err.msg, "deviceID");
	/* The sources of the VF must agree: a NAD's own runtimeConfig cannot pick another one. */
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"runtimeConfig\":{\"deviceID\":\"0000:3b:00.5\"}}",
			CNI_CMD_ADD, &c, &err), 7);
	CHECK_HAS(err.msg, "deviceID \"0000:3b:00.2\" and runtimeConfig.deviceID \"0000:3b:00.5\" "
		  "name different VFs");
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"pciBusID\":\"3b:00.2\","
			"\"runtimeConfig\":{\"deviceID\":\"0000:3B:00.2\"}}", CNI_CMD_ADD, &c, &err), 0);
	CHECK_STR(c.bdf, "0000:3b:00.2");
	CHECK_INT(parse("{\"runtimeConfig\":{\"deviceID\":\"0000:3b:00.5\"}}", CNI_CMD_ADD, &c, &err), 0);
	CHECK_STR(c.bdf, "0000:3b:00.5");
}

/* pkey and the integer fields: a number far out of range is refused before any conversion. */
static void test_numbers_beyond_any_integer(void)
{
	static const char *const huge[] = { "1e300", "-1e300", "1e999", "-1e999", NULL };
	struct sriov_conf c;
	struct cni_error err;
	char json[160];

	for (int i = 0; huge[i]; i++) {
		snprintf(json, sizeof(json), "{\"deviceID\":\"0000:3b:00.2\",\"pkey\":%s}", huge[i]);
		CHECK_INT(parse(json, CNI_CMD_ADD, &c, &err), 7);
		CHECK_HAS(err.msg, "pkey: not a partition key");
		snprintf(json, sizeof(json), "{\"deviceID\":\"0000:3b:00.2\",\"vlan\":%s}", huge[i]);
		CHECK_INT(parse(json, CNI_CMD_ADD, &c, &err), 7);
		CHECK_HAS(err.msg, "vlan: must be an integer");
		snprintf(json, sizeof(json), "{\"deviceID\":\"0000:3b:00.2\",\"mtu\":%s}", huge[i]);
		CHECK_INT(parse(json, CNI_CMD_ADD, &c, &err), 7);
		CHECK_HAS(err.msg, "mtu: must be an integer");
	}
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"pkey\":32769}", CNI_CMD_ADD, &c, &err), 0);
	CHECK_INT(c.ib.pkey, 0x8001);
}

static void test_rdma_name_is_a_prefix(void)
{
	char name[RDMA_NAME_MAX];
	struct sriov_conf c;
	struct cni_error err;

	sriov_rdma_pod_name("rail0", "0000:3b:00.2", name);
	CHECK_STR(name, "rail0_p59s0f2");
	sriov_rdma_pod_name("rail0", "0001:af:1f.7", name);
	CHECK_STR(name, "rail0_d1p175s31f7");
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.3\",\"rdma\":\"exclusive\",\"rdmaName\":\"rail1\"}",
			CNI_CMD_ADD, &c, &err), 0);
	CHECK_STR(c.rdma_name_buf, "rail1_p59s0f3");
	/* 46 characters and the longest suffix still fit a kernel RDMA name */
	sriov_rdma_pod_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ffff:ff:1f.7", name);
	CHECK_INT((int)strlen(name), 62);
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.3\",\"rdmaName\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
			CNI_CMD_ADD, &c, &err), 7);
	CHECK_HAS(err.msg, "a suffix naming the VF follows");
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.3\",\"rdma\":\"off\",\"rdmaName\":\"r\"}", CNI_CMD_ADD, &c,
			&err), 7);
}

static void test_pool_ipam_checked_on_add_only(void)
{
	struct sriov_conf c;
	struct cni_error err;
	const char *typo = "{\"deviceID\":\"0000:3b:00.2\",\"ipam\":{\"type\":\"pool-ipam\","
			   "\"subnet\":\"10.1.0.0/24\",\"rangeStrat\":\"10.1.0.9\"}}";

	CHECK_INT(parse(typo, CNI_CMD_ADD, &c, &err), 7);
	CHECK_HAS(err.msg, "ipam.rangeStrat");
	CHECK_INT(parse(typo, CNI_CMD_DEL, &c, &err), 0);
	/* another IPAM's section is its own business */
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"ipam\":{\"type\":\"host-local\",\"rangeStrat\":1}}",
			CNI_CMD_ADD, &c, &err), 0);
}

/* A recased "type" inside ipam would pass for no IPAM: an attach with no address and no error. */
static void test_ipam_type_recased(void)
{
	struct sriov_conf c;
	struct cni_error err;

	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"ipam\":{\"Type\":\"host-local\","
			"\"subnet\":\"10.1.0.0/24\"}}", CNI_CMD_ADD, &c, &err), 7);
	CHECK_STR(err.msg, "ipam.Type: keys are case-sensitive; write \"type\"");
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"ipam\":{\"TYPE\":\"pool-ipam\"}}",
			CNI_CMD_ADD, &c, &err), 7);
	CHECK_HAS(err.msg, "ipam.TYPE");
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"ipam\":{\"type\":\"host-local\"}}",
			CNI_CMD_ADD, &c, &err), 0);
	CHECK(c.ipam_type != NULL);
	/* An ipam section without any type is no IPAM, as before. */
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"ipam\":{}}", CNI_CMD_ADD, &c, &err), 0);
	CHECK(c.ipam_type == NULL);
}

static void test_paths_confined(void)
{
	struct sriov_conf c;
	struct cni_error err;

	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\"}", CNI_CMD_ADD, &c, &err), 0);
	CHECK_STR(c.state_dir, SRIOV_DEFAULT_STATE_DIR);
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"stateDir\":\"/etc\"}", CNI_CMD_ADD, &c, &err), 7);
	CHECK_HAS(err.msg, "allowedStateDirs");
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"runtimeConfig\":{\"CNIDeviceInfoFile\":\"/etc/passwd\"}}",
			CNI_CMD_ADD, &c, &err), 7);
	CHECK_HAS(err.msg, "allowedDeviceInfoDirs");
	CHECK_INT(parse("{\"deviceID\":\"0000:3b:00.2\",\"runtimeConfig\":{\"CNIDeviceInfoFile\":"
			"\"/var/run/k8s.cni.cncf.io/devinfo/cni/pod-net1.json\"}}", CNI_CMD_ADD, &c, &err), 0);
}

/* A device-info path refused for what is wrong with it, not for a ".." it does not hold. */
static void test_devinfo_path_messages(void)
{
	static const struct {
		const char *path, *msg;
	} cases[] = {
		{ "/var/run/k8s.cni.cncf.io/devinfo/cni/", "ends in \"/\": it names a directory" },
		{ "/var/run/k8s.cni.cncf.io/./devinfo/cni/p.json", "holds a \".\" component" },
		{ "/var/run/k8s.cni.cncf.io/devinfo/../p.json", "holds a \"..\" component" },
		{ "devinfo/p.json", "is not an absolute path" },
	};
	struct sriov_conf c;
	struct cni_error err;
	char json[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(json, sizeof(json), "{\"deviceID\":\"0000:3b:00.2\",\"runtimeConfig\":"
			 "{\"CNIDeviceInfoFile\":\"%s\"}}", cases[i].path);
		CHECK_INT(parse(json, CNI_CMD_ADD, &c, &err), 7);
		CHECK_HAS(err.msg, cases[i].msg);
		if (strstr(cases[i].path, ".."))
			continue;
		CHECK(!strstr(err.msg, "\"..\""));
	}
}

static void test_record_round_trip(void)
{
	struct sriov_record r, back;
	char name[512], path[600];
	int dirfd, fd;

	dirfd = open(tmp, O_RDONLY | O_DIRECTORY);
	CHECK(dirfd >= 0);
	memset(&r, 0, sizeof(r));
	snprintf(r.container_id, sizeof(r.container_id), "c1");
	snprintf(r.ifname, sizeof(r.ifname), "net1");
	snprintf(r.bdf, sizeof(r.bdf), "0000:3b:00.2");
	snprintf(r.host_ifname, sizeof(r.host_ifname), "enp59s0f0v0");
	r.vf_index = 7;
	r.host_mtu = 9000;
	r.pod_mtu = 4220;
	r.in_progress = true;
	r.n_addrs = 1;
	snprintf(r.addrs[0], sizeof(r.addrs[0]), "10.1.0.5/24");
	CHECK_INT(sriov_record_write(dirfd, &r), 0);
	sriov_record_name("c1", "net1", name, sizeof(name));
	CHECK_INT(sriov_record_read(dirfd, name, &back), 0);
	CHECK_INT(back.vf_index, 7);
	CHECK_INT(back.pod_mtu, 4220);
	CHECK(back.in_progress);
	CHECK_STR(back.addrs[0], "10.1.0.5/24");
	/* one byte changed: the checksum refuses it */
	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_INT(pwrite(fd, "X", 1, 5), 1);
	close(fd);
	CHECK_INT(sriov_record_read(dirfd, name, &back), -EBADMSG);
	close(dirfd);
}

int main(void)
{
	char cmd[128];

	snprintf(tmp, sizeof(tmp), "/tmp/test-netconf.XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	/* The built-in allowed directories alone. */
	setenv("SRIOV_RDMA_CNI_NODE_CONFIG", "/nonexistent/node-config.json", 1);
	RUN(test_device_and_vf_fields);
	RUN(test_numbers_beyond_any_integer);
	RUN(test_rdma_name_is_a_prefix);
	RUN(test_pool_ipam_checked_on_add_only);
	RUN(test_paths_confined);
	RUN(test_devinfo_path_messages);
	RUN(test_ipam_type_recased);
	RUN(test_record_round_trip);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_summary();
}
