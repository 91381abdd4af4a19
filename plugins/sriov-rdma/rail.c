/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One rail of a multi-rail pod, done by this plugin alone: what the tuning
 * and sbr plugins add in a chain, for callers that run a single plugin
 * config (dra-driver-sriov's standalone mode cannot chain).
 *
 * With several interfaces, Linux answers ARP for any of the pod's addresses
 * on any interface (arp_ignore=0) and routes replies by the main table, so
 * traffic that came in on rail B leaves through rail A and the fabric drops
 * it. multiRail makes each interface answer for its own addresses only and
 * sends what comes from an address out through the interface that owns it.
 * The kernel resets per-interface sysctls when a netdev changes namespace,
 * so they are set in the pod, after the move and before the link comes up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include "conf.h"
#include "link.h"
#include "log.h"
#include "netns.h"
#include "sysctl.h"
#include "sriov.h"

/*
 * arp_ignore=1: answer ARP only for addresses of the interface asked on.
 * arp_announce=2: ARP requests carry the outgoing interface's own address.
 * arp_filter=1: answer only when the reply would leave by this interface.
 * rp_filter=0: with source routing, replies to a peer may leave by another
 * interface than the route to it in main, which strict checking drops.
 * accept_local=1: rails on one fabric see each other's pod addresses as
 * sources. IPv6 needs none of these: neighbour discovery answers only for
 * the addresses of the interface asked on, and it has no rp_filter.
 */
static const struct { const char *key, *value; } rail_keys[] = {
	{ "arp_ignore", "1" },
	{ "arp_announce", "2" },
	{ "arp_filter", "1" },
	{ "rp_filter", "0" },
	{ "accept_local", "1" },
};
/* The record keeps these and all.rp_filter. */
_Static_assert(sizeof(rail_keys) / sizeof(rail_keys[0]) + 1 == SRIOV_RAIL_SYSCTLS,
	       "SRIOV_RAIL_SYSCTLS counts multiRail's sysctls");

static int parse_sysctls(const struct cni_request *req, struct sriov_conf *conf,
			 struct cni_error *err)
{
	const cJSON *obj, *it;
	char why[256];

	if (conf_object(req->conf, "", "sysctl", &obj, err))
		return -EINVAL;
	if (!obj)
		return 0;
	if (!cJSON_IsObject(obj))
		return conf_invalid(err, "sysctl: must be an object of \"net.<...>\": \"<value>\"");
	cJSON_ArrayForEach(it, obj) {
		if (conf->n_sysctls == SRIOV_MAX_SYSCTLS)
			return conf_invalid(err, "sysctl: more than %d entries", SRIOV_MAX_SYSCTLS);
		if (sysctl_name_check(it->string, req->env.ifname, why, sizeof(why)) < 0)
			return conf_invalid(err, "sysctl \"%s\": %s", it->string, why);
		if (!cJSON_IsString(it))
			return conf_invalid(err, "sysctl \"%s\": the value must be a string, "
					    "e.g. \"1\"", it->string);
		if (sysctl_value_check(it->valuestring) < 0)
			return conf_invalid(err, "sysctl \"%s\": value \"%s\" must be 1 to %d "
					    "printable characters", it->string, it->valuestring,
					    SYSCTL_VALUE_MAX);
		conf->sysctls[conf->n_sysctls].name = it->string;
		conf->sysctls[conf->n_sysctls++].value = it->valuestring;
	}
	return 0;
}

int sriov_rail_parse(const struct cni_request *req, struct sriov_conf *conf,
		     struct cni_error *err)
{
	long long table = 0;
	bool has_table = false, present = false;

	if (conf_bool(req->conf, "", "multiRail", &conf->multi_rail, &present, err) ||
	    conf_int(req->conf, "", "routeTable", 1, UINT32_MAX, &table, &has_table, err) ||
	    parse_sysctls(req, conf, err))
		return -EINVAL;
	if (has_table && table >= RT_TABLE_COMPAT && table <= RT_TABLE_LOCAL)
		return conf_invalid(err, "routeTable: %lld is one of the kernel's own tables "
				    "(252 to 255); choose another, e.g. 100", table);
	if (has_table && !conf->multi_rail)
		return conf_invalid(err, "routeTable: %lld is for multiRail's policy routing; "
				    "set \"multiRail\": true or drop routeTable", table);
	conf->route_table = (uint32_t)table;
	return 0;
}

bool sriov_rail_hold_down(const struct sriov_conf *conf)
{
	return conf->multi_rail || conf->n_sysctls > 0;
}

/* Per-interface values leave with the netdev; anything else is the pod's and is put back on undo. */
static bool pod_wide(const char *name, const char *ifname)
{
	char own[64];

	snprintf(own, sizeof(own), ".conf.%s.", ifname);
	if (strstr(name, own))
		return false;
	snprintf(own, sizeof(own), ".neigh.%s.", ifname);
	return !strstr(name, own);
}

/* The sysctl functions run inside the pod's namespace: one setns for them all. */
static int set_one(const struct sriov_conf *conf, const char *ifname,
		   const char *name, const char *value, struct sriov_rail *st)
{
	char old[64];
	int ret, i;

	if (pod_wide(name, ifname) && st->n_saved < SRIOV_MAX_SYSCTLS + 1 &&
	    sysctl_read_in(-1, conf->paths.proc_root, name, old, sizeof(old)) == 0) {
		for (i = 0; i < st->n_saved && strcmp(st->saved_name[i], name); i++)
			;
		if (i == st->n_saved) {
			snprintf(st->saved_name[i], sizeof(st->saved_name[i]), "%s", name);
			snprintf(st->saved_value[i], sizeof(st->saved_value[i]), "%s", old);
			st->n_saved++;
		}
	}
	ret = sysctl_write_in(-1, conf->paths.proc_root, name, value);
	if (ret == 0)
		log_debug("sysctl %s = %s in the pod", name, value);
	return ret;
}

/*
 * The kernel takes the larger of all.rp_filter and the interface's: ours at
 * 0 only counts when the pod's "all" is 0 too. A new namespace starts with
 * 0, but a runtime or an earlier plugin may have raised it.
 */
static int rp_filter_all(const struct sriov_conf *conf, const char *ifname,
			 struct sriov_rail *st)
{
	const char *all = "net.ipv4.conf.all.rp_filter";
	char v[64];
	int ret = sysctl_read_in(-1, conf->paths.proc_root, all, v, sizeof(v));

	if (ret < 0 || !strcmp(v, "0"))
		return ret;
	log_info("%s is %s in the pod: setting it to 0, so rp_filter=0 on %s counts", all, v,
		 ifname);
	return set_one(conf, ifname, all, "0", st);
}

int sriov_rail_sysctls(const struct sriov_conf *conf, struct link_sock *pod_ls,
		       const char *ifname, int ifindex, struct sriov_rail *st,
		       struct cni_error *err)
{
	char name[128];
	size_t i;
	int k, ret = 0;

	for (i = 0; conf->multi_rail && i < sizeof(rail_keys) / sizeof(rail_keys[0]); i++) {
		snprintf(name, sizeof(name), "net.ipv4.conf.%s.%s", ifname, rail_keys[i].key);
		ret = set_one(conf, ifname, name, rail_keys[i].value, st);
		if (ret < 0)
			return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: %s = %s in the pod: %s",
					  name, rail_keys[i].value, strerror(-ret));
	}
	if (conf->multi_rail && (ret = rp_filter_all(conf, ifname, st)) < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: net.ipv4.conf.all.rp_filter "
				  "in the pod: %s", strerror(-ret));
	/* After multiRail's values, so the config can override any of them. */
	for (k = 0; k < conf->n_sysctls; k++) {
		ret = set_one(conf, ifname, conf->sysctls[k].name, conf->sysctls[k].value, st);
		if (ret == -ENOENT)
			return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "sysctl \"%s\": no such "
					  "parameter in the pod's namespace; check the name",
					  conf->sysctls[k].name);
		if (ret < 0)
			return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "sysctl \"%s\": cannot set "
					  "\"%s\" in the pod: %s", conf->sysctls[k].name,
					  conf->sysctls[k].value, strerror(-ret));
	}
	if (!st->held_down)
		return 0;
	ret = link_set_up(pod_ls, ifindex, true);
	if (ret < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "%s in the pod: cannot bring it up: %s",
				  ifname, strerror(-ret));
	return 0;
}

