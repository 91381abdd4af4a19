/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The VF's properties on its PF (vlan, rate, spoof check, trust, link
 * state, MAC): set in two steps, the MAC once the netdev carries it, and
 * put back as the PF held them before.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_ether.h>
#include "log.h"
#include "add.h"

/* The config's words for one PF_VF_* field, for the error naming what a driver refused. */
static void vf_field_format(unsigned field, const struct pf_vf_config *v, char *buf, size_t len)
{
	static const char *const states[] = { "auto", "enable", "disable" };

	switch (field) {
	case PF_VF_MAC:
		snprintf(buf, len, "mac %02x:%02x:%02x:%02x:%02x:%02x", v->mac[0], v->mac[1],
			 v->mac[2], v->mac[3], v->mac[4], v->mac[5]);
		break;
	case PF_VF_VLAN:
		snprintf(buf, len, "vlan %d, vlanQoS %d, vlanProto %s", v->vlan, v->qos,
			 v->vlan_proto == ETH_P_8021AD ? "802.1ad" : "802.1q");
		break;
	case PF_VF_RATE:
		snprintf(buf, len, "min_tx_rate %u, max_tx_rate %u", v->min_tx_rate, v->max_tx_rate);
		break;
	case PF_VF_SPOOFCHK:
		snprintf(buf, len, "spoofchk %s", v->spoofchk ? "on" : "off");
		break;
	case PF_VF_TRUST:
		snprintf(buf, len, "trust %s", v->trust ? "on" : "off");
		break;
	case PF_VF_LINK_STATE:
		snprintf(buf, len, "link_state %s", v->link_state >= 0 && v->link_state < 3 ?
			 states[v->link_state] : "?");
		break;
	default:
		snprintf(buf, len, "settings");
	}
}

void sriov_vf_fields_format(unsigned mask, const struct pf_vf_config *v, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned bit = 1; bit <= PF_VF_ALL && n < len; bit <<= 1) {
		if (!(mask & bit))
			continue;
		if (n)
			n += (size_t)snprintf(buf + n, len - n, "; ");
		if (n < len)
			vf_field_format(bit, v, buf + n, len - n);
		n += strlen(buf + n);
	}
	if (!buf[0])
		vf_field_format(0, v, buf, len);
}

static int vfcfg_refused(struct add_ctx *c, int ret, const struct pf_vf_config *asked,
			 struct cni_error *err)
{
	char what[96];

	vf_field_format(pf_refused(c->pf), asked, what, sizeof(what));
	return cni_errorf(err, CNI_ERR_PLUGIN, "deviceID %s: PF %s (driver %s) refused VF %d's %s: %s",
			  c->vf.bdf, c->vf.pf_netdev, c->vf.pf_driver[0] ? c->vf.pf_driver : "unknown",
			  c->vf.vf_index, what, strerror(-ret));
}

/*
 * What the PF held before, every field the driver takes (one refused must
 * not leave the others as the pod had them), the MAC last and only where
 * the PF does not report it already: on igb a VF's own MAC shows on the PF
 * without being held, and holding it would refuse the VF's next change of
 * its own. What the driver refuses is named, and keeps the record and the
 * marker (add_record_undo): DEL, or the ADD that takes over the VF once
 * this pod is gone, puts it back before anyone takes it as the VF's own.
 */
void add_vfcfg_undo(struct add_ctx *c)
{
	struct pf_vf_config cfg = c->rec.vf_orig, now;
	unsigned refused = 0;
	int ret, mac_ret = 0;

	if (!c->pf)
		return;
	/* A field the driver refused in this ADD was never set (igb's link_state). */
	cfg.mask &= ~(PF_VF_MAC | c->vf_never_set);
	ret = cfg.mask ? pf_set_each(c->pf, c->vf.vf_index, &cfg) : 0;
	if (ret < 0)
		refused = pf_refused(c->pf) ? pf_refused(c->pf) : cfg.mask;
	/* Already as it was (a MAC the PF refused to take, say): nothing to ask. */
	if ((c->rec.vf_orig.mask & PF_VF_MAC) &&
	    (pf_get(c->pf, c->vf.vf_index, &now) < 0 || !(now.mask & PF_VF_MAC) ||
	     memcmp(now.mac, c->rec.vf_orig.mac, 6))) {
		cfg.mask = PF_VF_MAC;
		mac_ret = pf_set(c->pf, c->vf.vf_index, &cfg);
		if (mac_ret < 0)
			refused |= PF_VF_MAC;
	}
	ret = ret < 0 ? ret : mac_ret;
	if (!refused)
		return;
	c->vf_unrestored |= refused;
	sriov_vf_fields_format(c->vf_unrestored, &c->rec.vf_orig, c->unrestored_text,
			       sizeof(c->unrestored_text));
	log_error("VF %s: PF %s refused to restore its %s (%s): the record and the in-use marker "
		  "stay for DEL to finish", c->vf.bdf, c->vf.pf_netdev, c->unrestored_text,
		  strerror(-ret));
}

/*
 * Everything but the MAC, which the PF pins after the netdev took it from
 * its own side (add_vfmac_run): Intel PFs (igb, ixgbe) refuse a VF-side MAC
 * change while the PF holds an administrative MAC for the VF, even to the
 * same address. A MAC the PF reports for the VF already (igb shows the
 * netdev's own there, held or not) is cleared first, for the same reason;
 * an all-zero one (mlx5's "none") needs nothing.
 */
int add_vfcfg_run(struct add_ctx *c, struct cni_error *err)
{
	struct pf_vf_config cfg = c->conf.vf;
	int ret;

	if (!c->pf)
		return 0;
	cfg.mask &= ~PF_VF_MAC;
	ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	if (ret == 0 && (c->conf.vf.mask & PF_VF_MAC) && (c->rec.vf_orig.mask & PF_VF_MAC) &&
	    !pf_mac_unset(c->rec.vf_orig.mac)) {
		cfg.mask = PF_VF_MAC;
		memset(cfg.mac, 0, 6);
		ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	}
	if (ret < 0) {
		vfcfg_refused(c, ret, &cfg, err);
		c->vf_never_set = pf_refused(c->pf) & ~PF_VF_MAC;
		/* Some fields may be set already: undo them now, as this step's undo won't run. */
		add_vfcfg_undo(c);
		return -1;
	}
	return 0;
}

/* The configured MAC on the PF, once the netdev carries it. */
int add_vfmac_run(struct add_ctx *c, struct cni_error *err)
{
	struct pf_vf_config cfg = c->conf.vf;
	int ret;

	if (!c->pf || !(cfg.mask & PF_VF_MAC))
		return 0;
	cfg.mask = PF_VF_MAC;
	ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	return ret < 0 ? vfcfg_refused(c, ret, &cfg, err) : 0;
}

/* Released again, so that the netdev's undo can take its host MAC back from its side. */
void add_vfmac_undo(struct add_ctx *c)
{
	struct pf_vf_config cfg = { .mask = PF_VF_MAC };
	int ret;

	if (!c->pf || !(c->conf.vf.mask & PF_VF_MAC))
		return;
	ret = pf_set(c->pf, c->vf.vf_index, &cfg);
	if (ret < 0)
		log_error("VF %s: cannot clear its MAC on PF %s: %s", c->vf.bdf, c->vf.pf_netdev,
			  strerror(-ret));
}
