/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool-ipam: a file-locked, crash-safe address pool (CNI IPAM plugin).
 *
 * Every verb is the same line of steps: parse the ipam config, open and
 * lock the network's store, do the one pool operation, answer. With
 * ipam.ippool, ADD first gets this node's blocks from the cluster (cache or
 * API server, before the lock: a slow API server must not hold up the
 * node's other ADDs); DEL, CHECK and GC never need them, STATUS reads the
 * cache only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cni.h"
#include "conf.h"
#include "file.h"
#include "ipam.h"
#include "ipam_conf.h"
#include "ippool.h"
#include "ippool_cache.h"
#include "ippool_resolve.h"
#include "log.h"
#include "log_conf.h"
#include "policy.h"
#include "pool.h"
#include "pool_add.h"
#include "pool_gc.h"
#include "state.h"

#define RESOLV_CONF_MAX (64 * 1024)

static void set_name(const struct ipam_conf *c, int s, char *buf, size_t len)
{
	char net[IPAM_ADDR_STRLEN];

	/* A cluster set has no range until its block is known (DEL, CHECK, GC). */
	if (s < 0 || s >= c->n_sets || c->sets[s].n == 0) {
		snprintf(buf, len, "range set %d", s);
		return;
	}
	ipam_addr_format(&c->sets[s].r[0].subnet.addr, net, sizeof(net));
	snprintf(buf, len, "range set %d (%s/%d)", s, net, c->sets[s].r[0].subnet.len);
}

/*
 * What one verb works on. The config alone is tens of KiB, too large for
 * the stack: each verb allocates one run and hands it down, so nothing
 * lives in statics and every function works on what it is given.
 */
struct run {
	struct ipam_conf conf;
	struct ippool_conf pools[IPPOOL_MAX];	/* ipam.ippool, one per range set */
	int n_pools;
	struct ippool_block block;		/* the block being applied (cluster_blocks) */
	struct cni_result prev;			/* prevResult (CHECK) */
};

static struct run *run_new(struct cni_error *err)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r)
		cni_errorf(err, CNI_ERR_IO, "out of memory");
	return r;
}

/*
 * What DEL and GC need of a config that no longer validates: the store's
 * place (dataDir) and the cooldown, read leniently. Anything else wrong
 * in it only warns: a pod must be able to terminate after its NAD was
 * edited.
 */
static int load_store_only(const cJSON *ipam, struct ipam_conf *c, struct cni_error *err)
{
	const char *dir_key, *cool_key;
	const cJSON *dir = conf_member_any_case(ipam, "dataDir", &dir_key);
	const cJSON *cool = conf_member_any_case(ipam, "releaseCooldown", &cool_key);

	log_warn("%s; releasing by attachment anyway", err->msg);
	if (dir && strcmp(dir_key, "dataDir"))
		log_warn("ipam.%s: keys are case-sensitive (ADD refuses it), but only it can name "
			 "the store to release from: used", dir_key);
	memset(err, 0, sizeof(*err));
	memset(c, 0, sizeof(*c));
	snprintf(c->data_dir, sizeof(c->data_dir), "%s", IPAM_DEFAULT_DATA_DIR);
	if (cJSON_IsString(dir)) {
		if (!valid_abs_path(dir->valuestring) ||
		    strlen(dir->valuestring) >= sizeof(c->data_dir))
			return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
					  "ipam.dataDir: \"%s\" is not an absolute path without \".\" or \"..\" components, so the store to release from is unknown; restore the NAD's dataDir, or remove this attachment's c-<containerID>:<ifname>.* entries and the a-<address> entries they name from the store by hand",
					  dir->valuestring);
		snprintf(c->data_dir, sizeof(c->data_dir), "%s", dir->valuestring);
	}
	if (cJSON_IsNumber(cool) && cool->valuedouble > 0 && cool->valuedouble < 1LL << 31)
		c->cooldown = (long long)cool->valuedouble;
	return 0;
}

/*
 * store_only: DEL and GC need the store and nothing of the ranges, so a
 * node that lost its block (or its name) can still release what it holds.
 */
