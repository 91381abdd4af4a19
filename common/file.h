/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file: read a whole small file, once, for everyone (sysfs and procfs
 * attributes, config files, records), and write all of a buffer.
 *
 * dirfd and name are as for openat(2): AT_FDCWD or an absolute name for a
 * plain path. flags are added to O_RDONLY | O_CLOEXEC: O_NOFOLLOW where a
 * link in the name would be an attack or damage, O_NONBLOCK where a FIFO
 * put in place of the file must not hang the caller. Every function returns
 * -errno on failure.
 */
#ifndef FILE_H
#define FILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read from fd until EOF or until buf holds size - 1 bytes (what is beyond
 * is left unread), and NUL-terminate: the number of bytes read.
 */
ssize_t file_read_fd(int fd, char *buf, size_t size);
/* All len bytes of data to fd, through short writes and EINTR. */
int file_write_all(int fd, const void *data, size_t len);
/* file_read_fd() on name, opened and closed here. */
ssize_t file_read(int dirfd, const char *name, int flags, char *buf, size_t size);
/*
 * A whole regular file into *data (malloc'd, NUL-terminated, *len bytes
 * without the NUL). -EFBIG when it holds more than max bytes, -EISDIR for a
 * directory, -EINVAL for anything else that is not a regular file. What was
 * read is wiped before it is freed on failure: it may be a key or a token.
 */
int file_read_alloc(int dirfd, const char *name, int flags, size_t max, char **data,
		    size_t *len);
/*
 * openat(dirfd, rel, flags | O_CLOEXEC, mode) without leaving dirfd and
 * without following a symlink on the way, the last component included:
 * openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has
 * it (Linux 5.6), else each directory of rel opened from dirfd with
 * O_NOFOLLOW | O_DIRECTORY and the last component with O_NOFOLLOW. rel
 * is relative, without "." or ".." components (-EINVAL). The fd, or
 * -errno: -ELOOP for a symlink on the way (O_PATH | O_NOFOLLOW opens a
 * symlink at the end, as openat does).
 */
int file_open_beneath(int dirfd, const char *rel, int flags, mode_t mode);
/*
 * The next entries of the directory open on fd into buf, as getdents64(2)
 * fills it (struct dirent64 records, d_reclen apart): the bytes filled, 0
 * once every entry was read. buf must be aligned for struct dirent64.
 */
ssize_t file_dirents(int fd, void *buf, size_t size);

#endif
