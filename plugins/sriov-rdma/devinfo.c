/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device-info file (device-info-spec 1.1.0) that runtimeConfig's
 * CNIDeviceInfoFile names: ADD writes it, or takes over the device plugin's
 * copy for the VF that Multus put there, and DEL removes what ADD wrote or
 * puts the copy back. A file anyone else put at the path is never touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cni.h"
#include "file.h"
#include "ib.h"
#include "log.h"
#include "policy.h"
#include "state.h"
#include "sriov.h"

int sriov_devinfo_validate(const char *path, char resolved[PATH_MAX], struct cni_error *err)
{
	const char *problem = valid_abs_path_problem(path);
	char why[768];

	if (!problem && path[strlen(path) - 1] == '/')
		problem = "ends in \"/\": it names a directory, and a file path is wanted";
	if (problem) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "runtimeConfig.CNIDeviceInfoFile: \"%s\" %s",
			   path, problem);
		return -EINVAL;
	}
	if (policy_resolve(POLICY_DEVINFO, path, resolved, PATH_MAX, why, sizeof(why)) < 0) {
		cni_errorf(err, CNI_ERR_INVALID_CONFIG, "runtimeConfig.CNIDeviceInfoFile: %s", why);
		return -EPERM;
	}
	return 0;
}

/*
 * Split into an opened parent directory and the base name. The path was
 * resolved by the policy: no symlink above the allowed directory, and
 * none is followed below it. Only a write creates the directories.
 */
static int devinfo_open_parent(const char *path, bool create, int *dirfd, const char **base)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len = (size_t)(slash - path);

	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len);
	dir[len] = '\0';
	*base = slash + 1;
	if (!create)
		return state_dir_open_existing(len ? dir : "/", dirfd);
	return state_dir_open(len ? dir : "/", dirfd);
}

/*
 * The device plugin's copy, or nothing: read without following a symlink
 * or blocking on a FIFO, and classified before anything on the host changes.
 */
int sriov_devinfo_inspect(const char *path, const char *bdf, struct sriov_devinfo_prior *prior,
			  char *other, size_t other_len)
{
	const cJSON *type, *addr;
	const char *base;
	struct stat st;
	cJSON *o = NULL;
	int dirfd, ret;

	memset(prior, 0, sizeof(*prior));
	ret = devinfo_open_parent(path, false, &dirfd, &base);
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		ret = errno == ENOENT ? 0 : -errno;
		goto out;
	}
	if (S_ISLNK(st.st_mode)) {
		ret = -ELOOP;
		goto out;
	}
	ret = file_read_alloc(dirfd, base, O_NOFOLLOW | O_NONBLOCK, SRIOV_DEVINFO_MAX,
			      &prior->text, &prior->len);
	if (ret == -EISDIR)
		ret = -EINVAL;
	if (ret < 0)
		goto out;
	prior->mode = st.st_mode & 0777;
	o = cJSON_ParseWithLength(prior->text, prior->len);
	type = cJSON_GetObjectItemCaseSensitive(o, "type");
	addr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "pci"),
						"pci-address");
	ret = -EBADMSG;
	if (!cJSON_IsString(type) || strcmp(type->valuestring, "pci") || !cJSON_IsString(addr))
		goto out;
	ret = 0;
	/* The device plugin writes the address as sysfs names it; Multus copies it as it is. */
	if (strcasecmp(addr->valuestring, bdf)) {
		snprintf(other, other_len, "%s", addr->valuestring);
		ret = -EXDEV;
	}
out:
	if (ret < 0 || !prior->text) {
		free(prior->text);
		memset(prior, 0, sizeof(*prior));
	}
	cJSON_Delete(o);
	close(dirfd);
	return ret;
}

/* Set o[key] to the string val, where it stands or at the end. */
static bool devinfo_set(cJSON *o, const char *key, const char *val)
{
	cJSON *s;

	if (!cJSON_GetObjectItemCaseSensitive(o, key))
		return cJSON_AddStringToObject(o, key, val) != NULL;
	s = cJSON_CreateString(val);
	return s && cJSON_ReplaceItemInObjectCaseSensitive(o, key, s);
}

/*
 * Beside the spec's "pci", which keeps its members: the device-info spec
 * has no InfiniBand device, and its readers (Multus, net-attach-def-client)
 * decode the members they know and pass over the others.
 */
