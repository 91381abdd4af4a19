/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vf: SR-IOV Virtual Functions, from PCI sysfs and through their PF.
 *
 * VF properties are encoded as `ip link set PF vf N ...` encodes them
 * (iproute2 ip/iplink.c): one RTM_SETLINK per property, addressed by
 * IFLA_IFNAME, carrying IFLA_VFINFO_LIST > IFLA_VF_INFO > IFLA_VF_<x>.
 *
 * The recording fake (fake_dir != NULL) stands in for the kernel on
 * machines without SR-IOV. It decodes each request with the parser that
 * decodes the kernel's replies, and answers with netlink messages built
 * like the kernel's, so the same code runs against both. Its files:
 *
 *   <dir>/<pf>.vfs    the VFs' state, one line per VF, '#' starts a comment:
 *                     vf=3 mac=00:00:00:00:00:00 vlan=0 qos=0 proto=802.1Q
 *                     spoofchk=on trust=off link_state=auto min_tx_rate=0
 *                     max_tx_rate=0
 *                     (all on one line; every key is required). Rewritten
 *                     after each successful SET, under a flock of <pf>.lock
 *                     and through a rename. Without it the PF's netdev is
 *                     gone: every request fails with ENODEV, as the kernel's.
 *   <dir>/<pf>.calls  appended, one line per request, e.g.
 *                     "setlink pf=P vf=3 vlan=100 qos=2 proto=802.1Q",
 *                     "setlink pf=P vf=3 mac=02:00:00:00:00:01",
 *                     "setlink pf=P vf=3 rate min=10 max=100",
 *                     "setlink pf=P vf=3 spoofchk=off", "... trust=on",
 *                     "... link_state=enable", "getlink pf=P".
 *   <dir>/<pf>.fail   optional, lines "fail OP [ERRNO]" with OP one of
 *                     vlan mac rate spoofchk trust link_state getlink:
 *                     that request is recorded, then fails with ERRNO
 *                     (a name such as EPERM; EOPNOTSUPP when omitted).
 *                     A SET on a VF missing from .vfs fails with EINVAL,
 *                     as mlx5 does for an index beyond sriov_numvfs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include "cni.h"
#include "lock.h"
#include "netns.h"
#include "state.h"
#include "link.h"
#include "vf.h"

