/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "state.h"

/* One path component: never empty, ".", ".." or containing '/'. */
static bool valid_name(const char *name)
{
	return name && *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
	       !strchr(name, '/');
}

/*
 * openat without following a symlink, [mkdirat +] openat when it is not
 * there; EEXIST of a directory is fine. The open goes first: every exec
 * walks directories that exist, and a mkdirat that fails with EEXIST
 * still takes the parent's inode lock for writing, serialising the walks
 * of every plugin on the node at each shared component.
 */
static int subdir_open(int dirfd, const char *name, bool create, int *subfd)
{
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		struct stat st;
		int r = -errno;

		/* O_DIRECTORY makes a symlink ENOTDIR: say what it is. */
		if (r == -ENOTDIR && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			r = -ELOOP;
		return r;
	}
	*subfd = fd;
	return 0;
}

/* write_tmp's ".tmp.<pid>.<n>", exactly: its pid, or 0 for any other name. */
static pid_t tmp_name_pid(const char *name)
{
	const char *p = name + 5;
	long pid = 0;

	if (strncmp(name, ".tmp.", 5) || *p < '1' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		pid = pid * 10 + (*p - '0');
		if (pid > 0x7fffffff)
			return 0;
	}
	if (*p++ != '.' || *p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p ? 0 : (pid_t)pid;
}

/*
 * Remove what writers killed between write_tmp and the rename left: names
 * of write_tmp's exact form whose pid is not alive. A pid alive here may be
 * another process now: its file waits for a later sweep. A pid of another
 * pid namespace sharing the directory (a plugin run in a container) means
 * nothing here: a file younger than STATE_TMP_GRACE_S may be a live
 * writer's, elsewhere, and is left alone. Sweepers take turns on the
 * directory's flock, and one that finds it taken leaves the sweep to the
 * holder. Best effort: what cannot be read or removed stays.
 */
static void sweep_dead_tmp(int dirfd)
{
	char buf[4096] __attribute__((aligned(8)));
	struct dirent64 *e;
	struct stat st;
	time_t now = time(NULL);
	ssize_t n, off;
	pid_t pid;
	int fd;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		goto out;
	while ((n = file_dirents(fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n; off += e->d_reclen) {
			e = (struct dirent64 *)(buf + off);
			pid = tmp_name_pid(e->d_name);
			if (!pid || kill(pid, 0) == 0 || errno != ESRCH)
				continue;
			if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISREG(st.st_mode) || now - st.st_mtime < STATE_TMP_GRACE_S)
				continue;
			unlinkat(dirfd, e->d_name, 0);
		}
	}
out:
	close(fd);
}

static int walk_open(const char *path, bool create, int *dirfd)
{
	char comp[256];
	const char *p = path, *end;
	int fd, sub = -1, r;

	if (!path || !*path)
		return -EINVAL;
	fd = open(*path == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (; *p; p = end) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		if ((size_t)(end - p) >= sizeof(comp)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, (size_t)(end - p));
		comp[end - p] = '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		/* ".." could climb out of a directory a config meant to confine us to. */
		if (strcmp(comp, "..") == 0) {
			close(fd);
			return -EINVAL;
		}
		r = subdir_open(fd, comp, create, &sub);
		close(fd);
		if (r < 0)
			return r;
		fd = sub;
	}
	*dirfd = fd;
	return 0;
}

int state_dir_open(const char *path, int *dirfd)
{
	int ret = walk_open(path, true, dirfd);

	if (ret == 0)
		sweep_dead_tmp(*dirfd);
	return ret;
}

int state_dir_open_existing(const char *path, int *dirfd)
{
	return walk_open(path, false, dirfd);
}

int state_dir_open_unswept(const char *path, int *dirfd)
{
	return walk_open(path, true, dirfd);
}

int state_subdir_open_unswept(int dirfd, const char *name, int *subfd)
{
	return valid_name(name) ? subdir_open(dirfd, name, true, subfd) : -EINVAL;
}

int state_subdir_open(int dirfd, const char *name, int *subfd)
{
	int ret = state_subdir_open_unswept(dirfd, name, subfd);

	if (ret == 0)
		sweep_dead_tmp(*subfd);
	return ret;
}

static int write_tmp(int tmpdirfd, const void *data, size_t len, char *tmpname,
		     size_t tmpname_len, bool sync)
{
	static unsigned counter;
	int fd, r;

	for (;;) {
		if ((size_t)snprintf(tmpname, tmpname_len, ".tmp.%ld.%u", (long)getpid(),
				     counter++) >= tmpname_len)
			return -ENAMETOOLONG;
		fd = openat(tmpdirfd, tmpname,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		/* A leftover of a dead process that had our pid: take the next name. */
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	r = file_write_all(fd, data, len);
	if (!r && sync && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (r)
		unlinkat(tmpdirfd, tmpname, 0);
	return r;
}

int state_write_tmp(int tmpdirfd, const void *data, size_t len, char *tmpname, size_t tmpname_len,
		    bool durable)
{
	return write_tmp(tmpdirfd, data, len, tmpname, tmpname_len, durable);
}

int state_fsync_dir(int dirfd)
{
	return fsync(dirfd) < 0 ? -errno : 0;
}

int state_write_atomic(int dirfd, const char *name, const void *data, size_t len, bool durable)
{
	char tmp[64];
	int r;

	if (!valid_name(name))
		return -EINVAL;
	/*
	 * Not durable: a crash may leave the new name with partial content,
	 * which readers must treat as unreadable. The rename still makes a
	 * running system see the old file or the new one, never a mix.
	 */
	r = write_tmp(dirfd, data, len, tmp, sizeof(tmp), durable);
	if (r)
		return r;
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = -errno;
		unlinkat(dirfd, tmp, 0);
		return r;
	}
	return durable ? state_fsync_dir(dirfd) : 0;
}

int state_read(int dirfd, const char *name, char **data, size_t *len, size_t max)
{
	int r;

	if (!valid_name(name))
		return -EINVAL;
	r = file_read_alloc(dirfd, name, O_NOFOLLOW | O_NONBLOCK, max, data, len);
	/* A directory in place of a record is as wrong as any other non-file. */
	return r == -EISDIR ? -EINVAL : r;
}

int state_remove(int dirfd, const char *name)
{
	if (!valid_name(name))
		return -EINVAL;
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * CRC-32 (IEEE, reflected) a nibble at a time: a constant table of 16 lives
 * with the code, where a computed table of 256 would be written into a page
 * of its own at every exec, a page fault for a record of 200 bytes.
 */
uint32_t state_crc32(const void *data, size_t len)
{
	static const uint32_t nib[16] = {
		0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
		0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
		0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
		0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
	};
	const unsigned char *p = data;
	uint32_t crc = 0xffffffffu;

	while (len--) {
		crc ^= *p++;
		crc = (crc >> 4) ^ nib[crc & 15];
		crc = (crc >> 4) ^ nib[crc & 15];
	}
	return crc ^ 0xffffffffu;
}

#define SEAL_LEN (sizeof("#crc32=xxxxxxxx\n") - 1)

int state_seal(char **buf, size_t *len)
{
	char *nb = realloc(*buf, *len + SEAL_LEN + 1);

	if (!nb)
		return -ENOMEM;
	snprintf(nb + *len, SEAL_LEN + 1, "#crc32=%08x\n", state_crc32(nb, *len));
	*buf = nb;
	*len += SEAL_LEN;
	return 0;
}

int state_unseal(char *buf, size_t *len)
{
	char hex[9], *end;
	const char *tail;
	unsigned long want;

	if (*len < SEAL_LEN)
		return -EBADMSG;
	tail = buf + *len - SEAL_LEN;
	if (memcmp(tail, "#crc32=", 7) != 0 || tail[SEAL_LEN - 1] != '\n')
		return -EBADMSG;
	memcpy(hex, tail + 7, 8);
	hex[8] = '\0';
	want = strtoul(hex, &end, 16);
	if (*end || want != state_crc32(buf, *len - SEAL_LEN))
		return -EBADMSG;
	*len -= SEAL_LEN;
	buf[*len] = '\0';
	return 0;
}

int state_write_json(int dirfd, const char *name, const cJSON *obj, bool durable)
{
	char *text = cJSON_Print(obj), *buf;
	size_t len;
	int r;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	buf = malloc(len + 2);
	if (!buf) {
		cJSON_free(text);
		return -ENOMEM;
	}
	memcpy(buf, text, len);
	buf[len++] = '\n';
	cJSON_free(text);
	r = state_seal(&buf, &len);
	if (!r)
		r = state_write_atomic(dirfd, name, buf, len, durable);
	free(buf);
	return r;
}

int state_read_json(int dirfd, const char *name, cJSON **obj)
{
	char *buf;
	size_t len;
	int r;

	r = state_read(dirfd, name, &buf, &len, STATE_MAX_FILE);
	if (r)
		return r;
	r = state_unseal(buf, &len);
	if (!r) {
		*obj = cJSON_ParseWithLength(buf, len);
		if (!*obj)
			r = -EBADMSG;
	}
	free(buf);
	return r;
}

int state_version_put(cJSON *o, int version)
{
	char n[16];

	/* As text: cJSON prints a number with sprintf, which ADD need not page in for it. */
	snprintf(n, sizeof(n), "%d", version);
	return cJSON_AddRawToObject(o, "version", n) &&
	       cJSON_AddStringToObject(o, "writtenBy", STATE_WRITTEN_BY) ? 0 : -ENOMEM;
}

int state_version_get(const cJSON *o, int max, bool required, struct state_version *v)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "version");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "writtenBy");

	memset(v, 0, sizeof(*v));
	v->version = 1;
	if (w && (!cJSON_IsString(w) || strlen(w->valuestring) >= sizeof(v->written_by)))
		return -EBADMSG;
	if (w)
		strcpy(v->written_by, w->valuestring);
	if (!n)
		return required ? -EBADMSG : 0;
	/* Checked before it is converted: no conversion sees a number an int cannot hold. */
	if (!cJSON_IsNumber(n) || !(n->valuedouble >= 1 && n->valuedouble <= INT32_MAX) ||
	    n->valuedouble != (double)(int)n->valuedouble)
		return -EBADMSG;
	v->version = (int)n->valuedouble;
	return v->version > max ? -EPROTO : 0;
}

void state_version_format(const struct state_version *v, const char *what, int max, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s as %s version %d; this %s reads %ss up to version %d",
		 v->written_by[0] ? v->written_by : "an unknown release", what, v->version,
		 STATE_WRITTEN_BY, what, max);
}
