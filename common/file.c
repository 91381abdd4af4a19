/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/*
 * The system call itself: glibc's getdents64() came in 2.30, and the
 * release binaries must start on glibc 2.28 (docs/layout.md).
 */
ssize_t file_dirents(int fd, void *buf, size_t size)
{
	long n = syscall(SYS_getdents64, fd, buf, size);

	return n < 0 ? -errno : n;
}
