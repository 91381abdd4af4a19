/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube_get: one kube_get() from the shell, for the tests against a test API server.
 *
 *	kube_get KUBECONFIG PATH [TIMEOUT_MS]
 *
 * Prints the HTTP status on the first line and the body after it, exit 0.
 * On failure prints "error ENAME" (ETIMEDOUT, ECONNRESET, ...) on stdout and
 * the message on stderr, exit 1. Usage errors exit 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube.h"

static const char *errno_name(int e)
{
	switch (e) {
	case ETIMEDOUT: return "ETIMEDOUT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case EPROTO: return "EPROTO";
	case EFBIG: return "EFBIG";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOMEM: return "ENOMEM";
	default: return "E?";
	}
}

int main(int argc, char **argv)
{
	struct kube_config kc;
	struct kube_reply reply;
	char err[KUBE_ERRLEN];
	long timeout_ms = 5000;
	char *end;
	int r;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: kube_get KUBECONFIG PATH [TIMEOUT_MS]\n");
		return 2;
	}
	if (argc == 4) {
		timeout_ms = strtol(argv[3], &end, 10);
		if (*end || end == argv[3]) {
			fprintf(stderr, "kube_get: TIMEOUT_MS \"%s\": want a number\n", argv[3]);
			return 2;
		}
	}
	r = kube_config_load(argv[1], &kc, err, sizeof(err));
	if (r) {
		printf("error %s\n", errno_name(-r));
		fprintf(stderr, "kube_get: %s\n", err);
		return 1;
	}
	r = kube_get(&kc, argv[2], timeout_ms, &reply, err, sizeof(err));
	kube_config_free(&kc);
	if (r) {
		printf("error %s\n", errno_name(-r));
		fprintf(stderr, "kube_get: %s\n", err);
		return 1;
	}
	printf("%ld\n", reply.status);
	fwrite(reply.body, 1, reply.len, stdout);
	kube_reply_free(&reply);
	return 0;
}