void sriov_rail_sysctls_undo(const struct sriov_conf *conf, struct sriov_rail *st)
{
	int i, ret;

	for (i = st->n_saved - 1; i >= 0; i--) {
		ret = sysctl_write_in(-1, conf->paths.proc_root, st->saved_name[i], st->saved_value[i]);
		if (ret < 0)
			log_warn("cannot put %s back to %s in the pod: %s", st->saved_name[i],
				 st->saved_value[i], strerror(-ret));
	}
	st->n_saved = 0;
}

/* name at value, unless a "sysctl" entry of the config set it after multiRail did. */
static void made_sysctl(const struct sriov_conf *conf, struct sriov_rail_made *made,
			const char *name, const char *value)
{
	int n = made->n_sysctls++, k;

	snprintf(made->sysctl_name[n], sizeof(made->sysctl_name[n]), "%s", name);
	for (k = 0; k < conf->n_sysctls; k++)
		if (!strcmp(conf->sysctls[k].name, name))
			value = conf->sysctls[k].value;
	snprintf(made->sysctl_value[n], sizeof(made->sysctl_value[n]), "%s", value);
}

void sriov_rail_sysctls_made(const struct sriov_conf *conf, const char *ifname,
			     struct sriov_rail_made *made)
{
	char name[SYSCTL_NAME_MAX + 1];
	size_t i;

