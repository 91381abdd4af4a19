/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "log_conf.h"

static char root[64];
static char logs[128];		/* the node's allowed log directory */

static void path_in(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static bool file_has(const char *path, const char *text)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

static void test_level(void)
{
	char why[1024] = "", path[256];

	path_in(path, sizeof(path), logs, "level.log");
	CHECK_INT(log_configure("debug", path, "", why, sizeof(why)), 0);
	log_debug("debug line");
	CHECK(file_has(path, "debug line"));
	/* logrus's word, which sriov-cni configs use. */
	CHECK_INT(log_configure("warn", NULL, "", why, sizeof(why)), 0);
	log_info("info line");
	CHECK(!file_has(path, "info line"));
	/* NULL keeps the level: still warning. */
	CHECK_INT(log_configure(NULL, NULL, "", why, sizeof(why)), 0);
	log_info("info line");
	log_warn("warn line");
	CHECK(!file_has(path, "info line"));
	CHECK(file_has(path, "warn line"));
	log_close();
}

static void test_bad_level_stops(void)
{
	char why[1024] = "", path[256];

	path_in(path, sizeof(path), logs, "never.log");
	CHECK_INT(log_configure("loud", path, "ipam.", why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "ipam.logLevel: \"loud\" is not a level (want panic, error, warning, info "
		  "or debug)");
	CHECK_INT(access(path, F_OK), -1);
	CHECK_INT(log_configure("", NULL, "", why, sizeof(why)), -EINVAL);
	CHECK_HAS(why, "logLevel: \"\" is not a level");
}

static void test_file_refused(void)
{
	char why[1024] = "", path[256];

	CHECK_INT(log_configure("info", "relative.log", "", why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "logFile: \"relative.log\" must be an absolute path without \"..\"");
	CHECK_INT(log_configure(NULL, "/var/log/../../etc/passwd", "ipam.", why, sizeof(why)),
		  -EINVAL);
	CHECK_HAS(why, "ipam.logFile: ");
	path_in(path, sizeof(path), root, "outside.log");
	CHECK_INT(log_configure(NULL, path, "ipam.", why, sizeof(why)), -EPERM);
	CHECK_HAS(why, "ipam.logFile: ");
	CHECK_HAS(why, "outside the directories allowed on this node");
	CHECK_INT(access(path, F_OK), -1);
	/* A FIFO with no reader: refused at once, not waited on. */
	path_in(path, sizeof(path), logs, "fifo");
	CHECK_INT(mkfifo(path, 0600), 0);
	CHECK_INT(log_configure(NULL, path, "", why, sizeof(why)), -EINVAL);
	CHECK_HAS(why, "logFile: cannot open \"");
	CHECK_HAS(why, "for appending");
}

/*
 * Below the allowed directory no symlink is followed: a link there to a
 * directory outside would have root create and append to files where the
 * node config forbids, a link to /dev open a device.
 */
static void test_symlinks_below(void)
{
	char why[1024] = "", path[256], target[256], outside[128];

	path_in(outside, sizeof(outside), root, "outside");
	CHECK_INT(mkdir(outside, 0700), 0);
	path_in(path, sizeof(path), logs, "out");
	CHECK_INT(symlink(outside, path), 0);
	path_in(path, sizeof(path), logs, "out/x.log");
	CHECK_INT(log_configure(NULL, path, "ipam.", why, sizeof(why)), -ELOOP);
	CHECK_HAS(why, "ipam.logFile: \"");
	CHECK_HAS(why, "leads through a symlink");
	path_in(target, sizeof(target), outside, "x.log");
	CHECK_INT(access(target, F_OK), -1);
	/* A link to /dev: nothing below it is opened. */
	path_in(path, sizeof(path), logs, "dev");
	CHECK_INT(symlink("/dev", path), 0);
	path_in(path, sizeof(path), logs, "dev/null");
	CHECK_INT(log_configure(NULL, path, "", why, sizeof(why)), -ELOOP);
	/* A link inside the allowed directory is refused all the same. */
	path_in(path, sizeof(path), logs, "sub");
	CHECK_INT(mkdir(path, 0700), 0);
	path_in(path, sizeof(path), logs, "side");
	CHECK_INT(symlink("sub", path), 0);
	path_in(path, sizeof(path), logs, "side/y.log");
	CHECK_INT(log_configure(NULL, path, "", why, sizeof(why)), -ELOOP);
	/* The file itself a link: refused. */
	path_in(path, sizeof(path), logs, "sub/z.log");
	path_in(target, sizeof(target), logs, "level.log");
	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(log_configure(NULL, path, "", why, sizeof(why)), -ELOOP);
	/* Real directories below it: fine. */
	path_in(path, sizeof(path), logs, "sub/real.log");
	CHECK_INT(log_configure(NULL, path, "", why, sizeof(why)), 0);
	log_warn("in a subdirectory");
	CHECK(file_has(path, "in a subdirectory"));
	log_close();
}

/* Did anyone open path for writing since the watch began? */
static bool opened_for_writing(int ifd)
{
	char buf[4096] __attribute__((aligned(8)));
	const struct inotify_event *e;
	ssize_t n, off;

	n = read(ifd, buf, sizeof(buf));
	for (off = 0; n > 0 && off < n; off += (ssize_t)sizeof(*e) + e->len) {
		e = (const struct inotify_event *)(buf + off);
		if (e->mask & IN_CLOSE_WRITE)
			return true;
	}
	return false;
}

/* What is not a regular file is never opened for writing: a device may act on its open alone. */
static void test_never_opened_for_writing(void)
{
	char why[1024] = "", path[256];
	int ifd, reader;

	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	CHECK(ifd >= 0);
	/* A FIFO with a reader, which an open for writing would reach. */
	path_in(path, sizeof(path), logs, "fifo2");
	CHECK_INT(mkfifo(path, 0600), 0);
	reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	CHECK(reader >= 0);
	CHECK(inotify_add_watch(ifd, path, IN_OPEN | IN_CLOSE_WRITE) >= 0);
	CHECK_INT(log_configure(NULL, path, "", why, sizeof(why)), -EINVAL);
	CHECK_HAS(why, "a regular file is needed");
	CHECK(!opened_for_writing(ifd));
	close(reader);
	/* A device node (/dev/null's numbers): root can make one in a log directory. */
	path_in(path, sizeof(path), logs, "null");
	if (mknod(path, S_IFCHR | 0600, makedev(1, 3)) == 0) {
		CHECK(inotify_add_watch(ifd, path, IN_OPEN | IN_CLOSE_WRITE) >= 0);
		CHECK_INT(log_configure(NULL, path, "", why, sizeof(why)), -EINVAL);
		CHECK(!opened_for_writing(ifd));
	} else {
		printf("# mknod: %s: the device case is not tried\n", strerror(errno));
	}
	close(ifd);
}

static void test_no_file(void)
{
	char why[16] = "";

	CHECK_INT(log_configure(NULL, NULL, "", why, sizeof(why)), 0);
	CHECK_INT(log_configure("error", "", "", why, sizeof(why)), 0);
	CHECK_STR(why, "");
}

int main(void)
{
	char node[256], text[512], cmd[128];
	int fd, ret;

	snprintf(root, sizeof(root), "/tmp/test_log_conf.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	path_in(logs, sizeof(logs), root, "logs");
	path_in(node, sizeof(node), root, "node.json");
	if (mkdir(logs, 0700) < 0)
		return 1;
	snprintf(text, sizeof(text), "{\"allowedLogDirs\": [\"%s\"]}", logs);
	fd = open(node, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return 1;
	close(fd);
	setenv("SRIOV_RDMA_CNI_NODE_CONFIG", node, 1);
	log_init("test_log_conf");
	RUN(test_level);
	RUN(test_bad_level_stops);
	RUN(test_file_refused);
	RUN(test_symlinks_below);
	RUN(test_never_opened_for_writing);
	RUN(test_no_file);
	log_close();
	ret = check_summary();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return ret;
}
