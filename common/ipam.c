/* SPDX-License-Identifier: Apache-2.0 */
#include "ipam.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf.h"

/* ---- addresses ---- */

int ipam_family_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static ipam_u128 host_mask(int family, int len)
{
	int host = ipam_family_bits(family) - len;

	if (host >= 128)
		return ~(ipam_u128)0;
	return ((ipam_u128)1 << host) - 1;
}

int ipam_addr_parse(const char *s, struct ipam_addr *a)
{
	unsigned char b[16];
	int i;

	if (!s)
		return -EINVAL;
	if (inet_pton(AF_INET, s, b) == 1) {
		a->family = AF_INET;
		a->v = 0;
		for (i = 0; i < 4; i++)
			a->v = (a->v << 8) | b[i];
		return 0;
	}
	if (inet_pton(AF_INET6, s, b) == 1) {
		a->family = AF_INET6;
		a->v = 0;
		for (i = 0; i < 16; i++)
			a->v = (a->v << 8) | b[i];
		return 0;
	}
	return -EINVAL;
}

void ipam_addr_format(const struct ipam_addr *a, char *buf, size_t len)
{
	unsigned char b[16];
	int n = a->family == AF_INET ? 4 : 16, i;
	ipam_u128 v = a->v;

	for (i = n - 1; i >= 0; i--) {
		b[i] = (unsigned char)(v & 0xff);
		v >>= 8;
	}
	if (!inet_ntop(a->family, b, buf, (socklen_t)len) && len)
		buf[0] = '\0';
}

int ipam_addr_cmp(const struct ipam_addr *a, const struct ipam_addr *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return 0;
}

static bool addr_eq(const struct ipam_addr *a, const struct ipam_addr *b)
{
	return ipam_addr_cmp(a, b) == 0;
}

/* Split "addr/len" into a copy of addr and the length (-1 when absent). */
static int split_cidr(const char *s, char *addr, size_t addr_len, int *len)
{
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	char *end;
	long v;

	if (n == 0 || n >= addr_len)
		return -EINVAL;
	memcpy(addr, s, n);
	addr[n] = '\0';
	*len = -1;
	if (!slash)
		return 0;
	if (slash[1] < '0' || slash[1] > '9' || strlen(slash + 1) > 3)
		return -EINVAL;
	errno = 0;
	v = strtol(slash + 1, &end, 10);
	if (*end || errno)
		return -EINVAL;
	*len = (int)v;
	return 0;
}

int ipam_prefix_parse(const char *s, struct ipam_prefix *p)
{
	char addr[IPAM_ADDR_STRLEN];
	int len;

	if (!s || split_cidr(s, addr, sizeof(addr), &len) < 0 || len < 0)
		return -EINVAL;
	if (ipam_addr_parse(addr, &p->addr) < 0 || len > ipam_family_bits(p->addr.family))
		return -EINVAL;
	p->len = len;
	p->addr.v &= ~host_mask(p->addr.family, len);
	return 0;
}

int ipam_addr_parse_cidr(const char *s, struct ipam_addr *a)
{
	char addr[IPAM_ADDR_STRLEN];
	int len;

	if (!s || split_cidr(s, addr, sizeof(addr), &len) < 0)
		return -EINVAL;
	if (ipam_addr_parse(addr, a) < 0 || len > ipam_family_bits(a->family))
		return -EINVAL;
	return 0;
}

struct ipam_addr ipam_prefix_last(const struct ipam_prefix *p)
{
	struct ipam_addr a = p->addr;

	a.v |= host_mask(a.family, p->len);
	return a;
}

bool ipam_prefix_contains(const struct ipam_prefix *p, const struct ipam_addr *a)
{
	return a->family == p->addr.family &&
	       (a->v & ~host_mask(a->family, p->len)) == p->addr.v;
}

bool ipam_prefix_overlap(const struct ipam_prefix *a, const struct ipam_prefix *b)
{
	return ipam_prefix_contains(a, &b->addr) || ipam_prefix_contains(b, &a->addr);
}

/* ---- the config ---- */

