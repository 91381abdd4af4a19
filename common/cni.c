/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cni.h"
#include "log.h"

extern char **environ;

/* ---- errors ---- */

int cni_errorf(struct cni_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->details[0] = '\0';
	return -1;
}

void cni_error_details(struct cni_error *err, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (!err)
		return;
	n = strlen(err->details);
	if (n && n + 2 < sizeof(err->details)) {
		memcpy(err->details + n, "; ", 3);
		n += 2;
	}
	if (n >= sizeof(err->details) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(err->details + n, sizeof(err->details) - n, fmt, ap);
	va_end(ap);
}

static cJSON *error_json(const struct cni_error *err, const char *version)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "cniVersion", version ? version : CNI_SPEC_VERSION);
	cJSON_AddNumberToObject(o, "code", err->code);
	cJSON_AddStringToObject(o, "msg", err->msg);
	if (err->details[0])
		cJSON_AddStringToObject(o, "details", err->details);
	return o;
}

static int print_json(const cJSON *o)
{
	char *s;
	int r = 0;

	if (!o)
		return -ENOMEM;
	s = cJSON_Print(o);
	if (!s)
		return -ENOMEM;
	if (printf("%s\n", s) < 0 || fflush(stdout) != 0)
		r = -EIO;
	cJSON_free(s);
	return r;
}

void cni_error_print(const struct cni_error *err, const char *version)
{
	cJSON *o = error_json(err, version);

	print_json(o);
	cJSON_Delete(o);
}

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

/* ---- versions ---- */

const char *const cni_supported_versions[] = {
	"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0", NULL,
};

#define SUPPORTED_LIST "0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0"

/* "a", "a.b" or "a.b.c", decimal; missing parts are 0. */
static bool version_parse(const char *s, long v[3])
{
	int i = 0;

	if (!s || !*s)
		return false;
	v[0] = v[1] = v[2] = 0;
	for (;;) {
		char *end;

		if (!isdigit((unsigned char)*s))
			return false;
		errno = 0;
		v[i] = strtol(s, &end, 10);
		if (errno)
			return false;
		s = end;
		if (!*s)
			return true;
		if (*s != '.' || ++i == 3)
			return false;
		s++;
	}
}

int cni_version_cmp(const char *a, const char *b)
{
	long va[3], vb[3];
	bool pa = version_parse(a, va), pb = version_parse(b, vb);

	if (!pa || !pb)
		return (int)pa - (int)pb;
	for (int i = 0; i < 3; i++)
		if (va[i] != vb[i])
			return va[i] < vb[i] ? -1 : 1;
	return 0;
}

bool cni_version_supported(const char *v)
{
	if (!v)
		return false;
	for (int i = 0; cni_supported_versions[i]; i++)
		if (strcmp(v, cni_supported_versions[i]) == 0)
			return true;
	return false;
}

/* ---- validation ---- */

static bool valid_id(const char *s, size_t max)
{
	size_t n;

	if (!s || !isalnum((unsigned char)s[0]) || !isascii((unsigned char)s[0]))
		return false;
	for (n = 1; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];

		if (!(isascii(c) && (isalnum(c) || c == '_' || c == '.' || c == '-')))
			return false;
	}
	return n <= max;
}

bool cni_valid_container_id(const char *id)
{
	return valid_id(id, 200);
}

bool cni_valid_network_name(const char *name)
{
	return valid_id(name, 200);
}

bool cni_valid_abs_path(const char *path)
{
	const char *c = path;
	size_t n;

	if (!path || path[0] != '/' || strlen(path) >= PATH_MAX)
		return false;
	while (*c) {
		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
	}
	return true;
}

bool cni_valid_netns_path(const char *path)
{
	size_t n;

	if (!cni_valid_abs_path(path))
		return false;
	for (n = 0; path[n]; n++)
		if (iscntrl((unsigned char)path[n]))
			return false;
	return n < CNI_NETNS_MAX;
}

