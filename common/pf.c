/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pf: VF properties, read and written through their PF.
 *
 * VF properties are encoded as `ip link set PF vf N ...` encodes them
 * (iproute2 ip/iplink.c): one RTM_SETLINK addressed by IFLA_IFNAME,
 * carrying IFLA_VFINFO_LIST > IFLA_VF_INFO > one IFLA_VF_<x> per property.
 *
 * The encoded requests go through a backend: the kernel's NETLINK_ROUTE
 * (over nlio), unless a test build of the plugins registers a stand-in
 * (test/fakes/) with pf_set_backend, which decodes them with
 * pf_vf_info_parse.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include "valid.h"
#include "link.h"
#include "lock.h"
#include "nlio.h"
#include "pf.h"
#include "vf.h"

/* ---- requests ---- */

struct pf {
	const struct pf_backend *ops;
	void *priv;			/* the backend's */
	char name[IFNAMSIZ];
	int lock_dirfd;			/* -1: pf_set takes no PF lock */
	char lock_name[VF_BDF_LEN + 8];	/* "<pf-bdf>.pf.lock" */
	unsigned refused;		/* the field the last pf_set failed on, 0: none */
	double lock_waited_ms;		/* for the PF lock, behind other VFs' settings */
	int held_fd;			/* the PF lock pf_lock took, -1: none */
};

static const void *vf_payload(const struct nlattr *a, size_t len)
{
	return mnl_attr_get_payload_len(a) >= len ? mnl_attr_get_payload(a) : NULL;
}

/* These start with the VF index; nests and IFLA_VF_BROADCAST do not. */
static bool vf_indexed(uint16_t type)
{
	return type == IFLA_VF_MAC || type == IFLA_VF_VLAN || type == IFLA_VF_RATE ||
	       type == IFLA_VF_TX_RATE || type == IFLA_VF_SPOOFCHK || type == IFLA_VF_TRUST ||
	       type == IFLA_VF_LINK_STATE;
}

/* Every attribute of one IFLA_VF_INFO names the same VF: *idx (-1 until one did). */
static int vf_index(uint32_t vf, int *idx)
{
	if (*idx >= 0 && (int)vf != *idx)
		return -EBADMSG;
	*idx = (int)vf;
	return 0;
}

/* The first IFLA_VF_VLAN_INFO of an IFLA_VF_VLAN_LIST, which carries the VF index too. */
static int vf_vlan_list(const struct nlattr *list, int *idx, struct pf_vf_config *cfg)
{
	const struct nlattr *v;

	mnl_attr_for_each_nested(v, list) {
		const struct ifla_vf_vlan_info *vi = vf_payload(v, sizeof(*vi));

		if (mnl_attr_get_type(v) != IFLA_VF_VLAN_INFO)
			continue;
		if (!vi || vf_index(vi->vf, idx) < 0)
			return -EBADMSG;
		cfg->vlan = (int)vi->vlan;
		cfg->qos = (int)vi->qos;
		cfg->vlan_proto = ntohs(vi->vlan_proto);
		cfg->mask |= PF_VF_VLAN;
		break;
	}
	return 0;
}

/*
 * IFLA_VF_SPOOFCHK or IFLA_VF_TRUST (one layout): the kernel reports -1
 * for a setting the driver does not implement, which stays out of cfg.
 */
static int vf_flag(const struct nlattr *a, bool *val, unsigned bit, struct pf_vf_config *cfg)
{
	const struct ifla_vf_spoofchk *f = vf_payload(a, sizeof(*f));

	if (!f)
		return -EBADMSG;
	if (f->setting != (uint32_t)-1) {
		*val = f->setting;
		cfg->mask |= bit;
	}
	return 0;
}

