/* SPDX-License-Identifier: Apache-2.0 */
#include "ippool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf.h"
#include "kube.h"
#include "log.h"
#include "state.h"
#include "valid.h"

static const char *const kinds[] = { "IPPool", "CIDRPool", NULL };
static const char *const plurals[] = { "ippools", "cidrpools" };

const char *ippool_kind_name(enum ippool_kind kind)
{
	return kinds[kind];
}

const char *ippool_kind_plural(enum ippool_kind kind)
{
	return plurals[kind];
}

/* ---- names ---- */

static bool alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? of exactly n bytes. */
static bool valid_label(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 63 || !alnum_lower(s[0]) || !alnum_lower(s[n - 1]))
		return false;
	for (i = 1; i + 1 < n; i++)
		if (!alnum_lower(s[i]) && s[i] != '-')
			return false;
	return true;
}

bool ippool_valid_namespace(const char *s)
{
	return s && valid_label(s, strlen(s));
}

bool ippool_valid_name(const char *s)
{
	const char *p = s, *dot;
	size_t n;

	if (!s || !*s || strlen(s) > IPPOOL_NAME_MAX)
		return false;
	for (;;) {
		dot = strchr(p, '.');
		n = dot ? (size_t)(dot - p) : strlen(p);
		if (!valid_label(p, n))
			return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

/* ---- config ---- */

static const char *const pool_keys[] = {
	"name", "namespace", "kind", "kubeconfig", "cacheMaxAge", "apiTimeout", NULL,
};

static int parse_one(const cJSON *obj, const char *where, struct ippool_conf *pc,
		     struct cni_error *err)
{
	const char *name = NULL, *ns = NULL, *kc = NULL;
	long long v;
	bool has;
	int kind = -1;

	if (!cJSON_IsObject(obj))
		return conf_invalid(err, "%s: want an object {\"name\": \"<IPPool name>\", ...}", where);
	if (conf_check_keys(obj, where, pool_keys, err) < 0 ||
	    conf_string(obj, where, "name", &name, true, err) < 0 ||
	    conf_string(obj, where, "namespace", &ns, false, err) < 0 ||
	    conf_enum(obj, where, "kind", kinds, &kind, err) < 0 ||
	    conf_string(obj, where, "kubeconfig", &kc, false, err) < 0)
		return -EINVAL;
	if (!ippool_valid_name(name))
		return conf_invalid(err,
			       "%s.name: \"%s\" is not a Kubernetes object name (lowercase letters, digits, '-' and '.', at most %d bytes)",
			       where, name, IPPOOL_NAME_MAX);
	snprintf(pc->name, sizeof(pc->name), "%s", name);
	if (ns && !ippool_valid_namespace(ns))
		return conf_invalid(err,
			       "%s.namespace: \"%s\" is not a Kubernetes namespace (lowercase letters, digits and '-', at most %d bytes)",
			       where, ns, IPPOOL_NAMESPACE_MAX);
	snprintf(pc->ns, sizeof(pc->ns), "%s", ns ? ns : IPPOOL_DEFAULT_NAMESPACE);
	pc->kind = kind < 0 ? IPPOOL_KIND_IPPOOL : (enum ippool_kind)kind;
	if (kc && !valid_abs_path(kc))
		return conf_invalid(err,
			       "%s.kubeconfig: want an absolute path without \".\" or \"..\" components (got \"%s\")",
			       where, kc);
	snprintf(pc->kubeconfig, sizeof(pc->kubeconfig), "%s", kc ? kc : IPPOOL_DEFAULT_KUBECONFIG);
	pc->max_age = IPPOOL_DEFAULT_MAX_AGE;
	if (conf_int(obj, where, "cacheMaxAge", 0, 7 * 24 * 3600, &v, &has, err) < 0)
		return -EINVAL;
	if (has)
		pc->max_age = v;
	pc->timeout = IPPOOL_DEFAULT_TIMEOUT;
	if (conf_int(obj, where, "apiTimeout", 1, IPPOOL_MAX_TIMEOUT, &v, &has, err) < 0)
		return -EINVAL;
	if (has)
		pc->timeout = v;
	return 0;
}

int ippool_conf_parse(const cJSON *ipam, struct ippool_conf pools[IPPOOL_MAX], int *n,
		      struct cni_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ipam, "ippool"), *it;
	char where[32];
	int i = 0, k;

	*n = 0;
	memset(pools, 0, sizeof(pools[0]) * IPPOOL_MAX);
	if (!v)
		return conf_invalid(err, "ipam.ippool: missing");
	if (cJSON_IsObject(v)) {
		if (parse_one(v, "ipam.ippool", &pools[0], err) < 0)
			return -EINVAL;
		*n = 1;
		return 0;
	}
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1 || cJSON_GetArraySize(v) > IPPOOL_MAX)
		return conf_invalid(err,
			       "ipam.ippool: want an object, or a list of one or two (one pool per address family)");
	cJSON_ArrayForEach(it, v) {
		snprintf(where, sizeof(where), "ipam.ippool[%d]", i);
		if (parse_one(it, where, &pools[i], err) < 0)
			return -EINVAL;
		for (k = 0; k < i; k++)
			if (pools[k].kind == pools[i].kind && !strcmp(pools[k].ns, pools[i].ns) &&
			    !strcmp(pools[k].name, pools[i].name))
				return conf_invalid(err,
					       "%s: %s %s/%s is already ipam.ippool[%d]; give each address family its own pool",
					       where, ippool_kind_name(pools[i].kind), pools[i].ns,
					       pools[i].name, k);
		i++;
	}
	*n = i;
	return 0;
}

