/* SPDX-License-Identifier: Apache-2.0 */
#include "ipam_conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "ipam_ranges.h"
#include "valid.h"

static const char *const ipam_keys[] = {
	"type", "ranges", "subnet", "rangeStart", "rangeEnd", "gateway", "nodes", "exclude",
	"routes", "dns", "resolvConf", "dataDir", "releaseCooldown", "logLevel", "logFile",
	"nodeName", "ippool", NULL,
};
static const char *const route_keys[] = { "dst", "gw", NULL };
static const char *const dns_keys[] = { "nameservers", "domain", "search", "options", NULL };
/* What "ippool" replaces: the blocks come from the cluster's pools. */
static const char *const ippool_excludes[] = {
	"ranges", "subnet", "rangeStart", "rangeEnd", "gateway", "nodes", NULL,
};

static int parse_routes(const cJSON *ipam, struct ipam_conf *c, struct cni_error *err)
{
	const cJSON *arr = NULL, *it;
	struct ipam_prefix p;
	struct ipam_addr gw;
	const char *dst, *gws;
	char w[32];
	int i = 0;

	if (conf_array(ipam, "ipam", "routes", &arr, err) < 0)
		return -EINVAL;
	if (!arr)
		return 0;
	if (cJSON_GetArraySize(arr) > CNI_MAX_ROUTES)
		return conf_invalid(err, "ipam.routes: more than %d routes",
			       CNI_MAX_ROUTES);
	cJSON_ArrayForEach(it, arr) {
		struct cni_route *rt = &c->routes[i];

		snprintf(w, sizeof(w), "ipam.routes[%d]", i);
		dst = gws = NULL;
		if (!cJSON_IsObject(it))
			return conf_invalid(err,
				       "%s: want {\"dst\": \"0.0.0.0/0\", \"gw\": ...}", w);
		if (conf_check_keys(it, w, route_keys, err) < 0 ||
		    conf_string(it, w, "dst", &dst, true, err) < 0 ||
		    conf_string(it, w, "gw", &gws, false, err) < 0)
			return -EINVAL;
		if (ipam_prefix_parse(dst, &p) < 0 || strlen(dst) >= sizeof(rt->dst))
			return conf_invalid(err,
				       "%s.dst: not a CIDR (got \"%s\")", w, dst);
		if (gws && ipam_addr_parse(gws, &gw) < 0)
			return conf_invalid(err,
				       "%s.gw: not an IP address (got \"%s\")", w, gws);
		if (gws && gw.family != p.addr.family)
			return conf_invalid(err,
				       "%s.gw: %s is not of the family of dst %s", w, gws, dst);
		cni_route_init(rt);
		snprintf(rt->dst, sizeof(rt->dst), "%s", dst);
		if (gws)
			snprintf(rt->gw, sizeof(rt->gw), "%s", gws);
		i++;
	}
	c->n_routes = i;
	return 0;
}

/* "ippool": one range set per pool, filled later by the module that reads the pools. */
static int parse_ippool(const cJSON *ipam, struct ipam_conf *c, struct cni_error *err)
{
	const cJSON *pool = cJSON_GetObjectItemCaseSensitive(ipam, "ippool"), *it;
	int i, n = 0;

	if (!pool)
		return 0;
	for (i = 0; ippool_excludes[i]; i++)
		if (cJSON_GetObjectItemCaseSensitive(ipam, ippool_excludes[i]))
			return conf_invalid(err,
				       "ipam.ippool: cannot be combined with ipam.%s (the node's block comes from the pool; remove ipam.%s)",
				       ippool_excludes[i], ippool_excludes[i]);
	if (cJSON_IsObject(pool)) {
		n = 1;
	} else if (cJSON_IsArray(pool)) {
		n = cJSON_GetArraySize(pool);
		cJSON_ArrayForEach(it, pool)
			if (!cJSON_IsObject(it))
				n = 0;
	}
	if (n < 1 || n > 2)
		return conf_invalid(err,
			       "ipam.ippool: want an object {\"name\": ...} or a list of one or two of them (an IPv4 and an IPv6 pool)");
	c->cluster = true;
	c->n_sets = n;
	for (i = 0; i < n; i++)
		c->sets[i].n = c->sets[i].n_off = 0;
	return 0;
}