/* ---- PCI addresses ---- */

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly n hex digits at s: their value, or -1. */
static long hexfield(const char *s, int n)
{
	long v = 0;
	int i, d;

	for (i = 0; i < n; i++) {
		d = hexdigit(s[i]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

int vf_bdf_parse(const char *s, char out[VF_BDF_LEN])
{
	long domain = 0, bus, dev, fn;
	size_t len = strlen(s);

	if (len == 12) {
		domain = hexfield(s, 4);
		if (domain < 0 || s[4] != ':')
			return -EINVAL;
		s += 5;
	} else if (len != 7) {
		return -EINVAL;
	}
	bus = hexfield(s, 2);
	dev = hexfield(s + 3, 2);
	if (bus < 0 || s[2] != ':' || dev < 0 || dev > 0x1f || s[5] != '.' ||
	    s[6] < '0' || s[6] > '7')
		return -EINVAL;
	fn = s[6] - '0';
	snprintf(out, VF_BDF_LEN, "%04x:%02x:%02x.%u", (uint16_t)domain, (uint8_t)bus, (uint8_t)dev,
		 (unsigned)(fn & 7));
	return 0;
}

/* Canonical already: what may become part of a path. */
static bool bdf_canonical(const char *bdf)
{
	char c[VF_BDF_LEN];

	return vf_bdf_parse(bdf, c) == 0 && strcmp(c, bdf) == 0;
}

/* ---- sysfs ---- */

static int pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Basename of a symlink's target; -ENOENT when there is no link. */
static int link_basename(const char *path, char *out, size_t len)
{
	char target[PATH_MAX];
	const char *base;
	ssize_t n;

	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	strcpy(out, base);
	return 0;
}

/*
 * The first entry of a directory in name order, so the answer does not
 * depend on readdir order; "" when the directory is empty or missing.
 */
static int first_entry(const char *dir, char *out, size_t len)
{
	struct dirent *de;
	DIR *d;

	out[0] = '\0';
	d = opendir(dir);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= len)
			continue;
		if (!out[0] || strcmp(de->d_name, out) < 0)
			strcpy(out, de->d_name);
	}
	closedir(d);
	return 0;
}

static int read_hex16(const char *path, uint16_t *v)
{
	char buf[32], *end;
	unsigned long x;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	errno = 0;
	x = strtoul(buf, &end, 16);
	if (errno || end == buf || (*end && *end != '\n') || x > 0xffff)
		return -EINVAL;
	*v = (uint16_t)x;
	return 0;
}

/* N of the PF's virtfnN whose target is bdf; indices need not be contiguous. */
static int find_vf_index(const char *pfdir, const char *bdf, int *index)
{
	char path[PATH_MAX], target[VF_BDF_LEN + 1];
	struct dirent *de;
	char *end;
	long n;
	DIR *d;
	int ret = -ENODEV;

	d = opendir(pfdir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "virtfn", 6) != 0)
			continue;
		n = strtol(de->d_name + 6, &end, 10);
		if (end == de->d_name + 6 || *end || n < 0 || n > INT_MAX)
			continue;
		if (pathf(path, sizeof(path), "%s/%s", pfdir, de->d_name) < 0 ||
		    link_basename(path, target, sizeof(target)) < 0)
			continue;
		if (strcmp(target, bdf) == 0) {
			*index = (int)n;
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

static bool driver_is_dpdk(const char *driver)
{
	return !strcmp(driver, "vfio-pci") || !strcmp(driver, "uio_pci_generic") ||
	       !strcmp(driver, "igb_uio");
}

int vf_lookup(const char *sysfs_root, const char *bdf, struct vf_dev *vf)
{
	char dev[PATH_MAX], path[PATH_MAX], pfdir[PATH_MAX];
	struct stat st;
	int ret;

	memset(vf, 0, sizeof(*vf));
	if (!bdf_canonical(bdf))
		return -EINVAL;
	ret = pathf(dev, sizeof(dev), "%s/bus/pci/devices/%s", sysfs_root, bdf);
	if (ret < 0)
		return ret;
	/* The root is trusted (not from a config): following its symlinks is what sysfs needs. */
	if (stat(dev, &st) < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENODEV;
	strcpy(vf->bdf, bdf);

	if ((ret = pathf(path, sizeof(path), "%s/physfn", dev)) < 0)
		return ret;
	ret = link_basename(path, vf->pf_bdf, sizeof(vf->pf_bdf));
	if (ret == -ENOENT)
		return -ENOTSUP;
	if (ret < 0)
		return ret;
	if (!bdf_canonical(vf->pf_bdf))
		return -EINVAL;
	if ((ret = pathf(pfdir, sizeof(pfdir), "%s/bus/pci/devices/%s", sysfs_root, vf->pf_bdf)) < 0 ||
	    (ret = pathf(path, sizeof(path), "%s/net", pfdir)) < 0 ||
	    (ret = first_entry(path, vf->pf_netdev, sizeof(vf->pf_netdev))) < 0 ||
	    (ret = find_vf_index(pfdir, bdf, &vf->vf_index)) < 0)
		return ret;

	if ((ret = pathf(path, sizeof(path), "%s/net", dev)) < 0 ||
	    (ret = first_entry(path, vf->netdev, sizeof(vf->netdev))) < 0)
		return ret;
	if ((ret = pathf(path, sizeof(path), "%s/driver", dev)) < 0)
		return ret;
	ret = link_basename(path, vf->driver, sizeof(vf->driver));
	if (ret < 0 && ret != -ENOENT)
		return ret;
	vf->dpdk = driver_is_dpdk(vf->driver);
	if ((ret = pathf(path, sizeof(path), "%s/infiniband", dev)) < 0 ||
	    (ret = first_entry(path, vf->rdma_dev, sizeof(vf->rdma_dev))) < 0)
		return ret;
	if ((ret = pathf(path, sizeof(path), "%s/vendor", dev)) < 0 ||
	    (ret = read_hex16(path, &vf->vendor)) < 0 ||
	    (ret = pathf(path, sizeof(path), "%s/device", dev)) < 0 ||
	    (ret = read_hex16(path, &vf->device)) < 0)
		return ret;
	return 0;
}

int vf_netdev_name(const char *sysfs_root, const char *bdf, char name[IFNAMSIZ])
{
	char dev[PATH_MAX], path[PATH_MAX];
	struct stat st;
	int ret;

	name[0] = '\0';
	if (!bdf_canonical(bdf))
		return -EINVAL;
	if ((ret = pathf(dev, sizeof(dev), "%s/bus/pci/devices/%s", sysfs_root, bdf)) < 0 ||
	    (ret = pathf(path, sizeof(path), "%s/net", dev)) < 0)
		return ret;
	if (stat(dev, &st) < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	return first_entry(path, name, IFNAMSIZ);
}

/* ---- VF properties on the PF ---- */

struct vf_transport {
	/* Send req (NLM_F_ACK is added) and run cb over every reply up to the ACK. */
	int (*xfer)(struct vf_pf *pf, struct nlmsghdr *req, mnl_cb_t cb, void *data);
	void (*close)(struct vf_pf *pf);
};

struct vf_pf {
	const struct vf_transport *ops;
	char name[IFNAMSIZ];
	unsigned portid, seq;
	struct mnl_socket *nl;		/* kernel */
	int dirfd;			/* fake */
};

static const char *proto_name(uint16_t proto)
{
	return proto == ETH_P_8021AD ? "802.1ad" : "802.1Q";
}

static const char *const link_state_names[] = {
	[IFLA_VF_LINK_STATE_AUTO] = "auto",
	[IFLA_VF_LINK_STATE_ENABLE] = "enable",
	[IFLA_VF_LINK_STATE_DISABLE] = "disable",
};

static const void *vf_payload(const struct nlattr *a, size_t len)
{
	return mnl_attr_get_payload_len(a) >= len ? mnl_attr_get_payload(a) : NULL;
}

/*
 * One IFLA_VF_INFO, from a kernel reply or a request: *vf gets the VF
 * index the attributes carry, cfg->mask the fields present. The kernel
 * reports -1 for a setting the driver does not implement: left out.
 */
static int vf_info_parse(const struct nlattr *info, int *vf, struct vf_config *cfg)
{
	const struct nlattr *a, *v;
	bool have_rate = false;
	int idx = -1;

	memset(cfg, 0, sizeof(*cfg));
	mnl_attr_for_each_nested(a, info) {
		uint16_t type = mnl_attr_get_type(a);
		const uint32_t *p;

		/* These start with the VF index; nests and IFLA_VF_BROADCAST do not. */
		if (type == IFLA_VF_MAC || type == IFLA_VF_VLAN || type == IFLA_VF_RATE ||
		    type == IFLA_VF_TX_RATE || type == IFLA_VF_SPOOFCHK || type == IFLA_VF_TRUST ||
		    type == IFLA_VF_LINK_STATE) {
			p = vf_payload(a, sizeof(uint32_t));
			if (!p || (idx >= 0 && (int)*p != idx))
				return -EBADMSG;
			idx = (int)*p;
		}
		switch (type) {
		case IFLA_VF_MAC: {
			const struct ifla_vf_mac *m = vf_payload(a, sizeof(*m));

			if (!m)
				return -EBADMSG;
			memcpy(cfg->mac, m->mac, 6);
			cfg->mask |= VF_CFG_MAC;
			break;
		}
		case IFLA_VF_VLAN: {
			const struct ifla_vf_vlan *vl = vf_payload(a, sizeof(*vl));

			if (!vl)
				return -EBADMSG;
			cfg->vlan = (int)vl->vlan;
			cfg->qos = (int)vl->qos;
			if (!(cfg->mask & VF_CFG_VLAN))
				cfg->vlan_proto = ETH_P_8021Q;
			cfg->mask |= VF_CFG_VLAN;
			break;
		}
		case IFLA_VF_VLAN_LIST:
			mnl_attr_for_each_nested(v, a) {
				const struct ifla_vf_vlan_info *vi = vf_payload(v, sizeof(*vi));

				if (mnl_attr_get_type(v) != IFLA_VF_VLAN_INFO)
					continue;
				if (!vi || (idx >= 0 && (int)vi->vf != idx))
					return -EBADMSG;
				idx = (int)vi->vf;
				cfg->vlan = (int)vi->vlan;
				cfg->qos = (int)vi->qos;
				cfg->vlan_proto = ntohs(vi->vlan_proto);
				cfg->mask |= VF_CFG_VLAN;
				break;
			}
			break;
		case IFLA_VF_RATE: {
			const struct ifla_vf_rate *r = vf_payload(a, sizeof(*r));

			if (!r)
				return -EBADMSG;
			cfg->min_tx_rate = r->min_tx_rate;
			cfg->max_tx_rate = r->max_tx_rate;
			cfg->mask |= VF_CFG_RATE;
			have_rate = true;
			break;
		}
		case IFLA_VF_TX_RATE: {
			const struct ifla_vf_tx_rate *r = vf_payload(a, sizeof(*r));

			if (!r)
				return -EBADMSG;
			if (!have_rate) {
				cfg->max_tx_rate = r->rate;
				cfg->mask |= VF_CFG_RATE;
			}
			break;
		}
		case IFLA_VF_SPOOFCHK: {
			const struct ifla_vf_spoofchk *s = vf_payload(a, sizeof(*s));

			if (!s)
				return -EBADMSG;
			if (s->setting != (uint32_t)-1) {
				cfg->spoofchk = s->setting;
				cfg->mask |= VF_CFG_SPOOFCHK;
			}
			break;
		}
		case IFLA_VF_TRUST: {
			const struct ifla_vf_trust *t = vf_payload(a, sizeof(*t));

			if (!t)
				return -EBADMSG;
			if (t->setting != (uint32_t)-1) {
				cfg->trust = t->setting;
				cfg->mask |= VF_CFG_TRUST;
			}
			break;
		}
		case IFLA_VF_LINK_STATE: {
			const struct ifla_vf_link_state *l = vf_payload(a, sizeof(*l));

			if (!l)
				return -EBADMSG;
			cfg->link_state = (int)l->link_state;
			cfg->mask |= VF_CFG_LINK_STATE;
			break;
		}
		default:
			/* Stats, GUIDs, broadcast: not ours. */
			break;
		}
	}
	if (idx < 0)
		return -EBADMSG;
	*vf = idx;
	return 0;
}

/*
 * libmnl 1.0.4 leaves the alignment padding after an attribute (the
 * interface name's, for one) unwritten: zero the whole buffer, also between
 * the messages vf_pf_set builds in it, so no stale bytes reach the kernel.
 */
static struct nlmsghdr *put_pf_hdr(char *buf, size_t size, uint16_t type, const char *pf)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	memset(buf, 0, size);
	nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, pf);
	return nlh;
}

/* The attribute(s) of one field of cfg for VF vf, as `ip link set ... vf N` encodes them. */
static void put_vf_field(struct nlmsghdr *nlh, unsigned field, int vf, const struct vf_config *cfg)
{
	uint32_t idx = (uint32_t)vf;

	switch (field) {
	case VF_CFG_VLAN:
		/* iproute2 sends 802.1Q in the old attribute, which every kernel knows. */
		if (cfg->vlan_proto == ETH_P_8021Q) {
			struct ifla_vf_vlan vl = { idx, (uint32_t)cfg->vlan, (uint32_t)cfg->qos };

			mnl_attr_put(nlh, IFLA_VF_VLAN, sizeof(vl), &vl);
		} else {
			struct ifla_vf_vlan_info vi;
			struct nlattr *list;

			/* An initializer need not zero its trailing padding: the kernel gets all 16 bytes. */
			memset(&vi, 0, sizeof(vi));
			vi.vf = idx;
			vi.vlan = (uint32_t)cfg->vlan;
			vi.qos = (uint32_t)cfg->qos;
			vi.vlan_proto = htons(cfg->vlan_proto);
			list = mnl_attr_nest_start(nlh, IFLA_VF_VLAN_LIST);
			mnl_attr_put(nlh, IFLA_VF_VLAN_INFO, sizeof(vi), &vi);
			mnl_attr_nest_end(nlh, list);
		}
		break;
	case VF_CFG_MAC: {
		struct ifla_vf_mac m = { .vf = idx };

		memcpy(m.mac, cfg->mac, 6);
		mnl_attr_put(nlh, IFLA_VF_MAC, sizeof(m), &m);
		break;
	}
	case VF_CFG_RATE: {
		struct ifla_vf_rate r = { idx, cfg->min_tx_rate, cfg->max_tx_rate };

		mnl_attr_put(nlh, IFLA_VF_RATE, sizeof(r), &r);
		break;
	}
	case VF_CFG_SPOOFCHK: {
		struct ifla_vf_spoofchk s = { idx, cfg->spoofchk };

		mnl_attr_put(nlh, IFLA_VF_SPOOFCHK, sizeof(s), &s);
		break;
	}
	case VF_CFG_TRUST: {
		struct ifla_vf_trust t = { idx, cfg->trust };

		mnl_attr_put(nlh, IFLA_VF_TRUST, sizeof(t), &t);
		break;
	}
	case VF_CFG_LINK_STATE: {
		struct ifla_vf_link_state l = { idx, (uint32_t)cfg->link_state };

		mnl_attr_put(nlh, IFLA_VF_LINK_STATE, sizeof(l), &l);
		break;
	}
	}
}

static const struct nlattr *find_attr(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg))
		if (mnl_attr_get_type(a) == type)
			return a;
	return NULL;
}

