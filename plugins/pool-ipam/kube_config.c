/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "file.h"
#include "kube_config.h"

#define KUBE_MAX_CONFIG	(1u << 20)	/* a kubeconfig with inline certificates is a few KiB */
#define KUBE_MAX_PEM	(1u << 20)
#define KUBE_MAX_TOKEN	(64u << 10)	/* service-account tokens are about 1 KiB */

int kube_fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* ------------------------------------------------------------------ */
/* base64 (RFC 4648, padded), as kubectl writes *-data fields */

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Whitespace is skipped (folded YAML strings keep line breaks); anything else is -EINVAL. */
static int base64_decode(const char *in, size_t inlen, char **out, size_t *outlen)
{
	unsigned long acc = 0;
	size_t i, n = 0, pad = 0, len = 0;
	int bits = 0, v;
	char *buf;

	buf = malloc(inlen / 4 * 3 + 4);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < inlen; i++) {
		unsigned char c = (unsigned char)in[i];

		if (isspace(c))
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || pad)
			goto bad;
		acc = (acc << 6 | (unsigned long)v) & 0xffffff;
		bits += 6;
		n++;
		if (bits >= 8) {
			bits -= 8;
			buf[len++] = (char)(acc >> bits & 0xff);
		}
	}
	/* Groups of four characters, the last one padded to four. */
	if (n == 0 || (n + pad) % 4 || pad > 2 || (pad && 4 - n % 4 != pad))
		goto bad;
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
bad:
	explicit_bzero(buf, inlen / 4 * 3 + 4);
	free(buf);
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* secrets */

void kube_secret_free(char **p, size_t len)
{
	if (*p) {
		explicit_bzero(*p, len);
		free(*p);
		*p = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* kubeconfig */

struct kcfg {
	const char *path;
	char dir[PATH_MAX];
	yaml_document_t doc;
	yaml_node_t *root;
	char *err;
	size_t errlen;
};

/* ------------------------------------------------------------------ */
/* libraries loaded on first use */

/*
 * dlopen soname and resolve names[] into syms[]. pool-ipam links neither
 * libcurl nor libyaml: every exec would pay for loading them (~10 ms for
 * libcurl's 33 objects, ~0.1 ms for libyaml) while most runs read no
 * kubeconfig. The library stays loaded: unloading OpenSSL mid-process is
 * not supported.
 */
int kube_lib_open(const char *soname, const char *const names[], size_t n, void *syms[],
		    char *why, size_t whylen)
{
	void *lib;
	size_t i;

	lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, whylen, "%s", dlerror());
		return -ENOSYS;
	}
	for (i = 0; i < n; i++) {
		syms[i] = dlsym(lib, names[i]);
		if (!syms[i]) {
			snprintf(why, whylen, "%s has no %s", soname, names[i]);
			return -ENOSYS;
		}
	}
	return 0;
}

static struct {
	int (*parser_initialize)(yaml_parser_t *parser);
	void (*parser_set_input_string)(yaml_parser_t *parser, const unsigned char *input,
					size_t size);
	int (*parser_load)(yaml_parser_t *parser, yaml_document_t *document);
	void (*parser_delete)(yaml_parser_t *parser);
	yaml_node_t *(*document_get_node)(yaml_document_t *document, int index);
	yaml_node_t *(*document_get_root_node)(yaml_document_t *document);
	void (*document_delete)(yaml_document_t *document);
	/* 0 before the one load, then its outcome for every later caller: 1, or -errno and why. */
	int state;
	char error[KUBE_ERRLEN];
} ym;

static void ym_load(void)
{
	static const char *const names[] = {
		"yaml_parser_initialize", "yaml_parser_set_input_string", "yaml_parser_load",
		"yaml_parser_delete", "yaml_document_get_node", "yaml_document_get_root_node",
		"yaml_document_delete",
	};
	void *syms[sizeof(names) / sizeof(names[0])];

	ym.state = kube_lib_open("libyaml-0.so.2", names, sizeof(names) / sizeof(names[0]), syms,
				 ym.error, sizeof(ym.error));
	if (ym.state < 0)
		return;
	ym.parser_initialize = (int (*)(yaml_parser_t *))syms[0];
	ym.parser_set_input_string =
		(void (*)(yaml_parser_t *, const unsigned char *, size_t))syms[1];
	ym.parser_load = (int (*)(yaml_parser_t *, yaml_document_t *))syms[2];
	ym.parser_delete = (void (*)(yaml_parser_t *))syms[3];
	ym.document_get_node = (yaml_node_t *(*)(yaml_document_t *, int))syms[4];
	ym.document_get_root_node = (yaml_node_t *(*)(yaml_document_t *))syms[5];
	ym.document_delete = (void (*)(yaml_document_t *))syms[6];
	ym.state = 1;
}

