/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sriov-rdma: moves an SR-IOV VF of a ConnectX NIC (netdev and RDMA
 * device) into a pod's network namespace, and gives it back intact.
 *
 * Test hook (environment): SRIOV_RDMA_SYSFS_ROOT, the root of the sysfs
 * tree to read (default /sys). The recording fakes of the PF and of RDMA
 * netlink exist only in a test build (meson -Dtest_fakes=true, see
 * test/fakes/fakes.h); the default build talks to the kernel alone.
 */
#include "link.h"
#include "log.h"
#include "policy.h"
#include "sriov.h"

/* What this command cost the node's RTNL: one count per request, dumps included. */
static void log_requests(void)
{
	unsigned host, pod;

	link_requests(&host, &pod);
	log_debug("netlink requests: host %u, pod %u, PF %u", host, pod, pf_requests());
}

static int cmd_add(struct cni_request *req, struct cni_result *res, struct cni_error *err)
{
	int ret;

	if (sriov_log_setup(req, err))
		return -1;
	ret = sriov_cmd_add(req, res, err);
	log_requests();
	return ret;
}

/*
 * DEL and GC must finish whatever the config says since ADD: a logLevel or
 * logFile they cannot use is reported on stderr, and they go on.
 */
static void setup_log_lenient(struct cni_request *req)
{
	struct cni_error e = { 0 };

	if (sriov_log_setup(req, &e))
		log_error("%s: logging to stderr", e.msg);
}

static int cmd_del(struct cni_request *req, struct cni_error *err)
{
	int ret;

	setup_log_lenient(req);
	ret = sriov_cmd_del(req, err);
	log_requests();
	return ret;
}

static int cmd_check(struct cni_request *req, struct cni_error *err)
{
	int ret;

	if (sriov_log_setup(req, err))
		return -1;
	ret = sriov_cmd_check(req, err);
	log_requests();
	return ret;
}

static int cmd_status(struct cni_request *req, struct cni_error *err)
{
	return sriov_log_setup(req, err) ? -1 : sriov_cmd_status(req, err);
}

static int cmd_gc(struct cni_request *req, struct cni_error *err)
{
	setup_log_lenient(req);
	return sriov_cmd_gc(req, err);
}

static const struct cni_plugin plugin = {
	.name = "sriov-rdma",
	.about = "SR-IOV VF netdev and RDMA device into a pod network namespace",
	.formats = "attachment record " CNI_STR(SRIOV_RECORD_VERSION) ", in-use marker "
		   CNI_STR(CLAIM_MARKER_VERSION) ", node config " CNI_STR(POLICY_VERSION),
	.cmd_add = cmd_add,
	.cmd_del = cmd_del,
	.cmd_check = cmd_check,
	.cmd_status = cmd_status,
	.cmd_gc = cmd_gc,
};

int main(int argc, char **argv)
{
	return cni_plugin_main(&plugin, argc, argv);
}
