/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GC and STATUS (CNI 1.1).
 *
 * STATUS says 50 when ADD cannot work: no state directory, or rdma
 * "exclusive" on a kernel that cannot move RDMA devices.
 *
 * GC returns the VFs of attachments the runtime no longer knows to the
 * host and forgets them, then forwards to the IPAM. Without the
 * cni.dev/valid-attachments key nothing is released: a runtime that sends
 * none (cnitool gc) has not said which attachments are alive. The list
 * covers the attachments to this network only (the spec), and a runtime
 * with several networks GCs each with its own list: only records of this
 * network are collected, and one that names no network (an older
 * version's) is left to DEL. One this version cannot release (a newer
 * release's record or in-use marker, docs/upgrading.md) is left whole:
 * the IPAM's GC is told it is still valid, so its address stays too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "state.h"
#include "release.h"

static bool is_record_name(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && !strcmp(name + len - 5, ".json") && strchr(name, ':') &&
	       name[0] != '.';
}

struct gc_ctx {
	const char *network;
	struct cni_attachment *valid;
	int n_valid;
	struct sriov_paths paths;
	char state_dir[PATH_MAX];
	int dirfd;
	struct sriov_record rec;	/* the one record being looked at */
	cJSON *kept;			/* {containerID, ifname} of those left as they are, or NULL */
	bool kept_lost;			/* one of them could not be added (out of memory) */
};

/*
 * The attachment of record `name` ("<containerID>:<ifname>.json": ':' is in
 * neither), which this version leaves as it is, for the IPAM's valid list.
 */
static void keep(struct gc_ctx *c, const char *name)
{
	char cid[256], ifname[IFNAMSIZ];
	const char *colon = strchr(name, ':');
	size_t n = colon ? (size_t)(colon - name) : 0, m = colon ? strlen(colon + 1) - 5 : 0;
	cJSON *o;

	if (!colon || n >= sizeof(cid) || m >= sizeof(ifname))
		return;
	memcpy(cid, name, n);
	cid[n] = '\0';
	memcpy(ifname, colon + 1, m);
	ifname[m] = '\0';
	if (!c->kept)
		c->kept = cJSON_CreateArray();
	o = cJSON_CreateObject();
	if (!c->kept || !o || !cJSON_AddStringToObject(o, "containerID", cid) ||
	    !cJSON_AddStringToObject(o, "ifname", ifname) || !cJSON_AddItemToArray(c->kept, o)) {
		cJSON_Delete(o);
		c->kept_lost = true;
	}
}

static int collect(struct gc_ctx *c, struct cni_error *err)
{
	struct sriov_record *rec = &c->rec;
	struct cni_error one;
	struct dirent *de;
	DIR *dir;
	int fd, ret;

	fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return cni_errorf(err, CNI_ERR_IO, "stateDir: %s", strerror(errno));
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return cni_errorf(err, CNI_ERR_IO, "stateDir: %s", strerror(errno));
	}
	while ((de = readdir(dir)) != NULL) {
		if (!is_record_name(de->d_name))
			continue;
		ret = sriov_record_read(c->dirfd, de->d_name, rec);
		if (ret == -EPROTO) {
			/* Whose network it is, is not this version's to read: left, not an error. */
			memset(&one, 0, sizeof(one));
			sriov_record_newer(rec, c->state_dir, de->d_name, "left as it is, its address "
					   "too", &one);
			log_warn("GC: %s; %s", one.msg, one.details);
			keep(c, de->d_name);
			continue;
		}
		if (ret < 0) {
			log_warn("GC: skipping unreadable record %s: %s", de->d_name, strerror(-ret));
			continue;
		}
		if (!rec->network[0] || strcmp(rec->network, c->network) ||
		    cni_attachment_valid(c->valid, c->n_valid, rec->container_id, rec->ifname))
			continue;
		log_info("GC: %s:%s is no longer attached: releasing VF %s", rec->container_id,
			 rec->ifname, rec->bdf);
		memset(&one, 0, sizeof(one));
		ret = sriov_release_record(c->dirfd, de->d_name, &c->paths, rec, &one);
		if (ret == -EPROTO) {
			log_warn("GC: %s; %s", one.msg, one.details);
			keep(c, de->d_name);
			continue;
		}
		/* The spec: keep going past a failure; report the first one. */
		if (ret && one.code && !err->code)
			*err = one;
	}
	closedir(dir);
	return err->code ? -1 : 0;
}

