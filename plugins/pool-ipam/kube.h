/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube: GET from the Kubernetes API server over HTTPS, as a kubeconfig
 * (kube_config.h) says.
 *
 * libcurl is loaded with dlopen() on the first kube_get(), not linked:
 * linking it costs every exec of the plugin its dynamic loading (~10 ms),
 * even when it asks the API nothing. Without it kube_get() fails with
 * -ENOSYS and a message naming the package to install.
 */
#ifndef KUBE_H
#define KUBE_H

#include <stddef.h>
#include "kube_config.h"

struct kube_reply { long status; char *body; size_t len; };	/* body NUL-terminated */

/*
 * GET server+path within timeout_ms in all (connect + TLS + answer). 0 when an HTTP answer came
 * (any status), else -errno: -ETIMEDOUT, -ECONNREFUSED, -ECONNRESET (dropped), -EPROTO (TLS or
 * protocol), -EFBIG (answer over 8 MiB), -ENOSYS (no libcurl); err says what, in one line.
 */
int kube_get(const struct kube_config *kc, const char *path, long timeout_ms,
	     struct kube_reply *r, char *err, size_t errlen);
void kube_reply_free(struct kube_reply *r);

#endif
