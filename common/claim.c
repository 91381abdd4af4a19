/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claim: which attachment holds a VF, as a lock and an in-use marker in
 * the state directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "valid.h"
#include "claim.h"
#include "lock.h"
#include "netns.h"
#include "state.h"

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

static int owner_from_json(const cJSON *o, struct claim_owner *w)
{
	const cJSON *mac = cJSON_GetObjectItemCaseSensitive(o, "hostMac");
	double mtu, idx, ns_dev, ns_ino;

	memset(w, 0, sizeof(*w));
	if (!cJSON_IsObject(o) ||
	    !json_str(o, "containerID", w->container_id, sizeof(w->container_id), true) ||
	    !json_str(o, "ifname", w->ifname, sizeof(w->ifname), true) ||
	    !json_str(o, "netns", w->netns, sizeof(w->netns), true) ||
	    !json_str(o, "hostIfname", w->host_ifname, sizeof(w->host_ifname), false) ||
	    !json_str(o, "rdmaDevice", w->rdma_dev, sizeof(w->rdma_dev), false) ||
	    !json_int(o, "hostMtu", 0, 65535, &mtu) || !json_int(o, "rdmaIndex", 0, UINT32_MAX, &idx) ||
	    !json_int(o, "netnsDev", 0, NETNS_ID_MAX, &ns_dev) ||
	    !json_int(o, "netnsIno", 0, NETNS_ID_MAX, &ns_ino))
		return -EBADMSG;
	if (mac && (!cJSON_IsString(mac) || valid_mac_parse(mac->valuestring, w->host_mac) < 0))
		return -EBADMSG;
	w->host_mtu = (int)mtu;
	w->rdma_index = (uint32_t)idx;
	w->netns_id.dev = (uint64_t)ns_dev;
	w->netns_id.ino = (uint64_t)ns_ino;
	/* What DEL may act on: names the kernel and the CNI spec accept. */
	if (!valid_container_id(w->container_id) || !valid_ifname(w->ifname) ||
	    !valid_netns_path(w->netns) ||
	    (w->host_ifname[0] && !valid_ifname(w->host_ifname)))
		return -EBADMSG;
	return 0;
}

