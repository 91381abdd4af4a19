/* SPDX-License-Identifier: Apache-2.0 */
#include "ipam_ranges.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "conf.h"
#include "ipam.h"
#include "ipam_ranges_int.h"

#define NODE_NAME_RULE \
	"want lowercase letters, digits, '-' and '.', a letter or digit at both ends, at most 253 bytes"
#define SPAN_FORMS "an address, a CIDR or a range (e.g. \"10.1.0.7\", \"10.1.0.64/26\" or \"10.1.0.10-10.1.0.20\")"

static const char *const range_keys[] = {
	"subnet", "rangeStart", "rangeEnd", "gateway", "nodes", NULL,
};
static const char *const block_keys[] = { "rangeStart", "rangeEnd", "exclude", NULL };

bool ipam_valid_node_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > IPAM_NODE_NAME_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))
			continue;
		if ((ch != '-' && ch != '.') || i == 0 || i == n - 1)
			return false;
		/* Every dot-separated label starts and ends with a letter or digit. */
		if (ch == '.' && (s[i - 1] == '-' || s[i - 1] == '.' || s[i + 1] == '-' ||
				  s[i + 1] == '.'))
			return false;
	}
	return true;
}

void ipam_ranges_ctx_init(struct ipam_ranges_ctx *x)
{
	memset(x->has_nodes, 0, sizeof(x->has_nodes));
	x->bad_node[0] = '\0';
	memset(x->mine, 0, sizeof(x->mine));
}

/* A "nodes" member anywhere under o: a config with per-node blocks. */
static bool mentions_nodes(const cJSON *o)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, o) {
		if (e->string && !strcmp(e->string, "nodes"))
			return true;
		if ((cJSON_IsObject(e) || cJSON_IsArray(e)) && mentions_nodes(e))
			return true;
	}
	return false;
}

/*
 * ipam.nodeName, else $NODE_NAME (a DaemonSet sets it from spec.nodeName),
 * else $MULTUS_NODE_NAME (Multus's thick daemon sets it from spec.nodeName,
 * and the plugins it runs inherit it), else the host name, lowercased as
 * the kubelet does. Only an invalid
 * ipam.nodeName fails here: the others are reported when something needs
 * the name, so that a config without per-node blocks runs on any host.
 */
int ipam_ranges_node_name(const cJSON *ipam, struct ipam_conf *c, struct ipam_ranges_ctx *x,
			  struct cni_error *err)
{
	const char *s = NULL, *env;
	char host[sizeof(((struct utsname *)0)->nodename)];
	struct utsname u;
	size_t i;

	if (conf_string(ipam, "ipam", "nodeName", &s, false, err) < 0)
		return -EINVAL;
	if (s) {
		c->node_name_from = "ipam.nodeName";
		if (!ipam_valid_node_name(s))
			return conf_invalid(err, "ipam.nodeName: \"%s\" is not a Kubernetes node name (%s)",
				       s, NODE_NAME_RULE);
		snprintf(c->node_name, sizeof(c->node_name), "%s", s);
		return 0;
	}
	if ((env = getenv("NODE_NAME")) && *env) {
		c->node_name_from = "NODE_NAME";
		s = env;
	} else if ((env = getenv("MULTUS_NODE_NAME")) && *env) {
		c->node_name_from = "MULTUS_NODE_NAME";
		s = env;
	} else {
		c->node_name_from = "the host name";
		/*
		 * Only a config with per-node blocks reads it (ippool, "nodes"):
		 * the others skip a syscall and the part of libc it is in.
		 */
		if (!conf_member(ipam, "ippool") && !mentions_nodes(ipam))
			return 0;
		if (uname(&u) < 0)
			u.nodename[0] = '\0';
		for (i = 0; u.nodename[i] && i < sizeof(host) - 1; i++)
			host[i] = (char)tolower((unsigned char)u.nodename[i]);
		host[i] = '\0';
		s = host;
	}
	if (ipam_valid_node_name(s))
		snprintf(c->node_name, sizeof(c->node_name), "%s", s);
	else
		snprintf(x->bad_node, sizeof(x->bad_node), "%s", s);
	return 0;
}