	made->n_sysctls = 0;
	if (!conf->multi_rail)
		return;
	made->known = true;
	for (i = 0; i < sizeof(rail_keys) / sizeof(rail_keys[0]); i++) {
		snprintf(name, sizeof(name), "net.ipv4.conf.%s.%s", ifname, rail_keys[i].key);
		made_sysctl(conf, made, name, rail_keys[i].value);
	}
	/* rp_filter_all leaves it at 0, found so or set. */
	made_sysctl(conf, made, "net.ipv4.conf.all.rp_filter", "0");
}

/* "10.1.0.5/24" -> "10.1.0.0/24"; *v4 tells the family. */
static int subnet_of(const char *cidr, char *out, size_t len, bool *v4)
{
	unsigned char b[16];
	char ip[64], txt[INET6_ADDRSTRLEN];
	const char *slash = strchr(cidr, '/');
	int plen, fam, bits, i;

	if (!slash || (size_t)(slash - cidr) >= sizeof(ip))
		return -EINVAL;
	memcpy(ip, cidr, (size_t)(slash - cidr));
	ip[slash - cidr] = '\0';
	plen = atoi(slash + 1);
	fam = strchr(ip, ':') ? AF_INET6 : AF_INET;
	bits = fam == AF_INET ? 32 : 128;
	if (plen < 0 || plen > bits || inet_pton(fam, ip, b) != 1)
		return -EINVAL;
	for (i = 0; i < bits / 8; i++) {
		int keep = plen - i * 8;

		if (keep <= 0)
			b[i] = 0;
		else if (keep < 8)
			b[i] &= (unsigned char)(0xff << (8 - keep));
	}
	if (!inet_ntop(fam, b, txt, sizeof(txt)))
		return -EINVAL;
	snprintf(out, len, "%s/%d", txt, plen);
	*v4 = fam == AF_INET;
	return 0;
}

/* Add rt to made's routes unless it is there: addresses of one subnet share their routes. */
static int plan_one(struct sriov_rail_made *made, const struct link_route *rt)
{
	int i;

	for (i = 0; i < made->n_routes; i++)
		if (!strcmp(made->routes[i].dst, rt->dst) && !strcmp(made->routes[i].gw, rt->gw) &&
		    made->routes[i].priority == rt->priority)
			return 0;
	if (made->n_routes == SRIOV_MAX_RAIL_ROUTES)
		return -E2BIG;
	made->routes[made->n_routes++] = *rt;
	return 0;
}

/* ip's routes in table: its subnet on-link, the default via its gateway, the IPAM's of its family. */
static int plan_routes(uint32_t table, const struct cni_ip *ip, const struct cni_result *ipam,
		       struct sriov_rail_made *made)
{
	struct link_route rt;
	bool v4;
	int i, ret;

