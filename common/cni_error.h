/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cni_error: the error a plugin answers with (SPEC.md "Error"), and the one
 * writer of JSON on stdout that the error and the result share.
 *
 * Errors, one idiom. Below the plugin layer (link, vf, rdma, sysctl, policy,
 * netns, lock, state, log, pool store) functions return 0 or -errno and know
 * nothing of CNI: they include neither this header nor cni.h. A struct
 * cni_error (code + message naming the field and the fix) is filled only by
 * the plugin layer (plugins/, the skeleton, cni_delegate) and by the modules
 * whose job is to judge the runtime's input: config parsing (conf, ipam
 * config, ippool, which judges the IPPool object the API server sends) and
 * results (cni_result.h). The plugin turns a -errno from below into a
 * cni_error once, where it knows what was being done. A module below may
 * keep a message beside its -errno for the plugin to quote (policy, kube),
 * never a code.
 */
#ifndef CNI_ERROR_H
#define CNI_ERROR_H

#include <cjson/cJSON.h>

/* Error codes of the spec (SPEC.md "Error"), then ours from 100 on. */
enum cni_code {
	CNI_ERR_INCOMPATIBLE_VERSION	= 1,
	CNI_ERR_UNSUPPORTED_FIELD	= 2,
	CNI_ERR_UNKNOWN_CONTAINER	= 3,
	CNI_ERR_INVALID_ENV		= 4,
	CNI_ERR_IO			= 5,
	CNI_ERR_DECODE			= 6,
	CNI_ERR_INVALID_CONFIG		= 7,
	CNI_ERR_INVALID_NETNS		= 8,
	CNI_ERR_TRY_AGAIN		= 11,
	CNI_ERR_NOT_AVAILABLE		= 50,	/* STATUS: cannot serve ADD */
	CNI_ERR_LIMITED			= 51,	/* STATUS: existing pods degraded */
	CNI_ERR_PLUGIN			= 100,	/* an operation on the host failed */
	CNI_ERR_DEVICE_IN_USE		= 101,
	CNI_ERR_DEVICE_NOT_FOUND	= 102,
	CNI_ERR_POOL_EXHAUSTED		= 103,
	CNI_ERR_STORE_CORRUPT		= 104,
	CNI_ERR_RDMA			= 105,
	CNI_ERR_IFNAME_TAKEN		= 106,
	CNI_ERR_DRIFT			= 107,	/* CHECK found state that differs */
};

struct cni_error {
	int code;			/* 0: no error */
	char msg[512];
	char details[1024];
};

/*
 * Set *err (first error wins: a later call does not overwrite it) and
 * return -1, so handlers can write "return cni_errorf(err, ...);".
 */
int cni_errorf(struct cni_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Append details (the errno text, the file, the fix) to an error already set. */
void cni_error_details(struct cni_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print {cniVersion, code, msg, details} on stdout. */
void cni_error_print(const struct cni_error *err, const char *version);
/* Print o on stdout and flush: 0, or -ENOMEM / -EIO. */
int cni_json_print(const cJSON *o);

#endif
