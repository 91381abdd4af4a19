/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cni.h"
#include "log.h"

static const char *const cmd_names[] = {
	[CNI_CMD_NONE] = "",
	[CNI_CMD_ADD] = "ADD",
	[CNI_CMD_DEL] = "DEL",
	[CNI_CMD_CHECK] = "CHECK",
	[CNI_CMD_VERSION] = "VERSION",
	[CNI_CMD_STATUS] = "STATUS",
	[CNI_CMD_GC] = "GC",
};

const char *cni_cmd_name(enum cni_cmd cmd)
{
	if ((unsigned)cmd >= sizeof(cmd_names) / sizeof(cmd_names[0]))
		return "";
	return cmd_names[cmd];
}

static enum cni_cmd cmd_parse(const char *s)
{
	for (size_t i = 1; i < sizeof(cmd_names) / sizeof(cmd_names[0]); i++)
		if (strcmp(s, cmd_names[i]) == 0)
			return (enum cni_cmd)i;
	return CNI_CMD_NONE;
}

/* ---- environment ---- */

static int env_split_args(struct cni_env *env, struct cni_error *err)
{
	char *save = NULL, *tok;

	if (!env->args || !*env->args)
		return 0;
	env->args_buf = strdup(env->args);
	if (!env->args_buf)
		return cni_errorf(err, CNI_ERR_PLUGIN, "out of memory reading CNI_ARGS");
	for (tok = strtok_r(env->args_buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_ARGS: invalid pair \"%s\" (want KEY=VALUE pairs separated by ';')",
					  tok);
		if (env->n_args == CNI_MAX_ARGS)
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_ARGS: more than %d pairs", CNI_MAX_ARGS);
		*eq = '\0';
		env->kv[env->n_args].key = tok;
		env->kv[env->n_args].value = eq + 1;
		env->n_args++;
	}
	return 0;
}

static const char *env_get(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int cni_env_load(struct cni_env *env, struct cni_error *err)
{
	const char *cmd = env_get("CNI_COMMAND");
	bool needs_ids;

	memset(env, 0, sizeof(*env));
	if (!cmd)
		return cni_errorf(err, CNI_ERR_INVALID_ENV, "CNI_COMMAND is not set");
	env->command = cmd_parse(cmd);
	if (env->command == CNI_CMD_NONE)
		return cni_errorf(err, CNI_ERR_INVALID_ENV,
				  "CNI_COMMAND \"%s\" is unknown (want ADD, DEL, CHECK, VERSION, STATUS or GC)",
				  cmd);
	env->container_id = env_get("CNI_CONTAINERID");
	env->netns = env_get("CNI_NETNS");
	env->ifname = env_get("CNI_IFNAME");
	env->args = env_get("CNI_ARGS");
	env->path = env_get("CNI_PATH");

	needs_ids = env->command == CNI_CMD_ADD || env->command == CNI_CMD_DEL ||
		    env->command == CNI_CMD_CHECK;
	if (needs_ids) {
		if (!env->container_id)
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_CONTAINERID is required for %s", cmd);
		if (!valid_container_id(env->container_id))
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_CONTAINERID \"%s\" is invalid: it must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ and be at most 200 bytes",
					  env->container_id);
		if (!env->ifname)
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_IFNAME is required for %s", cmd);
		if (!valid_ifname(env->ifname))
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_IFNAME \"%s\" is invalid: an interface name is 1 to 15 bytes, not \".\" or \"..\", without '/', ':' or spaces",
					  env->ifname);
	}
	if (!env->netns && (env->command == CNI_CMD_ADD || env->command == CNI_CMD_CHECK))
		return cni_errorf(err, CNI_ERR_INVALID_ENV, "CNI_NETNS is required for %s", cmd);
	if (env->netns && !valid_netns_path(env->netns)) {
		/*
		 * ADD records the path for DEL: one DEL could not read back
		 * must never be accepted. DEL itself needs no namespace, so a
		 * path no ADD accepted is one that is gone.
		 */
		if (env->command != CNI_CMD_ADD && env->command != CNI_CMD_CHECK) {
			env->netns = NULL;
		} else {
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_NETNS \"%.64s%s\" is invalid: want an absolute path of at most %d bytes, without \".\" or \"..\" components or control characters (e.g. /var/run/netns/cni-1234)",
					  env->netns, strlen(env->netns) > 64 ? "..." : "",
					  VALID_NETNS_MAX - 1);
		}
	}
	return env_split_args(env, err);
}

