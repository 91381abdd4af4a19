/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube: read a kubeconfig and GET from the Kubernetes API server over HTTPS.
 *
 * The kubeconfig is parsed with libyaml (JSON is YAML too). Only what a
 * node-local plugin needs is supported: the current context's cluster
 * (https:// server, CA inline or from a file, or insecure-skip-tls-verify)
 * and user (bearer token inline or from a file, client certificate and key
 * inline or from files). Credential plugins (exec, auth-provider) and basic
 * authentication are refused: a CNI plugin cannot run them safely on every
 * pod start.
 *
 * libyaml and libcurl are loaded with dlopen() on the first
 * kube_config_load() and kube_get(), not linked: linking them costs every
 * exec of the plugin their dynamic loading (~0.1 ms and ~10 ms), even when
 * it reads no kubeconfig. Without them these calls fail with -ENOSYS and a
 * message naming the package to install.
 */
#ifndef KUBE_H
#define KUBE_H

#include <stdbool.h>
#include <stddef.h>

#define KUBE_ERRLEN 256

struct kube_config {
	char server[512];		/* "https://host:port[/prefix]" without trailing '/' */
	char *ca;   size_t ca_len;	/* PEM: certificate-authority-data decoded, or the file read */
	char *cert; size_t cert_len;	/* client certificate PEM, or NULL */
	char *key;  size_t key_len;	/* client key PEM, or NULL */
	char *token;			/* bearer token (token, or tokenFile read and trimmed), or NULL */
	bool insecure;			/* insecure-skip-tls-verify: true */
};

/* Parse a kubeconfig (YAML, JSON works too) and select current-context's cluster and user. */
int kube_config_load(const char *path, struct kube_config *kc, char *err, size_t errlen);
void kube_config_free(struct kube_config *kc);

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