int ippool_api_path(const struct ippool_conf *pc, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, IPPOOL_GROUP_PATH "/namespaces/%s/%s/%s", pc->ns,
			     ippool_kind_plural(pc->kind), pc->name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- conversion ---- */

struct conv {
	const struct ippool_conf *pc;
	struct ippool_block *b;
	char *msg;
	size_t msglen;
};

static int bad(struct conv *cv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct conv *cv, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(cv->msg, cv->msglen, "%s %s/%s: %s", ippool_kind_name(cv->pc->kind), cv->pc->ns,
		 cv->pc->name, what);
	return -EBADMSG;
}

static const char *str_at(const cJSON *obj, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

static int get_addr(struct conv *cv, const cJSON *obj, const char *path, const char *key,
		    bool required, struct ipam_addr *a, bool *present)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	const char *s = cJSON_GetStringValue(v);

	if (present)
		*present = false;
	if (!v || (s && !*s && !required))
		return required ? bad(cv, "%s.%s: missing", path, key) : 0;
	if (!s || ipam_addr_parse(s, a) < 0)
		return bad(cv, "%s.%s: not an IP address (got %s)", path, key,
			   s ? s : "a non-string");
	if (present)
		*present = true;
	return 0;
}

/* A CIDR whose host bits are zero, as nv-ipam's validation demands. */
static int get_prefix(struct conv *cv, const cJSON *obj, const char *path, const char *key,
		      struct ipam_prefix *p)
{
	const char *s = str_at(obj, key);
	struct ipam_addr a;

	if (!s)
		return bad(cv, "%s.%s: missing", path, key);
	if (ipam_prefix_parse(s, p) < 0 || ipam_addr_parse_cidr(s, &a) < 0)
		return bad(cv, "%s.%s: not a CIDR (got \"%s\")", path, key, s);
	if (ipam_addr_cmp(&a, &p->addr))
		return bad(cv, "%s.%s: %s has host bits set", path, key, s);
	return 0;
}

static bool span_clip(struct ipam_span *sp, const struct ipam_addr *lo, const struct ipam_addr *hi)
{
	if (sp->start.family != lo->family || ipam_addr_cmp(&sp->end, lo) < 0 ||
	    ipam_addr_cmp(&sp->start, hi) > 0)
		return false;
	if (ipam_addr_cmp(&sp->start, lo) < 0)
		sp->start = *lo;
	if (ipam_addr_cmp(&sp->end, hi) > 0)
		sp->end = *hi;
	return true;
}

static int add_span(struct conv *cv, struct ipam_span *sp)
{
	if (!span_clip(sp, &cv->b->start, &cv->b->end))
		return 0;
	if (cv->b->n_exclude >= IPPOOL_MAX_EXCLUDE)
		return bad(cv, "more than %d exclusions fall in this node's block", IPPOOL_MAX_EXCLUDE);
	cv->b->exclude[cv->b->n_exclude++] = *sp;
	return 0;
}

/* spec.exclusions [{startIP, endIP}]: the part inside this node's block. */
static int conv_exclusions(struct conv *cv, const cJSON *spec)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(spec, "exclusions"), *it;
	struct ipam_span sp;
	char path[48];
	int i = 0;

	if (arr && !cJSON_IsArray(arr))
		return bad(cv, "spec.exclusions: not a list");
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "spec.exclusions[%d]", i++);
		if (get_addr(cv, it, path, "startIP", true, &sp.start, NULL) < 0 ||
		    get_addr(cv, it, path, "endIP", true, &sp.end, NULL) < 0)
			return -EBADMSG;
		if (sp.start.family != sp.end.family || ipam_addr_cmp(&sp.start, &sp.end) > 0)
			return bad(cv, "%s: startIP %s is after endIP %s", path, str_at(it, "startIP"),
				   str_at(it, "endIP"));
		if (add_span(cv, &sp) < 0)
			return -EBADMSG;
	}
	return 0;
}

