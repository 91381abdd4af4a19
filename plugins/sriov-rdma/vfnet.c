/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Moving the VF netdev between the host and a pod.
 *
 * Both directions go through an anonymous namespace, as sriov-cni and
 * host-device do: the rename happens where no other link lives, so the
 * host never sees the pod's ifname (udev and NetworkManager react to it,
 * and another VF may already carry it) and the pod never sees the host's.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "link.h"
#include "log.h"
#include "netns.h"
#include "sriov.h"

#define MAX_ALTNAMES 16

/* Kernel 6.x keeps altnames across renames: a stale one makes the next rename fail (sriov-cni #445). */
static void drop_altnames(struct link_sock *ls, int ifindex)
{
	char names[MAX_ALTNAMES][128];
	int n = 0, i, ret;

	if (link_altnames(ls, ifindex, names, MAX_ALTNAMES, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		ret = link_del_altname(ls, ifindex, names[i]);
		if (ret < 0)
			log_warn("cannot drop altname %s: %s", names[i], strerror(-ret));
	}
}

/*
 * In the namespace of ls: take link ifindex down, name it `name`, drop its
 * altnames, then set mac and mtu when given.
 */
static int shape_link(struct link_sock *ls, int ifindex, const char *name,
		      const uint8_t *mac, int mtu)
{
	struct link_info li;
	int ret;

	ret = link_get_by_index(ls, ifindex, &li);
	if (ret < 0)
		return ret;
	/* Most drivers refuse to rename a running netdev. */
	if (li.up && (ret = link_set_up(ls, ifindex, false)) < 0)
		return ret;
	if (strcmp(li.name, name) && (ret = link_set_name(ls, ifindex, name)) < 0)
		return ret;
	drop_altnames(ls, ifindex);
	if (mac && memcmp(mac, li.mac, 6) && (ret = link_set_mac(ls, ifindex, mac)) < 0)
		return ret;
	if (mtu > 0 && mtu != li.mtu && (ret = link_set_mtu(ls, ifindex, mtu)) < 0)
		return ret;
	return 0;
}

/* The ifindex of `name` in the namespace of ls (it may change when a link changes namespace). */
static int index_of(struct link_sock *ls, const char *name, int *ifindex)
{
	struct link_info li;
	int ret;

	ret = link_get_by_name(ls, name, &li);
	if (ret == 0)
		*ifindex = li.ifindex;
	return ret;
}

/* From the anonymous namespace back to the host, as the netdev was there. */
static int tmp_to_host(struct link_sock *tmp_ls, int idx, const struct link_info *orig,
		       int host_fd, struct link_sock *host_ls)
{
	int ret;

	ret = shape_link(tmp_ls, idx, orig->name, orig->mac, orig->mtu);
	if (ret == 0)
		ret = link_move_to_netns(tmp_ls, idx, host_fd);
	if (ret == 0 && orig->up && (ret = index_of(host_ls, orig->name, &idx)) == 0)
		ret = link_set_up(host_ls, idx, true);
	return ret;
}

int sriov_netdev_to_pod(const char *host_name, int pod_fd, const char *ifname,
			const uint8_t *mac, int mtu)
{
	struct link_sock *host_ls = NULL, *tmp_ls = NULL, *pod_ls = NULL;
	struct link_info orig;
	int tmp_fd = -1, host_fd = -1, idx = 0, ret, undo;

	ret = link_sock_open(&host_ls);
	if (ret < 0)
		return ret;
	ret = link_get_by_name(host_ls, host_name, &orig);
	if (ret < 0)
		goto out;
	ret = netns_open_current(&host_fd);
	if (ret < 0)
		goto out;
	ret = netns_create_anon(&tmp_fd);
	if (ret < 0)
		goto out;
	ret = link_sock_open_in(tmp_fd, &tmp_ls);
	if (ret < 0)
		goto out;
	ret = link_move_to_netns(host_ls, orig.ifindex, tmp_fd);
	if (ret < 0)
		goto out;
	ret = index_of(tmp_ls, host_name, &idx);
	if (ret == 0)
		ret = shape_link(tmp_ls, idx, ifname, mac, mtu);
	if (ret == 0)
		ret = link_move_to_netns(tmp_ls, idx, pod_fd);
	if (ret == 0) {
		int pod_idx = 0;

		ret = link_sock_open_in(pod_fd, &pod_ls);
		if (ret == 0)
			ret = index_of(pod_ls, ifname, &pod_idx);
		if (ret == 0)
			ret = link_set_up(pod_ls, pod_idx, true);
		if (ret == 0)
			goto out;
		if (pod_idx) {
			undo = link_move_to_netns(pod_ls, pod_idx, tmp_fd);
			if (undo == 0)
				undo = index_of(tmp_ls, ifname, &idx);
			if (undo < 0)
				log_error("cannot take %s back from the pod: %s", ifname,
					  strerror(-undo));
		}
	}
	/* The anonymous namespace dies with tmp_fd, and a virtual netdev left in it with it. */
	undo = idx ? tmp_to_host(tmp_ls, idx, &orig, host_fd, host_ls) : -ENODEV;
	if (undo < 0)
		log_error("cannot return %s to the host: %s", host_name, strerror(-undo));
out:
	link_sock_close(pod_ls);
	link_sock_close(tmp_ls);
	if (tmp_fd >= 0)
		close(tmp_fd);
	if (host_fd >= 0)
		close(host_fd);
	link_sock_close(host_ls);
	return ret;
}

static int pod_to_host(const struct sriov_record *rec, struct link_sock *pod_ls, int pod_idx,
		       struct link_sock *host_ls)
{
	struct link_sock *tmp_ls = NULL;
	struct link_info orig = { .mtu = rec->host_mtu, .up = rec->host_up };
	int tmp_fd = -1, host_fd = -1, idx, ret;

	memcpy(orig.name, rec->host_ifname, sizeof(orig.name));
	memcpy(orig.mac, rec->host_mac, 6);
	ret = netns_open_current(&host_fd);
	if (ret < 0)
		return ret;
	ret = netns_create_anon(&tmp_fd);
	if (ret < 0)
		goto out;
	ret = link_sock_open_in(tmp_fd, &tmp_ls);
	if (ret < 0)
		goto out;
	ret = link_set_up(pod_ls, pod_idx, false);
	if (ret == 0)
		ret = link_move_to_netns(pod_ls, pod_idx, tmp_fd);
	if (ret < 0)
		goto out;
	ret = index_of(tmp_ls, rec->ifname, &idx);
	if (ret == 0)
		ret = tmp_to_host(tmp_ls, idx, &orig, host_fd, host_ls);
	if (ret < 0)
		log_error("cannot return %s to the host as %s: %s", rec->ifname, rec->host_ifname,
			  strerror(-ret));
out:
	link_sock_close(tmp_ls);
	if (tmp_fd >= 0)
		close(tmp_fd);
	close(host_fd);
	return ret;
}

/* The kernel returns a VF of a destroyed namespace to the host under the pod's ifname (sriov-cni #126). */
static int host_restore(const struct sriov_record *rec, struct link_sock *host_ls,
			const char *sysfs_root, bool *found)
{
	char name[IFNAMSIZ];
	struct link_info li;
	int ret;

	ret = vf_netdev_name(sysfs_root, rec->bdf, name);
	if (ret == -ENODEV || (ret == 0 && !name[0]))
		return 0;
	if (ret < 0)
		return ret;
	ret = link_get_by_name(host_ls, name, &li);
	if (ret == -ENODEV)
		return 0;
	if (ret < 0)
		return ret;
	*found = true;
	if (strcmp(name, rec->host_ifname))
		log_info("VF %s is on the host as %s: renaming it back to %s", rec->bdf, name,
			 rec->host_ifname);
	ret = shape_link(host_ls, li.ifindex, rec->host_ifname, rec->host_mac, rec->host_mtu);
	if (ret == 0 && rec->host_up)
		ret = link_set_up(host_ls, li.ifindex, true);
	return ret;
}

int sriov_netdev_to_host(const struct sriov_record *rec, int pod_fd, const char *sysfs_root,
			 bool *found)
{
	struct link_sock *host_ls = NULL, *pod_ls = NULL;
	int idx, ret;

	*found = false;
	ret = link_sock_open(&host_ls);
	if (ret < 0)
		return ret;
	if (pod_fd >= 0) {
		ret = link_sock_open_in(pod_fd, &pod_ls);
		if (ret < 0)
			goto out;
		ret = index_of(pod_ls, rec->ifname, &idx);
		if (ret == 0) {
			*found = true;
			ret = pod_to_host(rec, pod_ls, idx, host_ls);
			goto out;
		}
		if (ret != -ENODEV)
			goto out;
	}
	ret = host_restore(rec, host_ls, sysfs_root, found);
out:
	link_sock_close(pod_ls);
	link_sock_close(host_ls);
	return ret;
}
