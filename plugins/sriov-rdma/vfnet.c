/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Moving the VF netdev between the host and a pod.
 *
 * Each direction is one RTM_SETLINK that moves the link and renames it in
 * the target namespace (link_move_shaped): the host never sees the pod's
 * ifname (udev and NetworkManager react to it, and another VF may already
 * carry it). Into the pod, link-up follows in a request of its own.
 * sriov-cni and host-device get the same from two moves through an
 * anonymous namespace; each move waits for RCU grace periods in the
 * kernel, and that wait is most of what a move costs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "link.h"
#include "log.h"
#include "netns.h"
#include "sriov.h"

int sriov_stranded(struct cni_error *err)
{
	int ret = netns_stranded();

	if (!ret)
		return 0;
	/* The cause of whatever the step then reported. */
	memset(err, 0, sizeof(*err));
	cni_errorf(err, CNI_ERR_PLUGIN, "cannot return to the host network namespace: %s; "
		   "stopped there, with nothing undone", strerror(-ret));
	cni_error_details(err, "the attachment's record says what it holds: DEL (a new "
			  "process, on the host) puts the VF back");
	return -1;
}

/* Kernel 6.x keeps altnames across renames: a stale one makes the next rename fail (sriov-cni #445). */
static void drop_these_altnames(struct link_sock *ls, int ifindex, char names[][128], int n)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = link_del_altname(ls, ifindex, names[i]);
		if (ret < 0)
			log_warn("cannot drop altname %s: %s", names[i], strerror(-ret));
	}
}

