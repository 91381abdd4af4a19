/* SPDX-License-Identifier: Apache-2.0 */
/* cni_version: the CNI versions this project speaks, and their order. */
#ifndef CNI_VERSION_H
#define CNI_VERSION_H

#include <stdbool.h>

#define CNI_SPEC_VERSION	"1.1.0"
/* cni_supported_versions as text, for messages. */
#define CNI_VERSION_LIST	"0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0"

/* NULL-terminated, oldest first. */
extern const char *const cni_supported_versions[];

/* Compare dotted versions "a.b.c"; unparsable sorts lowest. */
int cni_version_cmp(const char *a, const char *b);
bool cni_version_supported(const char *v);

#endif
