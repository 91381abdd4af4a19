/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vf: SR-IOV Virtual Functions, from PCI sysfs and through their PF.
 *
 * VF properties are encoded as `ip link set PF vf N ...` encodes them
 * (iproute2 ip/iplink.c): one RTM_SETLINK per property, addressed by
 * IFLA_IFNAME, carrying IFLA_VFINFO_LIST > IFLA_VF_INFO > IFLA_VF_<x>.
 *
 * The encoded requests go through a backend: the kernel's NETLINK_ROUTE,
 * unless a test build of the plugins registers a stand-in (test/fakes/)
 * with vf_pf_set_backend, which decodes them with vf_info_parse.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
#include "nlio.h"
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

/* One "Key : value" line of the OFED config file into cfg; unknown keys are not ours. */
static int sysfs_config_line(const char *key, const char *val, struct vf_config *cfg)
{
	char *end;
	long v;

	if (!strcmp(key, "MAC")) {
		if (link_mac_parse(val, cfg->mac) < 0)
			return -EBADMSG;
		cfg->mask |= VF_CFG_MAC;
	} else if (!strcmp(key, "VLAN") || !strcmp(key, "QoS") || !strcmp(key, "MinTxRate") ||
		   !strcmp(key, "MaxTxRate")) {
		errno = 0;
		v = strtol(val, &end, 10);
		if (errno || end == val || v < 0 || v > (long)UINT32_MAX)
			return -EBADMSG;
		if (!strcmp(key, "VLAN")) {
			cfg->vlan = (int)v;
			cfg->mask |= VF_CFG_VLAN;
		} else if (!strcmp(key, "QoS")) {
			cfg->qos = (int)v;
		} else if (!strcmp(key, "MinTxRate")) {
			cfg->min_tx_rate = (unsigned)v;
			cfg->mask |= VF_CFG_RATE;
		} else {
			cfg->max_tx_rate = (unsigned)v;
			cfg->mask |= VF_CFG_RATE;
		}
	} else if (!strcmp(key, "VLAN Proto")) {
		cfg->vlan_proto = !strcasecmp(val, "802.1ad") ? ETH_P_8021AD : ETH_P_8021Q;
	} else if (!strcmp(key, "SpoofCheck") || !strcmp(key, "Trust")) {
		bool on = !strcasecmp(val, "ON");

		if (!on && strcasecmp(val, "OFF"))
			return -EBADMSG;
		if (key[0] == 'S') {
			cfg->spoofchk = on;
			cfg->mask |= VF_CFG_SPOOFCHK;
		} else {
			cfg->trust = on;
			cfg->mask |= VF_CFG_TRUST;
		}
	} else if (!strcmp(key, "LinkState")) {
		if (!strcasecmp(val, "Follow") || !strcasecmp(val, "Auto"))
			cfg->link_state = IFLA_VF_LINK_STATE_AUTO;
		else if (!strcasecmp(val, "Up") || !strcasecmp(val, "Enable"))
			cfg->link_state = IFLA_VF_LINK_STATE_ENABLE;
		else if (!strcasecmp(val, "Down") || !strcasecmp(val, "Disable"))
			cfg->link_state = IFLA_VF_LINK_STATE_DISABLE;
		else
			return -EBADMSG;
		cfg->mask |= VF_CFG_LINK_STATE;
	}
	return 0;
}

int vf_sysfs_config(const char *sysfs_root, const char *pf_bdf, int vf_index,
		    struct vf_config *cfg)
{
	char path[PATH_MAX], line[256], *colon, *key, *val, *e;
	FILE *f;
	int ret = 0;

	if (vf_index < 0)
		return -EINVAL;
	ret = pathf(path, sizeof(path), "%s/bus/pci/devices/%s/sriov/%d/config", sysfs_root,
		    pf_bdf, vf_index);
	if (ret < 0)
		return ret;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	memset(cfg, 0, sizeof(*cfg));
	cfg->vlan_proto = ETH_P_8021Q;
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		key = line;
		for (e = colon; e > key && (e[-1] == ' ' || e[-1] == '\t'); e--)
			e[-1] = '\0';
		val = colon + 1;
		while (*val == ' ' || *val == '\t')
			val++;
		val[strcspn(val, " \t\n")] = '\0';
		ret = sysfs_config_line(key, val, cfg);
	}
	fclose(f);
	if (ret == 0 && !(cfg->mask & VF_CFG_MAC))
		ret = -EBADMSG;
	return ret;
}

/* ---- VF properties on the PF ---- */

struct vf_pf {
	const struct vf_pf_backend *ops;
	void *priv;			/* the backend's */
	char name[IFNAMSIZ];
	int lock_dirfd;			/* -1: vf_pf_set takes no PF lock */
	char lock_name[VF_BDF_LEN + 8];	/* "<pf-bdf>.pf.lock" */
};