void cni_env_free(struct cni_env *env)
{
	free(env->args_buf);
	memset(env, 0, sizeof(*env));
}

const char *cni_env_arg(const struct cni_env *env, const char *key)
{
	for (int i = 0; i < env->n_args; i++)
		if (strcmp(env->kv[i].key, key) == 0)
			return env->kv[i].value;
	return NULL;
}

/* ---- the skeleton ---- */

static int read_all(int fd, char **buf, size_t *len, size_t max)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap + 1), *nb;
	ssize_t r;

	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(b);
				return -EFBIG;
			}
			cap *= 2;
			nb = realloc(b, cap + 1);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			free(b);
			return (int)r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(b);
		return -EFBIG;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

static void print_versions(FILE *f)
{
	fprintf(f, "CNI protocol versions supported: " CNI_VERSION_LIST "\n");
}

static void print_help(const struct cni_plugin *p)
{
	printf("Usage: %s [--version | --help]\n"
	       "%s\n\n"
	       "A CNI plugin: the container runtime runs it with the command and its\n"
	       "arguments in the environment and the network configuration (JSON) on stdin.\n"
	       "  CNI_COMMAND      ADD, DEL, CHECK, VERSION, STATUS or GC\n"
	       "  CNI_CONTAINERID  container ID (ADD, DEL, CHECK)\n"
	       "  CNI_NETNS        path of the network namespace (ADD, CHECK; optional for DEL)\n"
	       "  CNI_IFNAME       interface name inside the container (ADD, DEL, CHECK)\n"
	       "  CNI_ARGS         extra KEY=VALUE pairs separated by ';' (optional)\n"
	       "  CNI_PATH         directories searched for delegated plugins, ':'-separated\n",
	       p->name, p->about ? p->about : "");
}

static int cmd_version(void)
{
	cJSON *o = cJSON_CreateObject(), *a;
	int r;

	if (!o)
		return 1;
	cJSON_AddStringToObject(o, "cniVersion", CNI_SPEC_VERSION);
	a = cJSON_AddArrayToObject(o, "supportedVersions");
	for (int i = 0; a && cni_supported_versions[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(cni_supported_versions[i]));
	r = cni_json_print(o);
	cJSON_Delete(o);
	return r ? 1 : 0;
}

/*
 * Go's encoding/json (Multus, libcni, the runtimes) keeps the last of two
 * keys that differ only in case, or not at all, and cJSON the first: the
 * runtime and the plugin would mean different networks. Keys are sorted
 * case-insensitively, so a duplicate is a neighbour. dup[] gets the two
 * keys as written, path where they are.
 */
static int cmp_key_ci(const void *a, const void *b)
{
	return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

static bool json_dup_keys(const cJSON *node, char *path, size_t used, size_t cap,
			  const char *dup[2])
{
	const char **keys;
	const cJSON *e;
	size_t n = 0, i, add;
	bool found = false;

	if (!cJSON_IsObject(node) && !cJSON_IsArray(node))
		return false;
	if (cJSON_IsObject(node)) {
		for (e = node->child; e; e = e->next)
			n++;
		keys = n > 1 ? malloc(n * sizeof(*keys)) : NULL;
		if (keys) {
			for (i = 0, e = node->child; e; e = e->next)
				keys[i++] = e->string ? e->string : "";
			qsort(keys, n, sizeof(*keys), cmp_key_ci);
			for (i = 1; i < n && !found; i++)
				if (!strcasecmp(keys[i - 1], keys[i])) {
					dup[0] = keys[i - 1];
					dup[1] = keys[i];
					found = true;
				}
			free(keys);
		}
		if (found)
			return true;
	}
	i = 0;
	for (e = node->child; e; e = e->next, i++) {
		if (cJSON_IsObject(node))
			add = (size_t)snprintf(path + used, cap - used, "%s%s", used ? "." : "",
					       e->string ? e->string : "");
		else
			add = (size_t)snprintf(path + used, cap - used, "[%zu]", i);
		if (used + add >= cap)
			add = cap - used - 1;
		if (json_dup_keys(e, path, used + add, cap, dup))
			return true;
		path[used] = '\0';
	}
	return false;
}

/*
 * Where a \u0000 escape is in the JSON text: cJSON ends the string there,
 * so "netA\u0000evil" would name netA. The text is valid JSON already.
 */
static bool json_nul_escape(const char *s, size_t len, size_t *at)
{
	bool in_str = false;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!in_str) {
			in_str = s[i] == '"';
			continue;
		}
		if (s[i] == '"') {
			in_str = false;
		} else if (s[i] == '\\') {
			if (i + 5 < len && s[i + 1] == 'u' && !strncmp(s + i + 2, "0000", 4)) {
				*at = i;
				return true;
			}
			i++;
		}
	}
	return false;
}