/* One attribute that starts with the VF index into cfg; *have_rate: IFLA_VF_RATE was seen. */
static int vf_field(const struct nlattr *a, struct pf_vf_config *cfg, bool *have_rate)
{
	switch (mnl_attr_get_type(a)) {
	case IFLA_VF_MAC: {
		const struct ifla_vf_mac *m = vf_payload(a, sizeof(*m));

		if (!m)
			return -EBADMSG;
		memcpy(cfg->mac, m->mac, 6);
		cfg->mask |= PF_VF_MAC;
		break;
	}
	case IFLA_VF_VLAN: {
		const struct ifla_vf_vlan *vl = vf_payload(a, sizeof(*vl));

		if (!vl)
			return -EBADMSG;
		cfg->vlan = (int)vl->vlan;
		cfg->qos = (int)vl->qos;
		if (!(cfg->mask & PF_VF_VLAN))
			cfg->vlan_proto = ETH_P_8021Q;
		cfg->mask |= PF_VF_VLAN;
		break;
	}
	case IFLA_VF_RATE: {
		const struct ifla_vf_rate *r = vf_payload(a, sizeof(*r));

		if (!r)
			return -EBADMSG;
		cfg->min_tx_rate = r->min_tx_rate;
		cfg->max_tx_rate = r->max_tx_rate;
		cfg->mask |= PF_VF_RATE;
		*have_rate = true;
		break;
	}
	case IFLA_VF_TX_RATE: {
		const struct ifla_vf_tx_rate *r = vf_payload(a, sizeof(*r));

		if (!r)
			return -EBADMSG;
		/* The older attribute, max only: IFLA_VF_RATE says more when both come. */
		if (!*have_rate) {
			cfg->max_tx_rate = r->rate;
			cfg->mask |= PF_VF_RATE;
		}
		break;
	}
	case IFLA_VF_SPOOFCHK:
		return vf_flag(a, &cfg->spoofchk, PF_VF_SPOOFCHK, cfg);
	case IFLA_VF_TRUST:
		return vf_flag(a, &cfg->trust, PF_VF_TRUST, cfg);
	case IFLA_VF_LINK_STATE: {
		const struct ifla_vf_link_state *l = vf_payload(a, sizeof(*l));

		if (!l)
			return -EBADMSG;
		cfg->link_state = (int)l->link_state;
		cfg->mask |= PF_VF_LINK_STATE;
		break;
	}
	}
	return 0;
}

int pf_vf_info_parse(const struct nlattr *info, int *vf, struct pf_vf_config *cfg)
{
	const struct nlattr *a;
	bool have_rate = false;
	int idx = -1, ret;

	memset(cfg, 0, sizeof(*cfg));
	mnl_attr_for_each_nested(a, info) {
		uint16_t type = mnl_attr_get_type(a);
		const uint32_t *p;

		if (type == IFLA_VF_VLAN_LIST) {
			ret = vf_vlan_list(a, &idx, cfg);
		} else if (vf_indexed(type)) {
			p = vf_payload(a, sizeof(uint32_t));
			ret = p ? vf_index(*p, &idx) : -EBADMSG;
			if (ret == 0)
				ret = vf_field(a, cfg, &have_rate);
		} else {
			/* Stats, GUIDs, broadcast: not ours. */
			ret = 0;
		}
		if (ret < 0)
			return ret;
	}
	if (idx < 0)
		return -EBADMSG;
	*vf = idx;
	return 0;
}

/* The PF by name, as `ip link set PF vf N ...` names it. */
static struct nlmsghdr *put_pf_hdr(char *buf, size_t size, uint16_t type, const char *pf)
{
	struct nlmsghdr *nlh = link_msg_hdr(buf, size, type, 0);

	mnl_attr_put_strz(nlh, IFLA_IFNAME, pf);
	return nlh;
}

/* The attribute(s) of one field of cfg for VF vf, as `ip link set ... vf N` encodes them. */
static void put_vf_field(struct nlmsghdr *nlh, unsigned field, int vf, const struct pf_vf_config *cfg)
{
	uint32_t idx = (uint32_t)vf;

	switch (field) {
	case PF_VF_VLAN:
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
	case PF_VF_MAC: {
		struct ifla_vf_mac m = { .vf = idx };

		memcpy(m.mac, cfg->mac, 6);
		mnl_attr_put(nlh, IFLA_VF_MAC, sizeof(m), &m);
		break;
	}
	case PF_VF_RATE: {
		struct ifla_vf_rate r = { idx, cfg->min_tx_rate, cfg->max_tx_rate };

		mnl_attr_put(nlh, IFLA_VF_RATE, sizeof(r), &r);
		break;
	}
	case PF_VF_SPOOFCHK: {
		struct ifla_vf_spoofchk s = { idx, cfg->spoofchk };

		mnl_attr_put(nlh, IFLA_VF_SPOOFCHK, sizeof(s), &s);
		break;
	}
	case PF_VF_TRUST: {
		struct ifla_vf_trust t = { idx, cfg->trust };

		mnl_attr_put(nlh, IFLA_VF_TRUST, sizeof(t), &t);
		break;
	}
	case PF_VF_LINK_STATE: {
		struct ifla_vf_link_state l = { idx, (uint32_t)cfg->link_state };

		mnl_attr_put(nlh, IFLA_VF_LINK_STATE, sizeof(l), &l);
		break;
	}
	}
}