static int parse_strings(const cJSON *obj, const char *where, const char *key, int max,
			 size_t width, char *out, int *n, struct cni_error *err)
{
	const cJSON *arr = NULL, *it;
	const char *s;
	int i = 0;

	if (conf_array(obj, where, key, &arr, err) < 0)
		return -EINVAL;
	if (!arr)
		return 0;
	if (cJSON_GetArraySize(arr) > max)
		return conf_invalid(err, "%s.%s: more than %d entries",
			       where, key, max);
	cJSON_ArrayForEach(it, arr) {
		s = cJSON_GetStringValue(it);
		if (!s || !*s || strlen(s) >= width)
			return conf_invalid(err,
				       "%s.%s[%d]: want a non-empty string shorter than %zu bytes",
				       where, key, i, width);
		memcpy(out + (size_t)i * width, s, strlen(s) + 1);
		i++;
	}
	*n = i;
	return 0;
}

static int parse_dns(const cJSON *ipam, struct cni_dns *dns, struct cni_error *err)
{
	const cJSON *obj = NULL;
	const char *domain = NULL;
	struct ipam_addr a;
	int i;

	if (conf_object(ipam, "ipam", "dns", &obj, err) < 0)
		return -EINVAL;
	if (!obj)
		return 0;
	if (!cJSON_IsObject(obj))
		return conf_invalid(err,
			       "ipam.dns: want an object {\"nameservers\": [...]}");
	if (conf_check_keys(obj, "ipam.dns", dns_keys, err) < 0 ||
	    parse_strings(obj, "ipam.dns", "nameservers", CNI_MAX_DNS, sizeof(dns->nameservers[0]),
			  dns->nameservers[0], &dns->n_nameservers, err) < 0 ||
	    parse_strings(obj, "ipam.dns", "search", CNI_MAX_DNS, sizeof(dns->search[0]),
			  dns->search[0], &dns->n_search, err) < 0 ||
	    parse_strings(obj, "ipam.dns", "options", CNI_MAX_DNS, sizeof(dns->options[0]),
			  dns->options[0], &dns->n_options, err) < 0 ||
	    conf_string(obj, "ipam.dns", "domain", &domain, false, err) < 0)
		return -EINVAL;
	for (i = 0; i < dns->n_nameservers; i++)
		if (ipam_addr_parse(dns->nameservers[i], &a) < 0)
			return conf_invalid(err,
				       "ipam.dns.nameservers[%d]: not an IP address (got \"%s\")",
				       i, dns->nameservers[i]);
	if (domain && strlen(domain) >= sizeof(dns->domain))
		return conf_invalid(err, "ipam.dns.domain: too long");
	if (domain)
		snprintf(dns->domain, sizeof(dns->domain), "%s", domain);
	return 0;
}

/* ipam.<key> into *out (NULL when absent): an absolute path, or code 7. */
static int parse_path_ref(const cJSON *ipam, const char *key, const char **out,
			  struct cni_error *err)
{
	const char *s = NULL;

	*out = NULL;
	if (conf_string(ipam, "ipam", key, &s, false, err) < 0)
		return -EINVAL;
	if (s && !valid_abs_path(s))
		return conf_invalid(err,
			       "ipam.%s: want an absolute path without \".\" or \"..\" components (got \"%s\")",
			       key, s);
	*out = s;
	return 0;
}

static int parse_path(const cJSON *ipam, const char *key, char *out, struct cni_error *err)
{
	const char *s;

	if (parse_path_ref(ipam, key, &s, err) < 0)
		return -EINVAL;
	if (s)
		snprintf(out, PATH_MAX, "%s", s);
	return 0;
}


int ipam_conf_finish(struct ipam_conf *c, struct cni_error *err)
{
	return ipam_ranges_finish(c, err);
}

/*
 * An empty config, without writing the arrays: they are most of its 80
 * KiB, and each page's first touch is a page fault (tens of microseconds
 * on a virtual machine) in every exec. An entry is set whole when it is
 * filled, and nothing reads one past its count.
 */
