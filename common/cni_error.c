/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "cni_error.h"
#include "cni_version.h"

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

/* s and a newline, in one write unless the pipe takes less. */
static int write_line(int fd, const char *s)
{
	struct iovec v[2] = {
		{ .iov_base = (void *)s, .iov_len = strlen(s) },
		{ .iov_base = (void *)"\n", .iov_len = 1 },
	};
	struct iovec *p = v;
	int n = 2;
	ssize_t w;

	while (n > 0) {
		w = writev(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		while (n > 0 && (size_t)w >= p->iov_len) {
			w -= (ssize_t)p->iov_len;
			p++;
			n--;
		}
		if (n > 0) {
			p->iov_base = (char *)p->iov_base + w;
			p->iov_len -= (size_t)w;
		}
	}
	return 0;
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
	 * exec, for one write.
	 */
	if (fflush(stdout) != 0 || write_line(STDOUT_FILENO, s) < 0)
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
