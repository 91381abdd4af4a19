/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The VF's RDMA device: into the pod with the netdev, and home again.
 *
 * In exclusive netns mode a device is seen only from its namespace, and the
 * kernel moves it only for a caller (process and socket) in that namespace:
 * the move in is asked from the host, the move out from inside the pod. In
 * shared mode every namespace sees every device, so there is nothing to
 * move. The device index survives moves and renames, which is how DEL finds
 * the device wherever it went, also after the pod's namespace is gone and the
 * kernel has put it back on the host.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "netns.h"
#include "sriov.h"
#include "verbs.h"

#define NETNS_MODE_FIX "load ib_core with netns_mode=0 (options ib_core netns_mode=0 in " \
	"/etc/modprobe.d, or \"rdma system set netns exclusive\" at boot, before any pod starts)"

struct in_netns_args {
	int (*fn)(struct rdma_sock *s, void *arg);
	void *arg;
};

static int in_netns_cb(void *arg)
{
	struct in_netns_args *a = arg;
	struct rdma_sock *s;
	int ret;

	ret = rdma_sock_open(&s);
	if (ret == 0) {
		ret = a->fn(s, a->arg);
		rdma_sock_close(s);
	}
	return ret;
}

/* Run fn with an RDMA socket opened inside the namespace fd, from inside it. */
static int in_netns(int fd, int (*fn)(struct rdma_sock *s, void *arg), void *arg)
{
	struct in_netns_args a = { .fn = fn, .arg = arg };

	return netns_do(fd, in_netns_cb, &a);
}

/* ---- ADD: decide, before anything changes ---- */

static int plan_skip(const struct vf_dev *vf, const char *why)
{
	log_info("VF %s: %s: no RDMA device moves (rdma \"auto\")", vf->bdf, why);
	return 0;
}

/* Does RDMA netlink agree with sysfs about which device sits on the VF's netdev? */
static int cross_check(struct rdma_sock *s, const struct vf_dev *vf, const struct rdma_dev *dev,
		       struct cni_error *err)
{
	struct rdma_port port;
	int ret;

	if (!vf->netdev[0])
		return 0;
	ret = rdma_dev_find_by_netdev(s, 0, vf->netdev, &port);
	if (ret == -ENODEV) {
		log_warn("VF %s: RDMA netlink reports no port on netdev %s; trusting sysfs: %s",
			 vf->bdf, vf->netdev, dev->name);
		return 0;
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: RDMA netlink port dump: %s",
				  vf->bdf, strerror(-ret));
	if (port.dev_index != dev->index)
		return cni_errorf(err, CNI_ERR_RDMA,
				  "deviceID %s: sysfs names RDMA device %s, but RDMA netlink puts "
				  "%s (index %u) on netdev %s; refusing to move either",
				  vf->bdf, dev->name, port.dev_name, port.dev_index, vf->netdev);
	return 0;
}

/*
 * The RDMA netlink socket into *out, when there is a device to plan for;
 * *out stays NULL when rdma "auto" has nothing to move (logged), and
 * "exclusive" then fails.
 */
static int plan_open(const struct sriov_conf *conf, const struct vf_dev *vf,
		     struct rdma_sock **out, struct cni_error *err)
{
	bool excl = conf->rdma == SRIOV_RDMA_EXCLUSIVE;
	struct rdma_sock *s = NULL;
	int ret;