/* Environment variables are named in capitals; the other sources are not. */
static bool from_env(const char *from)
{
	return from[0] >= 'A' && from[0] <= 'Z';
}

/* Called where this node's name is needed: fails when it had none. */
int ipam_ranges_need_node(const struct ipam_conf *c, const struct ipam_ranges_ctx *x,
			  const char *field, struct cni_error *err)
{
	if (c->node_name[0])
		return 0;
	return conf_invalid(err,
		       "%s: cannot tell which node this is: %s%s \"%s\" is not a Kubernetes node name (%s); set NODE_NAME (from spec.nodeName) or ipam.nodeName",
		       field, from_env(c->node_name_from) ? "$" : "",
		       c->node_name_from, x->bad_node, NODE_NAME_RULE);
}


/* A list of exclusions at obj[key] into c (when c is not NULL). */
int ipam_ranges_parse_exclude(const cJSON *obj, const char *where, struct ipam_conf *c,
			      struct cni_error *err)
{
	const cJSON *arr = NULL, *it;
	struct ipam_span sp;
	int i = 0;

	if (conf_array(obj, where, "exclude", &arr, err) < 0)
		return -EINVAL;
	if (!arr)
		return 0;
	if (cJSON_GetArraySize(arr) > IPAM_MAX_EXCLUDE)
		return conf_invalid(err, "%s.exclude: more than %d entries", where, IPAM_MAX_EXCLUDE);
	cJSON_ArrayForEach(it, arr) {
		if (ipam_span_parse(cJSON_GetStringValue(it), &sp) < 0)
			return conf_invalid(err, "%s.exclude[%d]: want %s", where, i, SPAN_FORMS);
		if (c && ipam_exclude(c, &sp.start, &sp.end) < 0)
			return conf_invalid(err,
				       "%s.exclude: more than %d exclusions together with ipam.exclude; merge them into CIDRs or ranges",
				       where, IPAM_MAX_EXCLUDE);
		i++;
	}
	return 0;
}

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
		return conf_invalid(err,
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

	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(obj))
		return conf_invalid(err,
			       "%s: not an object (want {\"subnet\": \"10.1.0.0/24\", ...})",
			       where);
	if (conf_check_keys(obj, where, range_keys, err) < 0 ||
	    conf_string(obj, where, "subnet", &subnet, true, err) < 0)
		return -EINVAL;
	if (ipam_prefix_parse(subnet, &r->subnet) < 0)
		return conf_invalid(err,
			       "%s.subnet: not a CIDR (got \"%s\", want e.g. \"10.1.0.0/24\")",
			       where, subnet);
	bits = ipam_family_bits(r->subnet.addr.family);
	if (r->subnet.len >= bits - 1)
		return conf_invalid(err,
			       "%s.subnet: %s is too small to hand out addresses (want /%d or larger)",
			       where, subnet, bits - 2);
	last = ipam_prefix_last(&r->subnet);

	r->start = r->subnet.addr;
	r->start.v++;
	if (parse_addr_field(obj, where, "rangeStart", &r->start, &has, err) < 0)
		return -EINVAL;
	if (has && !ipam_prefix_contains(&r->subnet, &r->start)) {
		ipam_addr_format(&r->start, a, sizeof(a));
		return conf_invalid(err, "%s.rangeStart: %s is outside subnet %s", where, a,
				    subnet);
	}

	r->end = last;
	if (r->end.family == AF_INET)
		r->end.v--;
	if (parse_addr_field(obj, where, "rangeEnd", &r->end, &has, err) < 0)
		return -EINVAL;
	if (has && !ipam_prefix_contains(&r->subnet, &r->end)) {
		ipam_addr_format(&r->end, a, sizeof(a));
		return conf_invalid(err, "%s.rangeEnd: %s is outside subnet %s", where, a, subnet);
	}

	if (ipam_addr_cmp(&r->start, &r->end) > 0) {
		ipam_addr_format(&r->start, a, sizeof(a));
		ipam_addr_format(&r->end, b, sizeof(b));
		return conf_invalid(err,
			       "%s.rangeStart: %s is after rangeEnd %s", where, a, b);
	}

	if (parse_addr_field(obj, where, "gateway", &r->gw, &r->has_gw, err) < 0)
		return -EINVAL;
	if (r->has_gw && !ipam_prefix_contains(&r->subnet, &r->gw)) {
		ipam_addr_format(&r->gw, a, sizeof(a));
		return conf_invalid(err,
			       "%s.gateway: %s is outside subnet %s (give the router's address in that subnet)",
			       where, a, subnet);
	}
	return 0;
}

