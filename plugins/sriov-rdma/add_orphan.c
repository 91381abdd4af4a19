/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ADD finding its VF held by an earlier sandbox of the same pod that the
 * runtime forgot: a runtime killed while ADD ran never sends that
 * sandbox's DEL, and every later sandbox of the pod would be refused the
 * VF for good. Such a sandbox is recognised by facts, never by age: the
 * same pod UID (K8S_POD_UID) on both sides, the same interface, another
 * container, and no process left in its namespace, which a runtime pins
 * and keeps after its pause process is gone. It is then released as its
 * DEL would have, address included, and the ADD goes on. Never across
 * pods, never while a process lives there; the decision and the release
 * are under the VF's lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "netns.h"
#include "add.h"
#include "release.h"

/* Why the holder is not a forgotten sandbox of this pod, into why; NULL when it is. */
static const char *not_forgotten(struct add_ctx *c, const char *uid, char *why, size_t len)
{
	const struct claim_owner *o = &c->claim.owner;
	const struct sriov_record *old = &c->old;
	char name[512];
	pid_t pid;
	int ret;

	if (!uid)
		return "this ADD names no pod (no K8S_POD_UID in CNI_ARGS)";
	if (!o->container_id[0])
		return "its in-use marker names no container (an older version's)";
	if (strcmp(o->ifname, c->req->env.ifname))
		return "it is another interface";
	sriov_record_name(o->container_id, o->ifname, name, sizeof(name));
	ret = sriov_record_read(c->state_fd, name, &c->old);
	c->old_newer = ret == -EPROTO;
	if (c->old_newer)
		return "its record is a newer release's";
	if (ret < 0 || strcmp(old->bdf, c->vf.bdf) || strcmp(old->netns, o->netns))
		return "its record is missing or unreadable";
	if (!old->pod_uid[0])
		return "its record names no pod";
	if (strcmp(old->pod_uid, uid))
		return "it is another pod's";
	ret = netns_find_process(c->conf.paths.proc_root, o->netns, &o->netns_id, &pid);
	if (ret == 1)
		snprintf(why, len, "process %d lives in its namespace", (int)pid);
	else if (ret < 0)
		snprintf(why, len, "cannot tell whether a process lives in its namespace "
			 "(%s/*/task/*/ns/net): %s", c->conf.paths.proc_root, strerror(-ret));
	return ret == 0 ? NULL : why;
}

bool add_orphan_found(struct add_ctx *c)
{
	const char *uid = cni_env_arg(&c->req->env, "K8S_POD_UID");
	const char *reason;
	char why[PATH_MAX + 128], who[4400];

	if (uid && !sriov_pod_field_ok(uid))
		uid = NULL;
	reason = not_forgotten(c, uid, why, sizeof(why));
	if (!reason)
		return true;
	claim_owner_format(&c->claim.owner, who, sizeof(who));
	log_info("VF %s: held by %s, not taken over: %s", c->vf.bdf, who, reason);
	return false;
}

int add_orphan_take(struct add_ctx *c, struct cni_error *err)
{
	const struct sriov_record *old = &c->old;
	struct cni_error why = { 0 };
	char who[4400];

	claim_owner_format(&c->claim.owner, who, sizeof(who));
	log_warn("VF %s: taking over from %s, an earlier sandbox of pod %s/%s (uid %s) whose "
		 "namespace holds no process: its runtime forgot it without a DEL; releasing it as "
		 "its DEL would", c->vf.bdf, who, old->pod_namespace, old->pod_name, old->pod_uid);
	if (sriov_release_ipam(c->req, c->state_fd, old, c->conf.ipam_type, who, err))
		return -EIO;
	if (sriov_release_locked(old, old->netns, c->state_fd, &c->claim, &c->conf.paths, NULL,
				 &why) == 0)
		return 0;
	cni_errorf(err, why.code, "deviceID %s: cannot release the VF from %s: %s", c->vf.bdf, who,
		   why.msg);
	return -EIO;
}
