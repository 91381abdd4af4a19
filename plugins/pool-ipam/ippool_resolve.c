/* SPDX-License-Identifier: Apache-2.0 */
#include "ippool_resolve.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ippool_cache.h"
#include "ippool_convert.h"
#include "kube.h"
#include "log.h"

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

/* One resolution: what its steps share. */
struct resolve {
	const struct ippool_conf *pc;
	int set;
	const char *node;
	int store_dirfd;
	long long now;
	bool have;			/* cached is node's block, of any age */
	struct ippool_block cached;
	struct ippool_block *b;
	enum ippool_source *src;
	struct cni_error *err;
};

/*
 * The API server failed in a way that says nothing about the pool: the
 * cache of any age is better than no pod. Without one, *err gets code and
 * the fix. waited < 0: nothing was sent.
 */
static int fall_back(struct resolve *rs, const char *why, long long waited, int code,
		     const char *fix)
{
	const struct ippool_conf *pc = rs->pc;
	char after[48] = "";

	if (waited >= 0)
		snprintf(after, sizeof(after), " after %lld ms", waited);
	if (!rs->have) {
		cni_errorf(rs->err, code, "%s %s/%s: %s%s, and node %s has no cached block yet",
			   ippool_kind_name(pc->kind), pc->ns, pc->name, why, after, rs->node);
		cni_error_details(rs->err, "%s", fix);
		return -1;
	}
	*rs->b = rs->cached;
	*rs->src = IPPOOL_FROM_STALE_CACHE;
	log_warn("%s %s/%s: %s%s; using node %s's cached block, %lld s old (resourceVersion %s)",
		 ippool_kind_name(pc->kind), pc->ns, pc->name, why, after, rs->node,
		 rs->now - rs->cached.fetched,
		 rs->cached.resource_version[0] ? rs->cached.resource_version : "unknown");
	return 0;
}

/* The cache: true when young enough to use without asking; rs->have when usable at all. */
static bool cache_fresh(struct resolve *rs)
{
	const struct ippool_conf *pc = rs->pc;
	int ret;

	ret = ippool_cache_read(rs->store_dirfd, rs->set, pc, rs->node, &rs->cached);
	if (ret == -EBADMSG)
		log_warn("cached block ippool.%d of %s %s/%s is corrupt: fetching it again", rs->set,
			 ippool_kind_name(pc->kind), pc->ns, pc->name);
	rs->have = ret == 0;
	return rs->have && rs->now >= rs->cached.fetched &&
	       rs->now - rs->cached.fetched < pc->max_age;
}

/*
 * GET the pool as its kubeconfig says: 0 with any HTTP answer in *reply.
 * Else msg says why, and *waited is how long it took, or -1 when nothing
 * was sent (the kubeconfig is unusable).
 */
static int get_pool(const struct ippool_conf *pc, struct kube_reply *reply, long long *waited,
		    char *msg, size_t len)
{
	struct kube_config kc;
	struct timespec t0;
	char path[512];
	int ret;

	memset(&kc, 0, sizeof(kc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = kube_config_load(pc->kubeconfig, &kc, msg, len);
	if (ret < 0) {
		*waited = -1;
		return ret;
	}
	ret = ippool_api_path(pc, path, sizeof(path));
	if (ret == 0)
		ret = kube_get(&kc, path, pc->timeout * 1000, reply, msg, len);
	*waited = elapsed_ms(&t0);
	kube_config_free(&kc);
	return ret;
}

/* An HTTP answer other than 200: the pool is gone, or the API server says nothing of it. */
static int not_ok(struct resolve *rs, const struct kube_reply *reply, long long waited,
		  char *msg, size_t len)
{
	const struct ippool_conf *pc = rs->pc;
	int ret;

	switch (reply->status) {
	case 404:
		/* The pool is gone: its blocks may already belong to another pool. */
		ippool_cache_remove(rs->store_dirfd, rs->set);
		ret = cni_errorf(rs->err, CNI_ERR_INVALID_CONFIG,
				 "ipam.ippool: %s %s/%s does not exist (404 from the API server)",
				 ippool_kind_name(pc->kind), pc->ns, pc->name);
		cni_error_details(rs->err, "check name, namespace and kind: kubectl get %s.nv-ipam.nvidia.com -n %s",
				  ippool_kind_plural(pc->kind), pc->ns);
		return ret;
	case 401:
		snprintf(msg, len, "the API server refused kubeconfig %s (HTTP 401: expired "
			 "or unknown credentials)", pc->kubeconfig);
		return fall_back(rs, msg, waited, CNI_ERR_INVALID_CONFIG, FIX_KUBECONFIG);
	case 403:
		/* Authenticated, not authorized: RBAC, and the API server's message names the user. */
		forbidden_message(pc, reply, msg, len);
		return fall_back(rs, msg, waited, CNI_ERR_INVALID_CONFIG, FIX_FORBIDDEN);
	default:
		snprintf(msg, len, "the API server answered HTTP %ld", reply->status);
		return fall_back(rs, msg, waited, CNI_ERR_TRY_AGAIN, FIX_UNREACHABLE);
	}
}

/* A 200: the node's block, cached for the next ADDs. */
static int take(struct resolve *rs, const struct kube_reply *reply, char *msg, size_t len)
{
	const struct ippool_conf *pc = rs->pc;
	int ret;

	ret = ippool_convert(pc, rs->node, reply->body, reply->len, rs->b, msg, len);
	if (ret == -ENOENT) {
		ippool_cache_remove(rs->store_dirfd, rs->set);
		return cni_errorf(rs->err, CNI_ERR_TRY_AGAIN, "%s", msg);
	}
	if (ret < 0)
		return cni_errorf(rs->err, CNI_ERR_INVALID_CONFIG, "%s", msg);
	rs->b->fetched = rs->now;
	*rs->src = IPPOOL_FROM_API;
	ret = ippool_cache_write(rs->store_dirfd, rs->set, pc, rs->node, rs->b);
	if (ret < 0)
		log_warn("cannot cache the block of %s %s/%s: %s; the next ADD asks the API server again",
			 ippool_kind_name(pc->kind), pc->ns, pc->name, strerror(-ret));
	return 0;
}

int ippool_resolve(const struct ippool_conf *pc, int set, const char *node, int store_dirfd,
		   long long now, struct ippool_block *b, enum ippool_source *src,
		   struct cni_error *err)
{
	struct resolve rs = { .pc = pc, .set = set, .node = node, .store_dirfd = store_dirfd,
			      .now = now, .b = b, .src = src, .err = err };
	struct kube_reply reply = { 0 };
	char msg[PATH_MAX + KUBE_ERRLEN];
	long long waited;
	int ret;

	if (cache_fresh(&rs)) {
		*b = rs.cached;
		*src = IPPOOL_FROM_CACHE;
		return 0;
	}
	ret = get_pool(pc, &reply, &waited, msg, sizeof(msg));
	if (ret < 0)
		ret = fall_back(&rs, msg, waited,
				waited < 0 ? CNI_ERR_INVALID_CONFIG : CNI_ERR_TRY_AGAIN,
				waited < 0 ? FIX_KUBECONFIG : FIX_UNREACHABLE);
	else if (reply.status != 200)
		ret = not_ok(&rs, &reply, waited, msg, sizeof(msg));
	else
		ret = take(&rs, &reply, msg, sizeof(msg));
	kube_reply_free(&reply);
	return ret;
}