/* ---- per-node blocks ---- */

struct block {
	struct ipam_span span;
	const char *node;
	int range;
};

/*
 * One node's block of range r: a CIDR, or {"rangeStart", "rangeEnd",
 * "exclude"}, inside r's start..end. With c, the block's exclusions are
 * added to c's (this node's block); without, only checked (the others').
 */
static int parse_block(const cJSON *v, const char *where, const struct ipam_range *r,
		       struct ipam_span *b, struct ipam_conf *c, struct cni_error *err)
{
	char a1[IPAM_ADDR_STRLEN], a2[IPAM_ADDR_STRLEN], r1[IPAM_ADDR_STRLEN], r2[IPAM_ADDR_STRLEN];
	const char *s = NULL, *e = NULL;
	struct ipam_prefix p;

	if (cJSON_IsString(v)) {
		if (ipam_prefix_parse(v->valuestring, &p) < 0)
			return conf_invalid(err,
				       "%s: not a CIDR (got \"%s\"; want e.g. \"10.1.2.0/24\", or {\"rangeStart\": ..., \"rangeEnd\": ...})",
				       where, v->valuestring);
		b->start = p.addr;
		b->end = ipam_prefix_last(&p);
	} else if (cJSON_IsObject(v)) {
		if (conf_check_keys(v, where, block_keys, err) < 0 ||
		    conf_string(v, where, "rangeStart", &s, true, err) < 0 ||
		    conf_string(v, where, "rangeEnd", &e, true, err) < 0)
			return -EINVAL;
		if (ipam_addr_parse(s, &b->start) < 0)
			return conf_invalid(err, "%s.rangeStart: not an IP address (got \"%s\")", where, s);
		if (ipam_addr_parse(e, &b->end) < 0)
			return conf_invalid(err, "%s.rangeEnd: not an IP address (got \"%s\")", where, e);
		if (b->start.family != b->end.family || ipam_addr_cmp(&b->start, &b->end) > 0)
			return conf_invalid(err, "%s.rangeStart: %s is after rangeEnd %s", where, s, e);
		if (ipam_ranges_parse_exclude(v, where, c, err) < 0)
			return -EINVAL;
	} else {
		return conf_invalid(err,
			       "%s: want a CIDR (\"10.1.2.0/24\") or {\"rangeStart\": ..., \"rangeEnd\": ...}",
			       where);
	}
	if (b->start.family == r->start.family && ipam_addr_cmp(&b->start, &r->start) >= 0 &&
	    ipam_addr_cmp(&b->end, &r->end) <= 0)
		return 0;
	/*
	 * A CIDR is how people write a block, and the first and last of the
	 * subnet ("10.70.0.0/26" in 10.70.0.0/24) are outside the range by
	 * definition: the block is the part of the CIDR the range holds.
	 */
	if (cJSON_IsString(v) && b->start.family == r->start.family &&
	    ipam_addr_cmp(&b->start, &r->end) <= 0 && ipam_addr_cmp(&b->end, &r->start) >= 0) {
		if (ipam_addr_cmp(&b->start, &r->start) < 0)
			b->start = r->start;
		if (ipam_addr_cmp(&b->end, &r->end) > 0)
			b->end = r->end;
		return 0;
	}
	ipam_addr_format(&b->start, a1, sizeof(a1));
	ipam_addr_format(&b->end, a2, sizeof(a2));
	ipam_addr_format(&r->start, r1, sizeof(r1));
	ipam_addr_format(&r->end, r2, sizeof(r2));
	return conf_invalid(err,
		       "%s: block %s-%s is outside the range %s-%s (a node's block must lie inside rangeStart..rangeEnd%s)",
		       where, a1, a2, r1, r2,
		       r->start.family == AF_INET ?
		       "; they may be the subnet's network and broadcast addresses, which are never handed out" : "");
}

