/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The IPAM's ADD, delegated: an IPAM that never looks into the pod is
 * started before the moves and answers after them (sriov_ipam_overlaps).
 * An IPAM that ran gets its DEL, with the same config and arguments, when
 * the ADD fails: whatever it answered, it may have reserved an address.
 */
#include <errno.h>
#include <stdio.h>
#include "log.h"
#include "add.h"

void add_ipam_undo(struct add_ctx *c)
{
	struct cni_error del_err = { 0 };

	if (!c->conf.ipam_type ||
	    !cni_delegate(c->req, c->conf.ipam_type, CNI_CMD_DEL, NULL, &del_err))
		return;
	log_error("ipam %s DEL: %s; the record stays for DEL to release the address",
		  c->conf.ipam_type, del_err.msg);
	c->ipam_unreleased = true;
	snprintf(c->ipam_del_msg, sizeof(c->ipam_del_msg), "%s", del_err.msg);
}

/* Started before the moves, for an IPAM that does not need the netdev in the pod. */
int add_ipam_spawn_run(struct add_ctx *c, struct cni_error *err)
{
	if (!c->conf.ipam_type || !sriov_ipam_overlaps(c->conf.ipam_type))
		return 0;
	return cni_delegate_start(c->req, c->conf.ipam_type, CNI_CMD_ADD, &c->ipam_d, err) ? -EIO : 0;
}

/* A step between failed: the IPAM may have reserved an address by now, if it ran. */
void add_ipam_spawn_undo(struct add_ctx *c)
{
	if (c->ipam_d.pid <= 0)
		return;
	cni_delegate_abandon(&c->ipam_d);
	if (c->ipam_d.ran)
		add_ipam_undo(c);
}

int add_ipam_run(struct add_ctx *c, struct cni_error *err)
{
	if (!c->conf.ipam_type)
		return 0;
	if (c->ipam_d.pid <= 0 &&
	    cni_delegate_start(c->req, c->conf.ipam_type, CNI_CMD_ADD, &c->ipam_d, err))
		return -EIO;
	if (cni_delegate_finish(&c->ipam_d, &c->ipam, err)) {
		/* Failed after reserving, killed, or an answer that is no result: its DEL first. */
		if (c->ipam_d.ran)
			add_ipam_undo(c);
		return -EIO;
	}
	if (c->ipam.n_ips < 1) {
		add_ipam_undo(c);
		cni_errorf(err, CNI_ERR_PLUGIN, "ipam %s returned no IP address", c->conf.ipam_type);
		cni_error_details(err, "a pool must give each attachment an address: check the ipam section");
		return -EINVAL;
	}
	return 0;
}
