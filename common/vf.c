/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vf: SR-IOV Virtual Functions in PCI sysfs: from a PCI address to the
 * VF's netdev, its PF, its index on the PF and its RDMA device.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "file.h"
#include "valid.h"
#include "vf.h"

/* ---- PCI addresses ---- */

int vf_bdf_parse(const char *s, char out[VF_BDF_LEN])
{
	long domain = 0, bus, dev, fn;
	size_t len = strlen(s);

	if (len == 12) {
		domain = valid_hexfield(s, 4);
		if (domain < 0 || s[4] != ':')
			return -EINVAL;
		s += 5;
	} else if (len != 7) {
		return -EINVAL;
	}
	bus = valid_hexfield(s, 2);
	dev = valid_hexfield(s + 3, 2);
	if (bus < 0 || s[2] != ':' || dev < 0 || dev > 0x1f || s[5] != '.' ||
	    s[6] < '0' || s[6] > '7')
		return -EINVAL;
	fn = s[6] - '0';
	snprintf(out, VF_BDF_LEN, "%04x:%02x:%02x.%u", (uint16_t)domain, (uint8_t)bus, (uint8_t)dev,
		 (unsigned)(fn & 7));
	return 0;
}

/* Canonical already: what may become part of a path. */
static bool bdf_canonical(const char *bdf)
{
	char c[VF_BDF_LEN];

	return vf_bdf_parse(bdf, c) == 0 && strcmp(c, bdf) == 0;
}

/* ---- sysfs ---- */

static int pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Basename of a symlink's target; -ENOENT when there is no link. */
static int link_basename(const char *path, char *out, size_t len)
{
	char target[PATH_MAX];
	const char *base;
	ssize_t n;

	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	strcpy(out, base);
	return 0;
}

/*
 * The first entry of a directory in name order, so the answer does not
 * depend on readdir order; "" when the directory is empty or missing.
 */
static int first_entry(const char *dir, char *out, size_t len)
{
	struct dirent *de;
	DIR *d;

	out[0] = '\0';
	d = opendir(dir);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= len)
			continue;
		if (!out[0] || strcmp(de->d_name, out) < 0)
			strcpy(out, de->d_name);
	}
	closedir(d);
	return 0;
}

static int read_hex16(const char *path, uint16_t *v)
{
	char buf[32], *end;
	unsigned long x;
	ssize_t n;

	n = file_read(AT_FDCWD, path, 0, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	errno = 0;
	x = strtoul(buf, &end, 16);
	if (errno || end == buf || (*end && *end != '\n') || x > 0xffff)
		return -EINVAL;
	*v = (uint16_t)x;
	return 0;
}

/* N of the PF's virtfnN whose target is bdf; indices need not be contiguous. */
static int find_vf_index(const char *pfdir, const char *bdf, int *index)
{
	char path[PATH_MAX], target[VF_BDF_LEN + 1];
	struct dirent *de;
	char *end;
	long n;
	DIR *d;
	int ret = -ENODEV;

	d = opendir(pfdir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "virtfn", 6) != 0)
			continue;
		n = strtol(de->d_name + 6, &end, 10);
		if (end == de->d_name + 6 || *end || n < 0 || n > INT_MAX)
			continue;
		if (pathf(path, sizeof(path), "%s/%s", pfdir, de->d_name) < 0 ||
		    link_basename(path, target, sizeof(target)) < 0)
			continue;
		if (strcmp(target, bdf) == 0) {
			*index = (int)n;
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

static bool driver_is_dpdk(const char *driver)
{
	return !strcmp(driver, "vfio-pci") || !strcmp(driver, "uio_pci_generic") ||
	       !strcmp(driver, "igb_uio");
}

int vf_lookup(const char *sysfs_root, const char *bdf, struct vf_dev *vf)
{
	char dev[PATH_MAX], path[PATH_MAX], pfdir[PATH_MAX];
	struct stat st;
	int ret;

	memset(vf, 0, sizeof(*vf));
	if (!bdf_canonical(bdf))
		return -EINVAL;
	ret = pathf(dev, sizeof(dev), "%s/bus/pci/devices/%s", sysfs_root, bdf);
	if (ret < 0)
		return ret;
	/* The root is trusted (not from a config): following its symlinks is what sysfs needs. */
	if (stat(dev, &st) < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENODEV;
	strcpy(vf->bdf, bdf);

	if ((ret = pathf(path, sizeof(path), "%s/physfn", dev)) < 0)
		return ret;
	ret = link_basename(path, vf->pf_bdf, sizeof(vf->pf_bdf));
	if (ret == -ENOENT)
		return -ENOTSUP;
	if (ret < 0)
		return ret;
	if (!bdf_canonical(vf->pf_bdf))
		return -EINVAL;
	if ((ret = pathf(pfdir, sizeof(pfdir), "%s/bus/pci/devices/%s", sysfs_root, vf->pf_bdf)) < 0 ||
	    (ret = pathf(path, sizeof(path), "%s/net", pfdir)) < 0 ||
	    (ret = first_entry(path, vf->pf_netdev, sizeof(vf->pf_netdev))) < 0 ||
	    (ret = find_vf_index(pfdir, bdf, &vf->vf_index)) < 0)
		return ret;
	/* For messages only: which driver refused a setting. */
	if (pathf(path, sizeof(path), "%s/driver", pfdir) < 0 ||
	    link_basename(path, vf->pf_driver, sizeof(vf->pf_driver)) < 0)
		vf->pf_driver[0] = '\0';

	if ((ret = pathf(path, sizeof(path), "%s/net", dev)) < 0 ||
	    (ret = first_entry(path, vf->netdev, sizeof(vf->netdev))) < 0)
		return ret;
	if ((ret = pathf(path, sizeof(path), "%s/driver", dev)) < 0)
		return ret;
	ret = link_basename(path, vf->driver, sizeof(vf->driver));
	if (ret < 0 && ret != -ENOENT)
		return ret;
	vf->dpdk = driver_is_dpdk(vf->driver);
	if ((ret = pathf(path, sizeof(path), "%s/infiniband", dev)) < 0 ||
	    (ret = first_entry(path, vf->rdma_dev, sizeof(vf->rdma_dev))) < 0)
		return ret;
	if ((ret = pathf(path, sizeof(path), "%s/vendor", dev)) < 0 ||
	    (ret = read_hex16(path, &vf->vendor)) < 0 ||
	    (ret = pathf(path, sizeof(path), "%s/device", dev)) < 0 ||
	    (ret = read_hex16(path, &vf->device)) < 0)
		return ret;
	return 0;
}

int vf_netdev_name(const char *sysfs_root, const char *bdf, char name[IFNAMSIZ])
{
	char dev[PATH_MAX], path[PATH_MAX];
	struct stat st;
	int ret;

	name[0] = '\0';
	if (!bdf_canonical(bdf))
		return -EINVAL;
	if ((ret = pathf(dev, sizeof(dev), "%s/bus/pci/devices/%s", sysfs_root, bdf)) < 0 ||
	    (ret = pathf(path, sizeof(path), "%s/net", dev)) < 0)
		return ret;
	if (stat(dev, &st) < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	return first_entry(path, name, IFNAMSIZ);
}