bool cni_valid_ifname(const char *name)
{
	size_t n;

	if (!name || !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (n = 0; name[n]; n++) {
		unsigned char c = (unsigned char)name[n];

		if (c == '/' || c == ':' || isspace(c))
			return false;
	}
	return n < IFNAMSIZ;
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
		if (!cni_valid_container_id(env->container_id))
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_CONTAINERID \"%s\" is invalid: it must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ and be at most 200 bytes",
					  env->container_id);
		if (!env->ifname)
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_IFNAME is required for %s", cmd);
		if (!cni_valid_ifname(env->ifname))
			return cni_errorf(err, CNI_ERR_INVALID_ENV,
					  "CNI_IFNAME \"%s\" is invalid: an interface name is 1 to 15 bytes, not \".\" or \"..\", without '/', ':' or spaces",
					  env->ifname);
	}
	if (!env->netns && (env->command == CNI_CMD_ADD || env->command == CNI_CMD_CHECK))
		return cni_errorf(err, CNI_ERR_INVALID_ENV, "CNI_NETNS is required for %s", cmd);
	if (env->netns && !cni_valid_netns_path(env->netns)) {
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
					  CNI_NETNS_MAX - 1);
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

/* ---- results ---- */

void cni_route_init(struct cni_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->mtu = rt->advmss = rt->priority = rt->table = rt->scope = CNI_UNSET;
}

void cni_result_init(struct cni_result *r)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < CNI_MAX_IPS; i++)
		r->ips[i].iface = CNI_UNSET;
	for (int i = 0; i < CNI_MAX_ROUTES; i++)
		cni_route_init(&r->routes[i]);
}

/* 4 or 6 for an IP address, 0 otherwise. */
static int ip_family(const char *s)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, s, buf) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, buf) == 1)
		return 6;
	return 0;
}

/* 4 or 6 for "addr/prefix" with a prefix that fits the family, 0 otherwise. */
static int cidr_family(const char *s)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	char *end;
	long plen;
	int fam;

	if (!slash || (size_t)(slash - s) >= sizeof(addr) || !isdigit((unsigned char)slash[1]))
		return 0;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	fam = ip_family(addr);
	errno = 0;
	plen = strtol(slash + 1, &end, 10);
	if (!fam || errno || *end || plen < 0 || plen > (fam == 4 ? 32 : 128))
		return 0;
	return fam;
}

static void add_str(cJSON *o, const char *key, const char *v)
{
	if (v && *v)
		cJSON_AddStringToObject(o, key, v);
}

static void add_int(cJSON *o, const char *key, int v)
{
	if (v != CNI_UNSET)
		cJSON_AddNumberToObject(o, key, v);
}

/* n strings laid out every stride bytes from base. */
static cJSON *string_array(const char *base, int n, size_t stride)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(base + (size_t)i * stride));
	return a;
}

static void encode_dns(cJSON *o, const struct cni_dns *d)
{
	cJSON *dns;

	if (!d->n_nameservers && !d->domain[0] && !d->n_search && !d->n_options)
		return;
	dns = cJSON_AddObjectToObject(o, "dns");
	if (!dns)
		return;
	if (d->n_nameservers)
		cJSON_AddItemToObject(dns, "nameservers",
				      string_array(d->nameservers[0], d->n_nameservers,
						   sizeof(d->nameservers[0])));
	add_str(dns, "domain", d->domain);
	if (d->n_search)
		cJSON_AddItemToObject(dns, "search",
				      string_array(d->search[0], d->n_search,
						   sizeof(d->search[0])));
	if (d->n_options)
		cJSON_AddItemToObject(dns, "options",
				      string_array(d->options[0], d->n_options,
						   sizeof(d->options[0])));
}

