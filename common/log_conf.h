/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log_conf: the config half of logging, the same for every plugin: a level
 * and a file from the network config, the file only where the node policy
 * allows logs (a NAD is tenant input, and the plugins run as root).
 *
 * A module of its own, not part of log: log, which most modules use, stays
 * free of the node policy and its config file.
 */
#ifndef LOG_CONF_H
#define LOG_CONF_H

#include <stddef.h>

/*
 * Apply logLevel `level` (NULL: keep the current one) and logFile `file`
 * (NULL or "": keep logging where it goes), in that order; the first
 * problem stops there. prefix goes before the field names in `why`
 * ("" for "logLevel", "ipam." for "ipam.logLevel"). 0, or -EINVAL (a level
 * or path that is not one), -EPERM (a file outside the allowed log
 * directories), -errno of the policy or of opening the file, with `why`
 * naming the field. A caller that must go on (DEL, GC) logs `why` and
 * does: whatever failed was left as it was.
 */
int log_configure(const char *level, const char *file, const char *prefix, char *why,
		  size_t whylen);

#endif
