/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "log_conf.h"
#include "policy.h"
#include "valid.h"

int log_configure(const char *level, const char *file, const char *prefix, char *why,
		  size_t whylen)
{
	char resolved[PATH_MAX], policy_why[768];
	enum log_level lvl;
	int ret;

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
	ret = policy_resolve(POLICY_LOG, file, resolved, sizeof(resolved), policy_why,
			     sizeof(policy_why));
	if (ret < 0) {
		snprintf(why, whylen, "%slogFile: %s", prefix, policy_why);
		return ret;
	}
	ret = log_set_file(resolved);
	if (ret < 0) {
		snprintf(why, whylen, "%slogFile: cannot open \"%.500s\" for appending: %s (a regular "
			 "file is needed)", prefix, file, strerror(-ret));
		return ret;
	}
	return 0;
}
