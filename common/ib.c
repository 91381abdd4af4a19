/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ib: InfiniBand VFs in PCI sysfs, and their rebind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "file.h"
#include "ib.h"
#include "vf.h"

/* ARPHRD_INFINIBAND in <net/if_arp.h>: IPoIB. */
#define IB_ARPHRD	32
/* How often a rebind looks at sysfs again. */
#define IB_POLL_MS	20
/* How long udev may take to rename a netdev the kernel named, once it is there. */
#define IB_UDEV_MS	3000

int ib_guid_parse(const char *s, uint64_t *guid)
{
	uint64_t g = 0;
	int i, hi, lo;

	if (strlen(s) != 23)
		return -EINVAL;
	for (i = 0; i < 8; i++) {
		const char *p = s + 3 * i;

		if (i < 7 && p[2] != ':')
			return -EINVAL;
		hi = p[0] >= '0' && p[0] <= '9' ? p[0] - '0' :
		     (p[0] | 0x20) >= 'a' && (p[0] | 0x20) <= 'f' ? (p[0] | 0x20) - 'a' + 10 : -1;
		lo = p[1] >= '0' && p[1] <= '9' ? p[1] - '0' :
		     (p[1] | 0x20) >= 'a' && (p[1] | 0x20) <= 'f' ? (p[1] | 0x20) - 'a' + 10 : -1;
		if (hi < 0 || lo < 0)
			return -EINVAL;
		g = g << 8 | (uint64_t)(hi << 4 | lo);
	}
	*guid = g;
	return 0;
}

void ib_guid_format(uint64_t g, char out[IB_GUID_STR_LEN])
{
	snprintf(out, IB_GUID_STR_LEN, "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x",
		 (unsigned)(g >> 56) & 0xff, (unsigned)(g >> 48) & 0xff, (unsigned)(g >> 40) & 0xff,
		 (unsigned)(g >> 32) & 0xff, (unsigned)(g >> 24) & 0xff, (unsigned)(g >> 16) & 0xff,
		 (unsigned)(g >> 8) & 0xff, (unsigned)g & 0xff);
}

uint64_t ib_guid_auto(uint64_t pf, int vf_index)
{
	uint64_t mid = (uint64_t)(0x8000u | ((unsigned)(vf_index + 1) & 0x7fff));

	return (pf & ~(0xffffull << 24)) | mid << 24;
}