/* Checks range obj's "nodes" (if any), appending its blocks; *mine gets this node's. */
static int parse_nodes(const cJSON *obj, const char *where, const struct ipam_range *r, int range,
		       const struct ipam_conf *c, struct block **blocks, size_t *n, size_t *cap,
		       bool *has, const cJSON **mine, struct cni_error *err)
{
	const cJSON *nodes = conf_member(obj, "nodes"), *e;
	char w[IPAM_NODE_NAME_MAX + 64];
	struct block *grown;

	*has = nodes != NULL;
	*mine = NULL;
	if (!nodes)
		return 0;
	if (!cJSON_IsObject(nodes) || !nodes->child)
		return conf_invalid(err,
			       "%s.nodes: want an object {\"<node name>\": \"10.1.2.0/24\" or {\"rangeStart\": ..., \"rangeEnd\": ...}, ...}",
			       where);
	cJSON_ArrayForEach(e, nodes) {
		if (!ipam_valid_node_name(e->string))
			return conf_invalid(err, "%s.nodes: \"%s\" is not a Kubernetes node name (%s)",
				       where, e->string, NODE_NAME_RULE);
		snprintf(w, sizeof(w), "%s.nodes.%s", where, e->string);
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			grown = realloc(*blocks, *cap * sizeof(**blocks));
			if (!grown)
				return conf_invalid(err, "%s.nodes: out of memory", where);
			*blocks = grown;
		}
		if (parse_block(e, w, r, &(*blocks)[*n].span, NULL, err) < 0)
			return -EINVAL;
		(*blocks)[*n].node = e->string;
		(*blocks)[*n].range = range;
		(*n)++;
		if (c->node_name[0] && !strcmp(e->string, c->node_name))
			*mine = e;
	}
	return 0;
}

static int block_by_start(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	return ipam_addr_cmp(&x->span.start, &y->span.start);
}

static int block_by_name(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	if (x->range != y->range)
		return x->range < y->range ? -1 : 1;
	return strcmp(x->node, y->node);
}

/* No node twice in one range, no address in the blocks of two nodes: sorted, neighbours tell. */
static int check_blocks(struct block *b, size_t n, const struct ipam_ranges_ctx *x, int s,
			struct cni_error *err)
{
	char a1[IPAM_ADDR_STRLEN], a2[IPAM_ADDR_STRLEN], b1[IPAM_ADDR_STRLEN], b2[IPAM_ADDR_STRLEN];
	size_t i;

