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

#include "file.h"
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

int log_set_file_at(int dirfd, const char *rel)
{
	struct stat st, now;
	int fd, tries;

	if (!rel || !*rel) {
		log_close();
		return 0;
	}
	/*
	 * Only a regular file is opened for writing: what stands at the path
	 * is looked at first (O_PATH opens nothing), a new one made where none
	 * is (O_EXCL), and the file opened is the one looked at. A device
	 * opened for writing may act on its open alone; a FIFO with no reader
	 * would hang the plugin.
	 */
	for (tries = 0; tries < 4; tries++) {
		fd = file_open_beneath(dirfd, rel, O_PATH, 0);
		if (fd == -ENOENT) {
			fd = file_open_beneath(dirfd, rel, O_WRONLY | O_APPEND | O_CREAT | O_EXCL |
					       O_NOCTTY, 0600);
			if (fd == -EEXIST)
				continue;
			if (fd < 0)
				return fd;
			break;
		}
		if (fd < 0)
			return fd;
		if (fstat(fd, &st) < 0) {
			close(fd);
			return -errno;
		}
		close(fd);
		if (!S_ISREG(st.st_mode))
			return S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL;
		fd = file_open_beneath(dirfd, rel, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY, 0);
		if (fd == -ENOENT)
			continue;
		if (fd < 0)
			return fd;
		if (fstat(fd, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
			break;
		/* Another file took the path in between: never written to, looked at again. */
		close(fd);
		fd = -EAGAIN;
	}
	if (fd < 0)
		return fd;
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

/*
 * "YYYY-MM-DDTHH:MM:SS" in UTC by hand: gmtime_r reads /etc/localtime on
 * its first call (glibc sets up the local zone whatever the function), a
 * file to open and parse in every exec for a zone this stamp never uses.
 * Days to a date as in H. Hinnant's civil_from_days: years that begin in
 * March, in eras of 400 years.
 */
static int utc_stamp(char *buf, size_t len, time_t t)
{
	long long days = t / 86400, secs = t % 86400, era, doe, yoe, doy, mp, y, m, d;

	if (secs < 0) {
		secs += 86400;
		days--;
	}
	days += 719468;
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	return snprintf(buf, len, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", y, m, d,
			secs / 3600, secs / 60 % 60, secs % 60);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[2048];
	struct timespec ts;
	size_t n;
	int r;
	va_list ap;

	if (lvl > lg.level || lvl < LOG_LVL_PANIC)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = (size_t)utc_stamp(line, sizeof(line), ts.tv_sec);
	/* The release beside the program: a node mid-upgrade runs two of them (docs/upgrading.md). */
	r = snprintf(line + n, sizeof(line) - n, ".%03ldZ %s/%s[%ld] %s ", ts.tv_nsec / 1000000,
		     lg.program, PROJECT_VERSION, (long)getpid(), level_tags[lvl]);
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