static void conf_clear(struct ipam_conf *c)
{
	c->n_sets = 0;
	c->n_exclude = 0;
	c->n_routes = 0;
	memset(&c->dns, 0, sizeof(c->dns));
	c->resolv_conf = NULL;
	c->data_dir[0] = '\0';
	c->cooldown = 0;
	c->log_level[0] = '\0';
	c->log_file = NULL;
	c->cluster = false;
	c->node_name[0] = '\0';
	c->node_name_from = NULL;
}

/*
 * Errors about this node only (no name, no block) return -ENOENT, with
 * everything else of *c parsed: DEL needs nothing but the store.
 */
int ipam_conf_parse(const cJSON *ipam, struct ipam_conf *c, struct cni_error *err)
{
	struct ipam_ranges_ctx x;
	const char *s = NULL;
	long long cooldown = 0;

	conf_clear(c);
	ipam_ranges_ctx_init(&x);
	snprintf(c->data_dir, sizeof(c->data_dir), "%s", IPAM_DEFAULT_DATA_DIR);
	if (!cJSON_IsObject(ipam))
		return conf_invalid(err,
			       "ipam: missing or not an object (want {\"type\": \"pool-ipam\", \"ranges\": ...})");
	if (conf_check_keys(ipam, "ipam", ipam_keys, err) < 0 ||
	    ipam_ranges_node_name(ipam, c, &x, err) < 0 ||
	    parse_ippool(ipam, c, err) < 0 ||
	    (!c->cluster && ipam_ranges_parse(ipam, c, &x, err) < 0) ||
	    ipam_ranges_parse_exclude(ipam, "ipam", c, err) < 0 ||
	    parse_routes(ipam, c, err) < 0 ||
	    parse_dns(ipam, &c->dns, err) < 0 ||
	    parse_path(ipam, "dataDir", c->data_dir, err) < 0 ||
	    parse_path_ref(ipam, "resolvConf", &c->resolv_conf, err) < 0 ||
	    conf_int(ipam, "ipam", "releaseCooldown", 0, 1LL << 31, &cooldown, NULL, err) < 0 ||
	    conf_string(ipam, "ipam", "logLevel", &s, false, err) < 0)
		return -EINVAL;
	c->cooldown = cooldown;
	if (s && strlen(s) >= sizeof(c->log_level))
		return conf_invalid(err,
			       "ipam.logLevel: want panic, error, warning, info or debug");
	if (s)
		snprintf(c->log_level, sizeof(c->log_level), "%s", s);
	if (parse_path_ref(ipam, "logFile", &c->log_file, err) < 0)
		return -EINVAL;
	if (c->cluster)
		return ipam_ranges_need_node(c, &x, "ipam.ippool", err) < 0 ? -ENOENT : 0;
	return ipam_ranges_for_node(c, &x, err);
}

void ipam_resolv_conf_parse(const char *text, struct cni_dns *dns)
{
	const char *line = text, *nl;
	char buf[512], *save, *key, *tok;
	size_t n;

	memset(dns, 0, sizeof(*dns));
	for (; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		n = nl ? (size_t)(nl - line) : strlen(line);
		if (n >= sizeof(buf))
			continue;
		memcpy(buf, line, n);
		buf[n] = '\0';
		key = strtok_r(buf, " \t\r", &save);
		if (!key || key[0] == '#' || key[0] == ';')
			continue;
		while ((tok = strtok_r(NULL, " \t\r", &save))) {
			if (!strcmp(key, "nameserver") && dns->n_nameservers < CNI_MAX_DNS &&
			    strlen(tok) < sizeof(dns->nameservers[0]))
				strcpy(dns->nameservers[dns->n_nameservers++], tok);
			else if (!strcmp(key, "domain") && strlen(tok) < sizeof(dns->domain))
				strcpy(dns->domain, tok);
			else if (!strcmp(key, "search") && dns->n_search < CNI_MAX_DNS &&
				 strlen(tok) < sizeof(dns->search[0]))
				strcpy(dns->search[dns->n_search++], tok);
			else if (!strcmp(key, "options") && dns->n_options < CNI_MAX_DNS &&
				 strlen(tok) < sizeof(dns->options[0]))
				strcpy(dns->options[dns->n_options++], tok);
			if (strcmp(key, "search") && strcmp(key, "options"))
				break;
		}
	}
}