/*
 * spec.perNodeExclusions [{startIndex, endIndex}]: offsets from base (the
 * block's first address for an IPPool, the prefix's network address for a
 * CIDRPool, as nv-ipam counts them), clamped to the block.
 */
static int conv_per_node(struct conv *cv, const cJSON *spec, const struct ipam_addr *base)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(spec, "perNodeExclusions"), *it, *s, *e;
	ipam_u128 room = cv->b->end.v - base->v;
	struct ipam_span sp;
	char path[48];
	int i = 0;

	if (arr && !cJSON_IsArray(arr))
		return bad(cv, "spec.perNodeExclusions: not a list");
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "spec.perNodeExclusions[%d]", i++);
		s = cJSON_GetObjectItemCaseSensitive(it, "startIndex");
		e = cJSON_GetObjectItemCaseSensitive(it, "endIndex");
		if (!cJSON_IsNumber(s) || !cJSON_IsNumber(e) ||
		    !(s->valuedouble >= 0 && e->valuedouble >= s->valuedouble &&
		      e->valuedouble <= 2147483647.0))
			return bad(cv, "%s: want 0 <= startIndex <= endIndex", path);
		if ((ipam_u128)s->valueint > room)
			continue;
		sp.start = sp.end = *base;
		sp.start.v += (ipam_u128)s->valueint;
		sp.end.v += (ipam_u128)e->valueint > room ? room : (ipam_u128)e->valueint;
		if (add_span(cv, &sp) < 0)
			return -EBADMSG;
	}
	return 0;
}

static int add_route(struct conv *cv, const struct ipam_prefix *p)
{
	int i;

	for (i = 0; i < cv->b->n_routes; i++)
		if (cv->b->routes[i].len == p->len && !ipam_addr_cmp(&cv->b->routes[i].addr, &p->addr))
			return 0;
	if (cv->b->n_routes >= IPPOOL_MAX_ROUTES)
		return bad(cv, "more than %d routes", IPPOOL_MAX_ROUTES);
	cv->b->routes[cv->b->n_routes++] = *p;
	return 0;
}

/* spec.routes [{dst}] and spec.defaultGateway, all via the gateway; none without one (nv-ipam's getRoutes). */
static int conv_routes(struct conv *cv, const cJSON *spec)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(spec, "routes"), *it;
	struct ipam_prefix p;
	char path[48];
	int i = 0;

	if (arr && !cJSON_IsArray(arr))
		return bad(cv, "spec.routes: not a list");
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "spec.routes[%d]", i++);
		if (get_prefix(cv, it, path, "dst", &p) < 0)
			return -EBADMSG;
		if (p.addr.family != cv->b->subnet.addr.family)
			return bad(cv, "%s.dst: %s is not of the pool's address family", path,
				   str_at(it, "dst"));
		if (cv->b->has_gw && add_route(cv, &p) < 0)
			return -EBADMSG;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "defaultGateway")) && cv->b->has_gw) {
		memset(&p, 0, sizeof(p));
		p.addr.family = cv->b->subnet.addr.family;
		if (add_route(cv, &p) < 0)
			return -EBADMSG;
	}
	return 0;
}