/* Refused on every command but DEL, which must finish: there, a warning. */
static int json_hazards(struct cni_request *req, struct cni_error *err)
{
	const char *dup[2] = { NULL, NULL };
	char path[256] = "";
	size_t at;

	if (json_nul_escape(req->stdin_buf, req->stdin_len, &at)) {
		if (req->env.command == CNI_CMD_DEL) {
			log_warn("network config: \\u0000 at byte %zu: the string is cut there", at);
		} else {
			return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
					  "network config: \\u0000 at byte %zu: a NUL cannot be part of a name, a path or any value here; remove it",
					  at);
		}
	}
	if (json_dup_keys(req->conf, path, 0, sizeof(path), dup)) {
		if (req->env.command == CNI_CMD_DEL)
			log_warn("network config: duplicate keys \"%s\" and \"%s\" in %s: the first is used",
				 dup[0], dup[1], path[0] ? path : "the top level");
		else
			return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
					  "network config: duplicate keys \"%s\" and \"%s\" in %s: Go-based runtimes and Multus take the last, this plugin would not; keep one",
					  dup[0], dup[1], path[0] ? path : "the top level");
	}
	return 0;
}

/* stdin, whole, as one JSON object: req->stdin_buf and req->conf. */
static int request_read(struct cni_request *req, struct cni_error *err)
{
	const char *end = NULL;
	int r;

	r = read_all(STDIN_FILENO, &req->stdin_buf, &req->stdin_len, CNI_MAX_STDIN);
	if (r == -EFBIG)
		return cni_errorf(err, CNI_ERR_DECODE, "network config larger than 1 MiB");
	if (r < 0)
		return cni_errorf(err, CNI_ERR_IO, "reading the network config from stdin: %s",
				  strerror(-r));
	if (strlen(req->stdin_buf) != req->stdin_len)
		return cni_errorf(err, CNI_ERR_DECODE, "network config: NUL byte at byte %zu",
				  strlen(req->stdin_buf));
	/* The length counts the terminating NUL: cJSON looks for it to reject trailing bytes. */
	req->conf = cJSON_ParseWithLengthOpts(req->stdin_buf, req->stdin_len + 1, &end, true);
	if (!req->conf) {
		size_t pos = end ? (size_t)(end - req->stdin_buf) : 0;

		if (req->stdin_len == 0)
			return cni_errorf(err, CNI_ERR_DECODE,
					  "network config: stdin is empty (want a JSON object)");
		return cni_errorf(err, CNI_ERR_DECODE,
				  "network config: invalid JSON at byte %zu (near \"%.20s\")", pos,
				  req->stdin_buf + (pos < req->stdin_len ? pos : req->stdin_len));
	}
	if (!cJSON_IsObject(req->conf))
		return cni_errorf(err, CNI_ERR_DECODE, "network config: must be a JSON object");
	if (json_hazards(req, err) < 0)
		return -1;
	return 0;
}

/* cniVersion, which must serve the command; req->version is set before it is judged. */
static int request_version(struct cni_request *req, struct cni_error *err)
{
	enum cni_cmd cmd = req->env.command;
	const cJSON *v;

	v = cJSON_GetObjectItemCaseSensitive(req->conf, "cniVersion");
	if (v && !cJSON_IsString(v))
		return cni_errorf(err, CNI_ERR_DECODE, "cniVersion: must be a string such as \"1.1.0\"");
	/* The spec: a config without cniVersion is 0.1.0, which we no longer serve. */
	req->version = v ? v->valuestring : "0.1.0";
	if (!cni_version_supported(req->version))
		return cni_errorf(err, CNI_ERR_INCOMPATIBLE_VERSION,
				  "cniVersion \"%s\" is not supported: set \"cniVersion\" to one of " CNI_VERSION_LIST,
				  req->version);
	if (cmd == CNI_CMD_CHECK && cni_version_cmp(req->version, "0.4.0") < 0)
		return cni_errorf(err, CNI_ERR_INCOMPATIBLE_VERSION,
				  "CHECK needs cniVersion 0.4.0 or later (config has \"%s\")",
				  req->version);
	if ((cmd == CNI_CMD_STATUS || cmd == CNI_CMD_GC) &&
	    cni_version_cmp(req->version, "1.1.0") < 0)
		return cni_errorf(err, CNI_ERR_INCOMPATIBLE_VERSION,
				  "%s needs cniVersion 1.1.0 or later (config has \"%s\")",
				  cni_cmd_name(cmd), req->version);
	return 0;
}

