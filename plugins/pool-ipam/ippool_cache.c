/* SPDX-License-Identifier: Apache-2.0 */
#include "ippool_cache.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "state.h"

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

	if (!j || state_version_put(j, IPPOOL_CACHE_VERSION) < 0 ||
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
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, key));

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
	const char *rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "resourceVersion"));
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
	struct state_version v;
	char name[32];
	cJSON *j = NULL;
	int ret;

	cache_name(set, name, sizeof(name));
	ret = state_read_json(store_dirfd, name, &j);
	if (ret < 0)
		return ret;
	ret = state_version_get(j, IPPOOL_CACHE_VERSION, false, &v);
	if (ret == 0 && (!same(j, "kind", ippool_kind_name(pc->kind)) ||
			 !same(j, "namespace", pc->ns) || !same(j, "name", pc->name) ||
			 !same(j, "node", node)))
		ret = -ENOENT;
	else if (ret == 0)
		ret = block_parse(j, b);
	cJSON_Delete(j);
	/* A newer release's cache is none to this one: the API server is asked again. */
	return ret == -EPROTO ? -ENOENT : ret;
}

int ippool_cache_remove(int store_dirfd, int set)
{
	char name[32];

	cache_name(set, name, sizeof(name));
	return state_remove(store_dirfd, name);
}