/* status.allocations[] entry of node, or NULL with *names listing who has one. */
static const cJSON *find_alloc(const cJSON *obj, const char *node, int *idx, char *names,
			       size_t nameslen)
{
	const cJSON *arr, *it;
	size_t used = 0;
	int i = 0;

	names[0] = '\0';
	arr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"),
					       "allocations");
	cJSON_ArrayForEach(it, arr) {
		const char *n = str_at(it, "nodeName");

		if (n && !strcmp(n, node)) {
			*idx = i;
			return it;
		}
		if (n && used < nameslen)
			used += (size_t)snprintf(names + used, nameslen - used, "%s%s",
						 used ? ", " : "", n);
		i++;
	}
	return NULL;
}

static int conv_ippool(struct conv *cv, const cJSON *spec, const cJSON *alloc, const char *path)
{
	struct ippool_block *b = cv->b;
	char s[IPAM_ADDR_STRLEN], e[IPAM_ADDR_STRLEN];

	if (get_prefix(cv, spec, "spec", "subnet", &b->subnet) < 0 ||
	    get_addr(cv, spec, "spec", "gateway", false, &b->gw, &b->has_gw) < 0 ||
	    get_addr(cv, alloc, path, "startIP", true, &b->start, NULL) < 0 ||
	    get_addr(cv, alloc, path, "endIP", true, &b->end, NULL) < 0)
		return -EBADMSG;
	ipam_addr_format(&b->start, s, sizeof(s));
	ipam_addr_format(&b->end, e, sizeof(e));
	if (!ipam_prefix_contains(&b->subnet, &b->start) ||
	    !ipam_prefix_contains(&b->subnet, &b->end))
		return bad(cv, "%s: block %s-%s is outside spec.subnet %s", path, s, e,
			   str_at(spec, "subnet"));
	if (ipam_addr_cmp(&b->start, &b->end) > 0)
		return bad(cv, "%s: startIP %s is after endIP %s", path, s, e);
	if (b->has_gw && !ipam_prefix_contains(&b->subnet, &b->gw))
		return bad(cv, "spec.gateway: %s is outside spec.subnet %s", str_at(spec, "gateway"),
			   str_at(spec, "subnet"));
	if (conv_exclusions(cv, spec) < 0 || conv_per_node(cv, spec, &b->start) < 0)
		return -EBADMSG;
	return conv_routes(cv, spec);
}

static int conv_cidrpool(struct conv *cv, const cJSON *spec, const cJSON *alloc, const char *path)
{
	struct ippool_block *b = cv->b;
	const cJSON *pnp = cJSON_GetObjectItemCaseSensitive(spec, "perNodeNetworkPrefix");
	struct ipam_prefix cidr;
	int bits;

	if (get_prefix(cv, spec, "spec", "cidr", &cidr) < 0 ||
	    get_prefix(cv, alloc, path, "prefix", &b->subnet) < 0 ||
	    get_addr(cv, alloc, path, "gateway", false, &b->gw, &b->has_gw) < 0)
		return -EBADMSG;
	if (b->subnet.len < cidr.len || !ipam_prefix_contains(&cidr, &b->subnet.addr))
		return bad(cv, "%s.prefix: %s is not inside spec.cidr %s", path,
			   str_at(alloc, "prefix"), str_at(spec, "cidr"));
	if (cJSON_IsNumber(pnp) && pnp->valueint != b->subnet.len)
		return bad(cv, "%s.prefix: %s is not a /%d (spec.perNodeNetworkPrefix)", path,
			   str_at(alloc, "prefix"), pnp->valueint);
	if (b->has_gw && !ipam_prefix_contains(&b->subnet, &b->gw))
		return bad(cv, "%s.gateway: %s is outside the node's prefix %s", path,
			   str_at(alloc, "gateway"), str_at(alloc, "prefix"));
	/* As nv-ipam: /31 and /32 (/127, /128) hand out every address, others skip the network address and IPv4's broadcast. */
	bits = ipam_family_bits(b->subnet.addr.family);
	b->start = b->subnet.addr;
	if (b->subnet.len < bits - 1)
		b->start.v++;
	b->end = ipam_prefix_last(&b->subnet);
	if (b->end.family == AF_INET && b->subnet.len < bits - 1)
		b->end.v--;
	if (conv_exclusions(cv, spec) < 0 || conv_per_node(cv, spec, &b->subnet.addr) < 0)
		return -EBADMSG;
	return conv_routes(cv, spec);
}