	*out = NULL;
	if (!vf->rdma_dev[0]) {
		if (!excl)
			return plan_skip(vf, "no RDMA device (no infiniband/ in sysfs)");
		cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: rdma is \"exclusive\" but the VF has no "
			   "RDMA device (%s/bus/pci/devices/%s/infiniband/ is empty)", vf->bdf,
			   conf->paths.sysfs_root, vf->bdf);
		cni_error_details(err, "load mlx5_ib (RDMA for ConnectX VFs), or set rdma to "
				  "\"auto\" or \"off\" for a VF without RDMA");
		return -ENODEV;
	}
	ret = rdma_sock_open(&s);
	if (ret == -EPROTONOSUPPORT) {
		if (!excl)
			return plan_skip(vf, "no RDMA support in this kernel");
		cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: rdma is \"exclusive\" but there is no "
			   "RDMA support in this kernel (no RDMA netlink)", vf->bdf);
		cni_error_details(err, "run a kernel with CONFIG_INFINIBAND and load ib_core and "
				  "mlx5_ib, or set rdma to \"off\"");
		return ret;
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_RDMA, "RDMA netlink: cannot open a socket: %s",
				  strerror(-ret));
	*out = s;
	return 0;
}

int sriov_rdma_plan(const struct sriov_conf *conf, const struct vf_dev *vf,
		    struct sriov_record *rec, struct rdma_sock **out, struct cni_error *err)
{
	bool excl = conf->rdma == SRIOV_RDMA_EXCLUSIVE, mode_excl;
	struct rdma_sock *s = NULL;
	struct rdma_dev dev;
	int ret;

	*out = NULL;
	if (conf->rdma == SRIOV_RDMA_OFF)
		return 0;
	ret = plan_open(conf, vf, &s, err);
	if (ret < 0 || !s)
		return ret;
	ret = rdma_sys_get_netns_mode(s, &mode_excl);
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_RDMA, "RDMA netlink: cannot read the netns mode: %s",
			   strerror(-ret));
		goto fail;
	}
	ret = rdma_dev_get_by_name(s, vf->rdma_dev, &dev);
	if (ret == -ENODEV && !excl) {
		log_warn("VF %s: RDMA device %s is not in the host namespace (a pod that is gone "
			 "may still hold it): not moved", vf->bdf, vf->rdma_dev);
		ret = 0;
		goto skip;
	}
	if (ret < 0) {
		cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: RDMA device %s: %s", vf->bdf,
			   vf->rdma_dev, ret == -ENODEV ? "not in the host network namespace" :
			   strerror(-ret));
		if (ret == -ENODEV)
			cni_error_details(err, "another namespace holds it: a pod whose DEL has not "
					  "run yet, or a device that was never returned");
		goto fail;
	}
	ret = cross_check(s, vf, &dev, err);
	if (ret < 0)
		goto fail;
	snprintf(rec->rdma_dev, sizeof(rec->rdma_dev), "%s", dev.name);
	snprintf(rec->rdma_pod_name, sizeof(rec->rdma_pod_name), "%s", dev.name);
	rec->rdma_index = dev.index;
	if (!mode_excl) {
		if (excl) {
			cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: rdma is \"exclusive\" but the RDMA "
				   "subsystem is in shared netns mode, so %s cannot move into the pod",
				   vf->bdf, dev.name);
			cni_error_details(err, "switch to exclusive mode: %s; or set rdma to \"auto\" "
					  "to leave the device shared", NETNS_MODE_FIX);
			ret = -EOPNOTSUPP;
			goto fail;
		}
		log_info("VF %s: RDMA device %s (index %u) stays on the host: the RDMA subsystem is "
			 "in shared netns mode, where every namespace, the pod's too, sees it%s",
			 vf->bdf, dev.name, dev.index,
			 conf->rdma_name ? "; rdmaName applies in exclusive mode only" : "");
		goto skip;
	}
	*out = s;
	return 0;

fail:
	memset(rec->rdma_dev, 0, sizeof(rec->rdma_dev));
	memset(rec->rdma_pod_name, 0, sizeof(rec->rdma_pod_name));
skip:
	rdma_sock_close(s);
	return ret;
}

/* ---- moves and renames ---- */

struct rename_arg {
	uint32_t index;
	const char *name;
};

static int rename_cb(struct rdma_sock *s, void *data)
{
	const struct rename_arg *a = data;

	return rdma_dev_rename(s, a->index, a->name);
}

struct home_arg {
	uint32_t index;
	int host_fd;
};