	link_route_init(&rt);
	rt.table = (int)table;
	if (subnet_of(ip->address, rt.dst, sizeof(rt.dst), &v4) < 0)
		return -EINVAL;
	rt.scope = RT_SCOPE_LINK;
	ret = plan_one(made, &rt);
	if (ret == 0 && ip->gateway[0]) {
		link_route_init(&rt);
		rt.table = (int)table;
		snprintf(rt.dst, sizeof(rt.dst), "%s", v4 ? "0.0.0.0/0" : "::/0");
		snprintf(rt.gw, sizeof(rt.gw), "%s", ip->gateway);
		ret = plan_one(made, &rt);
	}
	for (i = 0; ret == 0 && i < ipam->n_routes; i++) {
		if ((strchr(ipam->routes[i].dst, ':') == NULL) != v4)
			continue;
		sriov_route_link(&ipam->routes[i], &rt);
		rt.table = (int)table;
		if (!rt.gw[0] && ip->gateway[0])
			snprintf(rt.gw, sizeof(rt.gw), "%s", ip->gateway);
		ret = plan_one(made, &rt);
	}
	return ret;
}

/* "default via 10.1.0.1 dev net1", as ip-route(8) shows it. */
static void route_text(const struct link_route *rt, const char *ifname, char *out, size_t len)
{
	bool dflt = !strcmp(rt->dst, "0.0.0.0/0") || !strcmp(rt->dst, "::/0");

	snprintf(out, len, "%s%s%s dev %s", dflt ? "default" : rt->dst, rt->gw[0] ? " via " : "",
		 rt->gw, ifname);
}

int sriov_rail_routing(const struct sriov_conf *conf, struct link_sock *ls,
		       const char *ifname, int ifindex, const struct cni_result *ipam,
		       struct sriov_rail *st, struct sriov_rail_made *made,
		       struct cni_error *err)
{
	uint32_t table = conf->route_table;
	char text[256];
	int i, k, ret;

	if (!conf->multi_rail || !ipam->n_ips)
		return 0;
	/* Rails of one pod are added one after another: each finds the tables before it taken. */
	if (!table && (ret = link_rule_free_table(ls, SRIOV_FIRST_ROUTE_TABLE, &table)) < 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: no free routing table in the "
				  "pod: %s", strerror(-ret));
	st->table = table;
	made->table = table;
	made->n_routes = 0;
	for (i = 0; i < ipam->n_ips; i++) {
		k = made->n_routes;
		ret = plan_routes(table, &ipam->ips[i], ipam, made);
		if (ret == -E2BIG)
			return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: more than %d routes for "
					  "table %u; give the ipam fewer routes",
					  SRIOV_MAX_RAIL_ROUTES, table);
		if (ret < 0)
			return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: address %s: not a CIDR",
					  ipam->ips[i].address);
		for (; k < made->n_routes; k++) {
			ret = link_route_add(ls, ifindex, &made->routes[k]);
			if (ret < 0) {
				route_text(&made->routes[k], ifname, text, sizeof(text));
				return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: route '%s' in "
						  "table %u: %s", text, table, strerror(-ret));
			}
		}
		ret = link_rule_add(ls, ipam->ips[i].address, table);
		if (ret < 0)
			return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: rule from %s lookup %u: "
					  "%s", ipam->ips[i].address, table, strerror(-ret));
		snprintf(st->rules[st->n_rules++], sizeof(st->rules[0]), "%s", ipam->ips[i].address);
	}
	log_info("multiRail: %s uses table %u for %d address(es)", ifname, table, st->n_rules);
	return 0;
}

/* The table's routes leave with the netdev; the rules stay in the pod unless removed. */
void sriov_rail_routing_undo(struct link_sock *ls, struct sriov_rail *st)
{
	int i, ret;

	if (!st->n_rules || !ls)
		return;
	for (i = 0; i < st->n_rules; i++) {
		ret = link_rule_del(ls, st->rules[i], st->table);
		if (ret < 0)
			log_warn("cannot remove rule from %s lookup %u: %s", st->rules[i],
				 st->table, strerror(-ret));
	}
	st->n_rules = 0;
}

void sriov_rail_release(const struct sriov_record *rec, struct link_sock *ls)
{
	int i, ret;

	/* An older record does not say: it is looked for, as before. */
	if (!ls || !rec->n_addrs || rec->no_rules)
		return;
	/* The address has left with the netdev: a rule selecting by it serves nothing now. */
	for (i = 0; i < rec->n_addrs; i++) {
		ret = link_rule_del(ls, rec->addrs[i], 0);
		if (ret < 0)
			log_warn("cannot remove the rules from %s in the pod: %s", rec->addrs[i],
				 strerror(-ret));
	}
}