	qsort(b, n, sizeof(*b), block_by_name);
	for (i = 1; i < n; i++)
		if (b[i].range == b[i - 1].range && !strcmp(b[i].node, b[i - 1].node))
			return conf_invalid(err, "%s.nodes: \"%s\" is listed twice",
				       x->where[s][b[i].range], b[i].node);
	qsort(b, n, sizeof(*b), block_by_start);
	for (i = 1; i < n; i++) {
		if (ipam_addr_cmp(&b[i].span.start, &b[i - 1].span.end) > 0)
			continue;
		ipam_addr_format(&b[i - 1].span.start, a1, sizeof(a1));
		ipam_addr_format(&b[i - 1].span.end, a2, sizeof(a2));
		ipam_addr_format(&b[i].span.start, b1, sizeof(b1));
		ipam_addr_format(&b[i].span.end, b2, sizeof(b2));
		if (!strcmp(b[i].node, b[i - 1].node))
			return conf_invalid(err,
				       "%s: the blocks %s-%s and %s-%s of node \"%s\" overlap",
				       x->names[s], a1, a2, b1, b2, b[i].node);
		return conf_invalid(err,
			       "%s: the blocks of nodes \"%s\" (%s-%s) and \"%s\" (%s-%s) overlap; two nodes would hand out the same addresses",
			       x->names[s], b[i - 1].node, a1, a2, b[i].node, b1, b2);
	}
	return 0;
}

/*
 * The per-node rules of set s, once its ranges are read: every range has
 * "nodes" or none has, and blocks are checked whichever node reads the
 * config, so that a mistake fails on every node alike.
 */
static int parse_set_nodes(const cJSON *const objs[], struct ipam_conf *c,
			   struct ipam_ranges_ctx *x, int s, struct cni_error *err)
{
	struct ipam_set *set = &c->sets[s];
	struct block *blocks = NULL;
	size_t n = 0, cap = 0;
	int i, with = -1, without = -1, ret = 0;
	bool has;

	for (i = 0; i < set->n; i++) {
		ret = parse_nodes(objs[i], x->where[s][i], &set->r[i], i, c, &blocks, &n, &cap,
				  &has, &x->mine[s][i], err);
		if (ret < 0)
			goto out;
		if (has && with < 0)
			with = i;
		if (!has && without < 0)
			without = i;
	}
	x->has_nodes[s] = with >= 0;
	if (with >= 0 && without >= 0) {
		ret = conf_invalid(err,
			      "%s: has no \"nodes\" while %s has them; in one range set, give every range per-node blocks or none",
			      x->where[s][without], x->where[s][with]);
		goto out;
	}
	if (n > 1)
		ret = check_blocks(blocks, n, x, s, err);
out:
	free(blocks);
	return ret;
}

static int parse_set(const cJSON *arr, struct ipam_conf *c, struct ipam_ranges_ctx *x, int s,
		     struct cni_error *err)
{
	const cJSON *objs[IPAM_MAX_RANGES];
	struct ipam_set *set = &c->sets[s];
	char where[sizeof(x->names[s])];
	const cJSON *it;
	int i = 0;

	memcpy(where, x->names[s], sizeof(where));
	set->n = set->n_off = 0;
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
		return conf_invalid(err,
			       "%s: want a non-empty list of ranges ([{\"subnet\": ...}])",
			       where);
	if (cJSON_GetArraySize(arr) > IPAM_MAX_RANGES)
		return conf_invalid(err, "%s: more than %d ranges", where,
			       IPAM_MAX_RANGES);
	cJSON_ArrayForEach(it, arr) {
		snprintf(x->where[s][i], sizeof(x->where[s][i]), "%s[%d]", where, i);
		if (parse_range(it, x->where[s][i], &set->r[i], err) < 0)
			return -EINVAL;
		if (i > 0 && set->r[i].subnet.addr.family != set->r[0].subnet.addr.family)
			return conf_invalid(err,
				       "%s: mixes IPv4 and IPv6 in one range set (put each family in its own set)",
				       x->where[s][i]);
		objs[i++] = it;
	}
	set->n = i;
	return parse_set_nodes(objs, c, x, s, err);
}

int ipam_ranges_narrow(struct ipam_conf *c, struct ipam_ranges_ctx *x, int s,
		       struct cni_error *err)
{
	char w[IPAM_NODE_NAME_MAX + 64];
	struct ipam_set *set = &c->sets[s];
	struct ipam_range kept[IPAM_MAX_RANGES];
	struct ipam_span b;
	int i, n = 0;