static int check_vf_config(const struct pf_vf_config *cfg)
{
	if ((cfg->mask & PF_VF_VLAN) &&
	    (cfg->vlan < 0 || cfg->vlan > 4094 || cfg->qos < 0 || cfg->qos > 7 ||
	     (cfg->vlan_proto != ETH_P_8021Q && cfg->vlan_proto != ETH_P_8021AD) ||
	     (cfg->vlan == 0 && (cfg->qos || cfg->vlan_proto != ETH_P_8021Q))))
		return -EINVAL;
	if ((cfg->mask & PF_VF_LINK_STATE) &&
	    (cfg->link_state < IFLA_VF_LINK_STATE_AUTO || cfg->link_state > IFLA_VF_LINK_STATE_DISABLE))
		return -EINVAL;
	if ((cfg->mask & PF_VF_RATE) && cfg->max_tx_rate && cfg->min_tx_rate > cfg->max_tx_rate)
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

static const struct pf_backend kernel_backend = {
	.open = kernel_open,
	.xfer = kernel_xfer,
	.close = kernel_close,
};

static const struct pf_backend *backend = &kernel_backend;

void pf_set_backend(const struct pf_backend *b)
{
	backend = b ? b : &kernel_backend;
}

/* ---- the API ---- */

int pf_open(const char *pf_netdev, struct pf **pf)
{
	struct pf *p;
	int ret;

	/* A backend may name files after it: the same rule as any interface name. */
	if (!valid_ifname(pf_netdev))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->name, sizeof(p->name), "%s", pf_netdev);
	p->lock_dirfd = -1;
	p->held_fd = -1;
	p->ops = backend;
	ret = p->ops->open(p->name, &p->priv);
	if (ret < 0) {
		free(p);
		return ret;
	}
	*pf = p;
	return 0;
}

void pf_close(struct pf *pf)
{
	if (!pf)
		return;
	lock_release(pf->held_fd);
	pf->ops->close(pf->priv);
	free(pf);
}

int pf_lock_at(struct pf *pf, int dirfd, const char *pf_bdf)
{
	char bdf[VF_BDF_LEN];
	int ret = vf_bdf_parse(pf_bdf, bdf);

	if (ret < 0)
		return ret;
	snprintf(pf->lock_name, sizeof(pf->lock_name), "%s.pf.lock", bdf);
	pf->lock_dirfd = dirfd;
	return 0;
}

/* The PF's lock around one request, unless pf_lock holds it already: *fd to release, or -1. */
static int lock_for_request(struct pf *pf, int *fd)
{
	*fd = -1;
	if (pf->lock_dirfd < 0 || pf->held_fd >= 0)
		return 0;
	*fd = lock_take_waited(pf->lock_dirfd, pf->lock_name, PF_LOCK_TIMEOUT_MS, &pf->lock_waited_ms);
	return *fd < 0 ? *fd : 0;
}

int pf_lock(struct pf *pf)
{
	int fd, ret = lock_for_request(pf, &fd);

	if (fd >= 0)
		pf->held_fd = fd;
	return ret;
}

struct get_ctx {
	int index;
	bool found;
	int ret;
	uint32_t num_vf;		/* IFLA_NUM_VF: how many VFs the PF has, listed or not */
	struct pf_vf_config *cfg;
};

static unsigned n_pf_requests;

unsigned pf_requests(void)
{
	return n_pf_requests;
}

static int pf_xfer(struct pf *pf, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	n_pf_requests++;
	return pf->ops->xfer(pf->priv, req, cb, data);
}