/* -ENODEV: not in this namespace. */
static int home_cb(struct rdma_sock *s, void *data)
{
	const struct home_arg *a = data;
	struct rdma_dev dev;
	int ret;

	ret = rdma_dev_get_by_index(s, a->index, &dev);
	if (ret < 0)
		return ret;
	return rdma_dev_set_netns(s, a->index, a->host_fd);
}

int sriov_rdma_to_host(const struct sriov_record *rec, int pod_fd)
{
	struct home_arg home = { .index = rec->rdma_index, .host_fd = -1 };
	struct rdma_sock *s = NULL;
	struct rdma_dev dev;
	int ret;

	if (!rec->rdma_moved)
		return 0;
	if (pod_fd >= 0) {
		ret = netns_open_current(&home.host_fd);
		if (ret < 0)
			return ret;
		ret = in_netns(pod_fd, home_cb, &home);
		close(home.host_fd);
		if (ret < 0 && ret != -ENODEV && ret != -EPROTONOSUPPORT)
			return ret;
	}
	ret = rdma_sock_open(&s);
	/* ib_core unloaded since ADD: its devices went with it. */
	if (ret == -EPROTONOSUPPORT) {
		log_warn("VF %s: no RDMA support in this kernel any more: RDMA device %s is gone",
			 rec->bdf, rec->rdma_dev);
		return 0;
	}
	if (ret < 0)
		return ret;
	ret = rdma_dev_get_by_index(s, rec->rdma_index, &dev);
	if (ret == -ENODEV) {
		log_warn("VF %s: RDMA device %s (index %u) is neither in the pod nor on the host: "
			 "nothing to return", rec->bdf, rec->rdma_dev, rec->rdma_index);
		ret = 0;
		goto out;
	}
	if (ret == 0 && strcmp(dev.name, rec->rdma_dev)) {
		log_info("VF %s: RDMA device %s is on the host as %s: renaming it back", rec->bdf,
			 rec->rdma_dev, dev.name);
		ret = rdma_dev_rename(s, rec->rdma_index, rec->rdma_dev);
	}
out:
	rdma_sock_close(s);
	return ret;
}

int sriov_rdma_to_pod(const struct sriov_conf *conf, struct rdma_sock *host_s, int pod_fd,
		      const char *netns, struct sriov_record *rec, struct cni_error *err)
{
	struct rename_arg rn = { .index = rec->rdma_index, .name = conf->rdma_name };
	int ret, undo;

	ret = rdma_dev_set_netns(host_s, rec->rdma_index, pod_fd);
	if (ret == -EOPNOTSUPP) {
		cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: RDMA device %s cannot move into %s: its "
			   "driver does not support changing network namespace (%s)", rec->bdf,
			   rec->rdma_dev, netns, strerror(-ret));
		cni_error_details(err, "moving needs a driver that can disassociate user contexts "
				  "(mlx5 can; rxe and siw cannot); set rdma to \"off\" for this VF");
		return ret;
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_RDMA, "deviceID %s: RDMA device %s cannot move into "
				  "%s: %s", rec->bdf, rec->rdma_dev, netns, strerror(-ret));
	rec->rdma_moved = true;
	if (!conf->rdma_name || !strcmp(conf->rdma_name, rec->rdma_dev))
		return 0;
	ret = in_netns(pod_fd, rename_cb, &rn);
	if (ret == 0) {
		rec->rdma_renamed = true;
		snprintf(rec->rdma_pod_name, sizeof(rec->rdma_pod_name), "%s", conf->rdma_name);
		return 0;
	}
	if (ret == -EEXIST) {
		cni_errorf(err, CNI_ERR_RDMA, "rdmaName \"%s\": another RDMA device on this node has "
			   "that name", conf->rdma_name);
		cni_error_details(err, "RDMA device names are unique node-wide, also in exclusive "
				  "mode: give each network attachment of a node its own rdmaName");
	} else {
		cni_errorf(err, CNI_ERR_RDMA, "rdmaName \"%s\": cannot rename RDMA device %s in %s: %s",
			   conf->rdma_name, rec->rdma_dev, netns, strerror(-ret));
	}
	/* A failing step undoes itself. */
	undo = sriov_rdma_to_host(rec, pod_fd);
	if (undo < 0)
		log_error("VF %s: cannot return RDMA device %s to the host: %s", rec->bdf,
			  rec->rdma_dev, strerror(-undo));
	rec->rdma_moved = false;
	return ret;
}