static int check_vf_config(const struct vf_config *cfg)
{
	if ((cfg->mask & VF_CFG_VLAN) &&
	    (cfg->vlan < 0 || cfg->vlan > 4094 || cfg->qos < 0 || cfg->qos > 7 ||
	     (cfg->vlan_proto != ETH_P_8021Q && cfg->vlan_proto != ETH_P_8021AD) ||
	     (cfg->vlan == 0 && (cfg->qos || cfg->vlan_proto != ETH_P_8021Q))))
		return -EINVAL;
	if ((cfg->mask & VF_CFG_LINK_STATE) &&
	    (cfg->link_state < IFLA_VF_LINK_STATE_AUTO || cfg->link_state > IFLA_VF_LINK_STATE_DISABLE))
		return -EINVAL;
	if ((cfg->mask & VF_CFG_RATE) && cfg->max_tx_rate && cfg->min_tx_rate > cfg->max_tx_rate)
		return -EINVAL;
	return 0;
}

/* ---- the kernel transport ---- */

static int kernel_xfer(struct vf_pf *pf, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	return link_mnl_talk(pf->nl, &pf->seq, pf->portid, req, cb, data);
}

static void kernel_close(struct vf_pf *pf)
{
	mnl_socket_close(pf->nl);
}

static const struct vf_transport kernel_transport = {
	.xfer = kernel_xfer,
	.close = kernel_close,
};

