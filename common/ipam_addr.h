/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam_addr: IP addresses, prefixes and spans as numbers.
 *
 * Addresses of both families are 128-bit integers (IPv4 in the low 32
 * bits), so iteration, containment and capacity are plain arithmetic.
 * Nothing here knows the config: the text forms are those of inet_pton
 * and CIDR notation.
 */
#ifndef IPAM_ADDR_H
#define IPAM_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPAM_ADDR_STRLEN	46	/* INET6_ADDRSTRLEN */

typedef unsigned __int128 ipam_u128;

struct ipam_addr {
	int family;			/* AF_INET or AF_INET6 */
	ipam_u128 v;
};

struct ipam_prefix {
	struct ipam_addr addr;		/* the network address: host bits are zero */
	int len;
};

/* An inclusive span of addresses of one family. */
struct ipam_span {
	struct ipam_addr start, end;
};

/* Dotted quad or RFC 4291 text; no prefix. 0 or -EINVAL. */
int ipam_addr_parse(const char *s, struct ipam_addr *a);
/* Canonical text (inet_ntop); buf of at least IPAM_ADDR_STRLEN. */
void ipam_addr_format(const struct ipam_addr *a, char *buf, size_t len);
int ipam_addr_cmp(const struct ipam_addr *a, const struct ipam_addr *b);
int ipam_family_bits(int family);

/* "a.b.c.d/n": the address is masked to the network. 0 or -EINVAL. */
int ipam_prefix_parse(const char *s, struct ipam_prefix *p);
/* An address with an optional "/n" (static requests): the prefix is ignored. */
int ipam_addr_parse_cidr(const char *s, struct ipam_addr *a);
struct ipam_addr ipam_prefix_last(const struct ipam_prefix *p);
bool ipam_prefix_contains(const struct ipam_prefix *p, const struct ipam_addr *a);
/* Zero the host bits of p's address (p->len already in range for its family). */
void ipam_prefix_normalize(struct ipam_prefix *p);

/* "10.1.0.7", "10.1.0.64/26" or "10.1.0.10-10.1.0.20" (inclusive). 0 or -EINVAL. */
int ipam_span_parse(const char *s, struct ipam_span *sp);

#endif