cJSON *cni_result_encode(const struct cni_result *r, const char *version)
{
	bool pre_1_0 = cni_version_cmp(version, "1.0.0") < 0;
	bool v1_1 = cni_version_cmp(version, "1.1.0") >= 0;
	cJSON *o = cJSON_CreateObject(), *a;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "cniVersion", version);
	if (r->n_ifaces) {
		a = cJSON_AddArrayToObject(o, "interfaces");
		for (int i = 0; a && i < r->n_ifaces; i++) {
			const struct cni_iface *f = &r->ifaces[i];
			cJSON *e = cJSON_CreateObject();

			if (!e)
				break;
			cJSON_AddStringToObject(e, "name", f->name);
			add_str(e, "mac", f->mac);
			/*
			 * 1.1.0 names them, and Go's types100, which reads 1.0.0 and
			 * 1.1.0 results alike, keeps them for 1.0.0 too: DRA drivers
			 * convert to it and feed pciID and mtu to the ResourceClaim.
			 */
			if (!pre_1_0 && f->mtu > 0)
				cJSON_AddNumberToObject(e, "mtu", f->mtu);
			add_str(e, "sandbox", f->sandbox);
			if (!pre_1_0)
				add_str(e, "pciID", f->pci_id);
			cJSON_AddItemToArray(a, e);
		}
	}
	if (r->n_ips) {
		a = cJSON_AddArrayToObject(o, "ips");
		for (int i = 0; a && i < r->n_ips; i++) {
			const struct cni_ip *ip = &r->ips[i];
			cJSON *e = cJSON_CreateObject();

			if (!e)
				break;
			if (pre_1_0)
				cJSON_AddStringToObject(e, "version",
							cidr_family(ip->address) == 6 ? "6" : "4");
			add_int(e, "interface", ip->iface);
			cJSON_AddStringToObject(e, "address", ip->address);
			add_str(e, "gateway", ip->gateway);
			cJSON_AddItemToArray(a, e);
		}
	}
	if (r->n_routes) {
		a = cJSON_AddArrayToObject(o, "routes");
		for (int i = 0; a && i < r->n_routes; i++) {
			const struct cni_route *rt = &r->routes[i];
			cJSON *e = cJSON_CreateObject();

			if (!e)
				break;
			cJSON_AddStringToObject(e, "dst", rt->dst);
			add_str(e, "gw", rt->gw);
			if (v1_1) {
				add_int(e, "mtu", rt->mtu);
				add_int(e, "advmss", rt->advmss);
				add_int(e, "priority", rt->priority);
				add_int(e, "table", rt->table);
				add_int(e, "scope", rt->scope);
			}
			cJSON_AddItemToArray(a, e);
		}
	}
	encode_dns(o, &r->dns);
	return o;
}

int cni_result_print(const struct cni_result *r, const char *version)
{
	cJSON *o = cni_result_encode(r, version);
	int ret = print_json(o);

	cJSON_Delete(o);
	return ret;
}

/* Copy an optional string member into dst; code 6 naming path.key otherwise. */
static int parse_str(const cJSON *o, const char *path, const char *key, char *dst, size_t size,
		     bool required, struct cni_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v || cJSON_IsNull(v)) {
		if (required)
			return cni_errorf(err, CNI_ERR_DECODE, "result: %s.%s is missing", path, key);
		return 0;
	}
	if (!cJSON_IsString(v))
		return cni_errorf(err, CNI_ERR_DECODE, "result: %s.%s must be a string", path, key);
	if (strlen(v->valuestring) >= size)
		return cni_errorf(err, CNI_ERR_DECODE, "result: %s.%s is longer than %zu bytes",
				  path, key, size - 1);
	memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

static int parse_int(const cJSON *o, const char *path, const char *key, int *dst,
		     struct cni_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > INT_MAX ||
	    v->valuedouble != (double)(int)v->valuedouble)
		return cni_errorf(err, CNI_ERR_DECODE,
				  "result: %s.%s must be a non-negative integer", path, key);
	*dst = (int)v->valuedouble;
	return 0;
}

