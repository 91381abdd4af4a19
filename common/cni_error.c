/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cni_error.h"
#include "cni_version.h"
#include "file.h"

int cni_errorf(struct cni_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->details[0] = '\0';
	return -1;
}

void cni_error_details(struct cni_error *err, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (!err)
		return;
	n = strlen(err->details);
	if (n && n + 2 < sizeof(err->details)) {
		memcpy(err->details + n, "; ", 3);
		n += 2;
	}
	if (n >= sizeof(err->details) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(err->details + n, sizeof(err->details) - n, fmt, ap);
	va_end(ap);
}

static cJSON *error_json(const struct cni_error *err, const char *version)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "cniVersion", version ? version : CNI_SPEC_VERSION);
	cJSON_AddNumberToObject(o, "code", err->code);
	cJSON_AddStringToObject(o, "msg", err->msg);
	if (err->details[0])
		cJSON_AddStringToObject(o, "details", err->details);
	return o;
}

int cni_json_print(const cJSON *o)
{
	char *s;
	int r = 0;

	if (!o)
		return -ENOMEM;
	s = cJSON_Print(o);
	if (!s)
		return -ENOMEM;
	/*
	 * Straight to the descriptor, not through stdio: stdout's first use
	 * costs an fstat, a buffer and the pages of stdio's code, in every
	 * exec, to print one answer.
	 */
	if (fflush(stdout) != 0 || file_write_all(STDOUT_FILENO, s, strlen(s)) < 0 ||
	    file_write_all(STDOUT_FILENO, "\n", 1) < 0)
		r = -EIO;
	cJSON_free(s);
	return r;
}

void cni_error_print(const struct cni_error *err, const char *version)
{
	cJSON *o = error_json(err, version);

	cni_json_print(o);
	cJSON_Delete(o);
}
