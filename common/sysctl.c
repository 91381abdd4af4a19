/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sysctl: "net." kernel parameters inside a network namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "file.h"
#include "netns.h"
#include "sysctl.h"

/* The subtrees that hold one directory per interface, plus "all" and "default". */
static const char *const per_iface[] = {
	"net.ipv4.conf.", "net.ipv6.conf.", "net.ipv4.neigh.", "net.ipv6.neigh.", NULL,
};

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* Dot-separated words, none empty (so no ".."), nothing but [A-Za-z0-9_-] (so no "/"). */
static bool words(const char *s, size_t n)
{
	size_t i, run = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (!run)
				return false;
			run = 0;
		} else if (word_char(s[i])) {
			run++;
		} else {
			return false;
		}
	}
	return run > 0;
}

static const char *iface_prefix(const char *name)
{
	int i;

	for (i = 0; per_iface[i]; i++)
		if (!strncmp(name, per_iface[i], strlen(per_iface[i])))
			return per_iface[i];
	return NULL;
}

int sysctl_name_check(const char *name, const char *ifname, char *why, size_t len)
{
	const char *pre, *dev, *key;
	size_t n = strlen(name), devlen;

	if (n == 0 || n > SYSCTL_NAME_MAX) {
		snprintf(why, len, "is empty or longer than %d characters", SYSCTL_NAME_MAX);
		return -EINVAL;
	}
	if (strncmp(name, "net.", 4)) {
		snprintf(why, len, "is not a \"net.\" parameter: only those belong to the pod's "
			 "network namespace");
		return -EINVAL;
	}
	pre = iface_prefix(name);
	if (!pre) {
		if (!words(name, n)) {
			snprintf(why, len, "must be dot-separated words of A-Z a-z 0-9 _ -");
			return -EINVAL;
		}
		return 0;
	}
	/* The interface may hold dots (a VLAN "net1.100"): the key is the last word. */
	dev = name + strlen(pre);
	key = strrchr(name, '.');
	if (key < dev || !key[1] || !words(key + 1, strlen(key + 1))) {
		snprintf(why, len, "must be %s<interface>.<key>", pre);
		return -EINVAL;
	}
	key++;
	devlen = (size_t)(key - 1 - dev);
	if (!((devlen == 3 && !strncmp(dev, "all", 3)) ||
	      (devlen == 7 && !strncmp(dev, "default", 7)) ||
	      (ifname && devlen == strlen(ifname) && !strncmp(dev, ifname, devlen)))) {
		snprintf(why, len, "names interface \"%.*s\": only the pod's interface (%s), "
			 "\"all\" or \"default\" can be set", (int)devlen, dev,
			 ifname ? ifname : "CNI_IFNAME");
		return -EINVAL;
	}
	return 0;
}

int sysctl_value_check(const char *value)
{
	size_t i, n = strlen(value);

	if (n == 0 || n > SYSCTL_VALUE_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (value[i] != '\t' && (value[i] < 0x20 || value[i] > 0x7e))
			return -EINVAL;
	return 0;
}

int sysctl_path(const char *proc_root, const char *name, char *out, size_t len)
{
	const char *pre = iface_prefix(name);
	const char *key = pre ? strrchr(name, '.') : NULL;
	size_t i, off;
	int n;

	n = snprintf(out, len, "%s/sys/", proc_root);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	off = (size_t)n;
	/* Dots become slashes, except inside the interface name of a per-interface key. */
	for (i = 0; name[i]; i++, off++) {
		bool in_dev = pre && name + i >= name + strlen(pre) && name + i < key;

		if (off + 1 >= len)
			return -ENAMETOOLONG;
		out[off] = name[i] == '.' && !in_dev ? '/' : name[i];
	}
	out[off] = '\0';
	return 0;
}

/* What reaches a path: under net/, no "/", no empty word, so never "..". */
static bool name_safe(const char *name)
{
	size_t i, n = strlen(name);

	if (n <= 4 || n > SYSCTL_NAME_MAX || strncmp(name, "net.", 4) || name[n - 1] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (name[i] == '/' || name[i] <= 0x20 || name[i] > 0x7e ||
		    (name[i] == '.' && name[i + 1] == '.'))
			return false;
	return true;
}

struct open_args {
	const char *path;
	int flags;
	int *fd;
};

static int open_cb(void *arg)
{
	struct open_args *a = arg;

	*a->fd = open(a->path, a->flags | O_CLOEXEC | O_NOFOLLOW);
	return *a->fd < 0 ? -errno : 0;
}

static int open_in(int netns_fd, const char *path, int flags, int *fd)
{
	struct open_args a = { .path = path, .flags = flags, .fd = fd };
	int ret;

	if (netns_fd < 0)
		return open_cb(&a);
	*fd = -1;
	ret = netns_do(netns_fd, open_cb, &a);
	if (ret < 0 && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return ret;
}

int sysctl_read_in(int netns_fd, const char *proc_root, const char *name, char *buf, size_t len)
{
	char path[512];
	ssize_t n;
	int fd, ret;

	if (len < 2 || !name_safe(name))
		return -EINVAL;
	ret = sysctl_path(proc_root, name, path, sizeof(path));
	if (ret < 0)
		return ret;
	ret = open_in(netns_fd, path, O_RDONLY, &fd);
	if (ret < 0)
		return ret;
	n = file_read_fd(fd, buf, len);
	close(fd);
	if (n < 0)
		return (int)n;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int sysctl_write_in(int netns_fd, const char *proc_root, const char *name, const char *value)
{
	size_t len = strlen(value);
	char path[512];
	ssize_t n;
	int fd, ret;

	if (!name_safe(name) || sysctl_value_check(value) < 0)
		return -EINVAL;
	ret = sysctl_path(proc_root, name, path, sizeof(path));
	if (ret < 0)
		return ret;
	/* O_TRUNC: a no-op on /proc/sys, needed for a test tree of plain files. */
	ret = open_in(netns_fd, path, O_WRONLY | O_TRUNC, &fd);
	if (ret < 0)
		return ret;
	n = write(fd, value, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}