static cJSON *owner_to_json(const struct claim_owner *w)
{
	cJSON *o = cJSON_CreateObject();
	char mac[18];

	valid_mac_format(w->host_mac, mac);
	if (!o || state_version_put(o, CLAIM_MARKER_VERSION) < 0 ||
	    !cJSON_AddStringToObject(o, "containerID", w->container_id) ||
	    !cJSON_AddStringToObject(o, "ifname", w->ifname) ||
	    !cJSON_AddStringToObject(o, "netns", w->netns) ||
	    !cJSON_AddStringToObject(o, "hostIfname", w->host_ifname) ||
	    !cJSON_AddStringToObject(o, "hostMac", mac) ||
	    !cJSON_AddNumberToObject(o, "hostMtu", w->host_mtu) ||
	    !cJSON_AddStringToObject(o, "rdmaDevice", w->rdma_dev) ||
	    !cJSON_AddNumberToObject(o, "rdmaIndex", w->rdma_index) ||
	    (netns_id_known(&w->netns_id) &&
	     (!cJSON_AddNumberToObject(o, "netnsDev", (double)w->netns_id.dev) ||
	      !cJSON_AddNumberToObject(o, "netnsIno", (double)w->netns_id.ino)))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/*
 * The marker as it is now. Versions before attachments were recorded in it
 * wrote the owner's netns path alone: such a marker still names its owner,
 * by namespace only. One of a newer version is not read further.
 */
static void marker_read(struct claim *claim)
{
	char *data = NULL;
	cJSON *o = NULL;
	size_t len;
	int ret;

	memset(&claim->owner, 0, sizeof(claim->owner));
	memset(&claim->written, 0, sizeof(claim->written));
	claim->written.version = 1;
	claim->marker = CLAIM_MARKER_UNREADABLE;
	ret = state_read(claim->dirfd, claim->bdf, &data, &len, MARKER_MAX);
	if (ret == -ENOENT) {
		claim->marker = CLAIM_MARKER_NONE;
		return;
	}
	if (ret < 0)
		return;
	if (data[0] == '/' && !strchr(data, '{')) {
		while (len && data[len - 1] == '\n')
			data[--len] = '\0';
		if (valid_netns_path(data)) {
			strcpy(claim->owner.netns, data);
			claim->marker = CLAIM_MARKER_READ;
		}
	} else if (state_unseal(data, &len) == 0 && (o = cJSON_ParseWithLength(data, len)) &&
		   cJSON_IsObject(o)) {
		ret = state_version_get(o, CLAIM_MARKER_VERSION, false, &claim->written);
		if (ret == -EPROTO)
			claim->marker = CLAIM_MARKER_NEWER;
		else if (ret == 0 && owner_from_json(o, &claim->owner) == 0)
			claim->marker = CLAIM_MARKER_READ;
	}
	if (claim->marker != CLAIM_MARKER_READ)
		memset(&claim->owner, 0, sizeof(claim->owner));
	cJSON_Delete(o);
	free(data);
}

int claim_lock(int dirfd, const char *bdf, unsigned timeout_ms, struct claim *claim)
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
	ret = lock_take_waited(dirfd, name, timeout_ms, &claim->waited_ms);
	if (ret < 0)
		return ret;
	claim->lock_fd = ret;
	marker_read(claim);
	return 0;
}

bool claim_held_by(const struct claim *claim, const struct claim_owner *me)
{
	const struct claim_owner *o = &claim->owner;

	if (claim->marker != CLAIM_MARKER_READ)
		return false;
	if (!o->container_id[0])
		return strcmp(o->netns, me->netns) == 0;
	return strcmp(o->container_id, me->container_id) == 0 && strcmp(o->ifname, me->ifname) == 0;
}

bool claim_busy(const struct claim *claim, const struct claim_owner *me)
{
	/*
	 * A claim belongs to an attachment, not to a pod: another interface of
	 * the same pod is refused too. One whose namespace is gone is what a
	 * missed DEL leaves: taken over.
	 */
	if (claim->marker == CLAIM_MARKER_NEWER)
		return true;
	return claim->marker == CLAIM_MARKER_READ && !claim_held_by(claim, me) &&
	       netns_alive(claim->owner.netns, &claim->owner.netns_id);
}

int claim_take(int dirfd, const char *bdf, const struct claim_owner *me, unsigned timeout_ms,
		  struct claim *claim)
{
	int ret;

	ret = claim_lock(dirfd, bdf, timeout_ms, claim);
	if (ret < 0)
		return ret;
	if (claim_busy(claim, me)) {
		claim_release(claim);
		return -EBUSY;
	}
	return 0;
}

int claim_mark(struct claim *claim, const struct claim_owner *owner)
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
		claim->marker = CLAIM_MARKER_READ;
		claim->owner = *owner;
	}
	return ret;
}

int claim_clear(struct claim *claim, const struct claim_owner *me)
{
	int ret;

	if (claim->lock_fd < 0)
		return -EBADF;
	marker_read(claim);
	if (claim->marker == CLAIM_MARKER_NONE)
		return 0;
	/* One that cannot be read holds nothing (ADD takes it over): not worth keeping. */
	if ((claim->marker == CLAIM_MARKER_READ && !claim_held_by(claim, me)) ||
	    claim->marker == CLAIM_MARKER_NEWER)
		return -EBUSY;
	ret = state_remove(claim->dirfd, claim->bdf);
	if (ret == 0) {
		claim->marker = CLAIM_MARKER_NONE;
		memset(&claim->owner, 0, sizeof(claim->owner));
	}
	return ret;
}

void claim_release(struct claim *claim)
{
	lock_release(claim->lock_fd);
	claim->lock_fd = -1;
}

void claim_owner_format(const struct claim_owner *o, char *out, size_t len)
{
	if (o->container_id[0])
		snprintf(out, len, "%s (container %s, interface %s)", o->netns, o->container_id,
			 o->ifname);
	else
		snprintf(out, len, "%s", o->netns);
}