static int get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct get_ctx *ctx = data;
	const struct nlattr *list, *info, *num;
	struct pf_vf_config c;
	int vf, ret;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	num = link_msg_attr(nlh, IFLA_NUM_VF);
	if (num && mnl_attr_get_payload_len(num) >= sizeof(uint32_t))
		ctx->num_vf = mnl_attr_get_u32(num);
	list = link_msg_attr(nlh, IFLA_VFINFO_LIST);
	if (!list)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(info, list) {
		if (mnl_attr_get_type(info) != IFLA_VF_INFO)
			continue;
		ret = pf_vf_info_parse(info, &vf, &c);
		if (ret < 0) {
			ctx->ret = ret;
			continue;
		}
		if (vf == ctx->index && (c.mask & PF_VF_MAC)) {
			*ctx->cfg = c;
			ctx->found = true;
		}
	}
	return MNL_CB_OK;
}

int pf_get(struct pf *pf, int vf_index, struct pf_vf_config *cfg)
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

/*
 * The order in which the kernel (do_setvfinfo) applies the fields of one
 * IFLA_VF_INFO: it stops at the first one the driver refuses, after the
 * ones before it took effect, and does not say which it was.
 */
static const unsigned kernel_order[] = {
	PF_VF_MAC, PF_VF_VLAN, PF_VF_RATE, PF_VF_SPOOFCHK, PF_VF_LINK_STATE, PF_VF_TRUST,
};
#define N_FIELDS (sizeof(kernel_order) / sizeof(kernel_order[0]))

/* The fields of mask for VF vf in one RTM_SETLINK. */
static int set_fields(struct pf *pf, int vf, unsigned mask, const struct pf_vf_config *cfg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlattr *list, *info;
	struct nlmsghdr *nlh;
	size_t i;

	nlh = put_pf_hdr(buf, sizeof(buf), RTM_SETLINK, pf->name);
	list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
	info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
	for (i = 0; i < N_FIELDS; i++)
		if (mask & kernel_order[i])
			put_vf_field(nlh, kernel_order[i], vf, cfg);
	mnl_attr_nest_end(nlh, info);
	mnl_attr_nest_end(nlh, list);
	return pf_xfer(pf, nlh, NULL, NULL);
}

/*
 * The fields one request each, in the kernel's order, up to the first
 * refused (or past every refusal, keep_going): which fields those are goes
 * into the error an operator reads. Only after a batch failed, so the
 * settings are idempotent to send again.
 */
static int set_fields_one_by_one(struct pf *pf, int vf, unsigned mask,
				 const struct pf_vf_config *cfg, bool keep_going)
{
	size_t i;
	int ret = 0, r;

	for (i = 0; i < N_FIELDS && (ret == 0 || keep_going); i++) {
		if (!(mask & kernel_order[i]))
			continue;
		r = set_fields(pf, vf, kernel_order[i], cfg);
		if (r < 0) {
			pf->refused |= kernel_order[i];
			ret = ret ? ret : r;
		}
	}
	return ret;
}

/* After a refused batch: none (pf_set_once), up to the refused field (pf_set), or past it. */
enum retry { RETRY_NONE, RETRY_TO_REFUSED, RETRY_EACH };

static int set_vf(struct pf *pf, int vf_index, const struct pf_vf_config *cfg, enum retry retry)
{
	unsigned mask = cfg->mask & PF_VF_ALL;
	int ret, lock_fd = -1;

	if (vf_index < 0)
		return -EINVAL;
	ret = check_vf_config(cfg);
	if (ret < 0 || !mask)
		return ret;
	pf->refused = 0;
	ret = lock_for_request(pf, &lock_fd);
	if (ret < 0)
		return ret;
	/*
	 * One request for all: each request holds RTNL, and the PF's lock
	 * across the node's other VFs, so a VF's five settings as five
	 * requests queued the node's other netlink users five times.
	 */
	ret = set_fields(pf, vf_index, mask, cfg);
	if (ret < 0 && (mask & (mask - 1)) && retry != RETRY_NONE)
		ret = set_fields_one_by_one(pf, vf_index, mask, cfg, retry == RETRY_EACH);
	else if (ret < 0)
		pf->refused = mask;
	lock_release(lock_fd);
	return ret;
}