int ippool_convert(const struct ippool_conf *pc, const char *node, const char *json, size_t len,
		   struct ippool_block *b, char *msg, size_t msglen)
{
	struct conv cv = { pc, b, msg, msglen };
	const cJSON *spec, *alloc, *meta;
	const char *kind, *rv;
	char names[256], path[48];
	int idx = 0, ret;
	cJSON *j;

	memset(b, 0, sizeof(*b));
	j = cJSON_ParseWithLength(json, len);
	if (!cJSON_IsObject(j)) {
		ret = bad(&cv, "the API server's answer is not a JSON object");
		goto out;
	}
	kind = str_at(j, "kind");
	if (kind && strcmp(kind, ippool_kind_name(pc->kind))) {
		ret = bad(&cv, "the API server answered with a %s", kind);
		goto out;
	}
	meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
	rv = str_at(meta, "resourceVersion");
	snprintf(b->resource_version, sizeof(b->resource_version), "%s", rv ? rv : "");
	spec = cJSON_GetObjectItemCaseSensitive(j, "spec");
	if (!cJSON_IsObject(spec)) {
		ret = bad(&cv, "spec: missing");
		goto out;
	}
	alloc = find_alloc(j, node, &idx, names, sizeof(names));
	if (!alloc) {
		snprintf(msg, msglen,
			 "%s %s/%s has no block for node \"%s\" in status.allocations (%s%s): its controller has not run since the node joined, or spec.nodeSelector does not select this node",
			 ippool_kind_name(pc->kind), pc->ns, pc->name, node,
			 names[0] ? "it lists " : "it lists none", names);
		ret = -ENOENT;
		goto out;
	}
	snprintf(path, sizeof(path), "status.allocations[%d]", idx);
	if (pc->kind == IPPOOL_KIND_IPPOOL)
		ret = conv_ippool(&cv, spec, alloc, path);
	else
		ret = conv_cidrpool(&cv, spec, alloc, path);
out:
	cJSON_Delete(j);
	return ret;
}

/* ---- into the ipam config ---- */

int ippool_apply(const struct ippool_block *b, struct ipam_conf *c, int set, char *msg,
		 size_t msglen)
{
	struct ipam_range *r = &c->sets[set].r[0];
	char dst[IPAM_ADDR_STRLEN];
	struct cni_route *rt;
	int i, ret;

	c->sets[set].n = 1;
	memset(r, 0, sizeof(*r));
	r->subnet = b->subnet;
	r->start = b->start;
	r->end = b->end;
	r->has_gw = b->has_gw;
	r->gw = b->gw;
	for (i = 0; i < b->n_exclude; i++) {
		ret = ipam_exclude(c, &b->exclude[i].start, &b->exclude[i].end);
		if (ret < 0) {
			snprintf(msg, msglen, "range set %d: more exclusions than %d", set,
				 IPAM_MAX_EXCLUDE);
			return ret;
		}
	}
	for (i = 0; i < b->n_routes; i++) {
		if (c->n_routes >= CNI_MAX_ROUTES) {
			snprintf(msg, msglen, "range set %d: more routes than %d", set, CNI_MAX_ROUTES);
			return -ENOSPC;
		}
		rt = &c->routes[c->n_routes++];
		cni_route_init(rt);
		ipam_addr_format(&b->routes[i].addr, dst, sizeof(dst));
		snprintf(rt->dst, sizeof(rt->dst), "%s/%d", dst, b->routes[i].len);
		ipam_addr_format(&b->gw, rt->gw, sizeof(rt->gw));
	}
	return 0;
}

/* ---- the cache ---- */

static void cache_name(int set, char *buf, size_t len)
{
	snprintf(buf, len, "ippool.%d", set);
}

static cJSON *addr_json(const struct ipam_addr *a)
{
	char s[IPAM_ADDR_STRLEN];

	ipam_addr_format(a, s, sizeof(s));
	return cJSON_CreateString(s);
}

static cJSON *prefix_json(const struct ipam_prefix *p)
{
	char s[IPAM_ADDR_STRLEN], buf[IPAM_ADDR_STRLEN + 8];

	ipam_addr_format(&p->addr, s, sizeof(s));
	snprintf(buf, sizeof(buf), "%s/%d", s, p->len);
	return cJSON_CreateString(buf);
}

