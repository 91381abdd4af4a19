/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sysctl: kernel parameters under <proc_root>/sys, named as sysctl(8) and
 * the tuning plugin name them ("net.ipv4.conf.net1.arp_ignore"), read and
 * written inside a given network namespace.
 *
 * Only "net." names are accepted: they are the ones a network namespace
 * owns, so a pod's config can never change the host's kernel. Per-interface
 * names (net.ipv{4,6}.{conf,neigh}.<ifname>.<key>) may name the pod's
 * interface, "all" or "default" only: another interface of the pod belongs
 * to another attachment. Functions return 0 or -errno.
 */
#ifndef SYSCTL_H
#define SYSCTL_H

#include <stddef.h>

#define SYSCTL_DEFAULT_PROC_ROOT	"/proc"
#define SYSCTL_NAME_MAX		128
#define SYSCTL_VALUE_MAX	64

/*
 * Is `name` acceptable for interface `ifname`? -EINVAL otherwise, with the
 * reason (to follow the name in a message) in why.
 */
int sysctl_name_check(const char *name, const char *ifname, char *why, size_t len);
/* 1 to SYSCTL_VALUE_MAX printable characters (tab allowed, as in ip_local_port_range). */
int sysctl_value_check(const char *value);
/* "<proc_root>/sys/net/ipv4/conf/net1/arp_ignore" for a name sysctl_name_check accepts. */
int sysctl_path(const char *proc_root, const char *name, char *out, size_t len);
/*
 * Read / write a parameter in netns_fd (-1: the current namespace). /proc/sys/net
 * answers for the namespace of whoever opens the file, so the open happens
 * inside netns_fd. A read drops the trailing newline. -ENOENT: no such
 * parameter (or no such interface) there.
 */
int sysctl_read_in(int netns_fd, const char *proc_root, const char *name, char *buf, size_t len);
int sysctl_write_in(int netns_fd, const char *proc_root, const char *name, const char *value);

#endif