static bool devinfo_add_ib(cJSON *o, const struct sriov_ib_rec *ib)
{
	/* The VF keeps its own GUIDs unless ADD gives it others. */
	const struct pf_vf_guids *g = ib->applied.node || ib->applied.port ? &ib->applied :
									      &ib->orig;
	char node[IB_GUID_STR_LEN], port[IB_GUID_STR_LEN], pkey[8];
	cJSON *i;

	cJSON_DeleteItemFromObjectCaseSensitive(o, "infiniband");
	i = cJSON_AddObjectToObject(o, "infiniband");
	ib_guid_format(g->node, node);
	ib_guid_format(g->port, port);
	snprintf(pkey, sizeof(pkey), "0x%04x", ib->pkey);
	return i && (!ib->has_pkey || cJSON_AddStringToObject(i, "pkey", pkey)) &&
	       cJSON_AddStringToObject(i, "port-guid", port) &&
	       cJSON_AddStringToObject(i, "node-guid", node);
}

int sriov_devinfo_text(const char *base, const char *bdf, const char *pf_bdf,
		       const char *rdma_dev, const struct sriov_ib_rec *ib, char *out, size_t len)
{
	cJSON *o, *pci;
	char *text = NULL;
	int ret = -ENOMEM;

	o = base ? cJSON_Parse(base) : cJSON_CreateObject();
	if (!o || !cJSON_IsObject(o)) {
		ret = o ? -EBADMSG : ret;
		goto out;
	}
	if (!base && (!cJSON_AddStringToObject(o, "type", "pci") ||
		      !cJSON_AddStringToObject(o, "version", "1.1.0")))
		goto out;
	pci = cJSON_GetObjectItemCaseSensitive(o, "pci");
	if (!cJSON_IsObject(pci)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "pci");
		pci = cJSON_AddObjectToObject(o, "pci");
	}
	if (!pci || !devinfo_set(pci, "pci-address", bdf) ||
	    (pf_bdf[0] && !devinfo_set(pci, "pf-pci-address", pf_bdf)) ||
	    /*
	     * The name the pod sees, which the device plugin's copy cannot know
	     * after a rename; where this plugin knows none, the copy's stands.
	     */
	    (rdma_dev && rdma_dev[0] && !devinfo_set(pci, "rdma-device", rdma_dev)) ||
	    (ib && ib->ib && !devinfo_add_ib(o, ib)))
		goto out;
	text = cJSON_PrintUnformatted(o);
	if (!text)
		goto out;
	ret = -ENAMETOOLONG;
	if (strlen(text) >= len)
		goto out;
	memcpy(out, text, strlen(text) + 1);
	ret = 0;
out:
	free(text);
	cJSON_Delete(o);
	return ret;
}

/* Does name in dirfd hold exactly text? 1 yes, 0 no, -ENOENT gone, -errno. */
static int devinfo_holds(int dirfd, const char *name, const char *text, size_t len)
{
	char *data = NULL;
	size_t n;
	int ret;

	ret = file_read_alloc(dirfd, name, O_NOFOLLOW | O_NONBLOCK, STATE_MAX_FILE, &data, &n);
	if (ret == -ELOOP || ret == -EISDIR || ret == -EINVAL || ret == -EFBIG)
		return 0;
	if (ret < 0)
		return ret;
	ret = n == len && !memcmp(data, text, len);
	free(data);
	return ret;
}

/* ".tmp.<pid>.<n>": the form the state directories' sweep knows. */
static void devinfo_tmp_name(char tmp[NAME_MAX + 1], unsigned n)
{
	snprintf(tmp, NAME_MAX + 1, ".tmp.%d.%u", (int)getpid(), n);
}

/* A file this process wrote: name is that inode (st), holding text exactly. */
struct devinfo_own {
	dev_t dev;
	ino_t ino;
	const char *text;
	size_t len;
};

/* Is name in dirfd still own's file, as it was written? */
static bool devinfo_is_own(int dirfd, const char *name, const struct devinfo_own *own)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == own->dev &&
	       st.st_ino == own->ino && devinfo_holds(dirfd, name, own->text, own->len) > 0;
}

/*
 * Text into a temporary of a name no one else uses (O_EXCL), of the form
 * the state directories' sweep knows: one a killed ADD leaves goes with the
 * next ADD that opens the directory. own says which file it is.
 */