static int load(struct cni_request *req, struct run *run, bool store_only,
		struct cni_error *err)
{
	struct ipam_conf *c = &run->conf;
	const char *as_written;
	const cJSON *ipam = conf_member_any_case(req->conf, "ipam", &as_written);
	char path[PATH_MAX], why[1024];
	int ret;

	if (strcmp(as_written, "ipam") && !store_only)
		return conf_invalid(err, "%s: keys are case-sensitive; write \"ipam\"", as_written);
	if (strcmp(as_written, "ipam"))
		log_warn("%s: keys are case-sensitive (ADD refuses it), but it is this network's "
			 "only IPAM section: releasing through it", as_written);
	ret = ipam_conf_parse(ipam, c, err);
	if (ret < 0 && store_only) {
		if (load_store_only(ipam, c, err) < 0)
			return -1;
	} else if (ret < 0) {
		return -1;
	} else if (c->cluster && ippool_conf_parse(ipam, run->pools, &run->n_pools, err) < 0) {
		if (!store_only)
			return -1;
		log_warn("%s; releasing by attachment anyway", err->msg);
		memset(err, 0, sizeof(*err));
	}
	/* DEL and GC release whatever the log config says: they log to stderr and go on. */
	ret = log_configure(c->log_level[0] ? c->log_level : NULL, c->log_file, "ipam.", why,
			    sizeof(why));
	if (ret < 0 && !store_only)
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s", why);
	if (ret < 0)
		log_warn("%s: logging to stderr", why);
	/* Tenants write NADs: the store goes only where the node allows. */
	ret = policy_resolve(POLICY_DATA, c->data_dir, path, sizeof(path), why, sizeof(why));
	if (ret < 0) {
		/*
		 * A broken node config stops DEL too: the store may hold what
		 * an earlier ADD reserved, and the admin's fix releases it.
		 */
		if (!store_only || ret != -EPERM)
			return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "ipam.dataDir: %s", why);
		/* No ADD could have stored anything there: nothing to release. */
		log_warn("ipam.dataDir: %s: no reservation can be there, nothing to release", why);
		c->data_dir[0] = '\0';
	} else {
		snprintf(c->data_dir, sizeof(c->data_dir), "%s", path);
	}
	if (!req->name || !valid_network_name(req->name))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "name: \"%s\" cannot name a store directory (want letters, digits, '_', '.', '-', starting with a letter or digit)",
				  req->name ? req->name : "");
	return 0;
}

static int owner_of(const struct cni_request *req, struct pool_owner *o, struct cni_error *err)
{
	o->container_id = req->env.container_id;
	o->ifname = req->env.ifname;
	o->netns = req->env.netns;
	if (!o->container_id || !valid_container_id(o->container_id))
		return cni_errorf(err, CNI_ERR_INVALID_ENV,
				  "CNI_CONTAINERID: \"%s\" is not a valid container ID",
				  o->container_id ? o->container_id : "");
	if (!o->ifname || !valid_ifname(o->ifname))
		return cni_errorf(err, CNI_ERR_INVALID_ENV,
				  "CNI_IFNAME: \"%s\" is not a valid interface name",
				  o->ifname ? o->ifname : "");
	return 0;
}