#define KFAIL(k, r, fmt, ...) \
	kube_fail((k)->err, (k)->errlen, r, "kubeconfig %s: " fmt, (k)->path, ##__VA_ARGS__)

static yaml_node_t *ynode(struct kcfg *k, int id)
{
	return ym.document_get_node(&k->doc, id);
}

static bool scalar_is(const yaml_node_t *n, const char *s)
{
	return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == strlen(s) &&
	       memcmp(n->data.scalar.value, s, n->data.scalar.length) == 0;
}

static yaml_node_t *map_get(struct kcfg *k, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
		if (scalar_is(ynode(k, p->key), key))
			return ynode(k, p->value);
	return NULL;
}

/* A plain empty, "~" or "null" scalar is YAML's null (JSON null parses as plain "null"). */
static bool is_null(const yaml_node_t *n)
{
	const char *v;

	if (!n)
		return true;
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

/* where.key as a string: absent, null or "" gives NULL; anything but a string is an error. */
static int get_str(struct kcfg *k, yaml_node_t *map, const char *where, const char *key,
		   const char **s)
{
	yaml_node_t *n = map_get(k, map, key);

	*s = NULL;
	if (is_null(n))
		return 0;
	if (n->type != YAML_SCALAR_NODE)
		return KFAIL(k, -EINVAL, "%s.%s: want a string", where, key);
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
		return KFAIL(k, -EINVAL, "%s.%s: contains a NUL character", where, key);
	if (n->data.scalar.length)
		*s = (const char *)n->data.scalar.value;
	return 0;
}

/* The entry of the top-level list whose "name" is name; its index for messages in *idx. */
static yaml_node_t *find_named(struct kcfg *k, const char *list, const char *name, int *idx)
{
	yaml_node_t *seq = map_get(k, k->root, list);
	yaml_node_item_t *it;

	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *e = ynode(k, *it);

		if (scalar_is(map_get(k, e, "name"), name)) {
			*idx = (int)(it - seq->data.sequence.items.start);
			return e;
		}
	}
	return NULL;
}

/* Relative paths are relative to the kubeconfig's directory, as kubectl resolves them. */
static int read_config_file(struct kcfg *k, const char *where, const char *key, const char *file,
			    size_t max, char **data, size_t *len)
{
	char path[PATH_MAX];
	int n, r;

	if (file[0] == '/')
		n = snprintf(path, sizeof(path), "%s", file);
	else
		n = snprintf(path, sizeof(path), "%s/%s", k->dir, file);
	if (n < 0 || (size_t)n >= sizeof(path))
		return KFAIL(k, -ENAMETOOLONG, "%s.%s: path too long", where, key);
	r = file_read_alloc(AT_FDCWD, path, O_NOCTTY, max, data, len);
	if (r == -EFBIG)
		return KFAIL(k, r, "%s.%s \"%s\": larger than %zu bytes; point it at the right file",
			     where, key, path, max);
	if (r == -EINVAL)
		return KFAIL(k, r, "%s.%s \"%s\": not a regular file", where, key, path);
	if (r < 0)
		return KFAIL(k, r, "%s.%s \"%s\": %s", where, key, path, strerror(-r));
	return 0;
}

static bool has_pem(const char *data)
{
	return strstr(data, "-----BEGIN ") != NULL;
}

/*
 * A PEM from where.file_key (a path) or where.data_key (base64), not both.
 * Neither leaves *out NULL.
 */
static int load_pem(struct kcfg *k, yaml_node_t *map, const char *where, const char *file_key,
		    const char *data_key, char **out, size_t *len)
{
	const char *file, *data, *key;
	int r;

	r = get_str(k, map, where, file_key, &file);
	if (!r)
		r = get_str(k, map, where, data_key, &data);
	if (r)
		return r;
	if (file && data)
		return KFAIL(k, -EINVAL, "%s: both %s and %s are set; keep one", where, file_key,
			     data_key);
	if (data) {
		key = data_key;
		r = base64_decode(data, strlen(data), out, len);
		if (r == -EINVAL)
			return KFAIL(k, r, "%s.%s: not valid base64; encode the PEM file with "
				     "\"base64 -w0\"", where, data_key);
		if (r)
			return KFAIL(k, r, "%s.%s: %s", where, data_key, strerror(-r));
	} else if (file) {
		key = file_key;
		r = read_config_file(k, where, file_key, file, KUBE_MAX_PEM, out, len);
		if (r)
			return r;
	} else {
		return 0;
	}
	if (!has_pem(*out))
		return KFAIL(k, -EINVAL, "%s.%s: holds no PEM block (\"-----BEGIN ...\"); "
			     "give the PEM text, not DER", where, key);
	return 0;
}

/* Visible ASCII only: the token goes into an HTTP header line. */
static bool valid_token(const char *t)
{
	for (; *t; t++)
		if (*t < 0x21 || *t > 0x7e)
			return false;
	return true;
}

static int load_token(struct kcfg *k, yaml_node_t *user, const char *where, struct kube_config *kc)
{
	const char *token, *file;
	char *data = NULL, *start, *end;
	size_t len = 0;
	int r;

	r = get_str(k, user, where, "token", &token);
	if (!r)
		r = get_str(k, user, where, "tokenFile", &file);
	if (r)
		return r;
	if (token && file)
		return KFAIL(k, -EINVAL, "%s: both token and tokenFile are set; keep one", where);
	if (token) {
		if (!valid_token(token))
			return KFAIL(k, -EINVAL, "%s.token: contains spaces or control characters",
				     where);
		kc->token = strdup(token);
		return kc->token ? 0 : -ENOMEM;
	}
	if (!file)
		return 0;
	r = read_config_file(k, where, "tokenFile", file, KUBE_MAX_TOKEN, &data, &len);
	if (r)
		return r;
	/* Token files written by hand or by kubelet may end in a newline. */
	for (start = data; isspace((unsigned char)*start); start++)
		;
	for (end = data + len; end > start && isspace((unsigned char)end[-1]); end--)
		;
	*end = '\0';
	if (!*start)
		r = KFAIL(k, -EINVAL, "%s.tokenFile \"%s\": empty", where, file);
	else if (!valid_token(start))
		r = KFAIL(k, -EINVAL, "%s.tokenFile \"%s\": the token contains spaces or control "
			  "characters", where, file);
	else if (!(kc->token = strdup(start)))
		r = -ENOMEM;
	kube_secret_free(&data, len);
	return r;
}

static int load_user(struct kcfg *k, yaml_node_t *user, int idx, struct kube_config *kc)
{
	static const char *const impersonation[] = { "as", "as-uid", "as-groups", "as-user-extra" };
	static const char *const fix =
		"use a service-account token (token or tokenFile) or client-certificate-data";
	char where[64];
	const char *s;
	size_t i;
	int r;

	snprintf(where, sizeof(where), "users[%d].user", idx);
	if (!user || user->type != YAML_MAPPING_NODE)
		return KFAIL(k, -EINVAL, "%s: missing; %s", where, fix);
	if (!is_null(map_get(k, user, "exec")))
		return KFAIL(k, -EOPNOTSUPP, "%s: \"exec\" credential plugins are not supported; %s",
			     where, fix);
	if (!is_null(map_get(k, user, "auth-provider")))
		return KFAIL(k, -EOPNOTSUPP, "%s: \"auth-provider\" plugins are not supported; %s",
			     where, fix);
	if (!is_null(map_get(k, user, "username")) || !is_null(map_get(k, user, "password")))
		return KFAIL(k, -EOPNOTSUPP, "%s: basic authentication (username, password) is not "
			     "supported; %s", where, fix);
	for (i = 0; i < sizeof(impersonation) / sizeof(impersonation[0]); i++)
		if (!is_null(map_get(k, user, impersonation[i])))
			return KFAIL(k, -EOPNOTSUPP, "%s.%s: impersonation is not supported; "
				     "give the node its own credentials", where, impersonation[i]);

	r = load_token(k, user, where, kc);
	if (!r)
		r = load_pem(k, user, where, "client-certificate", "client-certificate-data",
			     &kc->cert, &kc->cert_len);
	if (!r)
		r = load_pem(k, user, where, "client-key", "client-key-data", &kc->key,
			     &kc->key_len);
	if (r)
		return r;
	if (!kc->cert != !kc->key) {
		s = kc->cert ? "client-key or client-key-data" :
			       "client-certificate or client-certificate-data";
		return KFAIL(k, -EINVAL, "%s: a client certificate needs its key and the key its "
			     "certificate; set %s", where, s);
	}
	if (!kc->token && !kc->cert)
		return KFAIL(k, -EINVAL, "%s: no credentials; set token, tokenFile, or "
			     "client-certificate(-data) and client-key(-data)", where);
	return 0;
}

static int load_cluster(struct kcfg *k, yaml_node_t *cluster, int idx, struct kube_config *kc)
{
	char where[64];
	const char *server, *insecure, *p;
	size_t len;
	int r;

	snprintf(where, sizeof(where), "clusters[%d].cluster", idx);
	if (!cluster || cluster->type != YAML_MAPPING_NODE)
		return KFAIL(k, -EINVAL, "%s: missing", where);
	if (!is_null(map_get(k, cluster, "proxy-url")))
		return KFAIL(k, -EOPNOTSUPP, "%s.proxy-url: not supported; use https_proxy in "
			     "the runtime's environment", where);
	if (!is_null(map_get(k, cluster, "tls-server-name")))
		return KFAIL(k, -EOPNOTSUPP, "%s.tls-server-name: not supported; use a server "
			     "address the API server's certificate names", where);

	r = get_str(k, cluster, where, "server", &server);
	if (r)
		return r;
	if (!server)
		return KFAIL(k, -EINVAL, "%s.server: not set; set it to the API server's URL "
			     "(https://host:port)", where);
	if (!strncasecmp(server, "http://", 7))
		return KFAIL(k, -EINVAL, "%s.server \"%s\": plain http is refused (credentials "
			     "would travel in clear text); use the https:// URL", where, server);
	if (strncasecmp(server, "https://", 8) || !server[8] || server[8] == '/')
		return KFAIL(k, -EINVAL, "%s.server \"%s\": want https://host:port", where, server);
	for (p = server; *p; p++)
		if (*p < 0x21 || *p > 0x7e)
			return KFAIL(k, -EINVAL, "%s.server: contains spaces or control characters",
				     where);
	len = strlen(server);
	while (len > 8 && server[len - 1] == '/')
		len--;
	if (len >= sizeof(kc->server))
		return KFAIL(k, -ENAMETOOLONG, "%s.server: longer than %zu characters", where,
			     sizeof(kc->server) - 1);
	memcpy(kc->server, server, len);
	kc->server[len] = '\0';

	r = get_str(k, cluster, where, "insecure-skip-tls-verify", &insecure);
	if (r)
		return r;
	if (insecure && !strcasecmp(insecure, "true"))
		kc->insecure = true;
	else if (insecure && strcasecmp(insecure, "false"))
		return KFAIL(k, -EINVAL, "%s.insecure-skip-tls-verify \"%s\": want true or false",
			     where, insecure);

	r = load_pem(k, cluster, where, "certificate-authority", "certificate-authority-data",
		     &kc->ca, &kc->ca_len);
	if (r)
		return r;
	/* kubectl refuses the same: which of the two was meant is anybody's guess. */
	if (kc->insecure && kc->ca)
		return KFAIL(k, -EINVAL, "%s: insecure-skip-tls-verify with a certificate "
			     "authority; keep the certificate authority", where);
	return 0;
}

static int select_context(struct kcfg *k, yaml_node_t **ctx, int *idx)
{
	yaml_node_t *seq = map_get(k, k->root, "contexts");
	int n = seq && seq->type == YAML_SEQUENCE_NODE ?
		(int)(seq->data.sequence.items.top - seq->data.sequence.items.start) : 0;
	const char *name;
	int r;

	r = get_str(k, k->root, "", "current-context", &name);
	if (r)
		return r;
	if (!name) {
		/* Nothing to choose between: what kubectl would need --context for is moot. */
		if (n != 1)
			return KFAIL(k, -EINVAL, "current-context: not set and there are %d "
				     "contexts; set current-context", n);
		*idx = 0;
		*ctx = ynode(k, seq->data.sequence.items.start[0]);
		return 0;
	}
	*ctx = find_named(k, "contexts", name, idx);
	if (!*ctx)
		return KFAIL(k, -ENOENT, "current-context \"%s\": no such entry in contexts",
			     name);
	return 0;
}

static int load_doc(struct kcfg *k, const char *text, size_t len)
{
	yaml_parser_t parser;
	int r = 0;

	if (!ym.parser_initialize(&parser))
		return -ENOMEM;
	ym.parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!ym.parser_load(&parser, &k->doc)) {
		r = KFAIL(k, -EINVAL, "line %zu column %zu: %s; fix the YAML",
			  parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			  parser.problem ? parser.problem : "cannot parse");
		ym.parser_delete(&parser);
		return r;
	}
	ym.parser_delete(&parser);
	k->root = ym.document_get_root_node(&k->doc);
	if (!k->root || k->root->type != YAML_MAPPING_NODE) {
		ym.document_delete(&k->doc);
		return KFAIL(k, -EINVAL, "not a kubeconfig (want a mapping with clusters, users "
			     "and contexts)");
	}
	return 0;
}

