/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube_config: read a kubeconfig, for the API client in kube.h.
 *
 * The kubeconfig is parsed with libyaml (JSON is YAML too). Only what a
 * node-local plugin needs is supported: the current context's cluster
 * (https:// server, CA inline or from a file, or insecure-skip-tls-verify)
 * and user (bearer token inline or from a file, client certificate and key
 * inline or from files). Credential plugins (exec, auth-provider) and basic
 * authentication are refused: a CNI plugin cannot run them safely on every
 * pod start.
 *
 * libyaml is loaded with dlopen() on the first kube_config_load(), not
 * linked: linking it costs every exec of the plugin its dynamic loading
 * (~0.1 ms), even when it reads no kubeconfig. Without it the call fails
 * with -ENOSYS and a message naming the package to install.
 */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

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

/* ---- shared with the HTTP client (kube.c) ---- */

/* Format the one-line message into err (when given) and return r. */
int kube_fail(char *err, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * dlopen soname and resolve names[] into syms[]: 0, or -ENOSYS with why
 * saying what is missing. The library stays loaded.
 */
int kube_lib_open(const char *soname, const char *const names[], size_t n, void *syms[],
		  char *why, size_t whylen);
/* Wipe len bytes of *p (a key, a token), free it and set *p to NULL. */
void kube_secret_free(char **p, size_t len);

#endif