int pf_set(struct pf *pf, int vf_index, const struct pf_vf_config *cfg)
{
	return set_vf(pf, vf_index, cfg, RETRY_TO_REFUSED);
}

int pf_set_each(struct pf *pf, int vf_index, const struct pf_vf_config *cfg)
{
	return set_vf(pf, vf_index, cfg, RETRY_EACH);
}

int pf_set_once(struct pf *pf, int vf_index, const struct pf_vf_config *cfg)
{
	return set_vf(pf, vf_index, cfg, RETRY_NONE);
}

/*
 * After the one request was refused, or without it: all but the MAC, then
 * the MAC cleared. mlx4, and mlx5 before the check became a warning,
 * refuse an all-zero MAC while spoof checking is on ("MAC invalidation is
 * not allowed when spoofchk is on") and spoof checking on without a MAC,
 * and the kernel applies the MAC before spoof checking. So spoof checking
 * that is to stay on (cfg's, else the VF's as the PF reports it) goes off
 * with the rest and back on with the MAC cleared, whatever the driver
 * refused in between; or, where cfg has a MAC of its own (which its caller
 * pins next), cfg goes in as it is, that MAC in place of none.
 */
static int set_mac_cleared_apart(struct pf *pf, int vf_index, const struct pf_vf_config *cfg,
				 int (*set)(struct pf *, int, const struct pf_vf_config *))
{
	struct pf_vf_config c = *cfg, now;
	bool spoof_on = (cfg->mask & PF_VF_SPOOFCHK) ? cfg->spoofchk :
			pf_get(pf, vf_index, &now) == 0 && (now.mask & PF_VF_SPOOFCHK) && now.spoofchk;
	unsigned refused;
	int ret, r;

	if (spoof_on && (cfg->mask & PF_VF_MAC) && !pf_mac_unset(cfg->mac))
		return set(pf, vf_index, cfg);
	c.mask &= ~PF_VF_MAC;
	if (spoof_on) {
		c.mask |= PF_VF_SPOOFCHK;
		c.spoofchk = false;
	}
	ret = set(pf, vf_index, &c);
	refused = pf->refused;
	if (ret == -ENODEV || (ret < 0 && !spoof_on))
		return ret;
	c.mask = (ret == 0 ? PF_VF_MAC : 0) | (spoof_on ? PF_VF_SPOOFCHK : 0);
	memset(c.mac, 0, sizeof(c.mac));
	c.spoofchk = true;
	r = spoof_on ? pf_set_each(pf, vf_index, &c) : pf_set(pf, vf_index, &c);
	pf->refused |= refused;
	return ret < 0 ? ret : r;
}

int pf_set_mac_cleared(struct pf *pf, int vf_index, const struct pf_vf_config *cfg,
		       int (*set)(struct pf *, int, const struct pf_vf_config *))
{
	struct pf_vf_config c = *cfg;
	int ret, lock_fd;

	/* One hold of the lock for every request: no other VF's settings come between. */
	ret = lock_for_request(pf, &lock_fd);
	if (ret < 0)
		return ret;
	if (lock_fd >= 0)
		pf->held_fd = lock_fd;
	c.mask |= PF_VF_MAC;
	memset(c.mac, 0, sizeof(c.mac));
	if ((cfg->mask & PF_VF_SPOOFCHK) && !cfg->spoofchk) {
		ret = set_mac_cleared_apart(pf, vf_index, cfg, set);
	} else {
		ret = pf_set_once(pf, vf_index, &c);
		/* Gone: a second try would meet the same. */
		if (ret < 0 && ret != -ENODEV)
			ret = set_mac_cleared_apart(pf, vf_index, cfg, set);
	}
	if (lock_fd >= 0) {
		pf->held_fd = -1;
		lock_release(lock_fd);
	}
	return ret;
}

double pf_lock_waited_ms(const struct pf *pf)
{
	return pf->lock_waited_ms;
}

unsigned pf_refused(const struct pf *pf)
{
	return pf->refused;
}

bool pf_mac_unset(const uint8_t mac[6])
{
	static const uint8_t zero[6];

	return !memcmp(mac, zero, 6);
}

