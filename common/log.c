/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static struct {
	char program[64];
	enum log_level level;
	int fd;				/* -1: stderr */
	char command[16];
	char container_id[13];
	char ifname[16];
} lg = { .program = "cni", .level = LOG_LVL_DEFAULT, .fd = -1 };

static const char *const level_names[] = {
	[LOG_LVL_PANIC] = "panic",
	[LOG_LVL_ERROR] = "error",
	[LOG_LVL_WARNING] = "warning",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

static const char *const level_tags[] = {
	[LOG_LVL_PANIC] = "PANIC",
	[LOG_LVL_ERROR] = "ERROR",
	[LOG_LVL_WARNING] = "WARN",
	[LOG_LVL_INFO] = "INFO",
	[LOG_LVL_DEBUG] = "DEBUG",
};

void log_init(const char *program)
{
	snprintf(lg.program, sizeof(lg.program), "%s", program ? program : "cni");
	lg.level = LOG_LVL_DEFAULT;
	log_close();
	log_set_context(NULL, NULL, NULL);
}

int log_level_parse(const char *s, enum log_level *lvl)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcasecmp(s, level_names[i]) == 0) {
			*lvl = (enum log_level)i;
			return 0;
		}
	}
	/* logrus, which sriov-cni configs were written for, also says "warn". */
	if (strcasecmp(s, "warn") == 0) {
		*lvl = LOG_LVL_WARNING;
		return 0;
	}
	return -EINVAL;
}

void log_set_level(enum log_level lvl)
{
	if (lvl >= LOG_LVL_PANIC && lvl <= LOG_LVL_DEBUG)
		lg.level = lvl;
}

int log_set_file(const char *path)
{
	struct stat st;
	int fd;

	if (!path || !*path) {
		log_close();
		return 0;
	}
	/* Non-blocking and regular only: a FIFO with no reader must not hang the plugin. */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	log_close();
	lg.fd = fd;
	return 0;
}

void log_set_context(const char *command, const char *container_id, const char *ifname)
{
	snprintf(lg.command, sizeof(lg.command), "%s", command ? command : "");
	snprintf(lg.container_id, sizeof(lg.container_id), "%s", container_id ? container_id : "");
	snprintf(lg.ifname, sizeof(lg.ifname), "%s", ifname ? ifname : "");
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	size_t n;
	int r;
	va_list ap;

	if (lvl > lg.level || lvl < LOG_LVL_PANIC)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	r = snprintf(line + n, sizeof(line) - n, ".%03ldZ %s[%ld] %s ", ts.tv_nsec / 1000000,
		     lg.program, (long)getpid(), level_tags[lvl]);
	n += (size_t)r;
	if (lg.command[0]) {
		r = snprintf(line + n, sizeof(line) - n, "%s ", lg.command);
		n += (size_t)r;
	}
	if (lg.container_id[0] || lg.ifname[0]) {
		r = snprintf(line + n, sizeof(line) - n, "%s%s%s: ", lg.container_id,
			     lg.container_id[0] && lg.ifname[0] ? ":" : "", lg.ifname);
		n += (size_t)r;
	}
	va_start(ap, fmt);
	r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	n += (size_t)r;
	/* A long message is cut, but the line still ends with its newline. */
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line: concurrent plugins appending to one file never interleave. */
	if (write(lg.fd >= 0 ? lg.fd : STDERR_FILENO, line, n) < 0)
		return;
}

void log_close(void)
{
	if (lg.fd >= 0)
		close(lg.fd);
	lg.fd = -1;
}