/* A code-7 error naming the field; returns -EINVAL. */
static int invalid(struct cni_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int invalid(struct cni_error *err, const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s", msg);
	return -EINVAL;
}

static const char *const ipam_keys[] = {
	"type", "ranges", "subnet", "rangeStart", "rangeEnd", "gateway", "exclude", "routes",
	"dns", "resolvConf", "dataDir", "releaseCooldown", "logLevel", "logFile", NULL,
};
static const char *const range_keys[] = { "subnet", "rangeStart", "rangeEnd", "gateway", NULL };
static const char *const route_keys[] = { "dst", "gw", NULL };
static const char *const dns_keys[] = { "nameservers", "domain", "search", "options", NULL };

static int parse_addr_field(const cJSON *obj, const char *where, const char *key,
			    struct ipam_addr *a, bool *present, struct cni_error *err)
{
	const char *s = NULL;

	*present = false;
	if (conf_string(obj, where, key, &s, false, err) < 0)
		return -EINVAL;
	if (!s)
		return 0;
	if (ipam_addr_parse(s, a) < 0)
		return invalid(err,
			       "%s.%s: not an IP address (got \"%s\")", where, key, s);
	*present = true;
	return 0;
}

static int parse_range(const cJSON *obj, const char *where, struct ipam_range *r,
		       struct cni_error *err)
{
	char a[IPAM_ADDR_STRLEN], b[IPAM_ADDR_STRLEN];
	const char *subnet = NULL;
	struct ipam_addr last;
	bool has;
	int bits;

	if (!cJSON_IsObject(obj))
		return invalid(err,
			       "%s: not an object (want {\"subnet\": \"10.1.0.0/24\", ...})",
			       where);
	if (conf_check_keys(obj, where, range_keys, err) < 0 ||
	    conf_string(obj, where, "subnet", &subnet, true, err) < 0)
		return -EINVAL;
	if (ipam_prefix_parse(subnet, &r->subnet) < 0)
		return invalid(err,
			       "%s.subnet: not a CIDR (got \"%s\", want e.g. \"10.1.0.0/24\")",
			       where, subnet);
	bits = ipam_family_bits(r->subnet.addr.family);
	if (r->subnet.len >= bits - 1)
		return invalid(err,
			       "%s.subnet: %s is too small to hand out addresses (want /%d or larger)",
			       where, subnet, bits - 2);
	last = ipam_prefix_last(&r->subnet);

	r->start = r->subnet.addr;
	r->start.v++;
	if (parse_addr_field(obj, where, "rangeStart", &r->start, &has, err) < 0)
		return -EINVAL;
	if (has && !ipam_prefix_contains(&r->subnet, &r->start))
		return invalid(err,
			       "%s.rangeStart: %s is outside subnet %s", where,
			       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "rangeStart")),
			       subnet);

	r->end = last;
	if (r->end.family == AF_INET)
		r->end.v--;
	if (parse_addr_field(obj, where, "rangeEnd", &r->end, &has, err) < 0)
		return -EINVAL;
	if (has && !ipam_prefix_contains(&r->subnet, &r->end))
		return invalid(err,
			       "%s.rangeEnd: %s is outside subnet %s", where,
			       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "rangeEnd")),
			       subnet);

	if (ipam_addr_cmp(&r->start, &r->end) > 0) {
		ipam_addr_format(&r->start, a, sizeof(a));
		ipam_addr_format(&r->end, b, sizeof(b));
		return invalid(err,
			       "%s.rangeStart: %s is after rangeEnd %s", where, a, b);
	}

	if (parse_addr_field(obj, where, "gateway", &r->gw, &r->has_gw, err) < 0)
		return -EINVAL;
	if (r->has_gw && !ipam_prefix_contains(&r->subnet, &r->gw)) {
		ipam_addr_format(&r->gw, a, sizeof(a));
		return invalid(err,
			       "%s.gateway: %s is outside subnet %s (give the router's address in that subnet)",
			       where, a, subnet);
	}
	return 0;
}