/* An optional array member with at most max entries; *n is its size. */
static int parse_array(const cJSON *o, const char *key, int max, const cJSON **arr, int *n,
		       struct cni_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	*arr = NULL;
	*n = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsArray(v))
		return cni_errorf(err, CNI_ERR_DECODE, "result: %s must be an array", key);
	*n = cJSON_GetArraySize(v);
	if (*n > max)
		return cni_errorf(err, CNI_ERR_DECODE, "result: %s has %d entries, at most %d are supported",
				  key, *n, max);
	*arr = v;
	return 0;
}

static int parse_ifaces(const cJSON *json, struct cni_result *r, struct cni_error *err)
{
	const cJSON *arr, *e;
	char path[32];
	int n, i = 0;

	if (parse_array(json, "interfaces", CNI_MAX_IFACES, &arr, &n, err))
		return -1;
	cJSON_ArrayForEach(e, arr) {
		struct cni_iface *f = &r->ifaces[i];

		snprintf(path, sizeof(path), "interfaces[%d]", i);
		if (!cJSON_IsObject(e))
			return cni_errorf(err, CNI_ERR_DECODE, "result: %s must be an object", path);
		if (parse_str(e, path, "name", f->name, sizeof(f->name), true, err) ||
		    parse_str(e, path, "mac", f->mac, sizeof(f->mac), false, err) ||
		    parse_int(e, path, "mtu", &f->mtu, err) ||
		    parse_str(e, path, "sandbox", f->sandbox, sizeof(f->sandbox), false, err) ||
		    parse_str(e, path, "pciID", f->pci_id, sizeof(f->pci_id), false, err))
			return -1;
		r->n_ifaces = ++i;
	}
	return 0;
}

static int parse_ips(const cJSON *json, struct cni_result *r, struct cni_error *err)
{
	const cJSON *arr, *e;
	char path[32];
	int n, i = 0;

	if (parse_array(json, "ips", CNI_MAX_IPS, &arr, &n, err))
		return -1;
	cJSON_ArrayForEach(e, arr) {
		struct cni_ip *ip = &r->ips[i];

		snprintf(path, sizeof(path), "ips[%d]", i);
		if (!cJSON_IsObject(e))
			return cni_errorf(err, CNI_ERR_DECODE, "result: %s must be an object", path);
		if (parse_str(e, path, "address", ip->address, sizeof(ip->address), true, err) ||
		    parse_str(e, path, "gateway", ip->gateway, sizeof(ip->gateway), false, err) ||
		    parse_int(e, path, "interface", &ip->iface, err))
			return -1;
		if (!cidr_family(ip->address))
			return cni_errorf(err, CNI_ERR_DECODE,
					  "result: %s.address \"%s\" is not an address with a prefix length (want 10.1.0.5/24 or fd00::5/64)",
					  path, ip->address);
		if (ip->gateway[0] && !ip_family(ip->gateway))
			return cni_errorf(err, CNI_ERR_DECODE,
					  "result: %s.gateway \"%s\" is not an IP address", path,
					  ip->gateway);
		r->n_ips = ++i;
	}
	return 0;
}

static int parse_routes(const cJSON *json, struct cni_result *r, struct cni_error *err)
{
	const cJSON *arr, *e;
	char path[32];
	int n, i = 0;

	if (parse_array(json, "routes", CNI_MAX_ROUTES, &arr, &n, err))
		return -1;
	cJSON_ArrayForEach(e, arr) {
		struct cni_route *rt = &r->routes[i];

		snprintf(path, sizeof(path), "routes[%d]", i);
		if (!cJSON_IsObject(e))
			return cni_errorf(err, CNI_ERR_DECODE, "result: %s must be an object", path);
		if (parse_str(e, path, "dst", rt->dst, sizeof(rt->dst), true, err) ||
		    parse_str(e, path, "gw", rt->gw, sizeof(rt->gw), false, err) ||
		    parse_int(e, path, "mtu", &rt->mtu, err) ||
		    parse_int(e, path, "advmss", &rt->advmss, err) ||
		    parse_int(e, path, "priority", &rt->priority, err) ||
		    parse_int(e, path, "table", &rt->table, err) ||
		    parse_int(e, path, "scope", &rt->scope, err))
			return -1;
		if (!cidr_family(rt->dst))
			return cni_errorf(err, CNI_ERR_DECODE,
					  "result: %s.dst \"%s\" is not a prefix (want 0.0.0.0/0 or 10.2.0.0/16)",
					  path, rt->dst);
		if (rt->gw[0] && !ip_family(rt->gw))
			return cni_errorf(err, CNI_ERR_DECODE,
					  "result: %s.gw \"%s\" is not an IP address", path, rt->gw);
		r->n_routes = ++i;
	}
	return 0;
}

