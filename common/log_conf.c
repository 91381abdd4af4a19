/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "log_conf.h"
#include "policy.h"
#include "valid.h"

int log_configure(const char *level, const char *file, const char *prefix, char *why,
		  size_t whylen)
{
	char dir[PATH_MAX], policy_why[768];
	enum log_level lvl;
	const char *rest;
	int ret, dirfd;

	if (level) {
		if (log_level_parse(level, &lvl) < 0) {
			snprintf(why, whylen, "%slogLevel: \"%s\" is not a level (want panic, error, "
				 "warning, info or debug)", prefix, level);
			return -EINVAL;
		}
		log_set_level(lvl);
	}
	if (!file || !file[0])
		return 0;
	if (!valid_abs_path(file)) {
		snprintf(why, whylen, "%slogFile: \"%s\" must be an absolute path without \"..\"",
			 prefix, file);
		return -EINVAL;
	}
	ret = policy_split(POLICY_LOG, file, dir, &rest, policy_why, sizeof(policy_why));
	if (ret < 0) {
		snprintf(why, whylen, "%slogFile: %s", prefix, policy_why);
		return ret;
	}
	/* Below the allowed directory, no symlink is followed, the file's own included. */
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ret = dirfd < 0 ? -errno : log_set_file_at(dirfd, rest[0] ? rest : ".");
	if (dirfd >= 0)
		close(dirfd);
	if (ret == -ELOOP || ret == -ENOTDIR) {
		snprintf(why, whylen, "%slogFile: \"%.500s\" leads through a symlink or what is not "
			 "a directory below %s; name a regular file reached through real directories",
			 prefix, file, dir);
		return ret;
	}
	if (ret < 0) {
		snprintf(why, whylen, "%slogFile: cannot open \"%.500s\" for appending: %s (a regular "
			 "file is needed)", prefix, file, strerror(-ret));
		return ret;
	}
	return 0;
}