/* The CNI error for a failed pool call: what went wrong, where, and the fix. */
static int pool_error(int ret, const struct ipam_conf *c, const struct pool *p,
		      const struct pool_diag *d, struct cni_error *err)
{
	const char *net = p->path + strlen(c->data_dir) + (p->path[strlen(c->data_dir)] == '/');
	char set[96] = "", why[256];

	if (d->set >= 0 && d->set < c->n_sets)
		set_name(c, d->set, set, sizeof(set));
	switch (ret) {
	case -ETIMEDOUT:
		cni_errorf(err, CNI_ERR_TRY_AGAIN, "store %s: lock held by another operation for %d s",
			   p->path, POOL_LOCK_TIMEOUT_MS / 1000);
		cni_error_details(err, "try again");
		return -1;
	case -ELOOP:
	case -ENOTDIR:
		cni_errorf(err, CNI_ERR_INVALID_CONFIG,
			   "ipam.dataDir: a component of %s is a symlink or not a directory; point dataDir at a real directory",
			   d->file);
		return -1;
	case -EBADMSG:
		cni_errorf(err, CNI_ERR_STORE_CORRUPT,
			   "store record %s is unreadable: this attachment's address cannot be known",
			   d->file);
		cni_error_details(err,
				  "DEL the attachment (it leaves the address held and logs which), or restore the record");
		return -1;
	case -EPROTO:
		/* The runtime retries DEL: once the release that wrote it is back, that DEL frees it. */
		state_version_format(&d->written, "pool record", POOL_RECORD_VERSION, why,
				     sizeof(why));
		cni_errorf(err, CNI_ERR_TRY_AGAIN,
			   "store record %s was written by %s: this attachment's addresses are left "
			   "as they are", d->file, why);
		cni_error_details(err, "install %s%s again (docs/upgrading.md, \"Rolling back\"), "
				  "then retry", d->written.written_by[0] ? d->written.written_by :
				  "the release that wrote it", d->written.written_by[0] ? " or later" : "");
		return -1;
	case -EXFULL:
		return cni_errorf(err, CNI_ERR_POOL_EXHAUSTED,
				  "network %s: %s is exhausted: every address is reserved; widen the range or release pods",
				  net, set);
	case -EALREADY:
		return cni_errorf(err, CNI_ERR_PLUGIN,
				  "network %s: this attachment already holds %s in %s, and a repeated ADD cannot change it to the requested %s; DEL the attachment first",
				  net, d->addr, set, d->holder);
	case -EADDRINUSE:
		return cni_errorf(err, CNI_ERR_PLUGIN, "requested address %s is held by %s",
				  d->addr, d->holder[0] ? d->holder : "another container");
	case -EADDRNOTAVAIL:
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "requested address %s is in no range of ipam, or is a gateway, network, broadcast or excluded address",
				  d->addr);
	case -EINVAL:
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "two requested addresses fall in %s; request at most one per range set",
				  set);
	case -ENOENT:
		return cni_errorf(err, CNI_ERR_DRIFT, "no reservation in %s (missing %s)", set,
				  d->file);
	default:
		cni_errorf(err, CNI_ERR_IO, "store %s: %s; free space in, or repair, %s",
			   d->file[0] ? d->file : p->path, strerror(-ret), c->data_dir);
		return -1;
	}
}

static int open_pool(const struct cni_request *req, const struct ipam_conf *c, struct pool *p,
		     struct pool_diag *d, struct cni_error *err)
{
	const char *proc = getenv("POOL_IPAM_PROC_ROOT");
	int ret;

	memset(d, 0, sizeof(*d));
	d->set = -1;
	ret = pool_open(p, c, req->name, proc && *proc ? proc : POOL_DEFAULT_PROC_ROOT,
			POOL_LOCK_TIMEOUT_MS, d);
	if (ret < 0)
		return pool_error(ret, c, p, d, err);
	return 0;
}

/*
 * Fill a cluster config's range sets with this node's blocks: from the
 * cache or the API server for ADD (fetch), from the cache alone otherwise.
 * *missing counts the sets without a cached block (fetch false only).
 */