	if (ipam_ranges_need_node(c, x, x->names[s], err) < 0)
		return -ENOENT;
	set->n_off = 0;
	for (i = 0; i < set->n; i++) {
		if (!x->mine[s][i]) {
			set->off[set->n_off++] = set->r[i];
			continue;
		}
		snprintf(w, sizeof(w), "%s.nodes.%s", x->where[s][i], c->node_name);
		if (parse_block(x->mine[s][i], w, &set->r[i], &b, c, err) < 0)
			return -EINVAL;
		kept[n] = set->r[i];
		kept[n].start = b.start;
		kept[n].end = b.end;
		n++;
	}
	if (n == 0) {
		const char *from = c->node_name_from;

		conf_invalid(err,
			       "%s: node \"%s\" (the name from %s%s) has no block in \"nodes\"; add one, e.g. \"%s\": \"<CIDR inside the range>\", %s",
			       x->names[s], c->node_name, from_env(from) ? "$" : "", from,
			       c->node_name,
			       !strcmp(from, "ipam.nodeName") ? "or correct ipam.nodeName" :
			       !strcmp(from, "NODE_NAME") ? "or correct NODE_NAME" :
			       !strcmp(from, "MULTUS_NODE_NAME") ? "or set NODE_NAME, which comes first" :
			       "or set NODE_NAME (from spec.nodeName) where the Kubernetes node name is not the host name");
		return -ENOENT;
	}
	memcpy(set->r, kept, sizeof(kept[0]) * (size_t)n);
	set->n = n;
	return 0;
}

int ipam_ranges_parse(const cJSON *ipam, struct ipam_conf *c, struct ipam_ranges_ctx *x,
		      struct cni_error *err)
{
	const cJSON *ranges = NULL, *it, *subnet;
	const cJSON *shorthand[1] = { ipam };
	int i = 0;

	if (conf_array(ipam, "ipam", "ranges", &ranges, err) < 0)
		return -EINVAL;
	subnet = conf_member(ipam, "subnet");
	/* As host-local: the shorthand range is a set placed before "ranges". */
	if (subnet) {
		snprintf(x->names[0], sizeof(x->names[0]), "ipam");
		snprintf(x->where[0][0], sizeof(x->where[0][0]), "ipam");
		c->sets[0].n_off = 0;
		if (parse_range(ipam, "ipam", &c->sets[0].r[0], err) < 0)
			return -EINVAL;
		c->sets[0].n = 1;
		if (parse_set_nodes(shorthand, c, x, 0, err) < 0)
			return -EINVAL;
		i = 1;
	} else if (conf_member(ipam, "rangeStart") ||
		   conf_member(ipam, "rangeEnd") ||
		   conf_member(ipam, "gateway")) {
		return conf_invalid(err,
			       "ipam.subnet: missing (rangeStart, rangeEnd and gateway need it)");
	} else if (conf_member(ipam, "nodes")) {
		return conf_invalid(err,
			       "ipam.subnet: missing (nodes needs it; or give \"nodes\" to each range of \"ranges\")");
	}
	if (ranges && cJSON_GetArraySize(ranges) + i > IPAM_MAX_SETS)
		return conf_invalid(err, "ipam.ranges: more than %d range sets",
			       IPAM_MAX_SETS);
	if (ranges)
		cJSON_ArrayForEach(it, ranges) {
			snprintf(x->names[i], sizeof(x->names[i]), "ipam.ranges[%d]",
				 i - (subnet ? 1 : 0));
			if (parse_set(it, c, x, i, err) < 0)
				return -EINVAL;
			i++;
		}
	if (i == 0)
		return conf_invalid(err,
			    "ipam.ranges: no range to allocate from; add \"ranges\": [[{\"subnet\": \"10.1.0.0/24\"}]] or \"subnet\"");
	c->n_sets = i;
	return 0;
}