#define VALID_KEY "cni.dev/valid-attachments"

/* The IPAM's GC, with what was left as it is added to the runtime's valid attachments. */
static int ipam_gc(struct cni_request *req, struct gc_ctx *c, const char *ipam,
		   struct cni_error *err)
{
	struct cni_request with_kept = *req;
	cJSON *conf, *valid, *it;
	char *text = NULL;
	bool ok;
	int ret;

	if (!c->kept && !c->kept_lost)
		return cni_delegate(req, ipam, CNI_CMD_GC, NULL, err);
	conf = cJSON_ParseWithLength(req->stdin_buf, req->stdin_len);
	valid = cJSON_CreateArray();
	ok = conf && valid && !c->kept_lost;
	/* CRI-O's null for a network without pods becomes a list of what is left. */
	cJSON_ArrayForEach(it, (ok ? cJSON_GetObjectItemCaseSensitive(conf, VALID_KEY) : NULL))
		ok = ok && cJSON_AddItemToArray(valid, cJSON_Duplicate(it, true));
	cJSON_ArrayForEach(it, (ok ? c->kept : NULL))
		ok = ok && cJSON_AddItemToArray(valid, cJSON_Duplicate(it, true));
	if (ok && cJSON_ReplaceItemInObjectCaseSensitive(conf, VALID_KEY, valid)) {
		valid = NULL;
		text = cJSON_PrintUnformatted(conf);
	}
	cJSON_Delete(valid);
	cJSON_Delete(conf);
	/* An entry lost would be an address released under a pod: no GC rather than that. */
	if (!text)
		return cni_errorf(err, CNI_ERR_PLUGIN, "GC: out of memory: the IPAM's GC is not run, "
				  "so that it releases no address this version leaves");
	with_kept.stdin_buf = text;
	with_kept.stdin_len = strlen(text);
	ret = cni_delegate(&with_kept, ipam, CNI_CMD_GC, NULL, err);
	free(text);
	return ret;
}

int sriov_cmd_gc(struct cni_request *req, struct cni_error *err)
{
	struct cni_error ipam_err = { 0 };
	struct gc_ctx *c;
	const char *ipam;
	int ret = -1;

	c = calloc(1, sizeof(*c));
	if (!c)
		return cni_errorf(err, CNI_ERR_PLUGIN, "out of memory");
	c->network = req->name ? req->name : "";
	c->n_valid = -1;
	c->dirfd = -1;
	if (sriov_state_dir(req, c->state_dir, sizeof(c->state_dir), err) ||
	    sriov_env_paths(&c->paths, err) ||
	    cni_gc_valid_attachments(req, &c->valid, &c->n_valid, err))
		goto out;
	if (c->n_valid >= 0) {
		ret = state_dir_open(c->state_dir, &c->dirfd);
		if (ret < 0)
			cni_errorf(err, CNI_ERR_IO, "stateDir %s: %s", c->state_dir, strerror(-ret));
		else
			collect(c, err);
	}
	ipam = sriov_ipam_type_to_release(req);
	if (ipam && ipam_gc(req, c, ipam, &ipam_err) && !err->code)
		*err = ipam_err;
	ret = 0;
out:
	if (c->dirfd >= 0)
		close(c->dirfd);
	cJSON_Delete(c->kept);
	free(c->valid);
	free(c);
	return ret < 0 || err->code ? -1 : 0;
}

int sriov_cmd_status(struct cni_request *req, struct cni_error *err)
{
	char state_dir[PATH_MAX];
	enum sriov_rdma_mode mode;
	struct sriov_paths paths;
	const char *ipam;
	int dirfd, ret;

	if (sriov_state_dir(req, state_dir, sizeof(state_dir), err) || sriov_env_paths(&paths, err) ||
	    sriov_rdma_mode(req, &mode, err))
		return -1;
	ret = state_dir_open(state_dir, &dirfd);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_NOT_AVAILABLE, "stateDir %s: %s: ADD cannot record "
				  "attachments", state_dir, strerror(-ret));
	close(dirfd);
	if (sriov_rdma_status(mode, err))
		return -1;
	ipam = sriov_ipam_type(req);
	if (ipam && cni_delegate(req, ipam, CNI_CMD_STATUS, NULL, err))
		return -1;
	return 0;
}