static int parse_set(const cJSON *arr, const char *where, struct ipam_set *set,
		     struct cni_error *err)
{
	char w[64];
	const cJSON *it;
	int i = 0;

	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
		return invalid(err,
			       "%s: want a non-empty list of ranges ([{\"subnet\": ...}])",
			       where);
	if (cJSON_GetArraySize(arr) > IPAM_MAX_RANGES)
		return invalid(err, "%s: more than %d ranges", where,
			       IPAM_MAX_RANGES);
	cJSON_ArrayForEach(it, arr) {
		snprintf(w, sizeof(w), "%s[%d]", where, i);
		if (parse_range(it, w, &set->r[i], err) < 0)
			return -EINVAL;
		if (i > 0 && set->r[i].subnet.addr.family != set->r[0].subnet.addr.family)
			return invalid(err,
				       "%s: mixes IPv4 and IPv6 in one range set (put each family in its own set)",
				       w);
		i++;
	}
	set->n = i;
	return 0;
}

/* Ranges are [start, end] intervals: no address may belong to two of them. */
static int check_overlaps(const struct ipam_conf *c, const char *const names[IPAM_MAX_SETS],
			  struct cni_error *err)
{
	char a[IPAM_ADDR_STRLEN], b[IPAM_ADDR_STRLEN];
	int s1, i1, s2, i2;

	for (s1 = 0; s1 < c->n_sets; s1++)
		for (i1 = 0; i1 < c->sets[s1].n; i1++)
			for (s2 = s1; s2 < c->n_sets; s2++)
				for (i2 = s2 == s1 ? i1 + 1 : 0; i2 < c->sets[s2].n; i2++) {
					const struct ipam_range *x = &c->sets[s1].r[i1];
					const struct ipam_range *y = &c->sets[s2].r[i2];

					if (x->start.family != y->start.family ||
					    ipam_addr_cmp(&x->end, &y->start) < 0 ||
					    ipam_addr_cmp(&y->end, &x->start) < 0)
						continue;
					ipam_addr_format(&y->start, a, sizeof(a));
					ipam_addr_format(&y->end, b, sizeof(b));
					return invalid(err,
						       "%s[%d]: range %s-%s overlaps %s[%d]; every address must belong to one range",
						       names[s2], i2, a, b, names[s1], i1);
				}
	return 0;
}

