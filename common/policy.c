/* SPDX-License-Identifier: Apache-2.0 */
#include "policy.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "state.h"
#include "valid.h"

#define NODE_CONFIG_MAX	65536

static const char *const keys[POLICY_N] = {
	"allowedStateDirs", "allowedDataDirs", "allowedLogDirs", "allowedDeviceInfoDirs",
	"allowedResolvConfDirs",
};

/* /var/run as well as /run: a path is matched as written first, without a realpath. */
static const char *const builtin[POLICY_N][4] = {
	{ "/var/lib/cni/sriov-rdma", "/run/cni/sriov-rdma", "/var/run/cni/sriov-rdma", NULL },
	{ "/var/lib/cni/pool-ipam", "/run/cni/pool-ipam", "/var/run/cni/pool-ipam", NULL },
	{ "/var/log/sriov-rdma-cni", NULL },
	{ "/var/run/k8s.cni.cncf.io/devinfo", "/run/k8s.cni.cncf.io/devinfo", NULL },
	/* Where resolv.conf files live: /etc/resolv.conf often links to systemd-resolved's. */
	{ "/etc", "/run/systemd/resolve", "/var/run/systemd/resolve", NULL },
};

struct node_policy {
	bool loaded;
	int err;			/* 0, or -errno of a node config that cannot be used */
	char msg[256];
	int n[POLICY_N];
	const char *dirs[POLICY_N][POLICY_MAX_DIRS];	/* into text */
	/*
	 * The directories one after another: every exec loads them, and a
	 * PATH_MAX slot each put every one on a page of its own, a page
	 * fault apiece (tens of microseconds on a virtual machine).
	 */
	size_t used;
	char text[POLICY_N * POLICY_MAX_DIRS * PATH_MAX];
};

static struct node_policy pol;

static int fail(int ret, const char *file, const char *what)
{
	pol.err = ret;
	snprintf(pol.msg, sizeof(pol.msg), "node config %s: %s", file, what);
	return ret;
}

static int add_dir(enum policy_dir k, const char *dir)
{
	size_t len = strlen(dir);

	if (pol.n[k] >= POLICY_MAX_DIRS)
		return -ENOSPC;
	if (!valid_abs_path(dir) || len >= PATH_MAX)
		return -EINVAL;
	while (len > 1 && dir[len - 1] == '/')
		len--;
	memcpy(pol.text + pol.used, dir, len);
	pol.text[pol.used + len] = '\0';
	pol.dirs[k][pol.n[k]++] = pol.text + pol.used;
	pol.used += len + 1;
	return 0;
}

static int load(void)
{
	const char *file = getenv(POLICY_NODE_CONFIG_ENV);
	struct state_version v;
	char *buf = NULL, why[200];
	const cJSON *arr, *it;
	cJSON *j = NULL;
	size_t len = 0;
	int k, i, ret = 0;

	if (pol.loaded)
		return pol.err;
	pol.loaded = true;
	for (k = 0; k < POLICY_N; k++)
		for (i = 0; builtin[k][i]; i++)
			add_dir(k, builtin[k][i]);
	if (!file || !*file)
		file = POLICY_NODE_CONFIG;
	/* Non-blocking and regular only: a FIFO here must not hang every pod's attach. */
	ret = file_read_alloc(AT_FDCWD, file, O_NONBLOCK, NODE_CONFIG_MAX, &buf, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret == -EISDIR || ret == -EINVAL || ret == -EFBIG)
		return fail(-EINVAL, file, "not a regular file of at most 64 KiB");
	if (ret == -ENOMEM)
		return fail(-ENOMEM, file, "out of memory");
	if (ret < 0)
		return fail(ret, file, strerror(-ret));
	j = cJSON_ParseWithLength(buf, len);
	if (!cJSON_IsObject(j)) {
		ret = fail(-EINVAL, file, "not a JSON object");
		goto out;
	}
	ret = state_version_get(j, POLICY_VERSION, false, &v);
	if (ret == -EBADMSG) {
		ret = fail(-EINVAL, file, "\"version\" is not a positive integer, or \"writtenBy\" "
			   "not a short string");
		goto out;
	}
	if (ret == -EPROTO) {
		snprintf(why, sizeof(why), "\"version\": %d is a newer release's; this %s reads "
			 "version %d: install that release again, or write the file for version %d "
			 "(docs/upgrading.md)", v.version, STATE_WRITTEN_BY, POLICY_VERSION,
			 POLICY_VERSION);
		ret = fail(-EINVAL, file, why);
		goto out;
	}
	for (k = 0; k < POLICY_N; k++) {
		arr = cJSON_GetObjectItemCaseSensitive(j, keys[k]);
		if (!arr)
			continue;
		if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > POLICY_MAX_DIRS) {
			ret = fail(-EINVAL, file, "an allowed...Dirs key is not a list of at most 16 paths");
			goto out;
		}
		cJSON_ArrayForEach(it, arr)
			if (!cJSON_IsString(it) || add_dir(k, it->valuestring) < 0) {
				ret = fail(-EINVAL, file,
					   "an allowed directory is not an absolute path without \".\" or \"..\"");
				goto out;
			}
	}
out:
	cJSON_Delete(j);
	free(buf);
	return ret;
}

