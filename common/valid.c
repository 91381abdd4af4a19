/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>

#include "valid.h"

static bool valid_id(const char *s, size_t max)
{
	size_t n;

	if (!s || !isalnum((unsigned char)s[0]) || !isascii((unsigned char)s[0]))
		return false;
	for (n = 1; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];

		if (!(isascii(c) && (isalnum(c) || c == '_' || c == '.' || c == '-')))
			return false;
	}
	return n <= max;
}

bool valid_container_id(const char *id)
{
	return valid_id(id, 200);
}

bool valid_network_name(const char *name)
{
	return valid_id(name, 200);
}

const char *valid_abs_path_problem(const char *path)
{
	const char *c = path;
	size_t n;

	if (!path || path[0] != '/')
		return "is not an absolute path";
	if (strlen(path) >= PATH_MAX)
		return "is longer than a path can be";
	while (*c) {
		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if (n == 1 && c[0] == '.')
			return "holds a \".\" component (write the path without it)";
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return "holds a \"..\" component";
		c += n;
	}
	return NULL;
}

bool valid_abs_path(const char *path)
{
	return !valid_abs_path_problem(path);
}

bool valid_netns_path(const char *path)
{
	size_t n;

	if (!valid_abs_path(path))
		return false;
	for (n = 0; path[n]; n++)
		if (iscntrl((unsigned char)path[n]))
			return false;
	return n < VALID_NETNS_MAX;
}

bool valid_ifname(const char *name)
{
	size_t n;

	if (!name || !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (n = 0; name[n]; n++) {
		unsigned char c = (unsigned char)name[n];

		if (c == '/' || c == ':' || isspace(c))
			return false;
	}
	return n < IFNAMSIZ;
}

bool valid_plugin_type(const char *type)
{
	return valid_id(type, NAME_MAX);
}

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long valid_hexfield(const char *s, int n)
{
	long v = 0;
	int i, d;

	for (i = 0; i < n; i++) {
		d = hexdigit(s[i]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

int valid_mac_parse(const char *s, uint8_t mac[6])
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

void valid_mac_format(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x",
		 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}
