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

static int vfcfg_refused(struct add_ctx *c, int ret, const struct pf_vf_config *asked,
			 struct cni_error *err)
{
	char what[96];

	sriov_vf_fields_format(pf_refused(c->pf), asked, what, sizeof(what));
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
		/* Some PFs refuse a MAC cleared under spoof checking (pf_set_mac_cleared). */
		cfg.mask = pf_mac_unset(c->rec.vf_orig.mac) ? 0 : PF_VF_MAC;
		mac_ret = cfg.mask ? pf_set(c->pf, c->vf.vf_index, &cfg) :
				     pf_set_mac_cleared(c->pf, c->vf.vf_index, &cfg, pf_set);
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
 * netdev's own there, held or not) is cleared first, for the same reason,
 * in the same request when the kernel's order allows (pf_set_mac_cleared);
 * an all-zero one (mlx5's "none") needs nothing.
 */
int add_vfcfg_run(struct add_ctx *c, struct cni_error *err)
{
	struct pf_vf_config cfg = c->conf.vf;
	int ret;

	if (!c->pf)
		return 0;
	cfg.mask &= ~PF_VF_MAC;
	/* With the configured MAC: what a PF that refuses the clear under spoof checking pins instead. */
	if ((c->conf.vf.mask & PF_VF_MAC) && (c->rec.vf_orig.mask & PF_VF_MAC) &&
	    !pf_mac_unset(c->rec.vf_orig.mac))
		ret = pf_set_mac_cleared(c->pf, c->vf.vf_index, &c->conf.vf, pf_set);
	else
		ret = pf_set(c->pf, c->vf.vf_index, &cfg);
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

/*
 * Released again, so that the netdev's undo can take its host MAC back
 * from its side. A PF that refuses the clear under spoof checking gets
 * spoof checking off and back on around it, or the MAC from before the
 * attachment, which the vf-config undo pins next, in place of none
 * (pf_set_mac_cleared).
 */
void add_vfmac_undo(struct add_ctx *c)
{
	struct pf_vf_config cfg = c->rec.vf_orig;
	int ret;

	if (!c->pf || !(c->conf.vf.mask & PF_VF_MAC))
		return;
	cfg.mask &= PF_VF_MAC;
	ret = pf_set_mac_cleared(c->pf, c->vf.vf_index, &cfg, pf_set);
	if (ret < 0)
		log_error("VF %s: cannot clear its MAC on PF %s: %s", c->vf.bdf, c->vf.pf_netdev,
			  strerror(-ret));
}