void pf_vf_config_default(struct pf_vf_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mask = PF_VF_MAC | PF_VF_VLAN | PF_VF_SPOOFCHK | PF_VF_TRUST | PF_VF_LINK_STATE |
		    PF_VF_RATE;
	cfg->vlan_proto = ETH_P_8021Q;
	cfg->link_state = IFLA_VF_LINK_STATE_AUTO;
}

/* ---- InfiniBand GUIDs ---- */

struct guid_ctx {
	int index;
	bool listed;			/* the VF was in the list */
	bool node, port;		/* which GUIDs it carried */
	struct pf_vf_guids *g;
};

/* The GUIDs of one IFLA_VF_INFO whose ifla_vf_guid names ctx->index. */
static void guid_info(const struct nlattr *info, struct guid_ctx *ctx)
{
	const struct nlattr *a;
	const struct ifla_vf_mac *m;
	struct ifla_vf_guid vg;
	bool ours = false;

	mnl_attr_for_each_nested(a, info) {
		uint16_t type = mnl_attr_get_type(a);

		if (type == IFLA_VF_MAC && (m = vf_payload(a, sizeof(*m))))
			ours = (int)m->vf == ctx->index;
		if (type != IFLA_VF_IB_NODE_GUID && type != IFLA_VF_IB_PORT_GUID)
			continue;
		/* A copy: attributes are 4-byte aligned, the u64 in it wants 8. */
		if (!vf_payload(a, sizeof(vg)))
			continue;
		memcpy(&vg, mnl_attr_get_payload(a), sizeof(vg));
		if ((int)vg.vf != ctx->index)
			continue;
		if (type == IFLA_VF_IB_NODE_GUID) {
			ctx->g->node = vg.guid;
			ctx->node = true;
		} else {
			ctx->g->port = vg.guid;
			ctx->port = true;
		}
	}
	if (ours)
		ctx->listed = true;
}

static int guid_cb(const struct nlmsghdr *nlh, void *data)
{
	struct guid_ctx *ctx = data;
	const struct nlattr *list, *info;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	list = link_msg_attr(nlh, IFLA_VFINFO_LIST);
	if (!list)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(info, list)
		if (mnl_attr_get_type(info) == IFLA_VF_INFO)
			guid_info(info, ctx);
	return MNL_CB_OK;
}

int pf_get_guids(struct pf *pf, int vf_index, struct pf_vf_guids *g)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct guid_ctx ctx = { .index = vf_index, .g = g };
	struct nlmsghdr *nlh;
	int ret;

	if (vf_index < 0)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	nlh = put_pf_hdr(buf, sizeof(buf), RTM_GETLINK, pf->name);
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS);
	ret = pf_xfer(pf, nlh, guid_cb, &ctx);
	if (ret < 0)
		return ret;
	if (ctx.node && ctx.port)
		return 0;
	return ctx.listed ? -ENODATA : -ENOENT;
}

int pf_set_guids(struct pf *pf, int vf_index, const struct pf_vf_guids *g)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifla_vf_guid node, port;
	struct nlmsghdr *nlh;
	struct nlattr *list, *info;
	int ret, lock_fd = -1;

	if (vf_index < 0)
		return -EINVAL;
	/* iproute2's struct has its padding zeroed: so has ours, the kernel gets all 16 bytes. */
	memset(&node, 0, sizeof(node));
	memset(&port, 0, sizeof(port));
	node.vf = port.vf = (uint32_t)vf_index;
	node.guid = g->node;
	port.guid = g->port;
	ret = lock_for_request(pf, &lock_fd);
	if (ret < 0)
		return ret;
	nlh = put_pf_hdr(buf, sizeof(buf), RTM_SETLINK, pf->name);
	list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
	info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
	mnl_attr_put(nlh, IFLA_VF_IB_NODE_GUID, sizeof(node), &node);
	mnl_attr_put(nlh, IFLA_VF_IB_PORT_GUID, sizeof(port), &port);
	mnl_attr_nest_end(nlh, info);
	mnl_attr_nest_end(nlh, list);
	/* iproute2's addattr_nest marks no nest NLA_F_NESTED: neither do we, to send what it sends. */
	list->nla_type &= (uint16_t)~NLA_F_NESTED;
	info->nla_type &= (uint16_t)~NLA_F_NESTED;
	ret = pf_xfer(pf, nlh, NULL, NULL);
	lock_release(lock_fd);
	return ret;
}