/* The top-level fields every plugin reads: name, type, runtimeConfig, prevResult. */
static int request_fields(struct cni_request *req, struct cni_error *err)
{
	enum cni_cmd cmd = req->env.command;
	const cJSON *v;

	v = cJSON_GetObjectItemCaseSensitive(req->conf, "name");
	if (v && !cJSON_IsString(v))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "name: must be a string");
	if (!v && cmd != CNI_CMD_STATUS)
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "name: missing; set \"name\" to the network's name");
	if (v && !valid_network_name(v->valuestring))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "name: \"%s\" is invalid: it must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ and be at most 200 bytes",
				  v->valuestring);
	req->name = v ? v->valuestring : NULL;

	v = cJSON_GetObjectItemCaseSensitive(req->conf, "type");
	if (v && !cJSON_IsString(v))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "type: must be a string");
	req->type = v ? v->valuestring : NULL;

	v = cJSON_GetObjectItemCaseSensitive(req->conf, "runtimeConfig");
	if (v && !cJSON_IsNull(v) && !cJSON_IsObject(v))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "runtimeConfig: must be an object");
	req->runtime_config = cJSON_IsObject(v) ? v : NULL;

	v = cJSON_GetObjectItemCaseSensitive(req->conf, "prevResult");
	if (v && !cJSON_IsNull(v) && !cJSON_IsObject(v)) {
		/* DEL and GC need nothing from it, and must finish whatever it holds. */
		if (cmd != CNI_CMD_ADD && cmd != CNI_CMD_CHECK) {
			log_warn("prevResult is not an object: ignored");
			v = NULL;
		} else {
			return cni_errorf(err, CNI_ERR_DECODE, "prevResult: must be an object");
		}
	}
	req->prev_result = cJSON_IsObject(v) ? v : NULL;
	return 0;
}

static int request_parse(struct cni_request *req, struct cni_error *err)
{
	if (request_read(req, err) < 0 || request_version(req, err) < 0)
		return -1;
	return request_fields(req, err);
}

/* The version errors are answered in: the config's, when we can serve it. */
static const char *reply_version(const struct cni_request *req)
{
	const cJSON *v;

	if (req->version && cni_version_supported(req->version))
		return req->version;
	v = cJSON_GetObjectItemCaseSensitive(req->conf, "cniVersion");
	if (cJSON_IsString(v) && cni_version_supported(v->valuestring))
		return v->valuestring;
	return CNI_SPEC_VERSION;
}

static int dispatch(const struct cni_plugin *p, struct cni_request *req, struct cni_result *res,
		    struct cni_error *err)
{
	int (*fn)(struct cni_request *, struct cni_error *) = NULL;
	enum cni_cmd cmd = req->env.command;

	switch (cmd) {
	case CNI_CMD_ADD:
		if (!p->cmd_add)
			break;
		return p->cmd_add(req, res, err);
	case CNI_CMD_DEL:
		fn = p->cmd_del;
		break;
	case CNI_CMD_CHECK:
		fn = p->cmd_check;
		break;
	case CNI_CMD_STATUS:
		fn = p->cmd_status;
		break;
	case CNI_CMD_GC:
		fn = p->cmd_gc;
		break;
	default:
		break;
	}
	if (!fn)
		return cni_errorf(err, CNI_ERR_INVALID_ENV, "CNI_COMMAND %s is not supported by %s",
				  cni_cmd_name(cmd), p->name);
	return fn(req, err);
}