static int dev_path(char *out, size_t len, const char *root, const char *bdf, const char *rest)
{
	int n = snprintf(out, len, "%s/bus/pci/devices/%s/%s", root, bdf, rest);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A small sysfs attribute, its trailing newline dropped. */
static int read_attr(const char *root, const char *bdf, const char *rest, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int ret;

	if ((ret = dev_path(path, sizeof(path), root, bdf, rest)) < 0)
		return ret;
	n = file_read(AT_FDCWD, path, O_NONBLOCK, buf, len);
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static bool plain_name(const char *s)
{
	return s[0] && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

int ib_vf_is_ib(const char *root, const char *bdf, const char *netdev, const char *rdma_dev,
		bool *ib)
{
	char rest[PATH_MAX], buf[64];
	char *end;
	long type;
	int ret;

	if (netdev && plain_name(netdev)) {
		snprintf(rest, sizeof(rest), "net/%s/type", netdev);
		ret = read_attr(root, bdf, rest, buf, sizeof(buf));
		if (ret == 0) {
			type = strtol(buf, &end, 10);
			if (end == buf || *end)
				return -EBADMSG;
			*ib = type == IB_ARPHRD;
			return 0;
		}
		if (ret != -ENOENT)
			return ret;
	}
	if (rdma_dev && plain_name(rdma_dev)) {
		snprintf(rest, sizeof(rest), "infiniband/%s/ports/1/link_layer", rdma_dev);
		ret = read_attr(root, bdf, rest, buf, sizeof(buf));
		if (ret == 0) {
			*ib = !strcmp(buf, "InfiniBand");
			return 0;
		}
		if (ret != -ENOENT)
			return ret;
	}
	return -ENOENT;
}

/* The first entry of a device's infiniband/ (vf_lookup wants a VF; a PF has one too). */
static int first_rdma_dev(const char *root, const char *bdf, char *first, size_t size)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int ret;

	if ((ret = dev_path(path, sizeof(path), root, bdf, "infiniband")) < 0)
		return ret;
	dir = opendir(path);
	if (!dir)
		return -errno;
	first[0] = '\0';
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.' && strlen(de->d_name) < size &&
		    (!first[0] || strcmp(de->d_name, first) < 0))
			strcpy(first, de->d_name);
	closedir(dir);
	return first[0] ? 0 : -ENOENT;
}

int ib_pf_is_ib(const char *root, const char *pf_bdf, const char *pf_netdev, bool *ib)
{
	char rdma[64];
	int ret;

	ret = ib_vf_is_ib(root, pf_bdf, pf_netdev, NULL, ib);
	if (ret != -ENOENT)
		return ret;
	ret = first_rdma_dev(root, pf_bdf, rdma, sizeof(rdma));
	if (ret < 0)
		return ret;
	return ib_vf_is_ib(root, pf_bdf, NULL, rdma, ib);
}

int ib_ipoib_connected(const char *root, const char *bdf, const char *netdev, bool *connected)
{
	char rest[PATH_MAX], buf[32];
	int ret;

	if (!plain_name(netdev))
		return -EINVAL;
	snprintf(rest, sizeof(rest), "net/%s/mode", netdev);
	ret = read_attr(root, bdf, rest, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (strcmp(buf, "connected") && strcmp(buf, "datagram"))
		return -EBADMSG;
	*connected = !strcmp(buf, "connected");
	return 0;
}

int ib_port_guid(const char *root, const char *bdf, uint64_t *guid)
{
	char rest[PATH_MAX], gid[64], hex[IB_GUID_STR_LEN], first[64];
	int ret, i;

	if ((ret = first_rdma_dev(root, bdf, first, sizeof(first))) < 0)
		return ret;
	snprintf(rest, sizeof(rest), "infiniband/%s/ports/1/gids/0", first);
	ret = read_attr(root, bdf, rest, gid, sizeof(gid));
	if (ret < 0)
		return ret;
	/* "fe80:0000:0000:0000:0011:2233:4455:6677": the GUID is the last four groups. */
	if (strlen(gid) != 39)
		return -EBADMSG;
	for (i = 0; i < 4; i++) {
		const char *g = gid + 20 + 5 * i;

		if (i < 3 && g[4] != ':')
			return -EBADMSG;
		hex[6 * i] = g[0];
		hex[6 * i + 1] = g[1];
		hex[6 * i + 2] = ':';
		hex[6 * i + 3] = g[2];
		hex[6 * i + 4] = g[3];
		hex[6 * i + 5] = ':';
	}
	hex[23] = '\0';
	return ib_guid_parse(hex, guid) < 0 ? -EBADMSG : 0;
}

/* ---- rebind ---- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap(void)
{
	struct timespec ts = { 0, IB_POLL_MS * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * bdf into a driver's bind or unbind file. Non-blocking: what stands in
 * for the file must not hang the plugin (a kernel's sysfs never blocks
 * an open).
 */
static int write_bdf(const char *path, const char *bdf)
{
	size_t len = strlen(bdf);
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = write(fd, bdf, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	return ret;
}

/* Is the netdev still named by the kernel (NET_NAME_ENUM), for udev to rename? */
static bool name_pending(const char *root, const char *bdf, const char *netdev)
{
	char rest[PATH_MAX], buf[16];

	snprintf(rest, sizeof(rest), "net/%s/name_assign_type", netdev);
	return read_attr(root, bdf, rest, buf, sizeof(buf)) == 0 && !strcmp(buf, "1");
}

int ib_vf_rebind(const char *root, const char *bdf, const char *driver, int timeout_ms,
		 char netdev[IFNAMSIZ], char rdma[64])
{
	long long deadline = now_ms() + timeout_ms;
	char path[PATH_MAX];
	long long appeared = 0;
	bool had_rdma;
	struct vf_dev vf;
	int ret, n;

	netdev[0] = rdma[0] = '\0';
	if (!plain_name(driver) || strlen(driver) >= 64)
		return -EINVAL;
	ret = vf_lookup(root, bdf, &vf);
	if (ret < 0)
		return ret;
	had_rdma = vf.rdma_dev[0] != '\0';
	if (vf.driver[0]) {
		if ((ret = dev_path(path, sizeof(path), root, bdf, "driver/unbind")) < 0 ||
		    (ret = write_bdf(path, bdf)) < 0)
			return ret;
		/* The kernel's unbind returns with the devices gone; a slower stand-in is waited for. */
		while ((ret = vf_lookup(root, bdf, &vf)) == 0 && (vf.netdev[0] || vf.rdma_dev[0])) {
			if (now_ms() > deadline)
				return -ETIMEDOUT;
			nap();
		}
		if (ret < 0)
			return ret;
	}
	n = snprintf(path, sizeof(path), "%s/bus/pci/drivers/%s/bind", root, driver);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	ret = write_bdf(path, bdf);
	if (ret < 0)
		return ret;
	/* By PCI address: the driver may name them anew, and udev rename the netdev after. */
	for (;;) {
		ret = vf_lookup(root, bdf, &vf);
		if (ret < 0)
			return ret;
		if (vf.netdev[0] && (vf.rdma_dev[0] || !had_rdma)) {
			/* A node without a rename rule keeps the kernel's name: udev gets a while, not all. */
			if (!appeared)
				appeared = now_ms();
			if (!name_pending(root, bdf, vf.netdev) || now_ms() > appeared + IB_UDEV_MS)
				break;
		}
		if (now_ms() > deadline) {
			snprintf(netdev, IFNAMSIZ, "%s", vf.netdev);
			snprintf(rdma, 64, "%s", vf.rdma_dev);
			return -ETIMEDOUT;
		}
		nap();
	}
	snprintf(netdev, IFNAMSIZ, "%s", vf.netdev);
	snprintf(rdma, 64, "%s", vf.rdma_dev);
	return 0;
}
