/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cni: the CNI protocol, once, for every plugin.
 *
 * Environment (CNI_*), stdin, version negotiation, errors as the spec's JSON
 * object, and the skeleton that dispatches a command to the plugin. Results
 * are cni_result.h (included here: the skeleton prints them), delegation to
 * another plugin is cni_delegate.h, and the name validators are valid.h
 * (included here: every plugin judges the names the runtime sends).
 *
 * A plugin fills a struct cni_plugin and calls cni_plugin_main() from main().
 * Command handlers return 0, or non-zero with *err filled (cni_errorf()).
 *
 * Errors, one idiom. Below the plugin layer (link, vf, rdma, sysctl, policy,
 * netns, lock, state, log, pool store) functions return 0 or -errno and know
 * nothing of CNI: they do not include this header. A struct cni_error (code
 * + message naming the field and the fix) is filled only by the plugin
 * layer (plugins/, this skeleton, delegate) and by the modules whose job is
 * to judge the runtime's input: config parsing (conf, ipam config, ippool,
 * which judges the IPPool object the API server sends) and results
 * (cni_result.h). The plugin turns a -errno from below into a cni_error once,
 * where it knows what was being done. A module below may keep a message
 * beside its -errno for the plugin to quote (policy, kube), never a code.
 */
#ifndef CNI_H
#define CNI_H

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "cni_result.h"
#include "valid.h"

#define CNI_MAX_STDIN		(1u << 20)
#define CNI_SPEC_VERSION	"1.1.0"

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

enum cni_cmd {
	CNI_CMD_NONE = 0,
	CNI_CMD_ADD,
	CNI_CMD_DEL,
	CNI_CMD_CHECK,
	CNI_CMD_VERSION,
	CNI_CMD_STATUS,
	CNI_CMD_GC,
};

const char *cni_cmd_name(enum cni_cmd cmd);

/* ---- versions ---- */

/* NULL-terminated, oldest first. */
extern const char *const cni_supported_versions[];

/* Compare dotted versions "a.b.c"; unparsable sorts lowest. */
int cni_version_cmp(const char *a, const char *b);
bool cni_version_supported(const char *v);

/* ---- environment ---- */

#define CNI_MAX_ARGS 32

struct cni_kv {
	char *key;
	char *value;
};

struct cni_env {
	enum cni_cmd command;
	const char *container_id;	/* NULL when unset */
	const char *netns;
	const char *ifname;
	const char *args;		/* raw CNI_ARGS */
	const char *path;		/* CNI_PATH */
	int n_args;
	struct cni_kv kv[CNI_MAX_ARGS];	/* CNI_ARGS split on ';' and '=' */
	char *args_buf;			/* owned copy kv[] points into */
};

/*
 * Read and validate CNI_* for the command. Required variables per verb
 * follow the spec: CONTAINERID, IFNAME for ADD/DEL/CHECK; NETNS for ADD and
 * CHECK (optional for DEL). Errors are code 4 naming the variable.
 */
int cni_env_load(struct cni_env *env, struct cni_error *err);
void cni_env_free(struct cni_env *env);
/* Value of a CNI_ARGS key, or NULL. */
const char *cni_env_arg(const struct cni_env *env, const char *key);

/* ---- a request: env + parsed stdin ---- */

struct cni_request {
	struct cni_env env;
	char *stdin_buf;		/* NUL-terminated */
	size_t stdin_len;
	cJSON *conf;			/* the whole parsed config */
	const char *version;		/* conf.cniVersion ("0.1.0" if absent) */
	const char *name;		/* conf.name */
	const char *type;		/* conf.type */
	const cJSON *runtime_config;	/* conf.runtimeConfig or NULL */
	const cJSON *prev_result;	/* conf.prevResult or NULL */
};

struct cni_plugin {
	const char *name;
	const char *about;		/* one line, printed with the version */
	int (*cmd_add)(struct cni_request *req, struct cni_result *res, struct cni_error *err);
	int (*cmd_del)(struct cni_request *req, struct cni_error *err);
	int (*cmd_check)(struct cni_request *req, struct cni_error *err);
	int (*cmd_status)(struct cni_request *req, struct cni_error *err);
	int (*cmd_gc)(struct cni_request *req, struct cni_error *err);
};

/*
 * The skeleton: --version/--help, no CNI_COMMAND (about text), VERSION,
 * then env + stdin + version checks (CHECK needs >= 0.4.0, STATUS and GC
 * need >= 1.1.0) before calling the handler. Prints the result or the
 * error and returns the process exit code.
 */
int cni_plugin_main(const struct cni_plugin *p, int argc, char **argv);

/* ---- GC ---- */

struct cni_attachment {
	const char *container_id;
	const char *ifname;
};

/*
 * conf["cni.dev/valid-attachments"]: *n = -1 when the key is absent (the
 * caller must then release nothing), else the count; *list points into conf
 * and is freed by the caller with free().
 */
int cni_gc_valid_attachments(const struct cni_request *req, struct cni_attachment **list,
			     int *n, struct cni_error *err);
bool cni_attachment_valid(const struct cni_attachment *list, int n,
			  const char *container_id, const char *ifname);

#endif