int cni_plugin_main(const struct cni_plugin *p, int argc, char **argv)
{
	struct cni_request req = { 0 };
	struct cni_error err = { 0 };
	struct cni_result *res = NULL;
	const char *cmd;
	int ret = 1;

	log_init(p->name);
	if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0)) {
		printf("%s %s\n", p->name, PROJECT_VERSION);
		print_versions(stdout);
		if (p->formats)
			printf("state versions read: %s\n", p->formats);
		return 0;
	}
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		print_help(p);
		return 0;
	}
	cmd = getenv("CNI_COMMAND");
	if (!cmd || !*cmd) {
		fprintf(stderr, "%s\n%s %s\n", p->about ? p->about : p->name, p->name,
			PROJECT_VERSION);
		print_versions(stderr);
		return 0;
	}
	if (strcmp(cmd, "VERSION") == 0) {
		char *buf = NULL;
		size_t len;

		/* The runtime may send a config or nothing; either way it is not needed. */
		if (read_all(STDIN_FILENO, &buf, &len, CNI_MAX_STDIN) == 0)
			free(buf);
		return cmd_version();
	}

	if (cni_env_load(&req.env, &err) == 0) {
		log_set_context(cni_cmd_name(req.env.command), req.env.container_id,
				req.env.ifname);
		request_parse(&req, &err);
	} else if (req.env.command != CNI_CMD_NONE) {
		/* Only to answer in the caller's version; the env error stands. */
		request_parse(&req, &(struct cni_error){ 0 });
	}
	if (err.code)
		goto fail;

	res = malloc(sizeof(*res));
	if (!res) {
		cni_errorf(&err, CNI_ERR_PLUGIN, "out of memory");
		goto fail;
	}
	cni_result_init(res);
	if (dispatch(p, &req, res, &err) != 0 || err.code) {
		if (!err.code)
			cni_errorf(&err, CNI_ERR_PLUGIN, "%s failed", cni_cmd_name(req.env.command));
		goto fail;
	}
	if (req.env.command == CNI_CMD_ADD && cni_result_print(res, req.version) != 0) {
		log_error("writing the result to stdout failed");
		goto out;
	}
	log_debug("%s succeeded", cni_cmd_name(req.env.command));
	ret = 0;
	goto out;
fail:
	log_error("%s%s%s", err.msg, err.details[0] ? ": " : "", err.details);
	cni_error_print(&err, reply_version(&req));
out:
	free(res);
	cJSON_Delete(req.conf);
	free(req.stdin_buf);
	cni_env_free(&req.env);
	log_close();
	return ret;
}

/* ---- GC ---- */

int cni_gc_valid_attachments(const struct cni_request *req, struct cni_attachment **list,
			     int *n, struct cni_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(req->conf, "cni.dev/valid-attachments");
	const cJSON *e;
	int i = 0, count;

	*list = NULL;
	*n = -1;
	if (!arr)
		return 0;
	/* libcni's empty list (a nil slice): CRI-O sends it for a network without pods. */
	if (cJSON_IsNull(arr)) {
		*n = 0;
		return 0;
	}
	if (!cJSON_IsArray(arr))
		return cni_errorf(err, CNI_ERR_DECODE,
				  "cni.dev/valid-attachments: must be an array of {containerID, ifname}");
	count = cJSON_GetArraySize(arr);
	*list = calloc((size_t)count + 1, sizeof(**list));
	if (!*list)
		return cni_errorf(err, CNI_ERR_PLUGIN, "out of memory");
	cJSON_ArrayForEach(e, arr) {
		const cJSON *cid = cJSON_GetObjectItemCaseSensitive(e, "containerID");
		const cJSON *ifn = cJSON_GetObjectItemCaseSensitive(e, "ifname");

		if (!cJSON_IsString(cid) || !cJSON_IsString(ifn)) {
			free(*list);
			*list = NULL;
			return cni_errorf(err, CNI_ERR_DECODE,
					  "cni.dev/valid-attachments[%d]: must be an object with string \"containerID\" and \"ifname\"",
					  i);
		}
		(*list)[i].container_id = cid->valuestring;
		(*list)[i].ifname = ifn->valuestring;
		i++;
	}
	*n = count;
	return 0;
}

bool cni_attachment_valid(const struct cni_attachment *list, int n, const char *container_id,
			  const char *ifname)
{
	if (n < 0)
		return true;
	for (int i = 0; i < n; i++)
		if (strcmp(list[i].container_id, container_id) == 0 &&
		    strcmp(list[i].ifname, ifname) == 0)
			return true;
	return false;
}
