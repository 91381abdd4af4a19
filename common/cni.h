/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cni: the CNI protocol, once, for every plugin.
 *
 * Environment (CNI_*), stdin, version negotiation, results encoded for the
 * requested version, errors as the spec's JSON object, delegation to another
 * plugin through CNI_PATH, and validation of everything that can reach a path.
 *
 * A plugin fills a struct cni_plugin and calls cni_plugin_main() from main().
 * Command handlers return 0, or non-zero with *err filled (cni_errorf()).
 */
#ifndef CNI_H
#define CNI_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <cjson/cJSON.h>

#define CNI_MAX_STDIN		(1u << 20)
#define CNI_SPEC_VERSION	"1.1.0"

#define CNI_MAX_IFACES		8
#define CNI_MAX_IPS		16
#define CNI_MAX_ROUTES		64
#define CNI_MAX_DNS		8
#define CNI_UNSET		(-1)

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

/* ---- validation of what reaches a path (code 4 for env, 7 for config) ---- */

/* The spec's pattern ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$, at most 200 bytes. */
bool cni_valid_container_id(const char *id);
/*
 * CNI_NETNS: an absolute path (as cni_valid_abs_path) without control
 * characters and shorter than CNI_NETNS_MAX, so that every record that
 * holds it can be read back.
 */
#define CNI_NETNS_MAX		1024
bool cni_valid_netns_path(const char *path);
/* 1..15 bytes, not "." or "..", no '/', ':' or whitespace. */
bool cni_valid_ifname(const char *name);
/* Same pattern as a container ID: it names a directory. */
bool cni_valid_network_name(const char *name);
/*
 * Absolute, shorter than PATH_MAX, no "." or ".." component: a path from a
 * config is opened as root, so it must say plainly where it goes.
 */
bool cni_valid_abs_path(const char *path);

/* ---- results ---- */

struct cni_iface {
	char name[IFNAMSIZ];
	char mac[18];			/* "" when unset */
	int mtu;			/* 0 when unset; emitted for >= 1.1.0 */
	char sandbox[4096];		/* "" for host interfaces */
	char pci_id[32];		/* emitted for >= 1.1.0 */
};

struct cni_ip {
	char address[64];		/* CIDR, e.g. "10.1.0.5/24" */
	char gateway[48];		/* "" when unset */
	int iface;			/* index into ifaces, CNI_UNSET when absent */
};

struct cni_route {
	char dst[64];			/* CIDR */
	char gw[48];			/* "" when unset */
	int mtu, advmss, priority, table, scope;	/* CNI_UNSET when absent */
};

struct cni_dns {
	int n_nameservers;
	char nameservers[CNI_MAX_DNS][48];
	char domain[256];
	int n_search;
	char search[CNI_MAX_DNS][256];
	int n_options;
	char options[CNI_MAX_DNS][64];
};

struct cni_result {
	int n_ifaces;
	struct cni_iface ifaces[CNI_MAX_IFACES];
	int n_ips;
	struct cni_ip ips[CNI_MAX_IPS];
	int n_routes;
	struct cni_route routes[CNI_MAX_ROUTES];
	struct cni_dns dns;
};

void cni_result_init(struct cni_result *r);
void cni_route_init(struct cni_route *rt);
/* Parse a result of any supported version (prevResult, a delegate's stdout). */
int cni_result_parse(const cJSON *json, struct cni_result *r, struct cni_error *err);
/* Encode for the requested version: < 1.0.0 adds ips[].version, < 1.1.0 drops mtu/pciID. */
cJSON *cni_result_encode(const struct cni_result *r, const char *version);
int cni_result_print(const struct cni_result *r, const char *version);

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

/* ---- delegation ---- */

/*
 * Run plugin `type` found in CNI_PATH with the request's env, CNI_COMMAND
 * replaced by `cmd`, and the request's stdin. Its stderr passes through.
 * On ADD, *res (if not NULL) gets the parsed result. A failing delegate's
 * error object is propagated into *err with its code, its msg prefixed
 * by the plugin name.
 */
int cni_delegate(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		 struct cni_result *res, struct cni_error *err);

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

/*
 * The route as the spec means it: without "gw", via the IPAM's gateway,
 * that of the result's first address of the route's family that has one;
 * on-link only when there is none.
 */
void cni_route_resolve(const struct cni_result *r, const struct cni_route *rt,
		       struct cni_route *out);

#endif