static int cluster_blocks(const struct cni_request *req, struct run *run, bool fetch,
			  int *missing, struct cni_error *err)
{
	static const char *const from[] = { "cache", "API server", "cache (API server failed)" };
	struct ipam_conf *c = &run->conf;
	const struct ippool_conf *pools = run->pools;
	struct ippool_block *b = &run->block;
	enum ippool_source src;
	char path[PATH_MAX + 256], msg[256], a[IPAM_ADDR_STRLEN], z[IPAM_ADDR_STRLEN];
	int fd, s, ret;

	*missing = 0;
	if (!c->node_name[0])
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "ipam.ippool: no node name to find this node's block; set ipam.nodeName or NODE_NAME (the kubelet's node name)");
	snprintf(path, sizeof(path), "%s/%s", c->data_dir, req->name);
	ret = state_dir_open(path, &fd);
	if (ret < 0)
		return cni_errorf(err, ret == -ELOOP || ret == -ENOTDIR ? CNI_ERR_INVALID_CONFIG : CNI_ERR_IO,
				  "ipam.dataDir: cannot open %s: %s", path, strerror(-ret));
	for (s = 0; s < run->n_pools && ret == 0; s++) {
		if (fetch) {
			ret = ippool_resolve(&pools[s], s, c->node_name, fd, (long long)time(NULL), b,
					     &src, err);
			if (ret < 0)
				break;
			ipam_addr_format(&b->start, a, sizeof(a));
			ipam_addr_format(&b->end, z, sizeof(z));
			log_msg(src == IPPOOL_FROM_API ? LOG_LVL_INFO : LOG_LVL_DEBUG,
				"%s %s/%s: node %s's block %s-%s (resourceVersion %s) from the %s",
				ippool_kind_name(pools[s].kind), pools[s].ns, pools[s].name,
				c->node_name, a, z, b->resource_version, from[src]);
		} else {
			ret = ippool_cache_read(fd, s, &pools[s], c->node_name, b);
			if (ret < 0) {
				(*missing)++;
				ret = 0;
				continue;
			}
		}
		ret = ippool_apply(b, c, s, msg, sizeof(msg));
		if (ret < 0)
			cni_errorf(err, CNI_ERR_INVALID_CONFIG, "ipam.ippool: %s", msg);
	}
	close(fd);
	if (ret < 0)
		return -1;
	if (*missing)
		return 0;
	return ipam_conf_finish(c, err) < 0 ? -1 : 0;
}

static int add_request(const char *s, const char *where, struct ipam_addr *req, int *n,
		       struct cni_error *err)
{
	if (*n >= IPAM_MAX_SETS)
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "%s: more than %d addresses requested", where, IPAM_MAX_SETS);
	if (!s || ipam_addr_parse_cidr(s, &req[*n]) < 0)
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "%s: not an IP address (got \"%s\")", where, s ? s : "");
	(*n)++;
	return 0;
}

static int json_requests(const cJSON *arr, const char *where, struct ipam_addr *req, int *n,
			 struct cni_error *err)
{
	const cJSON *it;
	char w[64];
	int i = 0;

	if (!cJSON_IsArray(arr))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "%s: want a list of addresses ([\"10.1.0.5/24\"])", where);
	cJSON_ArrayForEach(it, arr) {
		snprintf(w, sizeof(w), "%s[%d]", where, i++);
		if (add_request(cJSON_GetStringValue(it), w, req, n, err) < 0)
			return -1;
	}
	return 0;
}

/* Static requests, first source that has any: runtimeConfig.ips, args.cni.ips, CNI_ARGS IP=. */
static int requests(const struct cni_request *req, struct ipam_addr *out, int *n,
		    struct cni_error *err)
{
	const cJSON *ips = NULL, *args;
	const char *env;
	char *copy, *tok, *save;
	int ret = 0;

	*n = 0;
	if (req->runtime_config)
		ips = cJSON_GetObjectItemCaseSensitive(req->runtime_config, "ips");
	if (ips && cJSON_GetArraySize(ips) > 0)
		return json_requests(ips, "runtimeConfig.ips", out, n, err);
	args = cJSON_GetObjectItemCaseSensitive(req->conf, "args");
	args = cJSON_GetObjectItemCaseSensitive(args, "cni");
	ips = cJSON_GetObjectItemCaseSensitive(args, "ips");
	if (ips && cJSON_GetArraySize(ips) > 0)
		return json_requests(ips, "args.cni.ips", out, n, err);
	env = cni_env_arg(&req->env, "IP");
	if (!env || !*env)
		return 0;
	copy = strdup(env);
	if (!copy)
		return cni_errorf(err, CNI_ERR_IO, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && ret == 0; tok = strtok_r(NULL, ",", &save))
		ret = add_request(tok, "CNI_ARGS IP", out, n, err);
	free(copy);
	return ret;
}

