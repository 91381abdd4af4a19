/* SPDX-License-Identifier: Apache-2.0 */
#include "ippool_convert.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

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