static int kernel_open(struct vf_pf *pf)
{
	/* One ioctl, so that a PF that is gone is told apart from a PF that fails. */
	if (!if_nametoindex(pf->name))
		return errno == ENODEV || errno == ENXIO ? -ENODEV : -errno;
	pf->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!pf->nl)
		return -errno;
	if (mnl_socket_bind(pf->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int ret = -errno;

		mnl_socket_close(pf->nl);
		return ret;
	}
	pf->portid = mnl_socket_get_portid(pf->nl);
	pf->seq = (unsigned)time(NULL);
	pf->ops = &kernel_transport;
	return 0;
}

/* ---- the recording fake ---- */

/* A writer holds <pf>.lock for a few file operations: a long wait means a stuck test. */
#define FAKE_LOCK_TIMEOUT_MS 10000

struct fake_vf {
	int vf;
	struct vf_config cfg;
};

struct fake_state {
	struct fake_vf *vfs;
	int n;
};

static const char *const field_ops[] = {
	[0] = "mac", [1] = "vlan", [2] = "spoofchk", [3] = "trust", [4] = "link_state", [5] = "rate",
};

static const char *field_op(unsigned field)
{
	return field_ops[__builtin_ctz(field)];
}

static int fake_name(const struct vf_pf *pf, const char *ext, char *out, size_t len)
{
	return pathf(out, len, "%s.%s", pf->name, ext);
}

/* A fake file, whole and NUL-terminated; -ENOENT when absent. */
static int fake_read(struct vf_pf *pf, const char *ext, char **data)
{
	char name[IFNAMSIZ + 8];
	size_t len = 0, cap = 4096;
	ssize_t n;
	char *buf, *nbuf;
	int fd, ret;

	if ((ret = fake_name(pf, ext, name, sizeof(name))) < 0)
		return ret;
	fd = openat(pf->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		ret = -ENOMEM;
		goto out_fd;
	}
	for (;;) {
		if (len + 1 >= cap) {
			nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				ret = -ENOMEM;
				goto err_buf;
			}
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			ret = -errno;
			goto err_buf;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*data = buf;
	ret = 0;
	goto out_fd;
err_buf:
	free(buf);
out_fd:
	close(fd);
	return ret;
}

static int fake_record(struct vf_pf *pf, const char *line)
{
	char name[IFNAMSIZ + 8], buf[300];
	int fd, len, ret = 0;

	if ((ret = fake_name(pf, "calls", name, sizeof(name))) < 0)
		return ret;
	/* One write of the whole line: O_APPEND keeps concurrent callers' lines whole. */
	len = snprintf(buf, sizeof(buf), "%s\n", line);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -EINVAL;
	fd = openat(pf->dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)len) != len)
		ret = -EIO;
	close(fd);
	return ret;
}

static const struct {
	const char *name;
	int err;
} errno_names[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EIO", EIO }, { "ENOMEM", ENOMEM },
	{ "EACCES", EACCES }, { "EBUSY", EBUSY }, { "ENODEV", ENODEV }, { "EINVAL", EINVAL },
	{ "ENOSPC", ENOSPC }, { "ERANGE", ERANGE }, { "EAGAIN", EAGAIN },
	{ "EOPNOTSUPP", EOPNOTSUPP }, { "ETIMEDOUT", ETIMEDOUT },
};

/* *err = the errno that <pf>.fail assigns to op, or 0. */
static int fake_fail(struct vf_pf *pf, const char *op, int *err)
{
	char *data, *line, *save, *w[3], *save2;
	size_t i;
	int n, ret;

	*err = 0;
	ret = fake_read(pf, "fail", &data);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		for (n = 0, w[0] = strtok_r(line, " \t", &save2); w[n] && n < 2;)
			w[++n] = strtok_r(NULL, " \t", &save2);
		if (n < 2 || strcmp(w[0], "fail") != 0 || strcmp(w[1], op) != 0)
			continue;
		*err = EOPNOTSUPP;
		if (!w[2])
			break;
		for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
			if (!strcmp(w[2], errno_names[i].name))
				*err = errno_names[i].err;
		if (*err == EOPNOTSUPP && strcmp(w[2], "EOPNOTSUPP") != 0)
			ret = -EINVAL;		/* a typo in the fixture must not pass silently */
		break;
	}
	free(data);
	return ret;
}

static int parse_uint(const char *s, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < 0 || *v > max ? -EINVAL : 0;
}

static int parse_onoff(const char *s, bool *v)
{
	if (!strcmp(s, "on") || !strcmp(s, "off")) {
		*v = !strcmp(s, "on");
		return 0;
	}
	return -EINVAL;
}