static const void *vf_payload(const struct nlattr *a, size_t len)
{
	return mnl_attr_get_payload_len(a) >= len ? mnl_attr_get_payload(a) : NULL;
}

int vf_info_parse(const struct nlattr *info, int *vf, struct vf_config *cfg)
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

/* ---- the kernel backend ---- */

static int kernel_xfer(void *priv, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	return nlio_talk(priv, req, cb, data);
}

static void kernel_close(void *priv)
{
	nlio_close(priv);
}

/* The PF is in the host namespace: its requests share the host's rtnetlink socket. */
static int kernel_open(const char *pf_netdev, void **priv)
{
	struct nlio *s;
	int ret;

	/* One ioctl, so that a PF that is gone is told apart from a PF that fails. */
	if (!if_nametoindex(pf_netdev))
		return errno == ENODEV || errno == ENXIO ? -ENODEV : -errno;
	ret = nlio_open(NETLINK_ROUTE, &s);
	if (ret < 0)
		return ret;
	*priv = s;
	return 0;
}

static const struct vf_pf_backend kernel_backend = {
	.open = kernel_open,
	.xfer = kernel_xfer,
	.close = kernel_close,
};

static const struct vf_pf_backend *backend = &kernel_backend;

void vf_pf_set_backend(const struct vf_pf_backend *b)
{
	backend = b ? b : &kernel_backend;
}

/* ---- the API ---- */

int vf_pf_open(const char *pf_netdev, struct vf_pf **pf)
{
	struct vf_pf *p;
	int ret;

	/* A backend may name files after it: the same rule as any interface name. */
	if (!cni_valid_ifname(pf_netdev))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->name, sizeof(p->name), "%s", pf_netdev);
	p->lock_dirfd = -1;
	p->ops = backend;
	ret = p->ops->open(p->name, &p->priv);
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
	pf->ops->close(pf->priv);
	free(pf);
}

int vf_pf_lock_at(struct vf_pf *pf, int dirfd, const char *pf_bdf)
{
	char bdf[VF_BDF_LEN];
	int ret = vf_bdf_parse(pf_bdf, bdf);

	if (ret < 0)
		return ret;
	snprintf(pf->lock_name, sizeof(pf->lock_name), "%s.pf.lock", bdf);
	pf->lock_dirfd = dirfd;
	return 0;
}

struct get_ctx {
	int index;
	bool found;
	int ret;
	uint32_t num_vf;		/* IFLA_NUM_VF: how many VFs the PF has, listed or not */
	struct vf_config *cfg;
};

static unsigned n_pf_requests;

unsigned vf_pf_requests(void)
{
	return n_pf_requests;
}

static int pf_xfer(struct vf_pf *pf, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	n_pf_requests++;
	return pf->ops->xfer(pf->priv, req, cb, data);
}

static int get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct get_ctx *ctx = data;
	const struct nlattr *list, *info, *num;
	struct vf_config c;
	int vf, ret;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	num = find_attr(nlh, IFLA_NUM_VF);
	if (num && mnl_attr_get_payload_len(num) >= sizeof(uint32_t))
		ctx->num_vf = mnl_attr_get_u32(num);
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
	ret = pf_xfer(pf, nlh, get_cb, &ctx);
	if (ret < 0)
		return ret;
	if (ctx.found)
		return 0;
	if (ctx.ret < 0)
		return ctx.ret;
	/* The PF has the VF but the list stopped short of it: the nest overflowed. */
	return (uint32_t)vf_index < ctx.num_vf ? -EOVERFLOW : -ENOENT;
}

int vf_pf_set(struct vf_pf *pf, int vf_index, const struct vf_config *cfg)
{
	static const unsigned order[] = {
		VF_CFG_VLAN, VF_CFG_MAC, VF_CFG_RATE, VF_CFG_SPOOFCHK, VF_CFG_TRUST, VF_CFG_LINK_STATE,
	};
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nlattr *list, *info;
	int ret, lock_fd = -1;
	size_t i;

	if (vf_index < 0)
		return -EINVAL;
	ret = check_vf_config(cfg);
	if (ret < 0 || !(cfg->mask & VF_CFG_ALL))
		return ret;
	if (pf->lock_dirfd >= 0) {
		lock_fd = lock_take(pf->lock_dirfd, pf->lock_name, VF_PF_LOCK_TIMEOUT_MS);
		if (lock_fd < 0)
			return lock_fd;
	}
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(cfg->mask & order[i]))
			continue;
		nlh = put_pf_hdr(buf, sizeof(buf), RTM_SETLINK, pf->name);
		list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
		info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
		put_vf_field(nlh, order[i], vf_index, cfg);
		mnl_attr_nest_end(nlh, info);
		mnl_attr_nest_end(nlh, list);
		ret = pf_xfer(pf, nlh, NULL, NULL);
		if (ret < 0)
			break;
	}
	lock_release(lock_fd);
	return ret;
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
