/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "file.h"

ssize_t file_read_fd(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t got;

	if (size == 0)
		return -EINVAL;
	while (n < size - 1) {
		got = read(fd, buf + n, size - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	return (ssize_t)n;
}

int file_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

ssize_t file_read(int dirfd, const char *name, int flags, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	n = file_read_fd(fd, buf, size);
	close(fd);
	return n;
}

int file_read_alloc(int dirfd, const char *name, int flags, size_t max, char **data,
		    size_t *len)
{
	size_t n = 0, cap = 0;
	struct stat st;
	char *buf = NULL, *nbuf;
	ssize_t got;
	int fd, r = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	if ((size_t)st.st_size > max) {
		r = -EFBIG;
		goto out;
	}
	/* The size can change under us: read until EOF, never past max. */
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > max) {
			r = -EFBIG;
			goto out;
		}
		if (n == cap) {
			nbuf = malloc(cap * 2 + 1);
			if (!nbuf) {
				r = -ENOMEM;
				goto out;
			}
			memcpy(nbuf, buf, n);
			explicit_bzero(buf, cap + 1);
			free(buf);
			buf = nbuf;
			cap *= 2;
		}
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	buf = NULL;
out:
	if (buf) {
		explicit_bzero(buf, cap + 1);
		free(buf);
	}
	close(fd);
	return r;
}

/* One component of rel: never empty, "." or "..". */
static bool beneath_name(const char *p, size_t len)
{
	return len && len <= NAME_MAX && !(len == 1 && p[0] == '.') &&
	       !(len == 2 && p[0] == '.' && p[1] == '.');
}

/*
 * Where the kernel has no openat2: the directories one by one from dirfd,
 * each O_NOFOLLOW | O_DIRECTORY, so a symlink anywhere is refused as
 * openat2's RESOLVE_NO_SYMLINKS refuses it.
 */
static int open_beneath_walk(int dirfd, const char *rel, int flags, mode_t mode)
{
	char name[NAME_MAX + 1];
	const char *p = rel, *end;
	int fd = dirfd, sub, ret;
	struct stat st;
	size_t len;

	for (;;) {
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		memcpy(name, p, len);
		name[len] = '\0';
		if (!*end)
			break;
		sub = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		ret = -errno;
		/* O_DIRECTORY makes a symlink ENOTDIR: say what it is. */
		if (sub < 0 && ret == -ENOTDIR && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			ret = -ELOOP;
		if (fd != dirfd)
			close(fd);
		if (sub < 0)
			return ret;
		fd = sub;
		p = end + 1;
	}
	sub = openat(fd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	ret = sub < 0 ? -errno : sub;
	if (fd != dirfd)
		close(fd);
	return ret;
}

int file_open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (unsigned)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
	};
	const char *p, *end;
	long fd;

	for (p = rel; ; p = end + 1) {
		end = strchrnul(p, '/');
		if (!beneath_name(p, (size_t)(end - p)))
			return -EINVAL;
		if (!*end)
			break;
	}
	/* The kernel refuses a mode without O_CREAT or O_TMPFILE. */
	if (flags & (O_CREAT | O_TMPFILE))
		how.mode = mode;
	/* glibc (2.31, 2.36) has no wrapper for it. */
	fd = syscall(__NR_openat2, dirfd, rel, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	/*
	 * Linux before 5.6 (RHEL 8's 4.18) has none; a container runtime's
	 * seccomp profile older than it answers EPERM.
	 */
	if (errno == ENOSYS || errno == EPERM)
		return open_beneath_walk(dirfd, rel, flags, mode);
	return -errno;
}

/*
 * The system call itself: glibc's getdents64() came in 2.30, and the
 * release binaries must start on glibc 2.28 (docs/layout.md).
 */
ssize_t file_dirents(int fd, void *buf, size_t size)
{
	long n = syscall(SYS_getdents64, fd, buf, size);

	return n < 0 ? -errno : n;
}
