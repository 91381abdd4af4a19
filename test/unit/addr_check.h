/* SPDX-License-Identifier: Apache-2.0 */
/* Address helpers for the tests of ipam and pool: text in, text out. */
#ifndef ADDR_CHECK_H
#define ADDR_CHECK_H

#include <stdio.h>
#include "ipam_addr.h"

/* The address of test text; a typo in a test says so instead of passing as 0. */
static inline struct ipam_addr A(const char *s)
{
	struct ipam_addr a = { 0, 0 };

	if (ipam_addr_parse(s, &a) < 0)
		fprintf(stderr, "  bad test address %s\n", s);
	return a;
}

/* The text of an address; four at a time may be alive (one CHECK's arguments). */
static inline const char *fmt(const struct ipam_addr *a)
{
	static char buf[4][IPAM_ADDR_STRLEN];
	static int i;

	i = (i + 1) % 4;
	ipam_addr_format(a, buf[i], sizeof(buf[i]));
	return buf[i];
}

#endif