/* One .vfs line: every key once. */
static int fake_parse_line(char *line, struct fake_vf *v)
{
	static const char *const keys[] = {
		"vf", "mac", "vlan", "qos", "proto", "spoofchk", "trust", "link_state",
		"min_tx_rate", "max_tx_rate",
	};
	struct vf_config *c = &v->cfg;
	unsigned seen = 0;
	char *tok, *save, *val;
	long x;
	int k, ret;

	memset(v, 0, sizeof(*v));
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		val = strchr(tok, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		for (k = 0; k < 10 && strcmp(tok, keys[k]) != 0; k++)
			;
		if (k == 10 || (seen & (1u << k)))
			return -EINVAL;
		seen |= 1u << k;
		ret = 0;
		switch (k) {
		case 0: ret = parse_uint(val, INT_MAX, &x); v->vf = (int)x; break;
		case 1: {
			unsigned b[6];
			int i;

			if (strlen(val) != 17 || sscanf(val, "%2x:%2x:%2x:%2x:%2x:%2x",
							&b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
				return -EINVAL;
			for (i = 0; i < 6; i++)
				c->mac[i] = (uint8_t)b[i];
			break;
		}
		case 2: ret = parse_uint(val, 4095, &x); c->vlan = (int)x; break;
		case 3: ret = parse_uint(val, 7, &x); c->qos = (int)x; break;
		case 4:
			if (!strcasecmp(val, "802.1Q"))
				c->vlan_proto = ETH_P_8021Q;
			else if (!strcasecmp(val, "802.1ad"))
				c->vlan_proto = ETH_P_8021AD;
			else
				return -EINVAL;
			break;
		case 5: ret = parse_onoff(val, &c->spoofchk); break;
		case 6: ret = parse_onoff(val, &c->trust); break;
		case 7:
			for (x = 0; x <= IFLA_VF_LINK_STATE_DISABLE && strcmp(val, link_state_names[x]); x++)
				;
			if (x > IFLA_VF_LINK_STATE_DISABLE)
				return -EINVAL;
			c->link_state = (int)x;
			break;
		case 8: ret = parse_uint(val, UINT32_MAX, &x); c->min_tx_rate = (unsigned)x; break;
		case 9: ret = parse_uint(val, UINT32_MAX, &x); c->max_tx_rate = (unsigned)x; break;
		}
		if (ret < 0)
			return ret;
	}
	return seen == (1u << 10) - 1 ? 0 : -EINVAL;
}

static int fake_load(struct vf_pf *pf, struct fake_state *st)
{
	char *data, *line, *save;
	struct fake_vf *nv;
	int ret;

	st->vfs = NULL;
	st->n = 0;
	ret = fake_read(pf, "vfs", &data);
	if (ret < 0)
		return ret;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		if (!*line || *line == '#')
			continue;
		nv = realloc(st->vfs, sizeof(*nv) * (size_t)(st->n + 1));
		if (!nv) {
			ret = -ENOMEM;
			goto err;
		}
		st->vfs = nv;
		ret = fake_parse_line(line, &st->vfs[st->n]);
		if (ret < 0)
			goto err;
		st->n++;
	}
	free(data);
	return 0;
err:
	free(data);
	free(st->vfs);
	st->vfs = NULL;
	return ret;
}

/*
 * Replace <pf>.vfs through a temporary file of its own and a rename: a
 * writer killed half way leaves the old state whole. The caller holds the
 * fake's lock, so no other writer's update is lost in between.
 */
static int fake_save(struct vf_pf *pf, const struct fake_state *st)
{
	char name[IFNAMSIZ + 8], mac[18], *text = NULL;
	const struct vf_config *c;
	size_t len = 0;
	FILE *f;
	int i, ret;

	if ((ret = fake_name(pf, "vfs", name, sizeof(name))) < 0)
		return ret;
	f = open_memstream(&text, &len);
	if (!f)
		return -errno;
	for (i = 0; i < st->n; i++) {
		c = &st->vfs[i].cfg;
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			 c->mac[0], c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
		fprintf(f, "vf=%d mac=%s vlan=%d qos=%d proto=%s spoofchk=%s trust=%s link_state=%s "
			"min_tx_rate=%u max_tx_rate=%u\n", st->vfs[i].vf, mac, c->vlan, c->qos,
			proto_name(c->vlan_proto), c->spoofchk ? "on" : "off", c->trust ? "on" : "off",
			link_state_names[c->link_state], c->min_tx_rate, c->max_tx_rate);
	}
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	ret = state_write_atomic(pf->dirfd, name, text, len, false);
	free(text);
	return ret;
}

/* The PF's netdev exists while its state file does: the kernel answers ENODEV for it otherwise. */
static bool fake_pf_present(struct vf_pf *pf)
{
	char name[IFNAMSIZ + 8];

	return fake_name(pf, "vfs", name, sizeof(name)) == 0 &&
	       faccessat(pf->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The kernel's layout of one VF in RTM_NEWLINK (rtnl_fill_vfinfo). */
static void fake_put_vf(struct nlmsghdr *nlh, const struct fake_vf *v)
{
	const struct vf_config *c = &v->cfg;
	uint32_t idx = (uint32_t)v->vf;
	struct ifla_vf_mac m = { .vf = idx };
	struct ifla_vf_vlan vl = { idx, (uint32_t)c->vlan, (uint32_t)c->qos };
	struct ifla_vf_vlan_info vi;
	struct ifla_vf_rate r = { idx, c->min_tx_rate, c->max_tx_rate };
	struct ifla_vf_tx_rate tr = { idx, c->max_tx_rate };
	struct ifla_vf_spoofchk s = { idx, c->spoofchk };
	struct ifla_vf_link_state ls = { idx, (uint32_t)c->link_state };
	struct ifla_vf_trust t = { idx, c->trust };
	struct nlattr *info, *list;

	memcpy(m.mac, c->mac, 6);
	memset(&vi, 0, sizeof(vi));	/* its trailing padding is copied too */
	vi.vf = idx;
	vi.vlan = (uint32_t)c->vlan;
	vi.qos = (uint32_t)c->qos;
	vi.vlan_proto = htons(c->vlan_proto);
	info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
	mnl_attr_put(nlh, IFLA_VF_MAC, sizeof(m), &m);
	mnl_attr_put(nlh, IFLA_VF_VLAN, sizeof(vl), &vl);
	mnl_attr_put(nlh, IFLA_VF_RATE, sizeof(r), &r);
	mnl_attr_put(nlh, IFLA_VF_TX_RATE, sizeof(tr), &tr);
	mnl_attr_put(nlh, IFLA_VF_SPOOFCHK, sizeof(s), &s);
	mnl_attr_put(nlh, IFLA_VF_LINK_STATE, sizeof(ls), &ls);
	mnl_attr_put(nlh, IFLA_VF_TRUST, sizeof(t), &t);
	list = mnl_attr_nest_start(nlh, IFLA_VF_VLAN_LIST);
	mnl_attr_put(nlh, IFLA_VF_VLAN_INFO, sizeof(vi), &vi);
	mnl_attr_nest_end(nlh, list);
	mnl_attr_nest_end(nlh, info);
}

/* RTM_NEWLINK for the PF at buf, with its VFs when the request asked for RTEXT_FILTER_VF. */
static int fake_getlink(struct vf_pf *pf, const struct nlmsghdr *req, char *buf, size_t cap)
{
	const struct nlattr *ext = find_attr(req, IFLA_EXT_MASK);
	struct fake_state st;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nlattr *list;
	int i, ret;

	ret = fake_load(pf, &st);
	if (ret < 0)
		return ret;
	if ((size_t)st.n * 256 + 512 > cap) {
		ret = -EMSGSIZE;
		goto out;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = pf->portid;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = 1;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, pf->name);
	if (ext && mnl_attr_get_payload_len(ext) >= 4 && (mnl_attr_get_u32(ext) & RTEXT_FILTER_VF)) {
		mnl_attr_put_u32(nlh, IFLA_NUM_VF, (uint32_t)st.n);
		list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
		for (i = 0; i < st.n; i++)
			fake_put_vf(nlh, &st.vfs[i]);
		mnl_attr_nest_end(nlh, list);
	}
out:
	free(st.vfs);
	return ret;
}

static void fake_apply(struct vf_config *dst, unsigned field, const struct vf_config *src)
{
	switch (field) {
	case VF_CFG_MAC:
		memcpy(dst->mac, src->mac, 6);
		break;
	case VF_CFG_VLAN:
		dst->vlan = src->vlan;
		dst->qos = src->qos;
		dst->vlan_proto = src->vlan_proto;
		break;
	case VF_CFG_RATE:
		dst->min_tx_rate = src->min_tx_rate;
		dst->max_tx_rate = src->max_tx_rate;
		break;
	case VF_CFG_SPOOFCHK:
		dst->spoofchk = src->spoofchk;
		break;
	case VF_CFG_TRUST:
		dst->trust = src->trust;
		break;
	case VF_CFG_LINK_STATE:
		dst->link_state = src->link_state;
		break;
	}
}

/*
 * An RTM_SETLINK carrying exactly one field of one VF, as vf_pf_set sends
 * them. *nlerr gets the errno the kernel would answer with (0: success);
 * the return value reports trouble with the fake's own files.
 */
static int fake_setlink(struct vf_pf *pf, const struct nlmsghdr *req, int *nlerr)
{
	const struct nlattr *list = find_attr(req, IFLA_VFINFO_LIST), *a, *info = NULL;
	struct vf_config c;
	struct fake_state st;
	char line[256], mac[18], lockname[IFNAMSIZ + 8];
	const char *op;
	int vf, n = 0, i, ret, lock;

	*nlerr = EINVAL;
	if (!list)
		return 0;
	mnl_attr_for_each_nested(a, list) {
		if (mnl_attr_get_type(a) == IFLA_VF_INFO)
			info = a;
		n++;
	}
	if (n != 1 || !info || vf_info_parse(info, &vf, &c) < 0 || __builtin_popcount(c.mask) != 1)
		return 0;
	op = field_op(c.mask);
	n = snprintf(line, sizeof(line), "setlink pf=%s vf=%d ", pf->name, vf);
	switch (c.mask) {
	case VF_CFG_MAC:
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			 c.mac[0], c.mac[1], c.mac[2], c.mac[3], c.mac[4], c.mac[5]);
		snprintf(line + n, sizeof(line) - (size_t)n, "mac=%s", mac);
		break;
	case VF_CFG_VLAN:
		if (c.vlan_proto != ETH_P_8021Q && c.vlan_proto != ETH_P_8021AD)
			return 0;
		snprintf(line + n, sizeof(line) - (size_t)n, "vlan=%d qos=%d proto=%s",
			 c.vlan, c.qos, proto_name(c.vlan_proto));
		break;
	case VF_CFG_RATE:
		snprintf(line + n, sizeof(line) - (size_t)n, "rate min=%u max=%u",
			 c.min_tx_rate, c.max_tx_rate);
		break;
	case VF_CFG_SPOOFCHK:
		snprintf(line + n, sizeof(line) - (size_t)n, "spoofchk=%s", c.spoofchk ? "on" : "off");
		break;
	case VF_CFG_TRUST:
		snprintf(line + n, sizeof(line) - (size_t)n, "trust=%s", c.trust ? "on" : "off");
		break;
	case VF_CFG_LINK_STATE:
		if (c.link_state < 0 || c.link_state > IFLA_VF_LINK_STATE_DISABLE)
			return 0;
		snprintf(line + n, sizeof(line) - (size_t)n, "link_state=%s",
			 link_state_names[c.link_state]);
		break;
	}
	if ((ret = fake_record(pf, line)) < 0 || (ret = fake_fail(pf, op, nlerr)) < 0)
		return ret;
	if (*nlerr)
		return 0;
	/* Load, change, save as one step: plugins run side by side on one PF. */
	if ((ret = fake_name(pf, "lock", lockname, sizeof(lockname))) < 0)
		return ret;
	lock = lock_take(pf->dirfd, lockname, FAKE_LOCK_TIMEOUT_MS);
	if (lock < 0)
		return lock;
	if (!fake_pf_present(pf)) {
		*nlerr = ENODEV;
		goto out_lock;
	}
	ret = fake_load(pf, &st);
	if (ret < 0)
		goto out_lock;
	*nlerr = EINVAL;
	for (i = 0; i < st.n; i++) {
		if (st.vfs[i].vf != vf)
			continue;
		fake_apply(&st.vfs[i].cfg, c.mask, &c);
		ret = fake_save(pf, &st);
		*nlerr = 0;
		break;
	}
	free(st.vfs);
out_lock:
	lock_release(lock);
	return ret;
}

static void put_ack(char *buf, const struct nlmsghdr *req, unsigned portid, int err)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = portid;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -err;
	e->msg = *req;
}

static int fake_xfer(struct vf_pf *pf, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	const struct nlattr *ifname = find_attr(req, IFLA_IFNAME);
	size_t cap = 1 << 20, len = 0;
	char *buf, line[64];
	int nlerr = 0, ret = 0;

	req->nlmsg_seq = ++pf->seq;
	req->nlmsg_flags |= NLM_F_ACK;
	buf = calloc(1, cap);
	if (!buf)
		return -ENOMEM;
	if (!ifname || mnl_attr_validate(ifname, MNL_TYPE_NUL_STRING) < 0 ||
	    strcmp(mnl_attr_get_str(ifname), pf->name) != 0) {
		nlerr = ENODEV;
	} else if (req->nlmsg_type == RTM_GETLINK) {
		snprintf(line, sizeof(line), "getlink pf=%s", pf->name);
		if ((ret = fake_record(pf, line)) < 0 || (ret = fake_fail(pf, "getlink", &nlerr)) < 0)
			goto out;
		if (!nlerr && !fake_pf_present(pf))
			nlerr = ENODEV;
		if (!nlerr) {
			ret = fake_getlink(pf, req, buf, cap - MNL_NLMSG_HDRLEN - sizeof(struct nlmsgerr));
			if (ret < 0)
				goto out;
			len = ((struct nlmsghdr *)buf)->nlmsg_len;
		}
	} else if (req->nlmsg_type == RTM_SETLINK) {
		ret = fake_setlink(pf, req, &nlerr);
		if (ret < 0)
			goto out;
	} else {
		nlerr = EOPNOTSUPP;
	}
	put_ack(buf + len, req, pf->portid, nlerr);
	len += ((struct nlmsghdr *)(buf + len))->nlmsg_len;
	ret = mnl_cb_run(buf, len, req->nlmsg_seq, pf->portid, cb, data);
	ret = ret < 0 ? -errno : 0;
out:
	free(buf);
	return ret;
}

static void fake_close(struct vf_pf *pf)
{
	close(pf->dirfd);
}

static const struct vf_transport fake_transport = {
	.xfer = fake_xfer,
	.close = fake_close,
};

static int fake_open(struct vf_pf *pf, const char *dir)
{
	pf->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pf->dirfd < 0)
		return -errno;
	if (!fake_pf_present(pf)) {
		close(pf->dirfd);
		return -ENODEV;
	}
	pf->portid = (unsigned)getpid();
	pf->ops = &fake_transport;
	return 0;
}

