/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	/* A FIFO with no reader: refused at once (ENXIO), not waited on. */
	path_in(path, sizeof(path), logs, "fifo");
	CHECK_INT(mkfifo(path, 0600), 0);
	CHECK_INT(log_configure(NULL, path, "", why, sizeof(why)), -ENXIO);
	CHECK_HAS(why, "logFile: cannot open \"");
	CHECK_HAS(why, "for appending");
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
	RUN(test_no_file);
	log_close();
	ret = check_summary();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return ret;
}
