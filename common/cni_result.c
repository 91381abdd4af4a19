/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "cni_error.h"
#include "cni_result.h"
#include "cni_version.h"

void cni_route_init(struct cni_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->mtu = rt->advmss = rt->priority = rt->table = rt->scope = CNI_UNSET;
}

struct cni_iface *cni_result_add_iface(struct cni_result *r)
{
	struct cni_iface *f;

	if (r->n_ifaces >= CNI_MAX_IFACES)
		return NULL;
	f = &r->ifaces[r->n_ifaces++];
	memset(f, 0, sizeof(*f));
	return f;
}

struct cni_route *cni_result_add_route(struct cni_result *r)
{
	struct cni_route *rt;

	if (r->n_routes >= CNI_MAX_ROUTES)
		return NULL;
	rt = &r->routes[r->n_routes++];
	cni_route_init(rt);
	return rt;
}

void cni_result_init(struct cni_result *r)
{
	/*
	 * Not the interfaces and routes, most of the struct: an entry is set
	 * up when it is filled, so that an exec touches only the pages it
	 * uses (each first touch is a page fault, tens of microseconds on a
	 * virtual machine).
	 */
	r->n_ifaces = 0;
	r->n_ips = 0;
	r->n_routes = 0;
	memset(r->ips, 0, sizeof(r->ips));
	memset(&r->dns, 0, sizeof(r->dns));
	for (int i = 0; i < CNI_MAX_IPS; i++)
		r->ips[i].iface = CNI_UNSET;
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
	int ret = cni_json_print(o);

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
	/* The range before the conversion, a NaN failing it too: (int) of 1e300 is undefined. */
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= INT_MAX) ||
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

		memset(f, 0, sizeof(*f));
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

		cni_route_init(rt);
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