/* ---- the API ---- */

int vf_pf_open(const char *pf_netdev, const char *fake_dir, struct vf_pf **pf)
{
	struct vf_pf *p;
	int ret;

	/* It names the fake's files: the same rule as any interface name. */
	if (!cni_valid_ifname(pf_netdev))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->name, sizeof(p->name), "%s", pf_netdev);
	ret = fake_dir ? fake_open(p, fake_dir) : kernel_open(p);
	if (ret < 0) {
		free(p);
		return ret;
	}
	*pf = p;
	return 0;
}

void vf_pf_close(struct vf_pf *pf)
{
	if (!pf)
		return;
	pf->ops->close(pf);
	free(pf);
}

struct get_ctx {
	int index;
	bool found;
	int ret;
	struct vf_config *cfg;
};

static int get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct get_ctx *ctx = data;
	const struct nlattr *list, *info;
	struct vf_config c;
	int vf, ret;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	list = find_attr(nlh, IFLA_VFINFO_LIST);
	if (!list)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(info, list) {
		if (mnl_attr_get_type(info) != IFLA_VF_INFO)
			continue;
		ret = vf_info_parse(info, &vf, &c);
		if (ret < 0) {
			ctx->ret = ret;
			continue;
		}
		if (vf == ctx->index && (c.mask & VF_CFG_MAC)) {
			*ctx->cfg = c;
			ctx->found = true;
		}
	}
	return MNL_CB_OK;
}