/*
 * The file's lines go into the result the runtime logs and hands on, so a
 * NAD may name only a file in a directory the node allows for them, where
 * the path leads once every symlink is followed (/etc/resolv.conf is often
 * a link into /run/systemd/resolve). Non-blocking and regular only: a FIFO
 * or a device named here must not hang the attach. A read error is an
 * error, and a file larger than any resolver reads is refused, not cut.
 */
static int read_resolv_conf(const char *path, struct cni_dns *dns, struct cni_error *err)
{
	char real[PATH_MAX], allowed[PATH_MAX], why[PATH_MAX + 512];
	char *buf = NULL;
	size_t len;
	int ret;

	if (!realpath(path, real))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "ipam.resolvConf: cannot read %s: %s",
				  path, strerror(errno));
	if (policy_resolve(POLICY_RESOLV, real, allowed, sizeof(allowed), why, sizeof(why)) < 0) {
		if (strcmp(real, path))
			return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
					  "ipam.resolvConf: %s is a link: %s", path, why);
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "ipam.resolvConf: %s", why);
	}
	/* No link now: one put in place since realpath() is refused, not followed. */
	ret = file_read_alloc(AT_FDCWD, allowed, O_NONBLOCK | O_NOCTTY | O_NOFOLLOW,
			      RESOLV_CONF_MAX, &buf, &len);
	switch (ret) {
	case 0:
		break;
	case -EFBIG:
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "ipam.resolvConf: %s is larger than %d KiB; name a resolv.conf",
				  path, RESOLV_CONF_MAX / 1024);
	case -EISDIR:
	case -EINVAL:
	case -ELOOP:
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "ipam.resolvConf: %s is not a regular file; name a resolv.conf", path);
	case -EIO:
	case -ENOMEM:
		return cni_errorf(err, CNI_ERR_IO, "ipam.resolvConf: cannot read %s: %s", path,
				  strerror(-ret));
	default:
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG, "ipam.resolvConf: cannot read %s: %s",
				  path, strerror(-ret));
	}
	ipam_resolv_conf_parse(buf, dns);
	free(buf);
	return 0;
}

/*
 * A reservation made before the node's block left its subnet altogether
 * (the pool's subnet changed) is still returned to its owner: as a host
 * address, since its subnet is no longer known.
 */
static void result_ip(const struct ipam_conf *c, int s, const struct ipam_addr *a, struct cni_ip *ip)
{
	char buf[IPAM_ADDR_STRLEN];

	if (ipam_result_ip(c, s, a, ip) == 0)
		return;
	ipam_addr_format(a, buf, sizeof(buf));
	log_warn("%s, reserved before range set %d changed, is in none of its subnets: returned as /%d",
		 buf, s, ipam_family_bits(a->family));
	snprintf(ip->address, sizeof(ip->address), "%s/%d", buf, ipam_family_bits(a->family));
	ip->gateway[0] = '\0';
	ip->iface = CNI_UNSET;
}

static bool dns_set(const struct cni_dns *d)
{
	return d->n_nameservers || d->domain[0] || d->n_search || d->n_options;
}

/*
 * The store's part of ADD, in a frame of its own: the pool and its
 * diagnostics (8 KiB) would otherwise sit under the config's parse too,
 * pushing it onto stack pages that each cost a page fault.
 */
static int __attribute__((noinline)) add_reserve(const struct cni_request *req, struct run *run,
						 const struct pool_owner *o,
						 const struct ipam_addr *want, int n_want,
						 struct cni_result *res, struct cni_error *err)
{
	const struct ipam_conf *c = &run->conf;
	struct ipam_addr got[IPAM_MAX_SETS];
	struct pool_diag d;
	struct pool p;
	char a[IPAM_ADDR_STRLEN];
	int s, ret;

	if (open_pool(req, c, &p, &d, err) < 0)
		return -1;
	ret = pool_add(&p, o, want, n_want, got, &d);
	if (ret < 0) {
		pool_error(ret, c, &p, &d, err);
		pool_close(&p);
		return -1;
	}
	pool_close(&p);
	for (s = 0; s < c->n_sets; s++) {
		result_ip(c, s, &got[s], &res->ips[res->n_ips++]);
		ipam_addr_format(&got[s], a, sizeof(a));
		log_info("reserved %s in range set %d; lock waits pool=%.2fms", a, s,
			 p.lock_waited_ms);
	}
	return 0;
}