static int parse_strings(const cJSON *o, const char *key, char *dst, size_t stride, int max,
			 int *n, struct cni_error *err)
{
	const cJSON *arr, *e;

	if (parse_array(o, key, max, &arr, n, err))
		return -1;
	*n = 0;
	cJSON_ArrayForEach(e, arr) {
		if (!cJSON_IsString(e) || strlen(e->valuestring) >= stride)
			return cni_errorf(err, CNI_ERR_DECODE,
					  "result: dns.%s[%d] must be a string shorter than %zu bytes",
					  key, *n, stride);
		memcpy(dst + (size_t)*n * stride, e->valuestring, strlen(e->valuestring) + 1);
		(*n)++;
	}
	return 0;
}

static int parse_dns(const cJSON *json, struct cni_dns *d, struct cni_error *err)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(json, "dns");

	if (!o || cJSON_IsNull(o))
		return 0;
	if (!cJSON_IsObject(o))
		return cni_errorf(err, CNI_ERR_DECODE, "result: dns must be an object");
	if (parse_strings(o, "nameservers", &d->nameservers[0][0], sizeof(d->nameservers[0]),
			  CNI_MAX_DNS, &d->n_nameservers, err) ||
	    parse_str(o, "dns", "domain", d->domain, sizeof(d->domain), false, err) ||
	    parse_strings(o, "search", &d->search[0][0], sizeof(d->search[0]), CNI_MAX_DNS,
			  &d->n_search, err) ||
	    parse_strings(o, "options", &d->options[0][0], sizeof(d->options[0]), CNI_MAX_DNS,
			  &d->n_options, err))
		return -1;
	return 0;
}

int cni_result_parse(const cJSON *json, struct cni_result *r, struct cni_error *err)
{
	cni_result_init(r);
	if (!cJSON_IsObject(json))
		return cni_errorf(err, CNI_ERR_DECODE, "result: must be a JSON object");
	if (parse_ifaces(json, r, err) || parse_ips(json, r, err) ||
	    parse_routes(json, r, err) || parse_dns(json, &r->dns, err))
		return -1;
	for (int i = 0; i < r->n_ips; i++)
		if (r->ips[i].iface != CNI_UNSET && r->ips[i].iface >= r->n_ifaces)
			return cni_errorf(err, CNI_ERR_DECODE,
					  "result: ips[%d].interface %d refers to no interface (%d listed)",
					  i, r->ips[i].iface, r->n_ifaces);
	return 0;
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
	fprintf(f, "CNI protocol versions supported: " SUPPORTED_LIST "\n");
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
	r = print_json(o);
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

static int request_parse(struct cni_request *req, struct cni_error *err)
{
	enum cni_cmd cmd = req->env.command;
	const char *end = NULL;
	const cJSON *v;
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

	v = cJSON_GetObjectItemCaseSensitive(req->conf, "cniVersion");
	if (v && !cJSON_IsString(v))
		return cni_errorf(err, CNI_ERR_DECODE, "cniVersion: must be a string such as \"1.1.0\"");
	/* The spec: a config without cniVersion is 0.1.0, which we no longer serve. */
	req->version = v ? v->valuestring : "0.1.0";
	if (!cni_version_supported(req->version))
		return cni_errorf(err, CNI_ERR_INCOMPATIBLE_VERSION,
				  "cniVersion \"%s\" is not supported: set \"cniVersion\" to one of " SUPPORTED_LIST,
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

	v = cJSON_GetObjectItemCaseSensitive(req->conf, "name");
	if (v && !cJSON_IsString(v))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "name: must be a string");
	if (!v && cmd != CNI_CMD_STATUS)
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "name: missing; set \"name\" to the network's name");
	if (v && !cni_valid_network_name(v->valuestring))
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

/* ---- delegation ---- */

static bool valid_plugin_type(const char *t)
{
	return valid_id(t, NAME_MAX);
}

static int find_plugin(const char *type, const char *cni_path, char *out, size_t size)
{
	const char *p = cni_path;

	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
		struct stat st;

		if (dlen && (size_t)snprintf(out, size, "%.*s/%s", (int)dlen, p, type) < size &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return -ENOENT;
}

/* environ with CNI_COMMAND replaced: an array of pointers into environ plus one owned string. */
static char **child_env(const char *verb, char **owned)
{
	size_t n = 0, j = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp || asprintf(owned, "CNI_COMMAND=%s", verb) < 0) {
		free(envp);
		*owned = NULL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "CNI_COMMAND=", 12) != 0)
			envp[j++] = environ[i];
	envp[j] = *owned;
	return envp;
}