/* ---- CHECK ---- */

struct find_arg {
	uint32_t index;
	struct rdma_dev dev;
};

static int find_cb(struct rdma_sock *s, void *data)
{
	struct find_arg *a = data;

	return rdma_dev_get_by_index(s, a->index, &a->dev);
}

int sriov_rdma_check(const struct sriov_record *rec, int pod_fd, const char *netns,
		     struct cni_error *err)
{
	struct find_arg f = { .index = rec->rdma_index };
	int ret;

	if (!rec->rdma_moved)
		return 0;
	ret = in_netns(pod_fd, find_cb, &f);
	if (ret == -ENODEV)
		return cni_errorf(err, CNI_ERR_DRIFT, "RDMA device %s (index %u): no longer in %s",
				  rec->rdma_pod_name, rec->rdma_index, netns);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_RDMA, "RDMA device %s in %s: %s", rec->rdma_pod_name,
				  netns, strerror(-ret));
	if (strcmp(f.dev.name, rec->rdma_pod_name))
		return cni_errorf(err, CNI_ERR_DRIFT, "RDMA device %s (index %u) in %s: renamed to %s",
				  rec->rdma_pod_name, rec->rdma_index, netns, f.dev.name);
	return 0;
}

/* ---- what the workload sees ---- */

struct pod_view_args {
	const struct sriov_record *rec;
	const char *address;
	int *gid_index;
};

static int pod_view_cb(void *arg)
{
	struct pod_view_args *a = arg;
	int ret = rdma_verbs_dev_present(a->rec->rdma_pod_name);

	if (ret == 0 && a->address)
		ret = rdma_gid_index_for(a->rec->rdma_pod_name, 1, a->address, true,
					 SRIOV_GID_WAIT_MS, a->gid_index);
	return ret;
}

int sriov_rdma_pod_view(const struct sriov_record *rec, int pod_fd, const char *address,
			int *gid_index)
{
	struct pod_view_args a = { .rec = rec, .address = address, .gid_index = gid_index };

	*gid_index = -1;
	return netns_do(pod_fd, pod_view_cb, &a);
}

/* ---- STATUS ---- */

int sriov_rdma_status(enum sriov_rdma_mode mode, struct cni_error *err)
{
	struct rdma_sock *s;
	bool excl;
	int ret;

	if (mode != SRIOV_RDMA_EXCLUSIVE)
		return 0;
	ret = rdma_sock_open(&s);
	if (ret == -EPROTONOSUPPORT) {
		cni_errorf(err, CNI_ERR_NOT_AVAILABLE, "rdma is \"exclusive\" but there is no RDMA "
			   "support in this kernel (no RDMA netlink): every ADD would fail");
		cni_error_details(err, "run a kernel with CONFIG_INFINIBAND, or set rdma to \"off\"");
		return ret;
	}
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_NOT_AVAILABLE, "RDMA netlink: cannot open a socket: %s",
				  strerror(-ret));
	ret = rdma_sys_get_netns_mode(s, &excl);
	rdma_sock_close(s);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_NOT_AVAILABLE, "RDMA netlink: cannot read the netns "
				  "mode: %s", strerror(-ret));
	if (!excl) {
		cni_errorf(err, CNI_ERR_NOT_AVAILABLE, "rdma is \"exclusive\" but the RDMA subsystem is "
			   "in shared netns mode: every ADD would fail");
		cni_error_details(err, "switch to exclusive mode: %s", NETNS_MODE_FIX);
		return -EOPNOTSUPP;
	}
	return 0;
}