static int do_add(struct cni_request *req, struct run *run, struct cni_result *res,
		  struct cni_error *err)
{
	struct ipam_addr want[IPAM_MAX_SETS];
	struct ipam_conf *c = &run->conf;
	struct pool_owner o;
	int n_want, missing;

	if (load(req, run, false, err) < 0 || owner_of(req, &o, err) < 0 ||
	    requests(req, want, &n_want, err) < 0)
		return -1;
	if (c->cluster && cluster_blocks(req, run, true, &missing, err) < 0)
		return -1;
	if (dns_set(&c->dns))
		res->dns = c->dns;
	else if (c->resolv_conf && read_resolv_conf(c->resolv_conf, &res->dns, err) < 0)
		return -1;
	if (add_reserve(req, run, &o, want, n_want, res, err) < 0)
		return -1;
	memcpy(res->routes, c->routes, sizeof(c->routes[0]) * (size_t)c->n_routes);
	res->n_routes = c->n_routes;
	return 0;
}

static int do_del(struct cni_request *req, struct run *run, struct cni_error *err)
{
	struct ipam_conf *c = &run->conf;
	struct pool_owner o;
	struct pool_diag d;
	struct pool p;
	int ret, released;

	if (load(req, run, true, err) < 0 || owner_of(req, &o, err) < 0)
		return -1;
	if (!c->data_dir[0])
		return 0;
	if (open_pool(req, c, &p, &d, err) < 0)
		return -1;
	ret = pool_del(&p, &o, &released, &d);
	if (ret < 0)
		pool_error(ret, c, &p, &d, err);
	pool_close(&p);
	if (ret == 0)
		log_info("released %d reservation(s); lock waits pool=%.2fms", released,
			 p.lock_waited_ms);
	return ret < 0 ? -1 : 0;
}

/* The reservation must be in prevResult too, when the runtime passes one. */
static int check_prev(const struct cni_request *req, struct run *run,
		      const struct ipam_addr *got, struct cni_error *err)
{
	const struct ipam_conf *c = &run->conf;
	struct cni_result *prev = &run->prev;
	struct ipam_addr a;
	char s[IPAM_ADDR_STRLEN];
	int i, k;

	if (!req->prev_result)
		return 0;
	cni_result_init(prev);
	if (cni_result_parse(req->prev_result, prev, err) < 0)
		return -1;
	for (i = 0; i < c->n_sets; i++) {
		for (k = 0; k < prev->n_ips; k++)
			if (ipam_addr_parse_cidr(prev->ips[k].address, &a) == 0 &&
			    ipam_addr_cmp(&a, &got[i]) == 0)
				break;
		if (k == prev->n_ips) {
			ipam_addr_format(&got[i], s, sizeof(s));
			return cni_errorf(err, CNI_ERR_DRIFT,
					  "prevResult lacks %s, reserved for this container", s);
		}
	}
	return 0;
}

static int do_check(struct cni_request *req, struct run *run, struct cni_error *err)
{
	struct ipam_addr got[IPAM_MAX_SETS];
	struct ipam_conf *c = &run->conf;
	struct pool_owner o;
	struct pool_diag d;
	struct pool p;
	int ret;

	if (load(req, run, false, err) < 0 || owner_of(req, &o, err) < 0 ||
	    open_pool(req, c, &p, &d, err) < 0)
		return -1;
	ret = pool_check(&p, &o, got, &d);
	if (ret < 0)
		pool_error(ret, c, &p, &d, err);
	pool_close(&p);
	if (ret < 0)
		return -1;
	return check_prev(req, run, got, err);
}

/* The runtime's valid attachments, as the store asks about an owner. */
struct gc_valid {
	const struct cni_attachment *list;
	int n;
};

static bool gc_owned(const char *container_id, const char *ifname, void *arg)
{
	const struct gc_valid *gv = arg;

	return cni_attachment_valid(gv->list, gv->n, container_id, ifname);
}