static int devinfo_tmp(int dirfd, const char *text, size_t len, mode_t mode,
		       char tmp[NAME_MAX + 1], struct devinfo_own *own)
{
	static unsigned counter;
	struct stat st;
	int fd, ret;

	do {
		devinfo_tmp_name(tmp, counter++);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	} while (fd < 0 && errno == EEXIST && counter < 64);
	if (fd < 0)
		return -errno;
	ret = write(fd, text, len) == (ssize_t)len ? 0 : (errno ? -errno : -EIO);
	/* The umask does not apply to the device plugin's mode, which is kept. */
	if (ret == 0 && fchmod(fd, mode) < 0)
		ret = -errno;
	if (ret == 0 && fstat(fd, &st) < 0)
		ret = -errno;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret < 0) {
		unlinkat(dirfd, tmp, 0);
		return ret;
	}
	*own = (struct devinfo_own){ .dev = st.st_dev, .ino = st.st_ino, .text = text, .len = len };
	return 0;
}

/*
 * A file another writer put at name, left under tmp by a move that could
 * not put it back: kept beside the path under a name no sweep and no
 * later move takes (".<name>.kept.<pid>.<n>", never replacing one), and
 * said so. Only where even that fails does it stay under tmp.
 */
static void devinfo_keep(int dirfd, const char *tmp, const char *name)
{
	char kept[NAME_MAX + 1];
	unsigned n;
	int ret = -EEXIST;

	for (n = 0; n < 64 && ret == -EEXIST; n++) {
		snprintf(kept, sizeof(kept), ".%.200s.kept.%d.%u", name, (int)getpid(), n);
		ret = renameat2(dirfd, tmp, dirfd, kept, RENAME_NOREPLACE) < 0 ? -errno : 0;
	}
	if (ret == 0)
		log_warn("device-info file %s: two other writers put files there at once: one is "
			 "at the path, the other kept beside it as %s", name, kept);
	else
		log_warn("device-info file %s: two other writers put files there at once: one is "
			 "at the path, the other left as %s (%s)", name, tmp, strerror(-ret));
}

/*
 * tmp holds a file another writer put at name, which came out of the path
 * in an exchange with own's file: it goes back, and what comes out is
 * removed only when it is own's. A second writer's file that took the path
 * since is kept beside it; a path emptied since gets the first one back.
 */
static void devinfo_put_back(int dirfd, const char *tmp, const char *name,
			     const struct devinfo_own *own)
{
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0) {
		if (devinfo_is_own(dirfd, tmp, own))
			unlinkat(dirfd, tmp, 0);
		else
			devinfo_keep(dirfd, tmp, name);
		return;
	}
	if (errno == ENOENT && renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
		return;
	devinfo_keep(dirfd, tmp, name);
}

/*
 * own's file (under tmp) in name's place, where name still holds expect
 * (NULL: where nothing stands; link(2) never replaces). Exchanged, not
 * renamed over: what a writer put there since the caller looked comes back
 * out under tmp, is checked, and goes back in place of ours when it is not
 * what was expected (-EEXIST). A rename never follows a symlink. A
 * filesystem without the exchange gets a plain rename, after the caller's
 * check. Nothing is left under tmp but a file kept beside the path.
 */
static int devinfo_swap_in(int dirfd, const char *tmp, const char *name,
			   const struct devinfo_own *own, const char *expect, size_t expect_len)
{
	int ret;

	if (!expect || renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) < 0) {
		/* Gone since: made anew, where nothing may have come in the meantime. */
		if (!expect || errno == ENOENT)
			ret = linkat(dirfd, tmp, dirfd, name, 0) < 0 ? -errno : 0;
		else if (errno == EINVAL || errno == ENOSYS)
			return renameat(dirfd, tmp, dirfd, name) < 0 ? -errno : 0;
		else
			ret = -errno;
		unlinkat(dirfd, tmp, 0);
		return ret;
	}
	ret = devinfo_holds(dirfd, tmp, expect, expect_len);
	if (ret > 0)
		return unlinkat(dirfd, tmp, 0) < 0 ? -errno : 0;
	/* Someone else's: back where it was, ours out again. */
	devinfo_put_back(dirfd, tmp, name, own);
	return ret < 0 ? ret : -EEXIST;
}