static int parse_exclude(const cJSON *ipam, struct ipam_conf *c, struct cni_error *err)
{
	const cJSON *arr = NULL, *it;
	const char *s;
	int i = 0;

	if (conf_array(ipam, "ipam", "exclude", &arr, err) < 0)
		return -EINVAL;
	if (!arr)
		return 0;
	if (cJSON_GetArraySize(arr) > IPAM_MAX_EXCLUDE)
		return invalid(err, "ipam.exclude: more than %d entries",
			       IPAM_MAX_EXCLUDE);
	cJSON_ArrayForEach(it, arr) {
		struct ipam_prefix *p = &c->exclude[i];

		s = cJSON_GetStringValue(it);
		if (s && !strchr(s, '/') && ipam_addr_parse(s, &p->addr) == 0) {
			p->len = ipam_family_bits(p->addr.family);
		} else if (!s || ipam_prefix_parse(s, p) < 0) {
			return invalid(err,
				       "ipam.exclude[%d]: want an address or a CIDR (e.g. \"10.1.0.7\" or \"10.1.0.64/26\")",
				       i);
		}
		i++;
	}
	c->n_exclude = i;
	return 0;
}

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
		return invalid(err, "ipam.routes: more than %d routes",
			       CNI_MAX_ROUTES);
	cJSON_ArrayForEach(it, arr) {
		struct cni_route *rt = &c->routes[i];

		snprintf(w, sizeof(w), "ipam.routes[%d]", i);
		dst = gws = NULL;
		if (!cJSON_IsObject(it))
			return invalid(err,
				       "%s: want {\"dst\": \"0.0.0.0/0\", \"gw\": ...}", w);
		if (conf_check_keys(it, w, route_keys, err) < 0 ||
		    conf_string(it, w, "dst", &dst, true, err) < 0 ||
		    conf_string(it, w, "gw", &gws, false, err) < 0)
			return -EINVAL;
		if (ipam_prefix_parse(dst, &p) < 0 || strlen(dst) >= sizeof(rt->dst))
			return invalid(err,
				       "%s.dst: not a CIDR (got \"%s\")", w, dst);
		if (gws && ipam_addr_parse(gws, &gw) < 0)
			return invalid(err,
				       "%s.gw: not an IP address (got \"%s\")", w, gws);
		if (gws && gw.family != p.addr.family)
			return invalid(err,
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
		return invalid(err, "%s.%s: more than %d entries",
			       where, key, max);
	cJSON_ArrayForEach(it, arr) {
		s = cJSON_GetStringValue(it);
		if (!s || !*s || strlen(s) >= width)
			return invalid(err,
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
		return invalid(err,
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
			return invalid(err,
				       "ipam.dns.nameservers[%d]: not an IP address (got \"%s\")",
				       i, dns->nameservers[i]);
	if (domain && strlen(domain) >= sizeof(dns->domain))
		return invalid(err, "ipam.dns.domain: too long");
	if (domain)
		snprintf(dns->domain, sizeof(dns->domain), "%s", domain);
	return 0;
}

/* An absolute path without "." or ".." components, shorter than PATH_MAX. */
static bool valid_abs_path(const char *p)
{
	const char *c = p;
	size_t n;

	if (p[0] != '/' || strlen(p) >= PATH_MAX)
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

static int parse_path(const cJSON *ipam, const char *key, char *out, struct cni_error *err)
{
	const char *s = NULL;

	if (conf_string(ipam, "ipam", key, &s, false, err) < 0)
		return -EINVAL;
	if (!s)
		return 0;
	if (!valid_abs_path(s))
		return invalid(err,
			       "ipam.%s: want an absolute path without \".\" or \"..\" components (got \"%s\")",
			       key, s);
	snprintf(out, PATH_MAX, "%s", s);
	return 0;
}

static int parse_sets(const cJSON *ipam, struct ipam_conf *c, char names[IPAM_MAX_SETS][32],
		      struct cni_error *err)
{
	const cJSON *ranges = NULL, *it, *subnet;
	int i = 0;

	if (conf_array(ipam, "ipam", "ranges", &ranges, err) < 0)
		return -EINVAL;
	subnet = cJSON_GetObjectItemCaseSensitive(ipam, "subnet");
	/* As host-local: the shorthand range is a set placed before "ranges". */
	if (subnet) {
		snprintf(names[0], sizeof(names[0]), "ipam");
		if (parse_range(ipam, "ipam", &c->sets[0].r[0], err) < 0)
			return -EINVAL;
		c->sets[0].n = 1;
		i = 1;
	} else if (cJSON_GetObjectItemCaseSensitive(ipam, "rangeStart") ||
		   cJSON_GetObjectItemCaseSensitive(ipam, "rangeEnd") ||
		   cJSON_GetObjectItemCaseSensitive(ipam, "gateway")) {
		return invalid(err,
			       "ipam.subnet: missing (rangeStart, rangeEnd and gateway need it)");
	}
	if (ranges && cJSON_GetArraySize(ranges) + i > IPAM_MAX_SETS)
		return invalid(err, "ipam.ranges: more than %d range sets",
			       IPAM_MAX_SETS);
	if (ranges)
		cJSON_ArrayForEach(it, ranges) {
			snprintf(names[i], sizeof(names[i]), "ipam.ranges[%d]", i - (subnet ? 1 : 0));
			if (parse_set(it, names[i], &c->sets[i], err) < 0)
				return -EINVAL;
			i++;
		}
	if (i == 0)
		return invalid(err,
			    "ipam.ranges: no range to allocate from; add \"ranges\": [[{\"subnet\": \"10.1.0.0/24\"}]] or \"subnet\"");
	c->n_sets = i;
	return 0;
}

int ipam_conf_parse(const cJSON *ipam, struct ipam_conf *c, struct cni_error *err)
{
	char names[IPAM_MAX_SETS][32];
	const char *names_p[IPAM_MAX_SETS];
	const char *s = NULL;
	long long cooldown = 0;
	int i;

	memset(c, 0, sizeof(*c));
	snprintf(c->data_dir, sizeof(c->data_dir), "%s", IPAM_DEFAULT_DATA_DIR);
	if (!cJSON_IsObject(ipam))
		return invalid(err,
			       "ipam: missing or not an object (want {\"type\": \"pool-ipam\", \"ranges\": ...})");
	if (conf_check_keys(ipam, "ipam", ipam_keys, err) < 0 ||
	    parse_sets(ipam, c, names, err) < 0 ||
	    parse_exclude(ipam, c, err) < 0 ||
	    parse_routes(ipam, c, err) < 0 ||
	    parse_dns(ipam, &c->dns, err) < 0 ||
	    parse_path(ipam, "dataDir", c->data_dir, err) < 0 ||
	    parse_path(ipam, "resolvConf", c->resolv_conf, err) < 0 ||
	    conf_int(ipam, "ipam", "releaseCooldown", 0, 1LL << 31, &cooldown, NULL, err) < 0)
		return -EINVAL;
	c->cooldown = cooldown;
	for (i = 0; i < c->n_sets; i++)
		names_p[i] = names[i];
	if (check_overlaps(c, names_p, err) < 0)
		return -EINVAL;
	for (i = 0; i < c->n_sets; i++)
		if (ipam_capacity(c, i) == 0)
			return invalid(err,
				       "%s: no usable address (the range holds only gateways, network/broadcast or excluded addresses)",
				       names[i]);

	if (conf_string(ipam, "ipam", "logLevel", &s, false, err) < 0)
		return -EINVAL;
	if (s && strlen(s) >= sizeof(c->log_level))
		return invalid(err,
			       "ipam.logLevel: want panic, error, warning, info or debug");
	if (s)
		snprintf(c->log_level, sizeof(c->log_level), "%s", s);
	return parse_path(ipam, "logFile", c->log_file, err);
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

/* ---- allocation policy ---- */

const struct ipam_range *ipam_range_of(const struct ipam_conf *c, int s, const struct ipam_addr *a)
{
	const struct ipam_set *set = &c->sets[s];
	int i;

	for (i = 0; i < set->n; i++)
		if (a->family == set->r[i].start.family &&
		    ipam_addr_cmp(a, &set->r[i].start) >= 0 && ipam_addr_cmp(a, &set->r[i].end) <= 0)
			return &set->r[i];
	return NULL;
}

int ipam_set_of(const struct ipam_conf *c, const struct ipam_addr *a)
{
	int s;

	for (s = 0; s < c->n_sets; s++)
		if (ipam_range_of(c, s, a))
			return s;
	return -1;
}

static bool is_gateway(const struct ipam_conf *c, const struct ipam_addr *a)
{
	int s, i;

	for (s = 0; s < c->n_sets; s++)
		for (i = 0; i < c->sets[s].n; i++)
			if (c->sets[s].r[i].has_gw && addr_eq(&c->sets[s].r[i].gw, a))
				return true;
	return false;
}

static const struct ipam_prefix *excluded_by(const struct ipam_conf *c, const struct ipam_addr *a)
{
	int i;

	for (i = 0; i < c->n_exclude; i++)
		if (ipam_prefix_contains(&c->exclude[i], a))
			return &c->exclude[i];
	return NULL;
}

bool ipam_usable(const struct ipam_conf *c, int s, const struct ipam_addr *a)
{
	const struct ipam_range *r = ipam_range_of(c, s, a);
	struct ipam_addr bcast;

	if (!r || is_gateway(c, a) || excluded_by(c, a))
		return false;
	if (a->family == AF_INET) {
		bcast = ipam_prefix_last(&r->subnet);
		if (addr_eq(a, &r->subnet.addr) || addr_eq(a, &bcast))
			return false;
	}
	return true;
}

/* The address after a in set s, wrapping; a outside the set gives the first start. */
static struct ipam_addr step(const struct ipam_set *set, const struct ipam_addr *a)
{
	int i;

	for (i = 0; i < set->n; i++) {
		const struct ipam_range *r = &set->r[i];

		if (a->family != r->start.family || ipam_addr_cmp(a, &r->start) < 0 ||
		    ipam_addr_cmp(a, &r->end) > 0)
			continue;
		if (ipam_addr_cmp(a, &r->end) < 0) {
			struct ipam_addr n = *a;

			n.v++;
			return n;
		}
		return set->r[(i + 1) % set->n].start;
	}
	return set->r[0].start;
}

int ipam_next(const struct ipam_conf *c, int s, const struct ipam_addr *cur, struct ipam_addr *next)
{
	const struct ipam_set *set = &c->sets[s];
	const struct ipam_prefix *ex;
	const struct ipam_range *r;
	struct ipam_addr cand, last;

	if (ipam_capacity(c, s) == 0)
		return -ENOSPC;
	cand = ipam_range_of(c, s, cur) ? step(set, cur) : set->r[0].start;
	/* Terminates: capacity > 0 and every turn moves forward on the cycle. */
	while (!ipam_usable(c, s, &cand)) {
		ex = excluded_by(c, &cand);
		r = ipam_range_of(c, s, &cand);
		if (ex) {
			last = ipam_prefix_last(ex);
			if (ipam_addr_cmp(&last, &r->end) < 0)
				cand = last;
			else
				cand = r->end;
		}
		cand = step(set, &cand);
	}
	*next = cand;
	return 0;
}

struct span {
	ipam_u128 lo, hi;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void add_point(struct span *sp, int *n, const struct ipam_range *r, ipam_u128 v)
{
	if (v >= r->start.v && v <= r->end.v) {
		sp[*n].lo = sp[*n].hi = v;
		(*n)++;
	}
}

/* Usable addresses of one range: its size minus the union of what is skipped. */
static ipam_u128 range_capacity(const struct ipam_conf *c, const struct ipam_range *r)
{
	struct span sp[IPAM_MAX_EXCLUDE + IPAM_MAX_SETS * IPAM_MAX_RANGES + 2];
	ipam_u128 size = r->end.v - r->start.v, lo, hi, cover = 0, cur_lo, cur_hi;
	int n = 0, s, i;

	size = size + 1 ? size + 1 : size;
	for (i = 0; i < c->n_exclude; i++) {
		if (c->exclude[i].addr.family != r->start.family)
			continue;
		lo = c->exclude[i].addr.v;
		hi = ipam_prefix_last(&c->exclude[i]).v;
		if (hi < r->start.v || lo > r->end.v)
			continue;
		sp[n].lo = lo < r->start.v ? r->start.v : lo;
		sp[n].hi = hi > r->end.v ? r->end.v : hi;
		n++;
	}
	for (s = 0; s < c->n_sets; s++)
		for (i = 0; i < c->sets[s].n; i++)
			if (c->sets[s].r[i].has_gw && c->sets[s].r[i].gw.family == r->start.family)
				add_point(sp, &n, r, c->sets[s].r[i].gw.v);
	if (r->start.family == AF_INET) {
		add_point(sp, &n, r, r->subnet.addr.v);
		add_point(sp, &n, r, ipam_prefix_last(&r->subnet).v);
	}
	if (n == 0)
		return size;
	qsort(sp, (size_t)n, sizeof(sp[0]), span_cmp);
	cur_lo = sp[0].lo;
	cur_hi = sp[0].hi;
	for (i = 1; i <= n; i++) {
		if (i < n && (cur_hi == ~(ipam_u128)0 || sp[i].lo <= cur_hi + 1)) {
			if (sp[i].hi > cur_hi)
				cur_hi = sp[i].hi;
			continue;
		}
		cover += cur_hi - cur_lo + 1;
		if (i < n) {
			cur_lo = sp[i].lo;
			cur_hi = sp[i].hi;
		}
	}
	return cover >= size ? 0 : size - cover;
}

ipam_u128 ipam_capacity(const struct ipam_conf *c, int s)
{
	ipam_u128 total = 0, n;
	int i;

	for (i = 0; i < c->sets[s].n; i++) {
		n = range_capacity(c, &c->sets[s].r[i]);
		total = total + n < total ? ~(ipam_u128)0 : total + n;
	}
	return total;
}

int ipam_result_ip(const struct ipam_conf *c, int s, const struct ipam_addr *a, struct cni_ip *ip)
{
	const struct ipam_range *r = ipam_range_of(c, s, a);
	char buf[IPAM_ADDR_STRLEN];

	if (!r)
		return -EINVAL;
	ipam_addr_format(a, buf, sizeof(buf));
	snprintf(ip->address, sizeof(ip->address), "%s/%d", buf, r->subnet.len);
	ip->gateway[0] = '\0';
	if (r->has_gw)
		ipam_addr_format(&r->gw, ip->gateway, sizeof(ip->gateway));
	ip->iface = CNI_UNSET;
	return 0;
}