static int do_gc(struct cni_request *req, struct run *run, struct cni_error *err)
{
	struct cni_attachment *valid = NULL;
	struct gc_valid gv;
	struct ipam_conf *c = &run->conf;
	struct pool_diag d;
	struct pool p;
	int n, ret, released;

	if (load(req, run, true, err) < 0 || cni_gc_valid_attachments(req, &valid, &n, err) < 0)
		return -1;
	if (!c->data_dir[0] || n < 0) {
		log_info("GC: no cni.dev/valid-attachments in the config: releasing nothing");
		free(valid);
		return 0;
	}
	if (open_pool(req, c, &p, &d, err) < 0) {
		free(valid);
		return -1;
	}
	gv.list = valid;
	gv.n = n;
	ret = pool_gc(&p, gc_owned, &gv, &released, &d);
	if (ret < 0)
		pool_error(ret, c, &p, &d, err);
	pool_close(&p);
	free(valid);
	if (ret == 0)
		log_info("GC: released %d reservation(s) of %d valid attachment(s)", released, n);
	return ret < 0 ? -1 : 0;
}

static int do_status(struct cni_request *req, struct run *run, struct cni_error *err)
{
	struct ipam_conf *c = &run->conf;
	struct cni_error inner = { 0 };
	struct pool_diag d;
	struct pool p;
	char set[96];
	int ret, missing = 0;

	if (load(req, run, false, err) < 0)
		return -1;
	if (c->cluster && cluster_blocks(req, run, false, &missing, err) < 0)
		return -1;
	if (open_pool(req, c, &p, &d, &inner) < 0)
		return cni_errorf(err, CNI_ERR_NOT_AVAILABLE, "store unusable: %s", inner.msg);
	/* Without a cached block there is nothing to count: the next ADD fetches it. */
	ret = missing ? 0 : pool_status(&p, &d);
	if (ret == -EXFULL) {
		set_name(c, d.set, set, sizeof(set));
		cni_errorf(err, CNI_ERR_NOT_AVAILABLE, "%s is exhausted: ADD would fail", set);
	} else if (ret < 0) {
		pool_error(ret, c, &p, &d, &inner);
		cni_errorf(err, CNI_ERR_NOT_AVAILABLE, "store unusable: %s", inner.msg);
		if (inner.details[0])
			cni_error_details(err, "%s", inner.details);
	}
	pool_close(&p);
	return ret < 0 ? -1 : 0;
}

/* The skeleton's handlers: each verb gets its own run and frees it. */
static int cmd_add(struct cni_request *req, struct cni_result *res, struct cni_error *err)
{
	struct run *run = run_new(err);
	int ret;

	if (!run)
		return -1;
	ret = do_add(req, run, res, err);
	free(run);
	return ret;
}

static int with_run(int (*verb)(struct cni_request *, struct run *, struct cni_error *),
		    struct cni_request *req, struct cni_error *err)
{
	struct run *run = run_new(err);
	int ret;

	if (!run)
		return -1;
	ret = verb(req, run, err);
	free(run);
	return ret;
}

static int cmd_del(struct cni_request *req, struct cni_error *err)
{
	return with_run(do_del, req, err);
}

static int cmd_check(struct cni_request *req, struct cni_error *err)
{
	return with_run(do_check, req, err);
}

static int cmd_gc(struct cni_request *req, struct cni_error *err)
{
	return with_run(do_gc, req, err);
}

static int cmd_status(struct cni_request *req, struct cni_error *err)
{
	return with_run(do_status, req, err);
}

static const struct cni_plugin plugin = {
	.name = "pool-ipam",
	.about = "pool-ipam: file-locked, crash-safe IP address pool",
	.formats = "pool record " CNI_STR(POOL_RECORD_VERSION) ", ippool cache "
		   CNI_STR(IPPOOL_CACHE_VERSION) ", node config " CNI_STR(POLICY_VERSION),
	.cmd_add = cmd_add,
	.cmd_del = cmd_del,
	.cmd_check = cmd_check,
	.cmd_status = cmd_status,
	.cmd_gc = cmd_gc,
};

int main(int argc, char **argv)
{
	return cni_plugin_main(&plugin, argc, argv);
}