/*
 * Feed stdin and collect stdout at the same time: a plugin may print before
 * it has read everything, and neither pipe holds a whole config.
 */
static int pump(int in_fd, const char *data, size_t len, int out_fd, char **out, size_t *out_len)
{
	size_t off = 0, n = 0, cap = 4096;
	char *b = malloc(cap + 1), *nb;
	int r = 0;

	if (!b)
		return -ENOMEM;
	if (in_fd >= 0 && len == 0) {
		close(in_fd);
		in_fd = -1;
	}
	while (out_fd >= 0) {
		struct pollfd pfd[2] = {
			{ .fd = out_fd, .events = POLLIN },
			{ .fd = in_fd, .events = POLLOUT },
		};
		ssize_t w;

		if (poll(pfd, in_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (in_fd >= 0 && pfd[1].revents) {
			w = write(in_fd, data + off, len - off);
			/* EPIPE: the plugin did not want its stdin, which is its right. */
			if (w > 0)
				off += (size_t)w;
			if ((w < 0 && errno != EINTR && errno != EAGAIN) || off == len) {
				close(in_fd);
				in_fd = -1;
			}
		}
		if (pfd[0].revents) {
			if (n == cap) {
				if (cap >= CNI_MAX_STDIN) {
					r = -EFBIG;
					break;
				}
				cap *= 2;
				nb = realloc(b, cap + 1);
				if (!nb) {
					r = -ENOMEM;
					break;
				}
				b = nb;
			}
			w = read(out_fd, b + n, cap - n);
			if (w < 0 && errno != EINTR && errno != EAGAIN) {
				r = -errno;
				break;
			}
			if (w == 0)
				break;
			if (w > 0)
				n += (size_t)w;
		}
	}
	if (in_fd >= 0)
		close(in_fd);
	if (r) {
		free(b);
		return r;
	}
	b[n] = '\0';
	*out = b;
	*out_len = n;
	return 0;
}

static void delegate_failed(const char *type, int status, const char *out, struct cni_error *err)
{
	cJSON *o = cJSON_Parse(out);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "code");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "msg");
	const cJSON *details = cJSON_GetObjectItemCaseSensitive(o, "details");

	if (cJSON_IsNumber(code) && code->valueint > 0) {
		cni_errorf(err, code->valueint, "%s: %s", type,
			   cJSON_IsString(msg) ? msg->valuestring : "failed");
		if (cJSON_IsString(details) && details->valuestring[0])
			cni_error_details(err, "%s", details->valuestring);
	} else {
		size_t line = strcspn(out, "\n");

		cni_errorf(err, CNI_ERR_PLUGIN, "%s failed with exit status %d%s%.*s", type, status,
			   line ? ": " : " and no output", (int)(line > 200 ? 200 : line), out);
	}
	cJSON_Delete(o);
}

