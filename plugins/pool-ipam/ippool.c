/* SPDX-License-Identifier: Apache-2.0 */
#include "ippool.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"
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