/* Scalars hold the token and keys: wipe them before libyaml frees them. */
static void scrub_doc(yaml_document_t *doc)
{
	yaml_node_t *n;

	for (n = doc->nodes.start; n < doc->nodes.top; n++)
		if (n->type == YAML_SCALAR_NODE)
			explicit_bzero(n->data.scalar.value, n->data.scalar.length);
	ym.document_delete(doc);
}

int kube_config_load(const char *path, struct kube_config *kc, char *err, size_t errlen)
{
	struct kcfg k = { .path = path, .err = err, .errlen = errlen };
	yaml_node_t *ctx, *cluster, *user;
	const char *cluster_name, *user_name, *slash;
	char *text = NULL, where[64];
	size_t len = 0;
	int r, ci, ui, xi;

	memset(kc, 0, sizeof(*kc));
	if (!path || !*path)
		return kube_fail(err, errlen, -EINVAL, "kubeconfig: no path given");
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(k.dir, sizeof(k.dir), ".");
	else if ((size_t)(slash - path) >= sizeof(k.dir))
		return kube_fail(err, errlen, -ENAMETOOLONG, "kubeconfig: path too long");
	else
		snprintf(k.dir, sizeof(k.dir), "%.*s", slash == path ? 1 : (int)(slash - path),
			 path);

	/*
	 * pool-ipam runs one thread: a flag, not pthread_once, which glibc
	 * before 2.34 keeps in libpthread.so.0, one more library every exec
	 * would map for a load most never do.
	 */
	if (!ym.state)
		ym_load();
	if (ym.state < 0)
		return kube_fail(err, errlen, ym.state, "cannot load libyaml (%s): install libyaml-0-2 "
			    "to read a kubeconfig", ym.error);
	r = file_read_alloc(AT_FDCWD, path, O_NOCTTY, KUBE_MAX_CONFIG, &text, &len);
	if (r == -EFBIG)
		return KFAIL(&k, r, "larger than %u bytes; is it a kubeconfig?", KUBE_MAX_CONFIG);
	if (r == -EINVAL)
		return KFAIL(&k, r, "not a regular file");
	if (r < 0)
		return KFAIL(&k, r, "%s", strerror(-r));
	r = load_doc(&k, text, len);
	if (r)
		goto out_text;

	r = select_context(&k, &ctx, &xi);
	if (r)
		goto out;
	snprintf(where, sizeof(where), "contexts[%d].context", xi);
	ctx = map_get(&k, ctx, "context");
	r = get_str(&k, ctx, where, "cluster", &cluster_name);
	if (!r)
		r = get_str(&k, ctx, where, "user", &user_name);
	if (r)
		goto out;
	if (!cluster_name) {
		r = KFAIL(&k, -EINVAL, "%s.cluster: not set; name an entry of clusters", where);
		goto out;
	}
	if (!user_name) {
		r = KFAIL(&k, -EINVAL, "%s.user: not set; name an entry of users (anonymous "
			  "access is not supported)", where);
		goto out;
	}
	cluster = find_named(&k, "clusters", cluster_name, &ci);
	if (!cluster) {
		r = KFAIL(&k, -ENOENT, "%s.cluster \"%s\": no such entry in clusters", where,
			  cluster_name);
		goto out;
	}
	user = find_named(&k, "users", user_name, &ui);
	if (!user) {
		r = KFAIL(&k, -ENOENT, "%s.user \"%s\": no such entry in users", where, user_name);
		goto out;
	}
	r = load_cluster(&k, map_get(&k, cluster, "cluster"), ci, kc);
	if (!r)
		r = load_user(&k, map_get(&k, user, "user"), ui, kc);
out:
	scrub_doc(&k.doc);
out_text:
	kube_secret_free(&text, len);
	if (r)
		kube_config_free(kc);
	return r;
}

void kube_config_free(struct kube_config *kc)
{
	free(kc->ca);
	free(kc->cert);
	kube_secret_free(&kc->key, kc->key_len);
	if (kc->token)
		kube_secret_free(&kc->token, strlen(kc->token));
	memset(kc, 0, sizeof(*kc));
}
