/* SPDX-License-Identifier: Apache-2.0 */
/*
 * valid: is this name safe to reach a path, a directory or a netlink request?
 *
 * Predicates only, no error text: the caller knows whether the name came
 * from the environment (CNI code 4) or the config (code 7) and says so.
 * Modules below the plugin layer (sysctl, policy, vf, link, records) check
 * names here without knowing CNI.
 */
#ifndef VALID_H
#define VALID_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A netns path: an absolute path (as valid_abs_path) without control
 * characters and shorter than VALID_NETNS_MAX, so that every record that
 * holds it can be read back.
 */
#define VALID_NETNS_MAX		1024

/* The CNI spec's pattern ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$, at most 200 bytes. */
bool valid_container_id(const char *id);
bool valid_netns_path(const char *path);
/* 1..15 bytes, not "." or "..", no '/', ':' or whitespace. */
bool valid_ifname(const char *name);
/* Same pattern as a container ID: it names a directory. */
bool valid_network_name(const char *name);
/* Same pattern, at most NAME_MAX bytes: it names a file in CNI_PATH. */
bool valid_plugin_type(const char *type);
/*
 * Absolute, shorter than PATH_MAX, no "." or ".." component: a path from a
 * config is opened as root, so it must say plainly where it goes.
 */
bool valid_abs_path(const char *path);
/* What keeps path from being one, for a message ("is not an absolute path"); NULL when it is. */
const char *valid_abs_path_problem(const char *path);
/*
 * The hex fields of hardware address text (a PCI address, a MAC): exactly
 * n hex digits at s, their value; -1 when any of them is not one.
 */
long valid_hexfield(const char *s, int n);
/* "aa:bb:cc:dd:ee:ff" (either case) <-> bytes: 0 or -EINVAL. */
int valid_mac_parse(const char *s, uint8_t mac[6]);
void valid_mac_format(const uint8_t mac[6], char out[18]);

#endif