/*
 * dir through the system's symlinks: the longest prefix that exists,
 * resolved, then the rest as written (it is created later, as real
 * directories). out (PATH_MAX at least) takes realpath's answer itself:
 * every buffer of PATH_MAX on this path is a stack page, a page fault at
 * every exec.
 */
static int resolve_dir(const char *dir, char *out, size_t outlen)
{
	char head[PATH_MAX];
	const char *tail = "";
	char *slash;

	if (outlen < PATH_MAX)
		return -EINVAL;
	snprintf(head, sizeof(head), "%s", dir);
	for (;;) {
		if (realpath(head[0] ? head : "/", out))
			break;
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		slash = strrchr(head, '/');
		if (!slash)
			return -ENOENT;
		*slash = '\0';
		tail = dir + (slash - head);
	}
	if (!strcmp(out, "/"))
		out[0] = '\0';
	if (strlen(out) + strlen(tail) >= outlen)
		return -ENAMETOOLONG;
	strcat(out, tail);
	return 0;
}

/* path == dir, or path is below dir: the length of dir, or 0. */
static size_t under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	if (strncmp(path, dir, len) || (path[len] && path[len] != '/'))
		return 0;
	return len;
}

/*
 * The allowed directory (resolved, in real) that path, written through
 * other names (/var/run/x for /run/x), leads to: the shortest leading part
 * of path whose existing components resolve to it. The rest stays as
 * written, for the caller to walk without following symlinks. *len is the
 * length of that leading part; -ENOENT when none does. Not inlined: its
 * 8 KiB of buffers would lie under every attach's resolve, not only these.
 */
static int __attribute__((noinline)) resolve_leading(enum policy_dir k, const char *path,
						     char *real, size_t *len)
{
	char head[PATH_MAX], rp[PATH_MAX];
	bool ok[POLICY_MAX_DIRS];
	char (*dirs)[PATH_MAX];
	int i, ret = -ENOENT;
	size_t n;

	/* 64 KiB of resolved directories: too much for a plugin's stack. */
	dirs = malloc(sizeof(*dirs) * POLICY_MAX_DIRS);
	if (!dirs)
		return -ENOMEM;
	for (i = 0; i < pol.n[k]; i++)
		ok[i] = resolve_dir(pol.dirs[k][i], dirs[i], sizeof(dirs[i])) == 0;
	for (n = 1; path[n - 1]; n++) {
		if (path[n] != '/' && path[n])
			continue;
		if (n >= sizeof(head)) {
			ret = -ENAMETOOLONG;
			goto out;
		}
		memcpy(head, path, n);
		head[n] = '\0';
		if (resolve_dir(head, rp, sizeof(rp)) < 0)
			continue;
		for (i = 0; i < pol.n[k]; i++)
			if (ok[i] && !strcmp(rp, dirs[i])) {
				memcpy(real, dirs[i], strlen(dirs[i]) + 1);
				*len = n;
				ret = 0;
				goto out;
			}
	}
out:
	free(dirs);
	return ret;
}

/* The allowed directory (resolved, in real) that holds path, and the length of path's part that names it. */
static int locate(enum policy_dir k, const char *path, char real[PATH_MAX], size_t *len,
		  char *why, size_t whylen)
{
	char list[512] = "";
	size_t used = 0;
	int i, ret;

	ret = load();
	if (ret < 0) {
		snprintf(why, whylen, "%s", pol.msg);
		return -EINVAL;
	}
	if (!valid_abs_path(path)) {
		snprintf(why, whylen, "\"%s\" is not an absolute path without \".\" or \"..\"", path);
		return -EPERM;
	}
	/*
	 * Every attach asks: match the directories as written first, and
	 * resolve (a realpath each) only the one that holds the path; the
	 * path's own leading components only when none does as written.
	 */
	for (i = 0; i < pol.n[k]; i++) {
		*len = under(path, pol.dirs[k][i]);
		if (*len && resolve_dir(pol.dirs[k][i], real, PATH_MAX) == 0)
			return 0;
	}
	ret = resolve_leading(k, path, real, len);
	if (ret == 0)
		return 0;
	if (ret == -ENOMEM) {
		snprintf(why, whylen, "\"%s\": out of memory", path);
		return -ENOMEM;
	}
	for (i = 0; i < pol.n[k] && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 pol.dirs[k][i]);
	snprintf(why, whylen,
		 "\"%s\" is outside the directories allowed on this node (%s); a node admin can add one to %s in %s",
		 path, list, keys[k], POLICY_NODE_CONFIG);
	return -EPERM;
}

int policy_resolve(enum policy_dir k, const char *path, char *out, size_t outlen, char *why,
		   size_t whylen)
{
	char real[PATH_MAX];
	size_t len;
	int ret;

	ret = locate(k, path, real, &len, why, whylen);
	if (ret < 0)
		return ret;
	if ((size_t)snprintf(out, outlen, "%s%s", real, path + len) >= outlen) {
		snprintf(why, whylen, "\"%s\" is too long", path);
		return -EPERM;
	}
	return 0;
}

int policy_split(enum policy_dir k, const char *path, char dir[PATH_MAX], const char **rest,
		 char *why, size_t whylen)
{
	size_t len;
	int ret;

	ret = locate(k, path, dir, &len, why, whylen);
	if (ret < 0)
		return ret;
	if (!dir[0])
		snprintf(dir, PATH_MAX, "/");
	for (*rest = path + len; **rest == '/'; (*rest)++)
		;
	return 0;
}