static int delegate_result(const char *type, const char *out, struct cni_result *res,
			   struct cni_error *err)
{
	struct cni_error perr = { 0 };
	cJSON *o = cJSON_Parse(out);
	int r;

	if (!o)
		return cni_errorf(err, CNI_ERR_DECODE, "%s: its result is not JSON (output starts \"%.40s\")",
				  type, out);
	r = cni_result_parse(o, res, &perr);
	cJSON_Delete(o);
	if (r)
		return cni_errorf(err, CNI_ERR_DECODE, "%s: invalid %s", type, perr.msg);
	return 0;
}

int cni_delegate(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		 struct cni_result *res, struct cni_error *err)
{
	char exe[PATH_MAX], *owned = NULL, **envp = NULL, *out = NULL;
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 }, status, r, ret = -1;
	posix_spawn_file_actions_t fa;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	char *argv[2];
	size_t out_len;
	pid_t pid;

	if (!type || !valid_plugin_type(type))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "plugin type \"%s\" is invalid: it must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
				  type ? type : "");
	if (find_plugin(type, req->env.path, exe, sizeof(exe)))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "plugin type \"%s\": no executable of that name in CNI_PATH \"%s\"",
				  type, req->env.path ? req->env.path : "");
	envp = child_env(cni_cmd_name(cmd), &owned);
	if (!envp)
		return cni_errorf(err, CNI_ERR_PLUGIN, "%s: out of memory", type);
	if (pipe2(in, O_CLOEXEC) || pipe2(outp, O_CLOEXEC)) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: pipe: %s", type, strerror(errno));
		goto out_pipes;
	}
	if (posix_spawn_file_actions_init(&fa)) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: out of memory", type);
		goto out_pipes;
	}
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, outp[1], STDOUT_FILENO);
	argv[0] = (char *)type;
	argv[1] = NULL;
	r = posix_spawn(&pid, exe, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (r) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: cannot run %s: %s", type, exe, strerror(r));
		goto out_pipes;
	}
	close(in[0]);
	close(outp[1]);
	in[0] = outp[1] = -1;
	fcntl(in[1], F_SETFL, O_NONBLOCK);

	sigaction(SIGPIPE, &ign, &old_pipe);
	r = pump(in[1], req->stdin_buf ? req->stdin_buf : "", req->stdin_len, outp[0], &out,
		 &out_len);
	sigaction(SIGPIPE, &old_pipe, NULL);
	in[1] = -1;
	close(outp[0]);
	outp[0] = -1;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			cni_errorf(err, CNI_ERR_PLUGIN, "%s: waitpid: %s", type, strerror(errno));
			goto out_free;
		}
	if (r == -EFBIG) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: printed more than 1 MiB", type);
		goto out_free;
	}
	if (r) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: reading its output: %s", type, strerror(-r));
		goto out_free;
	}
	if (WIFSIGNALED(status)) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s was killed by signal %d (%s)", type,
			   WTERMSIG(status), strsignal(WTERMSIG(status)));
		goto out_free;
	}
	if (WEXITSTATUS(status) != 0) {
		delegate_failed(type, WEXITSTATUS(status), out, err);
		goto out_free;
	}
	if (cmd == CNI_CMD_ADD && res && delegate_result(type, out, res, err))
		goto out_free;
	ret = 0;
out_free:
	free(out);
out_pipes:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	free(owned);
	free(envp);
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

void cni_route_resolve(const struct cni_result *r, const struct cni_route *rt,
		       struct cni_route *out)
{
	bool v6 = strchr(rt->dst, ':') != NULL;
	int i;

	*out = *rt;
	if (rt->gw[0])
		return;
	for (i = 0; i < r->n_ips; i++)
		if (r->ips[i].gateway[0] && (strchr(r->ips[i].gateway, ':') != NULL) == v6) {
			snprintf(out->gw, sizeof(out->gw), "%s", r->ips[i].gateway);
			return;
		}
}
