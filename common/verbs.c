/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "log.h"
#include "verbs.h"

/*
 * Loaded on first use: only an attachment with an RDMA device asks it
 * anything, and every other exec (DEL, CHECK, VERSION, a VF without RDMA)
 * would pay for loading it and the shared libnl pair it needs. It loads its
 * providers itself, when listing devices.
 *
 * Each function is resolved at the version of rdma-core's libibverbs.map
 * that a program linked against the installed verbs.h binds to, so a later
 * ABI of the same name can never be picked up. The types come from verbs.h
 * where it declares the function; ibv_query_port and ibv_query_gid_table
 * are inline there, and these are the library functions they call.
 */
static struct {
	__typeof__(ibv_get_device_list) *get_device_list;
	__typeof__(ibv_free_device_list) *free_device_list;
	__typeof__(ibv_get_device_name) *get_device_name;
	__typeof__(ibv_open_device) *open_device;
	__typeof__(ibv_close_device) *close_device;
	__typeof__(ibv_query_device) *query_device;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct _compat_ibv_port_attr *port_attr);
	__typeof__(_ibv_query_gid_table) *query_gid_table;
} iv;

static const struct {
	const char *name;
	const char *version;
	void **slot;
} iv_syms[] = {
	{ "ibv_get_device_list", "IBVERBS_1.1", (void **)&iv.get_device_list },
	{ "ibv_free_device_list", "IBVERBS_1.1", (void **)&iv.free_device_list },
	{ "ibv_get_device_name", "IBVERBS_1.1", (void **)&iv.get_device_name },
	{ "ibv_open_device", "IBVERBS_1.1", (void **)&iv.open_device },
	{ "ibv_close_device", "IBVERBS_1.1", (void **)&iv.close_device },
	{ "ibv_query_device", "IBVERBS_1.1", (void **)&iv.query_device },
	{ "ibv_query_port", "IBVERBS_1.1", (void **)&iv.query_port },
	{ "_ibv_query_gid_table", "IBVERBS_1.11", (void **)&iv.query_gid_table },
};

static int iv_state;			/* 0 not tried, 1 loaded, < 0 -errno */

int verbs_load(void)
{
	void *lib;
	size_t i;

	if (iv_state)
		return iv_state < 0 ? iv_state : 0;
	iv_state = -ENOSYS;
	lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		log_warn("libibverbs: %s", dlerror());
		return iv_state;
	}
	for (i = 0; i < sizeof(iv_syms) / sizeof(iv_syms[0]); i++) {
		*iv_syms[i].slot = dlvsym(lib, iv_syms[i].name, iv_syms[i].version);
		if (!*iv_syms[i].slot) {
			log_warn("libibverbs.so.1 has no %s@%s", iv_syms[i].name,
				 iv_syms[i].version);
			goto err_close;
		}
	}
	/* The library stays loaded: its providers keep state for the process. */
	iv_state = 1;
	return 0;

err_close:
	memset(&iv, 0, sizeof(iv));
	dlclose(lib);
	return iv_state;
}

/*
 * As verbs.h's inline ibv_query_port hands its attr to the library: the
 * library fills the compat part (gid_tbl_len is in it) whatever the provider.
 */
static int query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	return iv.query_port(ctx, port, (struct _compat_ibv_port_attr *)attr);
}

static int verbs_open(const char *name, struct ibv_context **ctx)
{
	struct ibv_device **list;
	int i, n = 0, ret;

	ret = verbs_load();
	if (ret < 0)
		return ret;
	ret = -ENODEV;
	list = iv.get_device_list(&n);
	if (!list)
		return -ENODEV;
	for (i = 0; i < n; i++) {
		if (strcmp(iv.get_device_name(list[i]), name) != 0)
			continue;
		*ctx = iv.open_device(list[i]);
		ret = *ctx ? 0 : -ENODEV;
		break;
	}
	iv.free_device_list(list);
	return ret;
}

int rdma_verbs_dev_present(const char *name)
{
	struct ibv_context *ctx;
	int ret = verbs_open(name, &ctx);

	if (ret == 0)
		iv.close_device(ctx);
	return ret;
}

static int gid_from_address(const char *address, union ibv_gid *gid)
{
	char a[INET6_ADDRSTRLEN];
	const char *slash = strchr(address, '/');
	size_t len = slash ? (size_t)(slash - address) : strlen(address);
	struct in_addr v4;

	if (len == 0 || len >= sizeof(a))
		return -EINVAL;
	memcpy(a, address, len);
	a[len] = '\0';
	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET, a, &v4) == 1) {
		/* RoCE stores IPv4 as the v4-mapped IPv6 address. */
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &v4, sizeof(v4));
		return 0;
	}
	return inet_pton(AF_INET6, a, gid->raw) == 1 ? 0 : -EINVAL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int rdma_gid_index_for(const char *dev_name, uint32_t port, const char *address, bool roce_v2,
		       unsigned wait_ms, int *index)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	uint32_t want = roce_v2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	uint64_t deadline = now_ms() + wait_ms;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_gid_entry *entries;
	struct ibv_context *ctx;
	union ibv_gid gid;
	size_t max;
	ssize_t n, i;
	int ret;

	if (port == 0 || gid_from_address(address, &gid) < 0)
		return -EINVAL;
	ret = verbs_open(dev_name, &ctx);
	if (ret < 0)
		return ret;
	ret = iv.query_device(ctx, &dattr);
	if (ret == 0 && port > dattr.phys_port_cnt)
		ret = EINVAL;
	if (ret == 0)
		ret = query_port(ctx, (uint8_t)port, &pattr);
	if (ret != 0) {
		ret = -ret;
		goto out_close;
	}
	/* The table call returns the valid entries of every port at once. */
	max = (size_t)pattr.gid_tbl_len * dattr.phys_port_cnt;
	entries = calloc(max ? max : 1, sizeof(*entries));
	if (!entries) {
		ret = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		n = iv.query_gid_table(ctx, entries, max, 0, sizeof(*entries));
		if (n < 0) {
			ret = (int)n;
			goto out_free;
		}
		for (i = 0; i < n; i++) {
			if (entries[i].port_num == port && entries[i].gid_type == want &&
			    !memcmp(entries[i].gid.raw, gid.raw, sizeof(gid.raw))) {
				*index = (int)entries[i].gid_index;
				ret = 0;
				goto out_free;
			}
		}
		if (now_ms() >= deadline) {
			ret = -ENOENT;
			goto out_free;
		}
		nanosleep(&tick, NULL);
	}

out_free:
	free(entries);
out_close:
	iv.close_device(ctx);
	return ret;
}
