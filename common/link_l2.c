/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link, the layer-2 side that needs no rtnetlink: MAC addresses as text.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "link.h"
#include "valid.h"

/* ---- MAC addresses ---- */

int link_mac_parse(const char *s, uint8_t mac[6])
{
	uint8_t out[6];
	long byte;
	int i;

	if (strlen(s) != 17)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		byte = valid_hexfield(s + i * 3, 2);
		if (byte < 0 || (i < 5 && s[i * 3 + 2] != ':'))
			return -EINVAL;
		out[i] = (uint8_t)byte;
	}
	memcpy(mac, out, 6);
	return 0;
}

void link_mac_format(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x",
		 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}
