/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cni_version.h"

const char *const cni_supported_versions[] = {
	"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0", NULL,
};

/* "a", "a.b" or "a.b.c", decimal; missing parts are 0. */
static bool version_parse(const char *s, long v[3])
{
	int i = 0;

	if (!s || !*s)
		return false;
	v[0] = v[1] = v[2] = 0;
	for (;;) {
		char *end;

		if (!isdigit((unsigned char)*s))
			return false;
		errno = 0;
		v[i] = strtol(s, &end, 10);
		if (errno)
			return false;
		s = end;
		if (!*s)
			return true;
		if (*s != '.' || ++i == 3)
			return false;
		s++;
	}
}

int cni_version_cmp(const char *a, const char *b)
{
	long va[3], vb[3];
	bool pa = version_parse(a, va), pb = version_parse(b, vb);

	if (!pa || !pb)
		return (int)pa - (int)pb;
	for (int i = 0; i < 3; i++)
		if (va[i] != vb[i])
			return va[i] < vb[i] ? -1 : 1;
	return 0;
}

bool cni_version_supported(const char *v)
{
	if (!v)
		return false;
	for (int i = 0; cni_supported_versions[i]; i++)
		if (strcmp(v, cni_supported_versions[i]) == 0)
			return true;
	return false;
}