int vf_pf_get(struct vf_pf *pf, int vf_index, struct vf_config *cfg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct get_ctx ctx = { .index = vf_index, .cfg = cfg };
	struct nlmsghdr *nlh;
	int ret;

	if (vf_index < 0)
		return -EINVAL;
	nlh = put_pf_hdr(buf, sizeof(buf), RTM_GETLINK, pf->name);
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS);
	ret = pf->ops->xfer(pf, nlh, get_cb, &ctx);
	if (ret < 0)
		return ret;
	if (ctx.found)
		return 0;
	return ctx.ret < 0 ? ctx.ret : -ENOENT;
}

int vf_pf_set(struct vf_pf *pf, int vf_index, const struct vf_config *cfg)
{
	static const unsigned order[] = {
		VF_CFG_VLAN, VF_CFG_MAC, VF_CFG_RATE, VF_CFG_SPOOFCHK, VF_CFG_TRUST, VF_CFG_LINK_STATE,
	};
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nlattr *list, *info;
	size_t i;
	int ret;

	if (vf_index < 0)
		return -EINVAL;
	ret = check_vf_config(cfg);
	if (ret < 0)
		return ret;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(cfg->mask & order[i]))
			continue;
		nlh = put_pf_hdr(buf, sizeof(buf), RTM_SETLINK, pf->name);
		list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
		info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
		put_vf_field(nlh, order[i], vf_index, cfg);
		mnl_attr_nest_end(nlh, info);
		mnl_attr_nest_end(nlh, list);
		ret = pf->ops->xfer(pf, nlh, NULL, NULL);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void vf_config_default(struct vf_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mask = VF_CFG_MAC | VF_CFG_VLAN | VF_CFG_SPOOFCHK | VF_CFG_TRUST | VF_CFG_LINK_STATE |
		    VF_CFG_RATE;
	cfg->vlan_proto = ETH_P_8021Q;
	cfg->link_state = IFLA_VF_LINK_STATE_AUTO;
}

/* ---- claims ---- */

/* Larger than any marker this module writes; a bigger file is not one of ours. */
#define MARKER_MAX 16384

static bool json_str(const cJSON *o, const char *key, char *out, size_t len, bool required)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!s) {
		out[0] = '\0';
		return !required;
	}
	if (!cJSON_IsString(s) || strlen(s->valuestring) >= len)
		return false;
	strcpy(out, s->valuestring);
	return true;
}

/* An integer in [min, max]: NaN, fractions and out-of-range values are refused. */
static bool json_int(const cJSON *o, const char *key, double min, double max, double *v)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!n) {
		*v = 0;
		return true;
	}
	if (!cJSON_IsNumber(n) || !(n->valuedouble >= min && n->valuedouble <= max) ||
	    n->valuedouble != (double)(long long)n->valuedouble)
		return false;
	*v = n->valuedouble;
	return true;
}

static int owner_from_json(const cJSON *o, struct vf_owner *w)
{
	const cJSON *mac = cJSON_GetObjectItemCaseSensitive(o, "hostMac");
	double mtu, idx;

	memset(w, 0, sizeof(*w));
	if (!cJSON_IsObject(o) ||
	    !json_str(o, "containerID", w->container_id, sizeof(w->container_id), true) ||
	    !json_str(o, "ifname", w->ifname, sizeof(w->ifname), true) ||
	    !json_str(o, "netns", w->netns, sizeof(w->netns), true) ||
	    !json_str(o, "hostIfname", w->host_ifname, sizeof(w->host_ifname), false) ||
	    !json_str(o, "rdmaDevice", w->rdma_dev, sizeof(w->rdma_dev), false) ||
	    !json_int(o, "hostMtu", 0, 65535, &mtu) || !json_int(o, "rdmaIndex", 0, UINT32_MAX, &idx))
		return -EBADMSG;
	if (mac && (!cJSON_IsString(mac) || link_mac_parse(mac->valuestring, w->host_mac) < 0))
		return -EBADMSG;
	w->host_mtu = (int)mtu;
	w->rdma_index = (uint32_t)idx;
	/* What DEL may act on: names the kernel and the CNI spec accept. */
	if (!cni_valid_container_id(w->container_id) || !cni_valid_ifname(w->ifname) ||
	    !cni_valid_netns_path(w->netns) ||
	    (w->host_ifname[0] && !cni_valid_ifname(w->host_ifname)))
		return -EBADMSG;
	return 0;
}

