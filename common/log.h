/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log: one line per event, to stderr (the runtime keeps it) or to logFile.
 *
 * Format: "2026-11-23T08:31:49.123Z pool-ipam/0.2.0[1234] INFO ADD 3f2a..:net1: <text>",
 * the program's name with its release (meson's project version).
 */
#ifndef LOG_H
#define LOG_H

enum log_level {
	LOG_LVL_PANIC = 0,
	LOG_LVL_ERROR,
	LOG_LVL_WARNING,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

#define LOG_LVL_DEFAULT LOG_LVL_INFO

/* Name of the program in every line; logs go to stderr at the default level. */
void log_init(const char *program);
/* "panic", "error", "warning", "info", "debug" (case-insensitive) or -EINVAL. */
int log_level_parse(const char *s, enum log_level *lvl);
void log_set_level(enum log_level lvl);
/*
 * Append to rel below dirfd (0600, O_CLOEXEC), reached without a symlink
 * on the way (file_open_beneath) and made where nothing is; NULL or ""
 * means stderr. Only a regular file: anything else at the path (a FIFO, a
 * device) is never opened for writing. 0 or -errno: -ELOOP for a symlink,
 * -EINVAL for what is not a regular file.
 */
int log_set_file_at(int dirfd, const char *rel);
/* Command, container ID and ifname prefixed to every line (NULLs allowed). */
void log_set_context(const char *command, const char *container_id, const char *ifname);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_close(void);

#define log_error(...)	log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
