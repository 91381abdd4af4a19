/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A CNI result (SPEC.md "Success"): interfaces, IPs, routes, DNS, read from
 * any supported version and written for the requested one.
 */
#ifndef CNI_RESULT_H
#define CNI_RESULT_H

#include <net/if.h>
#include <cjson/cJSON.h>

#define CNI_MAX_IFACES		8
#define CNI_MAX_IPS		16
#define CNI_MAX_ROUTES		64
#define CNI_MAX_DNS		8
#define CNI_UNSET		(-1)

struct cni_error;

struct cni_iface {
	char name[IFNAMSIZ];
	char mac[18];			/* "" when unset */
	int mtu;			/* 0 when unset; emitted for >= 1.1.0 */
	char sandbox[4096];		/* "" for host interfaces */
	char pci_id[32];		/* emitted for >= 1.1.0 */
};

struct cni_ip {
	char address[64];		/* CIDR, e.g. "10.1.0.5/24" */
	char gateway[48];		/* "" when unset */
	int iface;			/* index into ifaces, CNI_UNSET when absent */
};

struct cni_route {
	char dst[64];			/* CIDR */
	char gw[48];			/* "" when unset */
	int mtu, advmss, priority, table, scope;	/* CNI_UNSET when absent */
};

struct cni_dns {
	int n_nameservers;
	char nameservers[CNI_MAX_DNS][48];
	char domain[256];
	int n_search;
	char search[CNI_MAX_DNS][256];
	int n_options;
	char options[CNI_MAX_DNS][64];
};

/*
 * The counts, the addresses and DNS first: what every result sets up lies
 * in its first two pages, and the interfaces (4 KiB each) and routes are
 * touched only as they are filled. Each page's first touch is a page fault.
 */
struct cni_result {
	int n_ifaces;
	int n_ips;
	int n_routes;
	struct cni_ip ips[CNI_MAX_IPS];
	struct cni_dns dns;
	struct cni_iface ifaces[CNI_MAX_IFACES];
	struct cni_route routes[CNI_MAX_ROUTES];
};

/* Empty: no interface, address, route or DNS; ifaces[] and routes[] entries are set up as they are filled. */
void cni_result_init(struct cni_result *r);
void cni_route_init(struct cni_route *rt);
/* The next entry, counted and set up empty (a route's numbers CNI_UNSET); NULL when full. */
struct cni_iface *cni_result_add_iface(struct cni_result *r);
struct cni_route *cni_result_add_route(struct cni_result *r);
/*
 * Parse a result of any supported version (prevResult, a delegate's stdout).
 * It is the runtime's input: errors are code 6 in *err, naming the member.
 */
int cni_result_parse(const cJSON *json, struct cni_result *r, struct cni_error *err);
/* Encode for the requested version: < 1.0.0 adds ips[].version, < 1.1.0 drops mtu/pciID. */
cJSON *cni_result_encode(const struct cni_result *r, const char *version);
int cni_result_print(const struct cni_result *r, const char *version);

/*
 * The route as the spec means it: without "gw", via the IPAM's gateway,
 * that of the result's first address of the route's family that has one;
 * on-link only when there is none.
 */
void cni_route_resolve(const struct cni_result *r, const struct cni_route *rt,
		       struct cni_route *out);

#endif