/* Sysctl values are numbers here: the kernel reads back "1" for a written "01". */
static bool same_value(const char *want, const char *got)
{
	char *end1, *end2;
	long a = strtol(want, &end1, 10), b = strtol(got, &end2, 10);

	if (*want && !*end1 && *got && !*end2)
		return a == b;
	return !strcmp(want, got);
}

struct check_sysctls_args {
	const struct sriov_rail_made *made;
	const char *proc_root;
	struct cni_error *err;
};

static int check_sysctls_cb(void *arg)
{
	struct check_sysctls_args *a = arg;
	const struct sriov_rail_made *made = a->made;
	char got[SYSCTL_VALUE_MAX + 1];
	int ret = 0, i;

	for (i = 0; i < made->n_sysctls && ret == 0; i++) {
		ret = sysctl_read_in(-1, a->proc_root, made->sysctl_name[i], got, sizeof(got));
		if (ret < 0)
			cni_errorf(a->err, CNI_ERR_PLUGIN, "multiRail: cannot read %s in the pod: %s",
				   made->sysctl_name[i], strerror(-ret));
		else if (!same_value(made->sysctl_value[i], got))
			ret = cni_errorf(a->err, CNI_ERR_DRIFT, "multiRail: %s is %s in the pod, ADD "
					 "set %s; a process changed it: set it back (sysctl -w "
					 "%s=%s in the pod) or delete and re-create the pod",
					 made->sysctl_name[i], got, made->sysctl_value[i],
					 made->sysctl_name[i], made->sysctl_value[i]);
	}
	return ret;
}

/* Every recorded sysctl in one visit to the pod: a setns each would cost more than the reads. */
static int check_sysctls(const struct sriov_rail_made *made, const char *proc_root, int pod_fd,
			 const char *netns, struct cni_error *err)
{
	struct check_sysctls_args a = { .made = made, .proc_root = proc_root, .err = err };
	int ret;

	if (!made->n_sysctls)
		return 0;
	ret = netns_do(pod_fd, check_sysctls_cb, &a);
	if (ret < 0 && !err->code)
		cni_errorf(err, CNI_ERR_PLUGIN, "CNI_NETNS %s: cannot enter it: %s", netns,
			   strerror(-ret));
	return ret < 0 ? -1 : 0;
}

int sriov_rail_check(const struct sriov_record *rec, bool multi_rail, const char *proc_root,
		     struct link_sock *ls, int pod_fd, int ifindex, const char *netns,
		     struct cni_error *err)
{
	const struct sriov_rail_made *made = &rec->rail;
	const char *cidrs[CNI_MAX_IPS];
	char addr[64], text[256];
	int i, missing, ret;

	if (!made->known) {
		if (multi_rail)
			log_debug("multiRail: the record of %s:%s predates the rail fields (table, "
				  "routes, sysctls); CHECK does not verify them", rec->container_id,
				  rec->ifname);
		return 0;
	}
	if (made->table && rec->n_addrs) {
		for (i = 0; i < rec->n_addrs; i++)
			cidrs[i] = rec->addrs[i];
		ret = link_rules_missing(ls, cidrs, rec->n_addrs, made->table, &missing);
		if (ret < 0)
			return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: cannot read the pod's "
					  "rules: %s", strerror(-ret));
		if (missing >= 0) {
			snprintf(addr, sizeof(addr), "%s", rec->addrs[missing]);
			addr[strcspn(addr, "/")] = '\0';
			return cni_errorf(err, CNI_ERR_DRIFT, "multiRail: no rule 'from %s lookup %u' "
					  "in the pod; a process removed it: delete and re-create "
					  "the pod", addr, made->table);
		}
	}
	if (made->table) {
		ret = link_routes_missing(ls, ifindex, made->routes, made->n_routes, &missing);
		if (ret < 0)
			return cni_errorf(err, CNI_ERR_PLUGIN, "multiRail: cannot read the pod's "
					  "routes: %s", strerror(-ret));
		if (missing >= 0) {
			route_text(&made->routes[missing], rec->ifname, text, sizeof(text));
			return cni_errorf(err, CNI_ERR_DRIFT, "multiRail: no route '%s' in table %u "
					  "of the pod; a process removed it: delete and re-create "
					  "the pod", text, made->table);
		}
	}
	return check_sysctls(made, proc_root, pod_fd, netns, err);
}