static void drop_altnames(struct link_sock *ls, int ifindex)
{
	char names[SRIOV_MAX_ALTNAMES][128];
	int n = 0;

	if (link_altnames(ls, ifindex, names, SRIOV_MAX_ALTNAMES, &n) == 0)
		drop_these_altnames(ls, ifindex, names, n);
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

/* -ENODEV when free, -EEXIST when taken, or another error. */
static int name_free(struct link_sock *ls, const char *name)
{
	int idx, ret = index_of(ls, name, &idx);

	return ret == 0 ? -EEXIST : ret;
}

/*
 * Where a link is after a move that failed half way: under the new name,
 * which was free before the move, or under its old one if that was free
 * too (when it was taken, the kernel moved the link under the new name).
 */
static int find_moved(struct link_sock *ls, const char *new, const char *old, bool old_free,
		      int *ifindex)
{
	int ret = index_of(ls, new, ifindex);

	return ret == -ENODEV && old_free ? index_of(ls, old, ifindex) : ret;
}

/*
 * The same after a move into the pod: -EEXIST says the new name was taken
 * there, by a link that is not ours, so only the old name can be ours.
 */
static int find_moved_in_pod(struct link_sock *ls, int err, const char *new, const char *old,
			     bool old_free, int *ifindex)
{
	if (err != -EEXIST)
		return find_moved(ls, new, old, old_free, ifindex);
	return old_free ? index_of(ls, old, ifindex) : -ENODEV;
}

int sriov_netdev_to_pod(const struct link_info *orig, char altnames[][128], int n_altnames,
			int pod_fd, struct link_sock *pod_ls, const char *ifname,
			const uint8_t *mac, int mtu, bool up, struct link_info *pod_li)
{
	struct link_sock *host_ls = NULL;
	struct link_shape to_pod = { .name = ifname, .mac = mac, .mtu = mtu };
	struct link_shape back = { .name = orig->name, .mac = orig->mac, .mtu = orig->mtu,
				   .up = orig->up };
	int host_fd = -1, idx, ret, undo;
	bool old_free;

	ret = link_sock_open(&host_ls);
	if (ret < 0)
		return ret;
	/*
	 * ifname was free when ADD began (the caller looked). Should it be taken
	 * since, the kernel moves the link under its old name and fails the
	 * rename with -EEXIST: the undo below finds it by that old name, which
	 * is why whether it was free matters, and is asked before the move.
	 */
	old_free = name_free(pod_ls, orig->name) == -ENODEV;
	drop_these_altnames(host_ls, orig->ifindex, altnames, n_altnames);
	if (orig->up && link_set_up(host_ls, orig->ifindex, false) < 0)
		log_debug("%s: set down before the move failed; the move closes it", orig->name);
	ret = link_move_shaped(host_ls, orig->ifindex, pod_fd, &to_pod);
	/*
	 * Up in a request of its own: the driver's open (on igbvf a mailbox
	 * exchange with the PF) on top of the move would make the longest
	 * hold of the node's RTNL the sum of the two. Read back after it, for
	 * the carrier it has then.
	 */
	if (ret == 0 && up)
		ret = link_set_up_named(pod_ls, ifname, true);
	if (ret == 0) {
		ret = link_get_by_name(pod_ls, ifname, pod_li);
		if (ret == 0)
			goto out;
	}
	/* The kernel may have moved it before failing the rest: bring it back. */
	undo = find_moved_in_pod(pod_ls, ret, ifname, orig->name, old_free, &idx);
	if (undo == -ENODEV) {
		/* Never left the host: as it was, up if it was. */
		if (orig->up && (undo = link_set_up(host_ls, orig->ifindex, true)) < 0)
			log_error("cannot set %s up again: %s", orig->name, strerror(-undo));
		goto out;
	}
	if (undo == 0)
		undo = netns_open_current(&host_fd);
	if (undo == 0)
		undo = link_move_shaped(pod_ls, idx, host_fd, &back);
	if (undo < 0)
		log_error("cannot return %s to the host: %s", orig->name, strerror(-undo));
out:
	if (host_fd >= 0)
		close(host_fd);
	link_sock_close(host_ls);
	return ret;
}

int sriov_link_is_vf(struct link_sock *ls, const struct link_info *li, const char *bdf,
		     char what[96])
{
	char bus[32], dev[64], pci[VF_BDF_LEN];
	int ret;

	what[0] = '\0';
	if (li->loopback) {
		snprintf(what, 96, "the loopback");
		return -EXDEV;
	}
	ret = link_parent(ls, li, bus, dev);
	if (ret == -EAGAIN) {
		snprintf(what, 96, "a link renamed while it was looked at");
		return -EXDEV;
	}
	if (ret < 0)
		return ret;
	/* A pod can make a veth, macvlan or ipvlan of any name: none has a device. */
	if (!dev[0]) {
		snprintf(what, 96, "a link with no PCI device");
		return -EXDEV;
	}
	if ((bus[0] && strcmp(bus, "pci")) || vf_bdf_parse(dev, pci) < 0) {
		snprintf(what, 96, "device %.40s on bus %.20s", dev, bus[0] ? bus : "(unnamed)");
		return -EXDEV;
	}
	if (strcmp(pci, bdf)) {
		snprintf(what, 96, "PCI device %s", pci);
		return -EXDEV;
	}
	return 1;
}

int sriov_pf_name(const struct sriov_record *rec, const char *sysfs_root, char name[IFNAMSIZ])
{
	int ret;

	memcpy(name, rec->pf_netdev, IFNAMSIZ);
	if (!rec->pf_bdf[0])
		return 0;
	ret = vf_netdev_name(sysfs_root, rec->pf_bdf, name);
	if (ret < 0 || !name[0]) {
		/* The recorded name: for the message when the PF is gone, else to try. */
		memcpy(name, rec->pf_netdev, IFNAMSIZ);
		return ret == -ENODEV ? ret : 0;
	}
	if (strcmp(name, rec->pf_netdev))
		log_info("VF %s: its PF %s is %s now", rec->bdf, rec->pf_bdf, name);
	return 0;
}

/* The recorded host MAC; NULL when it is not known (all-zero): the netdev keeps its own. */
static const uint8_t *host_mac(const struct sriov_record *rec)
{
	static const uint8_t zero[6];

	return memcmp(rec->host_mac, zero, 6) ? rec->host_mac : NULL;
}

static int pod_to_host(const struct sriov_record *rec, struct link_sock *pod_ls,
		       const struct link_info *pod_li, struct link_sock *host_ls)
{
	struct link_shape home = { .name = rec->host_ifname, .mac = host_mac(rec),
				   .mtu = rec->host_mtu, .up = rec->host_up };
	const char *name = pod_li->name;
	int host_fd = -1, idx, ret;
	bool old_free;

	/* Taken on the host: moving now would leave the pod's ifname there. */
	ret = name_free(host_ls, rec->host_ifname);
	if (ret != -ENODEV)
		goto out;
	old_free = name_free(host_ls, name) == -ENODEV;
	ret = netns_open_current(&host_fd);
	if (ret < 0)
		goto out;
	/* The move would close it anyway; closed beforehand it moves faster (see link_set_up). */
	if (pod_li->up && link_set_up(pod_ls, pod_li->ifindex, false) < 0)
		log_debug("%s: set down before the move failed; the move closes it", name);
	ret = link_move_shaped(pod_ls, pod_li->ifindex, host_fd, &home);
	if (ret < 0 && find_moved(host_ls, rec->host_ifname, name, old_free, &idx) == 0) {
		/* On the host but not as recorded: shape it where it is. */
		log_warn("%s reached the host but not as recorded: %s", name, strerror(-ret));
		ret = shape_link(host_ls, idx, rec->host_ifname, host_mac(rec), rec->host_mtu);
		if (ret == 0 && rec->host_up)
			ret = link_set_up(host_ls, idx, true);
	}
out:
	if (ret < 0)
		log_error("cannot return %s to the host as %s: %s", name, rec->host_ifname,
			  strerror(-ret));
	if (host_fd >= 0)
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
	ret = shape_link(host_ls, li.ifindex, rec->host_ifname, host_mac(rec), rec->host_mtu);
	if (ret == 0 && rec->host_up)
		ret = link_set_up(host_ls, li.ifindex, true);
	return ret;
}

/* Is the pod's link `name` the VF? 1 with *li, 0 when it is not there or is another link. */
static int named_vf(struct link_sock *pod_ls, const char *bdf, const char *name,
		    struct link_info *li)
{
	char what[96];
	int ret;

	ret = link_get_by_name(pod_ls, name, li);
	if (ret == -ENODEV)
		return 0;
	if (ret < 0)
		return ret;
	ret = sriov_link_is_vf(pod_ls, li, bdf, what);
	if (ret == -EXDEV) {
		log_warn("VF %s: %s in the pod is %s, not the VF: leaving it alone", bdf, name, what);
		return 0;
	}
	return ret;
}

int sriov_pod_find_vf(struct link_sock *pod_ls, const char *bdf, const char *const names[],
		      int n_names, struct link_info *li)
{
	struct link_info *links = NULL;
	char what[96];
	int i, n = 0, ret;

	for (i = 0; i < n_names; i++) {
		if (!names[i] || !names[i][0] || (i > 0 && names[i - 1] &&
						  !strcmp(names[i], names[i - 1])))
			continue;
		ret = named_vf(pod_ls, bdf, names[i], li);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	/* A pod with NET_ADMIN may have renamed it: its device still says which it is. */
	ret = link_list(pod_ls, &links, &n);
	if (ret < 0)
		return ret;
	ret = -ENODEV;
	for (i = 0; i < n && ret == -ENODEV; i++) {
		if (sriov_link_is_vf(pod_ls, &links[i], bdf, what) != 1)
			continue;
		*li = links[i];
		log_info("VF %s is %s in the pod, a name ADD did not give it", bdf, li->name);
		ret = 0;
	}
	free(links);
	return ret;
}

int sriov_netdev_to_host(const struct sriov_record *rec, struct link_sock *pod_ls,
			 const char *sysfs_root, bool *found)
{
	/* A move that failed half way (or an ADD killed in its undo) leaves the host name. */
	const char *const names[] = { rec->ifname, rec->host_ifname };
	struct link_sock *host_ls = NULL;
	struct link_info li;
	int ret;

	*found = false;
	ret = link_sock_open(&host_ls);
	if (ret < 0)
		return ret;
	if (pod_ls) {
		ret = sriov_pod_find_vf(pod_ls, rec->bdf, names, 2, &li);
		if (ret == 0) {
			*found = true;
			ret = pod_to_host(rec, pod_ls, &li, host_ls);
			goto out;
		}
		if (ret != -ENODEV)
			goto out;
	}
	ret = host_restore(rec, host_ls, sysfs_root, found);
out:
	link_sock_close(host_ls);
	return ret;
}

void sriov_route_link(const struct cni_route *in, struct link_route *out)
{
	link_route_init(out);
	snprintf(out->dst, sizeof(out->dst), "%s", in->dst);
	snprintf(out->gw, sizeof(out->gw), "%s", in->gw);
	/* Both say "not set" with -1. */
	out->mtu = in->mtu;
	out->advmss = in->advmss;
	out->priority = in->priority;
	out->table = in->table;
	out->scope = in->scope;
}

void sriov_route_resolve(const struct cni_result *r, const struct cni_route *rt,
			 struct link_route *out)
{
	struct cni_route resolved;

	cni_route_resolve(r, rt, &resolved);
	sriov_route_link(&resolved, out);
}