/* cJSON_AddItemToObject that fails on a NULL item (out of memory). */
static bool add(cJSON *obj, const char *key, cJSON *item)
{
	if (!item)
		return false;
	if (!cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

static cJSON *block_json(const struct ippool_conf *pc, const char *node, const struct ippool_block *b)
{
	cJSON *j = cJSON_CreateObject(), *ex, *rt, *sp;
	int i;

	if (!j ||
	    !add(j, "kind", cJSON_CreateString(ippool_kind_name(pc->kind))) ||
	    !add(j, "namespace", cJSON_CreateString(pc->ns)) ||
	    !add(j, "name", cJSON_CreateString(pc->name)) ||
	    !add(j, "node", cJSON_CreateString(node)) ||
	    !add(j, "resourceVersion", cJSON_CreateString(b->resource_version)) ||
	    !add(j, "fetched", cJSON_CreateNumber((double)b->fetched)) ||
	    !add(j, "subnet", prefix_json(&b->subnet)) ||
	    !add(j, "rangeStart", addr_json(&b->start)) ||
	    !add(j, "rangeEnd", addr_json(&b->end)) ||
	    (b->has_gw && !add(j, "gateway", addr_json(&b->gw))) ||
	    !add(j, "exclude", ex = cJSON_CreateArray()) ||
	    !add(j, "routes", rt = cJSON_CreateArray()))
		goto fail;
	for (i = 0; i < b->n_exclude; i++) {
		sp = cJSON_CreateArray();
		if (!sp || !cJSON_AddItemToArray(ex, sp) ||
		    !cJSON_AddItemToArray(sp, addr_json(&b->exclude[i].start)) ||
		    !cJSON_AddItemToArray(sp, addr_json(&b->exclude[i].end)))
			goto fail;
	}
	for (i = 0; i < b->n_routes; i++)
		if (!cJSON_AddItemToArray(rt, prefix_json(&b->routes[i])))
			goto fail;
	return j;
fail:
	cJSON_Delete(j);
	return NULL;
}

int ippool_cache_write(int store_dirfd, int set, const struct ippool_conf *pc, const char *node,
		       const struct ippool_block *b)
{
	char name[32];
	cJSON *j;
	int ret;

	j = block_json(pc, node, b);
	if (!j)
		return -ENOMEM;
	cache_name(set, name, sizeof(name));
	ret = state_write_json(store_dirfd, name, j, true);
	cJSON_Delete(j);
	return ret;
}

static bool same(const cJSON *j, const char *key, const char *want)
{
	const char *s = str_at(j, key);

	return s && !strcmp(s, want);
}

static int read_prefix(const cJSON *v, struct ipam_prefix *p)
{
	return ipam_prefix_parse(cJSON_GetStringValue(v), p);
}

static int read_addr(const cJSON *v, struct ipam_addr *a)
{
	return ipam_addr_parse(cJSON_GetStringValue(v), a);
}

static int block_parse(const cJSON *j, struct ippool_block *b)
{
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(j, "exclude");
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(j, "routes");
	const cJSON *fetched = cJSON_GetObjectItemCaseSensitive(j, "fetched");
	const cJSON *gw = cJSON_GetObjectItemCaseSensitive(j, "gateway");
	const char *rv = str_at(j, "resourceVersion");
	const cJSON *it;

	memset(b, 0, sizeof(*b));
	/* 2^53: the largest integer a double holds exactly; (long long) of more is undefined. */
	if (!rv || strlen(rv) >= sizeof(b->resource_version) || !cJSON_IsNumber(fetched) ||
	    !(fetched->valuedouble >= 0 && fetched->valuedouble <= 9007199254740992.0) ||
	    !cJSON_IsArray(ex) || !cJSON_IsArray(rt) ||
	    cJSON_GetArraySize(ex) > IPPOOL_MAX_EXCLUDE || cJSON_GetArraySize(rt) > IPPOOL_MAX_ROUTES ||
	    read_prefix(cJSON_GetObjectItemCaseSensitive(j, "subnet"), &b->subnet) < 0 ||
	    read_addr(cJSON_GetObjectItemCaseSensitive(j, "rangeStart"), &b->start) < 0 ||
	    read_addr(cJSON_GetObjectItemCaseSensitive(j, "rangeEnd"), &b->end) < 0 ||
	    (gw && read_addr(gw, &b->gw) < 0))
		return -EBADMSG;
	strcpy(b->resource_version, rv);
	b->fetched = (long long)fetched->valuedouble;
	b->has_gw = gw != NULL;
	cJSON_ArrayForEach(it, ex) {
		struct ipam_span *sp = &b->exclude[b->n_exclude++];

		if (cJSON_GetArraySize(it) != 2 || read_addr(cJSON_GetArrayItem(it, 0), &sp->start) < 0 ||
		    read_addr(cJSON_GetArrayItem(it, 1), &sp->end) < 0)
			return -EBADMSG;
	}
	cJSON_ArrayForEach(it, rt)
		if (read_prefix(it, &b->routes[b->n_routes++]) < 0)
			return -EBADMSG;
	return 0;
}

int ippool_cache_read(int store_dirfd, int set, const struct ippool_conf *pc, const char *node,
		      struct ippool_block *b)
{
	char name[32];
	cJSON *j = NULL;
	int ret;

	cache_name(set, name, sizeof(name));
	ret = state_read_json(store_dirfd, name, &j);
	if (ret < 0)
		return ret;
	if (!same(j, "kind", ippool_kind_name(pc->kind)) || !same(j, "namespace", pc->ns) ||
	    !same(j, "name", pc->name) || !same(j, "node", node))
		ret = -ENOENT;
	else
		ret = block_parse(j, b);
	cJSON_Delete(j);
	return ret;
}

int ippool_cache_remove(int store_dirfd, int set)
{
	char name[32];

	cache_name(set, name, sizeof(name));
	return state_remove(store_dirfd, name);
}

/* ---- resolve: cache, API, or cache again ---- */

#define FIX_UNREACHABLE	"the first ADD on a node needs the API server; try again when it answers"
#define FIX_KUBECONFIG	"fix ipam.ippool.kubeconfig (a token or client certificate allowed to get the pool)"
#define FIX_FORBIDDEN	"the kubeconfig's identity (Multus's service account with Multus's kubeconfig) " \
			"needs get on ippools and cidrpools of nv-ipam.nvidia.com: apply the ClusterRole " \
			"and binding of conf/deploy/rbac.yaml, or bind that ClusterRole to the identity " \
			"ipam.ippool.kubeconfig names"

/* "forbidden (RBAC): <the Status message, which names the user and the resource>". */
static void forbidden_message(const struct ippool_conf *pc, const struct kube_reply *reply,
			      char *msg, size_t len)
{
	cJSON *st = cJSON_ParseWithLength(reply->body, reply->len);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(st, "message");

	snprintf(msg, len, "HTTP 403 Forbidden with kubeconfig %s: its identity may not get %s of "
		 "nv-ipam.nvidia.com in namespace %s (RBAC)%s%.300s%s", pc->kubeconfig,
		 ippool_kind_plural(pc->kind), pc->ns, cJSON_IsString(m) ? " (the API server: " : "",
		 cJSON_IsString(m) ? m->valuestring : "", cJSON_IsString(m) ? ")" : "");
	cJSON_Delete(st);
}

static long long elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000LL + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * The API server failed in a way that says nothing about the pool: the
 * cache of any age is better than no pod. Without one, *err gets code and
 * the fix. waited < 0: nothing was sent.
 */
static int fall_back(const struct ippool_conf *pc, const char *node, const char *why,
		     long long waited, bool have, const struct ippool_block *cached, long long now,
		     struct ippool_block *b, enum ippool_source *src, int code, const char *fix,
		     struct cni_error *err)
{
	char after[48] = "";

	if (waited >= 0)
		snprintf(after, sizeof(after), " after %lld ms", waited);
	if (!have) {
		cni_errorf(err, code, "%s %s/%s: %s%s, and node %s has no cached block yet",
			   ippool_kind_name(pc->kind), pc->ns, pc->name, why, after, node);
		cni_error_details(err, "%s", fix);
		return -1;
	}
	*b = *cached;
	*src = IPPOOL_FROM_STALE_CACHE;
	log_warn("%s %s/%s: %s%s; using node %s's cached block, %lld s old (resourceVersion %s)",
		 ippool_kind_name(pc->kind), pc->ns, pc->name, why, after, node,
		 now - cached->fetched, cached->resource_version[0] ? cached->resource_version : "unknown");
	return 0;
}

int ippool_resolve(const struct ippool_conf *pc, int set, const char *node, int store_dirfd,
		   long long now, struct ippool_block *b, enum ippool_source *src,
		   struct cni_error *err)
{
	struct kube_config kc;
	struct kube_reply reply = { 0 };
	struct ippool_block cached;
	struct timespec t0;
	char msg[PATH_MAX + KUBE_ERRLEN], path[512];
	long long waited;
	bool have;
	int ret;

	ret = ippool_cache_read(store_dirfd, set, pc, node, &cached);
	if (ret == -EBADMSG)
		log_warn("cached block ippool.%d of %s %s/%s is corrupt: fetching it again", set,
			 ippool_kind_name(pc->kind), pc->ns, pc->name);
	have = ret == 0;
	if (have && now >= cached.fetched && now - cached.fetched < pc->max_age) {
		*b = cached;
		*src = IPPOOL_FROM_CACHE;
		return 0;
	}

	memset(&kc, 0, sizeof(kc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = kube_config_load(pc->kubeconfig, &kc, msg, sizeof(msg));
	if (ret < 0)
		return fall_back(pc, node, msg, -1, have, &cached, now, b, src,
				 CNI_ERR_INVALID_CONFIG, FIX_KUBECONFIG, err);
	ret = ippool_api_path(pc, path, sizeof(path));
	if (ret == 0)
		ret = kube_get(&kc, path, pc->timeout * 1000, &reply, msg, sizeof(msg));
	waited = elapsed_ms(&t0);
	kube_config_free(&kc);
	if (ret < 0) {
		ret = fall_back(pc, node, msg, waited, have, &cached, now, b, src, CNI_ERR_TRY_AGAIN,
				FIX_UNREACHABLE, err);
		goto out;
	}
	switch (reply.status) {
	case 200:
		break;
	case 404:
		/* The pool is gone: its blocks may already belong to another pool. */
		ippool_cache_remove(store_dirfd, set);
		ret = cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				 "ipam.ippool: %s %s/%s does not exist (404 from the API server)",
				 ippool_kind_name(pc->kind), pc->ns, pc->name);
		cni_error_details(err, "check name, namespace and kind: kubectl get %s.nv-ipam.nvidia.com -n %s",
				  ippool_kind_plural(pc->kind), pc->ns);
		goto out;
	case 401:
		snprintf(msg, sizeof(msg), "the API server refused kubeconfig %s (HTTP 401: expired "
			 "or unknown credentials)", pc->kubeconfig);
		ret = fall_back(pc, node, msg, waited, have, &cached, now, b, src,
				CNI_ERR_INVALID_CONFIG, FIX_KUBECONFIG, err);
		goto out;
	case 403:
		/* Authenticated, not authorized: RBAC, and the API server's message names the user. */
		forbidden_message(pc, &reply, msg, sizeof(msg));
		ret = fall_back(pc, node, msg, waited, have, &cached, now, b, src,
				CNI_ERR_INVALID_CONFIG, FIX_FORBIDDEN, err);
		goto out;
	default:
		snprintf(msg, sizeof(msg), "the API server answered HTTP %ld", reply.status);
		ret = fall_back(pc, node, msg, waited, have, &cached, now, b, src, CNI_ERR_TRY_AGAIN,
				FIX_UNREACHABLE, err);
		goto out;
	}

	ret = ippool_convert(pc, node, reply.body, reply.len, b, msg, sizeof(msg));
	if (ret == -ENOENT) {
		ippool_cache_remove(store_dirfd, set);
		ret = cni_errorf(err, CNI_ERR_TRY_AGAIN, "%s", msg);
		goto out;
	}
	if (ret < 0) {
		ret = cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s", msg);
		goto out;
	}
	b->fetched = now;
	*src = IPPOOL_FROM_API;
	ret = ippool_cache_write(store_dirfd, set, pc, node, b);
	if (ret < 0)
		log_warn("cannot cache the block of %s %s/%s: %s; the next ADD asks the API server again",
			 ippool_kind_name(pc->kind), pc->ns, pc->name, strerror(-ret));
	ret = 0;
out:
	kube_reply_free(&reply);
	return ret;
}