static int devinfo_put(int dirfd, const char *name, const char *text, size_t len, mode_t mode,
		       const char *expect, size_t expect_len)
{
	struct devinfo_own own;
	char tmp[NAME_MAX + 1];
	int ret;

	ret = devinfo_tmp(dirfd, text, len, mode, tmp, &own);
	if (ret < 0)
		return ret;
	/* Lives on a tmpfs (/run) in every runtime; nothing to make durable. */
	return devinfo_swap_in(dirfd, tmp, name, &own, expect, expect_len);
}

/*
 * Over the device plugin's copy only while it is still the one ADD
 * looked at: a file put there since is someone else's, and stays.
 */
int sriov_devinfo_write(const char *path, const char *text, const struct sriov_devinfo_prior *prior)
{
	bool over = prior && prior->text;
	const char *base;
	int dirfd, ret;

	ret = devinfo_open_parent(path, true, &dirfd, &base);
	if (ret < 0)
		return ret;
	if (over) {
		ret = devinfo_holds(dirfd, base, prior->text, prior->len);
		if (ret == 0)
			ret = -EEXIST;
		/* Gone since: made anew, where nothing may have come in the meantime. */
		if (ret == -ENOENT)
			over = false;
		if (ret == -ENOENT || ret > 0)
			ret = 0;
	}
	if (ret == 0)
		ret = devinfo_put(dirfd, base, text, strlen(text), over ? prior->mode : 0644,
				  over ? prior->text : NULL, over ? prior->len : 0);
	close(dirfd);
	return ret;
}

/*
 * Removed only while it holds text (NULL: whatever it holds): moved out of
 * the path under a name of this process first (never over anything),
 * checked there, and moved back when a writer put another file there
 * since it was looked at; kept beside the path when a second writer took
 * the path in between.
 */
static int devinfo_take_away(int dirfd, const char *name, const char *text)
{
	char tmp[NAME_MAX + 1];
	unsigned n;
	int ret = -EEXIST;

	for (n = 0; n < 64 && ret == -EEXIST; n++) {
		devinfo_tmp_name(tmp, 1000 + n);
		ret = renameat2(dirfd, name, dirfd, tmp, RENAME_NOREPLACE) < 0 ? -errno : 0;
	}
	/* A filesystem without RENAME_NOREPLACE: removed after the caller's check. */
	if (ret == -EINVAL || ret == -ENOSYS)
		return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
	if (ret < 0)
		return ret;
	ret = text ? devinfo_holds(dirfd, tmp, text, strlen(text)) : 1;
	if (ret > 0)
		return unlinkat(dirfd, tmp, 0) < 0 ? -errno : 0;
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) < 0)
		devinfo_keep(dirfd, tmp, name);
	return ret < 0 ? ret : -EPERM;
}

/*
 * Only the file this plugin wrote: reached without a symlink, holding
 * exactly the text ADD recorded. Anything else at the path is someone
 * else's. A record of an older version has no text: its file goes only if
 * it names this VF.
 */
int sriov_devinfo_remove(const char *path, const char *text, const char *bdf,
			 const struct sriov_devinfo_prior *prior)
{
	char resolved[PATH_MAX], *data = NULL;
	struct cni_error err = { 0 };
	const cJSON *addr;
	const char *base;
	cJSON *o = NULL;
	size_t len;
	int dirfd, ret;

	if (sriov_devinfo_validate(path, resolved, &err) < 0)
		return -EPERM;
	ret = devinfo_open_parent(resolved, false, &dirfd, &base);
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;
	if (text && text[0]) {
		ret = devinfo_holds(dirfd, base, text, strlen(text));
		if (ret == 0)
			ret = -EPERM;
		else if (ret > 0)
			ret = 0;
	} else {
		ret = state_read(dirfd, base, &data, &len, STATE_MAX_FILE);
		if (ret < 0)
			goto out;
		o = cJSON_ParseWithLength(data, len);
		addr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "pci"),
							"pci-address");
		ret = cJSON_IsString(addr) && !strcmp(addr->valuestring, bdf) ? 0 : -EPERM;
	}
	if (ret == 0 && prior && prior->text)
		ret = devinfo_put(dirfd, base, prior->text, prior->len, prior->mode,
				  text && text[0] ? text : NULL, text ? strlen(text) : 0);
	else if (ret == 0)
		ret = devinfo_take_away(dirfd, base, text && text[0] ? text : NULL);
out:
	cJSON_Delete(o);
	free(data);
	close(dirfd);
	return ret == -ENOENT ? 0 : ret;
}
