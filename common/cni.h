/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cni: the CNI protocol, once, for every plugin.
 *
 * Environment (CNI_*), stdin, version negotiation, and the skeleton that
 * dispatches a command to the plugin. Included here because every plugin
 * needs them: errors (cni_error.h), versions (cni_version.h), results
 * (cni_result.h: the skeleton prints them) and the name validators
 * (valid.h: every plugin judges the names the runtime sends). Delegation to
 * another plugin is cni_delegate.h.
 *
 * A plugin fills a struct cni_plugin and calls cni_plugin_main() from main().
 * Command handlers return 0, or non-zero with *err filled (cni_errorf()).
 */
#ifndef CNI_H
#define CNI_H

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "cni_error.h"
#include "cni_result.h"
#include "cni_version.h"
#include "valid.h"

#define CNI_MAX_STDIN		(1u << 20)

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

/* ---- environment ---- */

#define CNI_MAX_ARGS 32
/* A number macro as a string literal (a version in struct cni_plugin's formats). */
#define CNI_STR(x)	CNI_STR_(x)
#define CNI_STR_(x)	#x

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
	/*
	 * The newest version of each file it reads (docs/upgrading.md), as
	 * --version prints them after "state versions read: ", for rdma-doctor
	 * and an operator to tell what a rollback can read; NULL: none.
	 */
	const char *formats;
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
 * error and returns the process exit code. Logging is set up here, once:
 * stderr under the plugin's name, the command, container ID and ifname on
 * every line, closed before returning; a handler only applies the level
 * and file its config names (log_set_level, log_set_file_at).
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