static cJSON *owner_to_json(const struct vf_owner *w)
{
	cJSON *o = cJSON_CreateObject();
	char mac[18];

	link_mac_format(w->host_mac, mac);
	if (!o || !cJSON_AddStringToObject(o, "containerID", w->container_id) ||
	    !cJSON_AddStringToObject(o, "ifname", w->ifname) ||
	    !cJSON_AddStringToObject(o, "netns", w->netns) ||
	    !cJSON_AddStringToObject(o, "hostIfname", w->host_ifname) ||
	    !cJSON_AddStringToObject(o, "hostMac", mac) ||
	    !cJSON_AddNumberToObject(o, "hostMtu", w->host_mtu) ||
	    !cJSON_AddStringToObject(o, "rdmaDevice", w->rdma_dev) ||
	    !cJSON_AddNumberToObject(o, "rdmaIndex", w->rdma_index)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/*
 * The marker as it is now. Versions before attachments were recorded in it
 * wrote the owner's netns path alone: such a marker still names its owner,
 * by namespace only.
 */
static void marker_read(struct vf_claim *claim)
{
	char *data = NULL;
	cJSON *o = NULL;
	size_t len;
	int ret;

	memset(&claim->owner, 0, sizeof(claim->owner));
	claim->marker = VF_MARKER_UNREADABLE;
	ret = state_read(claim->dirfd, claim->bdf, &data, &len, MARKER_MAX);
	if (ret == -ENOENT) {
		claim->marker = VF_MARKER_NONE;
		return;
	}
	if (ret < 0)
		return;
	if (data[0] == '/' && !strchr(data, '{')) {
		while (len && data[len - 1] == '\n')
			data[--len] = '\0';
		if (cni_valid_netns_path(data)) {
			strcpy(claim->owner.netns, data);
			claim->marker = VF_MARKER_READ;
		}
	} else if (state_unseal(data, &len) == 0 && (o = cJSON_ParseWithLength(data, len)) &&
		   owner_from_json(o, &claim->owner) == 0) {
		claim->marker = VF_MARKER_READ;
	}
	if (claim->marker != VF_MARKER_READ)
		memset(&claim->owner, 0, sizeof(claim->owner));
	cJSON_Delete(o);
	free(data);
}

int vf_claim_lock(int dirfd, const char *bdf, unsigned timeout_ms, struct vf_claim *claim)
{
	char name[VF_BDF_LEN + 8];
	int ret;

	memset(claim, 0, sizeof(*claim));
	claim->lock_fd = -1;
	claim->dirfd = dirfd;
	ret = vf_bdf_parse(bdf, claim->bdf);
	if (ret < 0)
		return ret;
	snprintf(name, sizeof(name), "%s.lock", claim->bdf);
	ret = lock_take(dirfd, name, timeout_ms);
	if (ret < 0)
		return ret;
	claim->lock_fd = ret;
	marker_read(claim);
	return 0;
}

bool vf_claim_held_by(const struct vf_claim *claim, const struct vf_owner *me)
{
	const struct vf_owner *o = &claim->owner;

	if (claim->marker != VF_MARKER_READ)
		return false;
	if (!o->container_id[0])
		return strcmp(o->netns, me->netns) == 0;
	return strcmp(o->container_id, me->container_id) == 0 && strcmp(o->ifname, me->ifname) == 0;
}

int vf_claim_take(int dirfd, const char *bdf, const struct vf_owner *me, unsigned timeout_ms,
		  struct vf_claim *claim)
{
	int ret;

	ret = vf_claim_lock(dirfd, bdf, timeout_ms, claim);
	if (ret < 0)
		return ret;
	if (claim->marker != VF_MARKER_READ || vf_claim_held_by(claim, me))
		return 0;
	/*
	 * A claim belongs to an attachment, not to a pod: another interface of
	 * the same pod is refused too. One whose namespace is gone is what a
	 * missed DEL leaves: taken over.
	 */
	if (netns_alive(claim->owner.netns)) {
		vf_claim_release(claim);
		return -EBUSY;
	}
	return 0;
}

int vf_claim_mark(struct vf_claim *claim, const struct vf_owner *owner)
{
	cJSON *o;
	int ret;

	if (claim->lock_fd < 0)
		return -EBADF;
	o = owner_to_json(owner);
	if (!o)
		return -ENOMEM;
	/*
	 * Not fsync'd: the marker names a namespace, and no namespace outlives
	 * a reboot, so a marker a crash loses or garbles is stale either way.
	 */
	ret = state_write_json(claim->dirfd, claim->bdf, o, false);
	cJSON_Delete(o);
	if (ret == 0) {
		claim->marker = VF_MARKER_READ;
		claim->owner = *owner;
	}
	return ret;
}

int vf_claim_clear(struct vf_claim *claim, const struct vf_owner *me)
{
	int ret;

	if (claim->lock_fd < 0)
		return -EBADF;
	marker_read(claim);
	if (claim->marker == VF_MARKER_NONE)
		return 0;
	/* One that cannot be read holds nothing (ADD takes it over): not worth keeping. */
	if (claim->marker == VF_MARKER_READ && !vf_claim_held_by(claim, me))
		return -EBUSY;
	ret = state_remove(claim->dirfd, claim->bdf);
	if (ret == 0) {
		claim->marker = VF_MARKER_NONE;
		memset(&claim->owner, 0, sizeof(claim->owner));
	}
	return ret;
}

void vf_claim_release(struct vf_claim *claim)
{
	lock_release(claim->lock_fd);
	claim->lock_fd = -1;
}

void vf_owner_format(const struct vf_owner *o, char *out, size_t len)
{
	if (o->container_id[0])
		snprintf(out, len, "%s (container %s, interface %s)", o->netns, o->container_id,
			 o->ifname);
	else
		snprintf(out, len, "%s", o->netns);
}
