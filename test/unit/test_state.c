/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "state.h"

static char root[64];

static int open_root(void)
{
	return open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Entries of dir whose name starts with ".tmp.". */
static int count_tmp(int dirfd)
{
	int fd = dup(dirfd), n = 0;
	DIR *d = fdopendir(fd);
	struct dirent *e;

	rewinddir(d);
	while ((e = readdir(d)))
		if (strncmp(e->d_name, ".tmp.", 5) == 0)
			n++;
	closedir(d);
	return n;
}

static void test_crc32_matches_zlib(void)
{
	/* The check value of CRC-32/IEEE, as zlib's crc32() computes it. */
	CHECK_INT(state_crc32("123456789", 9), 0xcbf43926u);
	CHECK_INT(state_crc32("", 0), 0);
	CHECK_INT(state_crc32("The quick brown fox jumps over the lazy dog", 43), 0x414fa339u);
}

static void test_write_read_atomic(void)
{
	int dfd = open_root();
	char *data = NULL;
	size_t len = 0;
	struct stat st;

	CHECK_INT(state_write_atomic(dfd, "a", "first", 5, true), 0);
	CHECK_INT(state_write_atomic(dfd, "a", "second!", 7, false), 0);
	CHECK_INT(state_read(dfd, "a", &data, &len, 100), 0);
	CHECK_INT(len, 7);
	CHECK_STR(data, "second!");
	free(data);
	CHECK_INT(fstatat(dfd, "a", &st, 0), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	CHECK_INT(count_tmp(dfd), 0);

	/* A failed rename (a directory in the way) leaves no temporary file. */
	CHECK_INT(mkdirat(dfd, "adir", 0700), 0);
	CHECK(state_write_atomic(dfd, "adir", "x", 1, false) < 0);
	CHECK_INT(count_tmp(dfd), 0);
	CHECK_INT(state_read(dfd, "missing", &data, &len, 100), -ENOENT);
	CHECK_INT(state_read(dfd, "a", &data, &len, 6), -EFBIG);
	CHECK_INT(state_remove(dfd, "a"), 0);
	CHECK_INT(state_remove(dfd, "a"), 0);
	CHECK_INT(state_read(dfd, "a", &data, &len, 100), -ENOENT);
	close(dfd);
}

static void test_names_are_single_components(void)
{
	int dfd = open_root();
	char *data;
	size_t len;

	CHECK_INT(state_write_atomic(dfd, "../escape", "x", 1, false), -EINVAL);
	CHECK_INT(state_write_atomic(dfd, "a/b", "x", 1, false), -EINVAL);
	CHECK_INT(state_write_atomic(dfd, "..", "x", 1, false), -EINVAL);
	CHECK_INT(state_write_atomic(dfd, "", "x", 1, false), -EINVAL);
	CHECK_INT(state_read(dfd, "../etc", &data, &len, 10), -EINVAL);
	CHECK_INT(state_remove(dfd, "a/.."), -EINVAL);
	CHECK_INT(count_tmp(dfd), 0);
	close(dfd);
}

static void test_write_tmp(void)
{
	int dfd = open_root();
	char a[64], b[64];
	struct stat st;

	CHECK_INT(state_write_tmp(dfd, "x", 1, a, sizeof(a), true), 0);
	CHECK_INT(state_write_tmp(dfd, "y", 1, b, sizeof(b), false), 0);
	CHECK(strncmp(a, ".tmp.", 5) == 0);
	CHECK(strcmp(a, b) != 0);
	CHECK_INT(fstatat(dfd, a, &st, AT_SYMLINK_NOFOLLOW), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	CHECK_INT(count_tmp(dfd), 2);
	/* Exclusive creation: link the temp file in, which fails if the name exists. */
	CHECK_INT(linkat(dfd, a, dfd, "excl", 0), 0);
	CHECK(linkat(dfd, b, dfd, "excl", 0) < 0 && errno == EEXIST);
	unlinkat(dfd, a, 0);
	unlinkat(dfd, b, 0);
	unlinkat(dfd, "excl", 0);
	CHECK_INT(state_write_tmp(dfd, "x", 1, a, 6, true), -ENAMETOOLONG);
	CHECK_INT(count_tmp(dfd), 0);
	close(dfd);
}

/* name in dirfd, empty, its mtime age seconds ago. */
static void make_aged(int dirfd, const char *name, time_t age)
{
	struct timespec t[2] = { { .tv_sec = time(NULL) - age }, { .tv_sec = time(NULL) - age } };
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(utimensat(dirfd, name, t, 0), 0);
}

/*
 * Opened for writing, a directory loses the temporary files of dead
 * writers, once they are older than a live writer's in another pid
 * namespace could be, and nothing else.
 */
static void test_dead_writers_tmp_swept(void)
{
	static const char *const kept_names[] = {
		".tmp.%d.1",		/* a dead pid's, but young */
		".tmp.%d.x",		/* not write_tmp's form */
		".tmp.0%d.0",
		".tmp.%d.0.",
		"a.tmp.%d.0",
		NULL,
	};
	char path[128], name[64];
	const time_t old = STATE_TMP_GRACE_S + 60;
	pid_t dead = fork();
	int dfd, sub, fd, i;

	if (dead == 0)
		_exit(0);
	CHECK(dead > 0);
	waitpid(dead, NULL, 0);
	snprintf(path, sizeof(path), "%s/sweep", root);
	CHECK_INT(state_dir_open(path, &dfd), 0);
	CHECK_INT(mkdirat(dfd, "pci", 0700), 0);
	sub = openat(dfd, "pci", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(sub >= 0);
	snprintf(name, sizeof(name), ".tmp.%d.0", (int)dead);
	make_aged(dfd, name, old);
	make_aged(sub, name, old);
	snprintf(name, sizeof(name), ".tmp.%d.0", (int)getpid());
	make_aged(dfd, name, old);	/* a live pid's */
	for (i = 0; kept_names[i]; i++) {
		snprintf(name, sizeof(name), kept_names[i], (int)dead);
		make_aged(dfd, name, i ? old : 1);
	}
	close(sub);
	close(dfd);
	CHECK_INT(state_dir_open(path, &dfd), 0);
	CHECK_INT(state_subdir_open(dfd, "pci", &sub), 0);
	snprintf(name, sizeof(name), ".tmp.%d.0", (int)dead);
	CHECK(faccessat(dfd, name, F_OK, 0) < 0 && errno == ENOENT);
	CHECK(faccessat(sub, name, F_OK, 0) < 0 && errno == ENOENT);
	snprintf(name, sizeof(name), ".tmp.%d.0", (int)getpid());
	CHECK_INT(faccessat(dfd, name, F_OK, 0), 0);
	for (i = 0; kept_names[i]; i++) {
		snprintf(name, sizeof(name), kept_names[i], (int)dead);
		CHECK_INT(faccessat(dfd, name, F_OK, 0), 0);
	}
	/* Readers sweep nothing. */
	snprintf(name, sizeof(name), ".tmp.%d.0", (int)dead);
	make_aged(sub, name, old);
	close(sub);
	CHECK_INT(state_dir_open_existing(path, &fd), 0);
	snprintf(path, sizeof(path), "pci/.tmp.%d.0", (int)dead);
	CHECK_INT(faccessat(fd, path, F_OK, 0), 0);
	close(fd);
	close(dfd);
}

/* state_dir_open for its mkdir -p alone. */
static int mkdir_p(const char *path)
{
	int fd, r = state_dir_open(path, &fd);

	if (r == 0)
		close(fd);
	return r;
}

static void test_mkdir_p_modes(void)
{
	char path[128];
	struct stat st;
	int dfd, sub;

	snprintf(path, sizeof(path), "%s/d1/d2/d3", root);
	CHECK_INT(mkdir_p(path), 0);
	CHECK_INT(mkdir_p(path), 0);
	CHECK_INT(stat(path, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_INT(st.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/d1", root);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0700);

	snprintf(path, sizeof(path), "%s/d1//d2/./d4/", root);
	CHECK_INT(state_dir_open(path, &dfd), 0);
	CHECK_INT(state_subdir_open(dfd, "sub", &sub), 0);
	CHECK_INT(fstat(sub, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0700);
	close(sub);
	CHECK_INT(state_subdir_open(dfd, "..", &sub), -EINVAL);
	CHECK_INT(state_subdir_open(dfd, "a/b", &sub), -EINVAL);
	close(dfd);

	snprintf(path, sizeof(path), "%s/d1/../d5", root);
	CHECK_INT(mkdir_p(path), -EINVAL);
	CHECK_INT(mkdir_p(""), -EINVAL);
}

static void test_open_existing_creates_nothing(void)
{
	char path[128];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/e1/e2", root);
	CHECK_INT(state_dir_open_existing(path, &fd), -ENOENT);
	snprintf(path, sizeof(path), "%s/e1", root);
	CHECK(stat(path, &st) != 0 && errno == ENOENT);
	CHECK_INT(mkdir_p(path), 0);
	snprintf(path, sizeof(path), "%s/e1/e2", root);
	CHECK_INT(state_dir_open_existing(path, &fd), -ENOENT);
	CHECK(stat(path, &st) != 0 && errno == ENOENT);
	snprintf(path, sizeof(path), "%s/e1/", root);
	CHECK_INT(state_dir_open_existing(path, &fd), 0);
	CHECK_INT(fstat(fd, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	close(fd);
	snprintf(path, sizeof(path), "%s/e1/../e1", root);
	CHECK_INT(state_dir_open_existing(path, &fd), -EINVAL);
}

static void test_symlinks_refused(void)
{
	char path[128], target[128];
	int dfd = open_root(), fd;
	char *data;
	size_t len;

	/* A symlinked directory anywhere in the path: an attacker's redirection. */
	snprintf(target, sizeof(target), "%s/real", root);
	mkdir(target, 0700);
	snprintf(path, sizeof(path), "%s/link", root);
	CHECK_INT(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/link/sub", root);
	CHECK_INT(mkdir_p(path), -ELOOP);
	snprintf(path, sizeof(path), "%s/real/sub", root);
	CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/link", root);
	CHECK_INT(state_dir_open(path, &fd), -ELOOP);
	CHECK_INT(state_dir_open_existing(path, &fd), -ELOOP);
	CHECK_INT(state_subdir_open(dfd, "link", &fd), -ELOOP);

	/* A regular file where a directory should be. */
	CHECK_INT(state_write_atomic(dfd, "file", "x", 1, false), 0);
	snprintf(path, sizeof(path), "%s/file/sub", root);
	CHECK_INT(mkdir_p(path), -ENOTDIR);

	/* A symlinked state file is never read through. */
	CHECK_INT(symlinkat("file", dfd, "filelink"), 0);
	CHECK_INT(state_read(dfd, "filelink", &data, &len, 100), -ELOOP);
	/* Neither is a directory or a FIFO read as a state file. */
	CHECK_INT(state_read(dfd, "real", &data, &len, 100), -EINVAL);
	CHECK_INT(mkfifoat(dfd, "fifo", 0600), 0);
	CHECK_INT(state_read(dfd, "fifo", &data, &len, 100), -EINVAL);
	close(dfd);
}

static void test_seal_detects_corruption(void)
{
	char *buf = strdup("{\"ip\":\"10.0.0.5\"}\n");
	size_t len = strlen(buf), sealed_len;

	CHECK_INT(state_seal(&buf, &len), 0);
	CHECK(strstr(buf, "#crc32=") != NULL);
	CHECK_INT(buf[len - 1], '\n');
	sealed_len = len;

	/* A flipped byte anywhere before the checksum line. */
	buf[3] ^= 0x01;
	CHECK_INT(state_unseal(buf, &len), -EBADMSG);
	buf[3] ^= 0x01;
	/* Truncation, even by one byte, loses the checksum line. */
	len = sealed_len - 1;
	CHECK_INT(state_unseal(buf, &len), -EBADMSG);
	len = 5;
	CHECK_INT(state_unseal(buf, &len), -EBADMSG);
	len = sealed_len;
	CHECK_INT(state_unseal(buf, &len), 0);
	CHECK_STR(buf, "{\"ip\":\"10.0.0.5\"}\n");
	free(buf);
}

static void test_json_round_trip_and_corruption(void)
{
	int dfd = open_root(), fd;
	cJSON *o = cJSON_CreateObject(), *back = NULL;
	char *data;
	size_t len;
	struct stat st;

	cJSON_AddStringToObject(o, "containerID", "3f2a");
	cJSON_AddNumberToObject(o, "vf", 3);
	CHECK_INT(state_write_json(dfd, "rec.json", o, true), 0);
	CHECK_INT(state_read_json(dfd, "rec.json", &back), 0);
	CHECK(cJSON_Compare(o, back, true));
	cJSON_Delete(back);

	/* Flip one byte in place, as a bad disk or a stray write would. */
	CHECK_INT(state_read(dfd, "rec.json", &data, &len, STATE_MAX_FILE), 0);
	data[len / 2] ^= 0x20;
	fd = openat(dfd, "rec.json", O_WRONLY);
	CHECK(pwrite(fd, data, len, 0) == (ssize_t)len);
	CHECK_INT(state_read_json(dfd, "rec.json", &back), -EBADMSG);
	data[len / 2] ^= 0x20;
	/* Cut short, as a crash without our atomic rename would leave it. */
	CHECK(pwrite(fd, data, len, 0) == (ssize_t)len);
	CHECK_INT(ftruncate(fd, (off_t)len - 20), 0);
	CHECK_INT(state_read_json(dfd, "rec.json", &back), -EBADMSG);
	close(fd);
	free(data);

	/* Valid checksum over text that is not JSON is still refused. */
	data = strdup("not json\n");
	len = strlen(data);
	CHECK_INT(state_seal(&data, &len), 0);
	CHECK_INT(state_write_atomic(dfd, "bad.json", data, len, false), 0);
	CHECK_INT(state_read_json(dfd, "bad.json", &back), -EBADMSG);
	free(data);

	CHECK_INT(state_read_json(dfd, "none.json", &back), -ENOENT);
	CHECK_INT(fstatat(dfd, "rec.json", &st, 0), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	CHECK_INT(count_tmp(dfd), 0);
	cJSON_Delete(o);
	close(dfd);
}

int main(void)
{
	char cmd[128];
	int ret;

	umask(022);
	snprintf(root, sizeof(root), "/tmp/test_state.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	RUN(test_crc32_matches_zlib);
	RUN(test_write_read_atomic);
	RUN(test_names_are_single_components);
	RUN(test_write_tmp);
	RUN(test_dead_writers_tmp_swept);
	RUN(test_mkdir_p_modes);
	RUN(test_open_existing_creates_nothing);
	RUN(test_symlinks_refused);
	RUN(test_seal_detects_corruption);
	RUN(test_json_round_trip_and_corruption);
	ret = check_summary();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return ret;
}
