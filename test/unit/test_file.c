/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "file.h"

static char root[64];
static int dirfd_root = -1;

static void put(const char *name, const char *data, size_t len)
{
	int fd = openat(dirfd_root, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	CHECK_INT(write(fd, data, len), (long long)len);
	close(fd);
}

static void test_read_small(void)
{
	char buf[8];

	put("attr", "0x15b3\n", 7);
	CHECK_INT(file_read(dirfd_root, "attr", 0, buf, sizeof(buf)), 7);
	CHECK_STR(buf, "0x15b3\n");
	/* What does not fit stays unread; the buffer is still a string. */
	CHECK_INT(file_read(dirfd_root, "attr", 0, buf, 4), 3);
	CHECK_STR(buf, "0x1");
	put("empty", "", 0);
	CHECK_INT(file_read(dirfd_root, "empty", 0, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "");
	CHECK_INT(file_read(dirfd_root, "absent", 0, buf, sizeof(buf)), -ENOENT);
	CHECK_INT(file_read(dirfd_root, "attr", 0, buf, 0), -EINVAL);
}

static void test_read_fd_from_offset(void)
{
	char buf[16];
	int fd;

	put("off", "abcdef", 6);
	fd = openat(dirfd_root, "off", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_INT(lseek(fd, 2, SEEK_SET), 2);
	CHECK_INT(file_read_fd(fd, buf, sizeof(buf)), 4);
	CHECK_STR(buf, "cdef");
	close(fd);
}

static void test_read_alloc(void)
{
	char *data = NULL, big[200];
	size_t len = 0;

	put("conf", "{\"a\":1}", 7);
	CHECK_INT(file_read_alloc(dirfd_root, "conf", 0, 7, &data, &len), 0);
	CHECK_INT(len, 7);
	CHECK_STR(data, "{\"a\":1}");
	free(data);
	data = NULL;
	CHECK_INT(file_read_alloc(dirfd_root, "conf", 0, 6, &data, &len), -EFBIG);
	CHECK(data == NULL);

	/* Past the first guess of the buffer, up to max exactly. */
	memset(big, 'x', sizeof(big));
	put("big", big, sizeof(big));
	CHECK_INT(file_read_alloc(dirfd_root, "big", 0, sizeof(big), &data, &len), 0);
	CHECK_INT(len, sizeof(big));
	CHECK_INT(strlen(data), sizeof(big));
	free(data);
	data = NULL;

	put("empty", "", 0);
	CHECK_INT(file_read_alloc(dirfd_root, "empty", 0, 10, &data, &len), 0);
	CHECK_INT(len, 0);
	CHECK_STR(data, "");
	free(data);
	data = NULL;
}

static void test_read_alloc_refuses(void)
{
	char *data = NULL;
	size_t len = 0;

	CHECK(mkdirat(dirfd_root, "dir", 0700) == 0);
	CHECK_INT(file_read_alloc(dirfd_root, "dir", 0, 10, &data, &len), -EISDIR);
	CHECK(mkfifoat(dirfd_root, "fifo", 0600) == 0);
	/* O_NONBLOCK: a FIFO is refused, not waited on. */
	CHECK_INT(file_read_alloc(dirfd_root, "fifo", O_NONBLOCK, 10, &data, &len), -EINVAL);
	put("target", "x", 1);
	CHECK(symlinkat("target", dirfd_root, "link") == 0);
	CHECK_INT(file_read_alloc(dirfd_root, "link", O_NOFOLLOW, 10, &data, &len), -ELOOP);
	CHECK_INT(file_read_alloc(dirfd_root, "link", 0, 10, &data, &len), 0);
	CHECK_STR(data, "x");
	free(data);
	data = NULL;
	CHECK_INT(file_read_alloc(dirfd_root, "absent", 0, 10, &data, &len), -ENOENT);
	CHECK(data == NULL);
}

/* Below the directory, and no symlink on the way: a link inside it, or one leading out, is ELOOP. */
static void test_open_beneath(void)
{
	struct stat st;
	int fd;

	CHECK_INT(mkdirat(dirfd_root, "d", 0700), 0);
	CHECK_INT(mkdirat(dirfd_root, "d/e", 0700), 0);
	put("d/e/f", "x", 1);
	CHECK_INT(symlinkat("/", dirfd_root, "d/up"), 0);
	CHECK_INT(symlinkat("e", dirfd_root, "d/side"), 0);
	CHECK_INT(symlinkat("f", dirfd_root, "d/e/g"), 0);

	fd = file_open_beneath(dirfd_root, "d/e/f", O_RDONLY, 0);
	CHECK(fd >= 0);
	CHECK_INT(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
	fd = file_open_beneath(dirfd_root, "d/e/new", O_WRONLY | O_CREAT | O_EXCL, 0640);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(fstatat(dirfd_root, "d/e/new", &st, 0), 0);
	CHECK_INT(st.st_mode & 0777, 0640);
	/* Out of the tree, or within it: no symlink is followed, on the way or at the end. */
	CHECK_INT(file_open_beneath(dirfd_root, "d/up/etc/passwd", O_RDONLY, 0), -ELOOP);
	CHECK_INT(file_open_beneath(dirfd_root, "d/up/tmp/x", O_WRONLY | O_CREAT, 0600), -ELOOP);
	CHECK_INT(file_open_beneath(dirfd_root, "d/side/f", O_RDONLY, 0), -ELOOP);
	CHECK_INT(file_open_beneath(dirfd_root, "d/e/g", O_RDONLY, 0), -ELOOP);
	/* O_PATH | O_NOFOLLOW opens the link itself, for the caller to look at. */
	fd = file_open_beneath(dirfd_root, "d/e/g", O_PATH, 0);
	CHECK(fd >= 0);
	CHECK_INT(fstat(fd, &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	close(fd);
	CHECK_INT(file_open_beneath(dirfd_root, "d/e/f/h", O_RDONLY, 0), -ENOTDIR);
	CHECK_INT(file_open_beneath(dirfd_root, "d/none/f", O_RDONLY, 0), -ENOENT);
	/* Never out by name either. */
	CHECK_INT(file_open_beneath(dirfd_root, "d/../d/e/f", O_RDONLY, 0), -EINVAL);
	CHECK_INT(file_open_beneath(dirfd_root, "d/./e/f", O_RDONLY, 0), -EINVAL);
	CHECK_INT(file_open_beneath(dirfd_root, "/etc/passwd", O_RDONLY, 0), -EINVAL);
	CHECK_INT(file_open_beneath(dirfd_root, "d//e/f", O_RDONLY, 0), -EINVAL);
	CHECK_INT(file_open_beneath(dirfd_root, "", O_RDONLY, 0), -EINVAL);
}

/* Every entry once, across reads of a buffer that holds only a few. */
static void test_dirents(void)
{
	char buf[sizeof(struct dirent64) + 32] __attribute__((aligned(8))), name[16];
	struct dirent64 *e;
	int fd, i, seen = 0, dots = 0, reads = 0;
	ssize_t n, off;

	CHECK(mkdirat(dirfd_root, "ents", 0700) == 0);
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "ents/f%02d", i);
		put(name, "", 0);
	}
	fd = openat(dirfd_root, "ents", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	while ((n = file_dirents(fd, buf, sizeof(buf))) > 0) {
		reads++;
		for (off = 0; off < n; off += e->d_reclen) {
			e = (struct dirent64 *)(buf + off);
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				dots++;
			else if (e->d_name[0] == 'f' && e->d_type == DT_REG)
				seen++;
		}
	}
	CHECK_INT(n, 0);
	CHECK_INT(seen, 40);
	CHECK_INT(dots, 2);
	CHECK(reads > 1);
	CHECK_INT(file_dirents(fd, buf, sizeof(buf)), 0);
	close(fd);
	fd = openat(dirfd_root, "attr", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_INT(file_dirents(fd, buf, sizeof(buf)), -ENOTDIR);
	close(fd);
	CHECK_INT(file_dirents(-1, buf, sizeof(buf)), -EBADF);
}

int main(void)
{
	char cmd[128];
	int ret;

	snprintf(root, sizeof(root), "/tmp/test_file.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	dirfd_root = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_root < 0)
		return 1;
	RUN(test_read_small);
	RUN(test_read_fd_from_offset);
	RUN(test_read_alloc);
	RUN(test_read_alloc_refuses);
	RUN(test_open_beneath);
	RUN(test_dirents);
	ret = check_summary();
	close(dirfd_root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return ret;
}
