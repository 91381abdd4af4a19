/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The recording fake PF, for tests on machines without SR-IOV: a
 * pf_backend that decodes each request with the parser that decodes the
 * kernel's replies (pf_vf_info_parse), and answers with netlink messages built
 * like the kernel's, so the same code runs against both. Its files, in the
 * directory SRIOV_RDMA_PF_FAKE_DIR names:
 *
 *   <dir>/<pf>.vfs    the VFs' state, one line per VF, '#' starts a comment:
 *                     vf=3 mac=00:00:00:00:00:00 vlan=0 qos=0 proto=802.1Q
 *                     spoofchk=on trust=off link_state=auto min_tx_rate=0
 *                     max_tx_rate=0
 *                     (all on one line; every key is required). Rewritten
 *                     after each successful SET, under a flock of <pf>.lock
 *                     and through a temporary of a unique name and a
 *                     rename. Without it the PF's netdev is gone: every
 *                     request fails with ENODEV, as the kernel's.
 *   <dir>/<pf>.calls  appended, one line per request, e.g.
 *                     "setlink pf=P vf=3 vlan=100 qos=2 proto=802.1Q",
 *                     "setlink pf=P vf=3 mac=02:00:00:00:00:01",
 *                     "setlink pf=P vf=3 rate min=10 max=100",
 *                     "setlink pf=P vf=3 spoofchk=off", "... trust=on",
 *                     "... link_state=enable", "getlink pf=P ext=vf,skip_stats"
 *                     (ext: the IFLA_EXT_MASK filters asked for).
 *   <dir>/<pf>.fail   optional, lines "fail OP [ERRNO]" with OP one of
 *                     vlan mac rate spoofchk trust link_state getlink:
 *                     that request is recorded, then fails with ERRNO
 *                     (a name such as EPERM; EOPNOTSUPP when omitted).
 *                     OP mac-clear-spoofchk refuses only an all-zero MAC
 *                     while the VF's spoof checking is on, as older mlx5
 *                     kernels do: judged on the VF as the request finds
 *                     it, since the kernel applies the MAC first. OP
 *                     spoofchk-zero-mac refuses spoof checking on while
 *                     the VF's MAC is all-zero, as mlx4 and those mlx5
 *                     kernels also do: judged after the request's MAC.
 *                     A SET on a VF missing from .vfs fails with EINVAL,
 *                     as mlx5 does for an index beyond sriov_numvfs.
 *   <dir>/<pf>.delay_ms  optional, a number of milliseconds each SET takes;
 *                     each SET then also appends "<pid> <line>" to
 *                     <dir>/<pf>.timeline, so a test sees whose requests
 *                     interleave.
 *                     An InfiniBand PF's lines also carry
 *                     node_guid=00:11:22:33:44:55:66:77 port_guid=... (both
 *                     or neither): a GETLINK then reports them, and a SET
 *                     of both (one request, as `ip link set PF vf N
 *                     node_guid G port_guid G`) is recorded as "setlink
 *                     pf=P vf=3 node_guid=G port_guid=G" in .calls, its
 *                     IFLA_VFINFO_LIST attribute as one line of hex in
 *                     <pf>.wire, and fails like the others under
 *                     "fail guid". On such a VF only link_state and the
 *                     GUIDs can be set (IPoIB's ndo ops): any other SET
 *                     fails with EOPNOTSUPP.
 *   <dir>/<pf>.unreported  optional, words among "spoofchk" and "trust":
 *                     a GETLINK reports them as ~0, as the kernel does
 *                     when the driver's ndo_get_vf_config leaves them out.
 *   <dir>/<pf>.vfinfo_max  optional, a number N: a GETLINK lists only the
 *                     first N VFs in IFLA_VFINFO_LIST (IFLA_NUM_VF still
 *                     counts them all), as a kernel whose nest overflowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include "fakes.h"
#include "link.h"
#include "lock.h"
#include "nlio.h"
#include "state.h"
#include "pf.h"
#include "vf.h"

static const char *fake_dir;

struct fake_pf {
	int dirfd;
	char name[IFNAMSIZ];
	unsigned portid, seq;
};

static const char *proto_name(uint16_t proto)
{
	return proto == ETH_P_8021AD ? "802.1ad" : "802.1Q";
}

static const char *const link_state_names[] = {
	[IFLA_VF_LINK_STATE_AUTO] = "auto",
	[IFLA_VF_LINK_STATE_ENABLE] = "enable",
	[IFLA_VF_LINK_STATE_DISABLE] = "disable",
};

/* A writer holds <pf>.lock for a few file operations: a long wait means a stuck test. */
#define FAKE_LOCK_TIMEOUT_MS 10000

struct fake_vf {
	int vf;
	struct pf_vf_config cfg;
	bool ib;			/* the line had GUIDs */
	struct pf_vf_guids guids;
};

struct fake_state {
	struct fake_vf *vfs;
	int n;
};

static const char *const field_ops[] = {
	[0] = "mac", [1] = "vlan", [2] = "spoofchk", [3] = "trust", [4] = "link_state", [5] = "rate",
};

static const char *field_op(unsigned field)
{
	return field_ops[__builtin_ctz(field)];
}

static int fake_name(const struct fake_pf *pf, const char *ext, char *out, size_t len)
{
	int n = snprintf(out, len, "%s.%s", pf->name, ext);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A fake file, whole and NUL-terminated; -ENOENT when absent. */
static int fake_read(struct fake_pf *pf, const char *ext, char **data)
{
	char name[IFNAMSIZ + 16];
	size_t len = 0, cap = 4096;
	ssize_t n;
	char *buf, *nbuf;
	int fd, ret;

	if ((ret = fake_name(pf, ext, name, sizeof(name))) < 0)
		return ret;
	fd = openat(pf->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		ret = -ENOMEM;
		goto out_fd;
	}
	for (;;) {
		if (len + 1 >= cap) {
			nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				ret = -ENOMEM;
				goto err_buf;
			}
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			ret = -errno;
			goto err_buf;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*data = buf;
	ret = 0;
	goto out_fd;
err_buf:
	free(buf);
out_fd:
	close(fd);
	return ret;
}

static int fake_append(struct fake_pf *pf, const char *ext, const char *line)
{
	char name[IFNAMSIZ + 16], buf[300];
	int fd, len, ret = 0;

	if ((ret = fake_name(pf, ext, name, sizeof(name))) < 0)
		return ret;
	/* One write of the whole line: O_APPEND keeps concurrent callers' lines whole. */
	len = snprintf(buf, sizeof(buf), "%s\n", line);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -EINVAL;
	fd = openat(pf->dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)len) != len)
		ret = -EIO;
	close(fd);
	return ret;
}

static int fake_record(struct fake_pf *pf, const char *line)
{
	return fake_append(pf, "calls", line);
}

/*
 * <pf>.delay_ms: each SET records "<pid> <line>" in <pf>.timeline and
 * takes that long, as a slow PF driver does: two processes whose SETs
 * are not serialised then interleave their lines.
 */
static int fake_slow_set(struct fake_pf *pf, const char *line)
{
	char *data = NULL, buf[600];
	long ms;
	int ret;

	ret = fake_read(pf, "delay_ms", &data);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	ms = strtol(data, NULL, 10);
	free(data);
	snprintf(buf, sizeof(buf), "%ld %.511s", (long)getpid(), line);
	ret = fake_append(pf, "timeline", buf);
	if (ret == 0 && ms > 0)
		usleep((useconds_t)(ms > 10000 ? 10000 : ms) * 1000);
	return ret;
}

static const struct {
	const char *name;
	int err;
} errno_names[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EIO", EIO }, { "ENOMEM", ENOMEM },
	{ "EACCES", EACCES }, { "EBUSY", EBUSY }, { "ENODEV", ENODEV }, { "EINVAL", EINVAL },
	{ "ENOSPC", ENOSPC }, { "ERANGE", ERANGE }, { "EAGAIN", EAGAIN },
	{ "EOPNOTSUPP", EOPNOTSUPP }, { "ETIMEDOUT", ETIMEDOUT },
};

/* *err = the errno that <pf>.fail assigns to op, or 0. */
static int fake_fail(struct fake_pf *pf, const char *op, int *err)
{
	char *data, *line, *save, *w[3], *save2;
	size_t i;
	int n, ret;

	*err = 0;
	ret = fake_read(pf, "fail", &data);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		for (n = 0, w[0] = strtok_r(line, " \t", &save2); w[n] && n < 2;)
			w[++n] = strtok_r(NULL, " \t", &save2);
		if (n < 2 || strcmp(w[0], "fail") != 0 || strcmp(w[1], op) != 0)
			continue;
		*err = EOPNOTSUPP;
		if (!w[2])
			break;
		for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
			if (!strcmp(w[2], errno_names[i].name))
				*err = errno_names[i].err;
		if (*err == EOPNOTSUPP && strcmp(w[2], "EOPNOTSUPP") != 0)
			ret = -EINVAL;		/* a typo in the fixture must not pass silently */
		break;
	}
	free(data);
	return ret;
}

static int parse_uint(const char *s, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < 0 || *v > max ? -EINVAL : 0;
}

static int parse_onoff(const char *s, bool *v)
{
	if (!strcmp(s, "on") || !strcmp(s, "off")) {
		*v = !strcmp(s, "on");
		return 0;
	}
	return -EINVAL;
}

/* "00:11:22:33:44:55:66:77", as ip link prints and takes a GUID. */
static int fake_parse_guid(const char *s, uint64_t *g)
{
	unsigned b[8];
	int i;

	if (strlen(s) != 23 || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2],
				      &b[3], &b[4], &b[5], &b[6], &b[7]) != 8)
		return -EINVAL;
	for (*g = 0, i = 0; i < 8; i++)
		*g = *g << 8 | b[i];
	return 0;
}

static void fake_format_guid(uint64_t g, char out[24])
{
	snprintf(out, 24, "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x",
		 (unsigned)(g >> 56) & 0xff, (unsigned)(g >> 48) & 0xff, (unsigned)(g >> 40) & 0xff,
		 (unsigned)(g >> 32) & 0xff, (unsigned)(g >> 24) & 0xff, (unsigned)(g >> 16) & 0xff,
		 (unsigned)(g >> 8) & 0xff, (unsigned)g & 0xff);
}

/* One .vfs line: every key once. */
static int fake_parse_line(char *line, struct fake_vf *v)
{
	static const char *const keys[] = {
		"vf", "mac", "vlan", "qos", "proto", "spoofchk", "trust", "link_state",
		"min_tx_rate", "max_tx_rate", "node_guid", "port_guid",
	};
	struct pf_vf_config *c = &v->cfg;
	unsigned seen = 0;
	char *tok, *save, *val;
	long x;
	int k, ret;

	memset(v, 0, sizeof(*v));
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		val = strchr(tok, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		for (k = 0; k < 12 && strcmp(tok, keys[k]) != 0; k++)
			;
		if (k == 12 || (seen & (1u << k)))
			return -EINVAL;
		seen |= 1u << k;
		ret = 0;
		switch (k) {
		case 0: ret = parse_uint(val, INT_MAX, &x); v->vf = (int)x; break;
		case 1: {
			unsigned b[6];
			int i;

			if (strlen(val) != 17 || sscanf(val, "%2x:%2x:%2x:%2x:%2x:%2x",
							&b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
				return -EINVAL;
			for (i = 0; i < 6; i++)
				c->mac[i] = (uint8_t)b[i];
			break;
		}
		case 2: ret = parse_uint(val, 4095, &x); c->vlan = (int)x; break;
		case 3: ret = parse_uint(val, 7, &x); c->qos = (int)x; break;
		case 4:
			if (!strcasecmp(val, "802.1Q"))
				c->vlan_proto = ETH_P_8021Q;
			else if (!strcasecmp(val, "802.1ad"))
				c->vlan_proto = ETH_P_8021AD;
			else
				return -EINVAL;
			break;
		case 5: ret = parse_onoff(val, &c->spoofchk); break;
		case 6: ret = parse_onoff(val, &c->trust); break;
		case 7:
			for (x = 0; x <= IFLA_VF_LINK_STATE_DISABLE && strcmp(val, link_state_names[x]); x++)
				;
			if (x > IFLA_VF_LINK_STATE_DISABLE)
				return -EINVAL;
			c->link_state = (int)x;
			break;
		case 8: ret = parse_uint(val, UINT32_MAX, &x); c->min_tx_rate = (unsigned)x; break;
		case 9: ret = parse_uint(val, UINT32_MAX, &x); c->max_tx_rate = (unsigned)x; break;
		case 10: ret = fake_parse_guid(val, &v->guids.node); break;
		case 11: ret = fake_parse_guid(val, &v->guids.port); break;
		}
		if (ret < 0)
			return ret;
	}
	v->ib = (seen >> 10) == 3;
	if ((seen >> 10) != 0 && !v->ib)
		return -EINVAL;
	return (seen & ((1u << 10) - 1)) == (1u << 10) - 1 ? 0 : -EINVAL;
}

static int fake_load(struct fake_pf *pf, struct fake_state *st)
{
	char *data, *line, *save;
	struct fake_vf *nv;
	int ret;

	st->vfs = NULL;
	st->n = 0;
	ret = fake_read(pf, "vfs", &data);
	if (ret < 0)
		return ret;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		if (!*line || *line == '#')
			continue;
		nv = realloc(st->vfs, sizeof(*nv) * (size_t)(st->n + 1));
		if (!nv) {
			ret = -ENOMEM;
			goto err;
		}
		st->vfs = nv;
		ret = fake_parse_line(line, &st->vfs[st->n]);
		if (ret < 0)
			goto err;
		st->n++;
	}
	free(data);
	return 0;
err:
	free(data);
	free(st->vfs);
	st->vfs = NULL;
	return ret;
}

/*
 * Replace <pf>.vfs through a temporary file of its own and a rename: a
 * writer killed half way leaves the old state whole. The caller holds the
 * fake's lock, so no other writer's update is lost in between.
 */
static int fake_save(struct fake_pf *pf, const struct fake_state *st)
{
	char name[IFNAMSIZ + 8], mac[18], *text = NULL;
	const struct pf_vf_config *c;
	size_t len = 0;
	FILE *f;
	int i, ret;

	if ((ret = fake_name(pf, "vfs", name, sizeof(name))) < 0)
		return ret;
	f = open_memstream(&text, &len);
	if (!f)
		return -errno;
	for (i = 0; i < st->n; i++) {
		c = &st->vfs[i].cfg;
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			 c->mac[0], c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
		fprintf(f, "vf=%d mac=%s vlan=%d qos=%d proto=%s spoofchk=%s trust=%s link_state=%s "
			"min_tx_rate=%u max_tx_rate=%u", st->vfs[i].vf, mac, c->vlan, c->qos,
			proto_name(c->vlan_proto), c->spoofchk ? "on" : "off", c->trust ? "on" : "off",
			link_state_names[c->link_state], c->min_tx_rate, c->max_tx_rate);
		if (st->vfs[i].ib) {
			char node[24], port[24];

			fake_format_guid(st->vfs[i].guids.node, node);
			fake_format_guid(st->vfs[i].guids.port, port);
			fprintf(f, " node_guid=%s port_guid=%s", node, port);
		}
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	ret = state_write_atomic(pf->dirfd, name, text, len, false);
	free(text);
	return ret;
}

/* The PF's netdev exists while its state file does: the kernel answers ENODEV for it otherwise. */
static bool fake_pf_present(struct fake_pf *pf)
{
	char name[IFNAMSIZ + 8];

	return fake_name(pf, "vfs", name, sizeof(name)) == 0 &&
	       faccessat(pf->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The kernel's layout of one VF in RTM_NEWLINK (rtnl_fill_vfinfo); unreported: <pf>.unreported. */
static void fake_put_vf(struct nlmsghdr *nlh, const struct fake_vf *v, const char *unreported)
{
	const struct pf_vf_config *c = &v->cfg;
	uint32_t idx = (uint32_t)v->vf;
	struct ifla_vf_mac m = { .vf = idx };
	struct ifla_vf_vlan vl = { idx, (uint32_t)c->vlan, (uint32_t)c->qos };
	struct ifla_vf_vlan_info vi;
	struct ifla_vf_rate r = { idx, c->min_tx_rate, c->max_tx_rate };
	struct ifla_vf_tx_rate tr = { idx, c->max_tx_rate };
	struct ifla_vf_spoofchk s = { idx, c->spoofchk };
	struct ifla_vf_link_state ls = { idx, (uint32_t)c->link_state };
	struct ifla_vf_trust t = { idx, c->trust };
	struct nlattr *info, *list;

	if (unreported && strstr(unreported, "spoofchk"))
		s.setting = (uint32_t)-1;
	if (unreported && strstr(unreported, "trust"))
		t.setting = (uint32_t)-1;
	memcpy(m.mac, c->mac, 6);
	memset(&vi, 0, sizeof(vi));	/* its trailing padding is copied too */
	vi.vf = idx;
	vi.vlan = (uint32_t)c->vlan;
	vi.qos = (uint32_t)c->qos;
	vi.vlan_proto = htons(c->vlan_proto);
	info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
	mnl_attr_put(nlh, IFLA_VF_MAC, sizeof(m), &m);
	mnl_attr_put(nlh, IFLA_VF_VLAN, sizeof(vl), &vl);
	mnl_attr_put(nlh, IFLA_VF_RATE, sizeof(r), &r);
	mnl_attr_put(nlh, IFLA_VF_TX_RATE, sizeof(tr), &tr);
	mnl_attr_put(nlh, IFLA_VF_SPOOFCHK, sizeof(s), &s);
	mnl_attr_put(nlh, IFLA_VF_LINK_STATE, sizeof(ls), &ls);
	mnl_attr_put(nlh, IFLA_VF_TRUST, sizeof(t), &t);
	if (v->ib) {
		/* rtnl_fill_vfinfo, for an IB PF whose driver reports GUIDs. */
		struct ifla_vf_guid ng, pg;

		memset(&ng, 0, sizeof(ng));
		memset(&pg, 0, sizeof(pg));
		ng.vf = pg.vf = idx;
		ng.guid = v->guids.node;
		pg.guid = v->guids.port;
		mnl_attr_put(nlh, IFLA_VF_IB_NODE_GUID, sizeof(ng), &ng);
		mnl_attr_put(nlh, IFLA_VF_IB_PORT_GUID, sizeof(pg), &pg);
	}
	list = mnl_attr_nest_start(nlh, IFLA_VF_VLAN_LIST);
	mnl_attr_put(nlh, IFLA_VF_VLAN_INFO, sizeof(vi), &vi);
	mnl_attr_nest_end(nlh, list);
	mnl_attr_nest_end(nlh, info);
}

/* How many VFs a GETLINK lists: <pf>.vfinfo_max, or all. */
static int fake_vfinfo_max(struct fake_pf *pf)
{
	char *data = NULL;
	long v;
	int ret;

	ret = fake_read(pf, "vfinfo_max", &data);
	v = ret == 0 && data ? strtol(data, NULL, 10) : INT_MAX;
	free(data);
	return v < 0 ? 0 : v > INT_MAX ? INT_MAX : (int)v;
}

/* RTM_NEWLINK for the PF at buf, with its VFs when the request asked for RTEXT_FILTER_VF. */
static int fake_getlink(struct fake_pf *pf, const struct nlmsghdr *req, char *buf, size_t cap)
{
	const struct nlattr *ext = link_msg_attr(req, IFLA_EXT_MASK);
	struct fake_state st;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nlattr *list;
	char *unreported = NULL;
	int i, ret;

	if (fake_read(pf, "unreported", &unreported) < 0)
		unreported = NULL;
	ret = fake_load(pf, &st);
	if (ret < 0)
		return ret;
	if ((size_t)st.n * 256 + 512 > cap) {
		ret = -EMSGSIZE;
		goto out;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = pf->portid;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = 1;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, pf->name);
	if (ext && mnl_attr_get_payload_len(ext) >= 4 && (mnl_attr_get_u32(ext) & RTEXT_FILTER_VF)) {
		mnl_attr_put_u32(nlh, IFLA_NUM_VF, (uint32_t)st.n);
		list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
		for (i = 0; i < st.n && i < fake_vfinfo_max(pf); i++)
			fake_put_vf(nlh, &st.vfs[i], unreported);
		mnl_attr_nest_end(nlh, list);
	}
out:
	free(unreported);
	free(st.vfs);
	return ret;
}

static void fake_apply(struct pf_vf_config *dst, unsigned field, const struct pf_vf_config *src)
{
	switch (field) {
	case PF_VF_MAC:
		memcpy(dst->mac, src->mac, 6);
		break;
	case PF_VF_VLAN:
		dst->vlan = src->vlan;
		dst->qos = src->qos;
		dst->vlan_proto = src->vlan_proto;
		break;
	case PF_VF_RATE:
		dst->min_tx_rate = src->min_tx_rate;
		dst->max_tx_rate = src->max_tx_rate;
		break;
	case PF_VF_SPOOFCHK:
		dst->spoofchk = src->spoofchk;
		break;
	case PF_VF_TRUST:
		dst->trust = src->trust;
		break;
	case PF_VF_LINK_STATE:
		dst->link_state = src->link_state;
		break;
	}
}

static bool fake_has_guids(const struct nlattr *info)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, info)
		if (mnl_attr_get_type(a) == IFLA_VF_IB_NODE_GUID ||
		    mnl_attr_get_type(a) == IFLA_VF_IB_PORT_GUID)
			return true;
	return false;
}

/*
 * Load, change one VF, save, as one step under the fake PF's lock: plugins
 * run side by side on one PF. change() answers the errno the kernel would
 * (0: done, and saved). *nlerr: ENODEV for a PF that is gone, EINVAL for a
 * VF it does not have; the return value reports trouble with the files.
 */
static int fake_update_vf(struct fake_pf *pf, int vf, int (*change)(struct fake_vf *v, void *arg),
			  void *arg, int *nlerr)
{
	char lockname[IFNAMSIZ + 8];
	struct fake_state st;
	int i, ret, lock;

	if ((ret = fake_name(pf, "lock", lockname, sizeof(lockname))) < 0)
		return ret;
	lock = lock_take(pf->dirfd, lockname, FAKE_LOCK_TIMEOUT_MS);
	if (lock < 0)
		return lock;
	if (!fake_pf_present(pf)) {
		*nlerr = ENODEV;
		goto out_lock;
	}
	ret = fake_load(pf, &st);
	if (ret < 0)
		goto out_lock;
	*nlerr = EINVAL;
	for (i = 0; i < st.n; i++) {
		if (st.vfs[i].vf != vf)
			continue;
		/* Saved even when refused: the kernel keeps the fields before the refused one. */
		*nlerr = change(&st.vfs[i], arg);
		ret = fake_save(pf, &st);
		break;
	}
	free(st.vfs);
out_lock:
	lock_release(lock);
	return ret;
}

static int set_guids(struct fake_vf *v, void *arg)
{
	if (!v->ib)
		return EOPNOTSUPP;
	v->guids = *(const struct pf_vf_guids *)arg;
	return 0;
}

/*
 * Both GUIDs of one VF, nothing else, as pf_set_guids and ip send them:
 * the VF must be an IB one (its line has GUIDs), EOPNOTSUPP otherwise
 * (an Ethernet PF's driver has no ndo_set_vf_guid).
 */
static int fake_setguids(struct fake_pf *pf, const struct nlattr *list,
			 const struct nlattr *info, int *nlerr)
{
	const struct nlattr *a;
	struct ifla_vf_guid vg;
	const uint8_t *raw = (const uint8_t *)list;
	struct pf_vf_guids g = { 0, 0 };
	char line[256], hex[512], node[24], port[24];
	bool has_node = false, has_port = false;
	int vf = -1, ret;
	size_t k;

	*nlerr = EINVAL;
	mnl_attr_for_each_nested(a, info) {
		uint16_t type = mnl_attr_get_type(a);

		if ((type != IFLA_VF_IB_NODE_GUID && type != IFLA_VF_IB_PORT_GUID) ||
		    mnl_attr_get_payload_len(a) != sizeof(vg))
			return 0;
		/* A copy: attributes are 4-byte aligned, the u64 in it wants 8. */
		memcpy(&vg, mnl_attr_get_payload(a), sizeof(vg));
		if (vf >= 0 && (int)vg.vf != vf)
			return 0;
		vf = (int)vg.vf;
		if (type == IFLA_VF_IB_NODE_GUID) {
			g.node = vg.guid;
			has_node = true;
		} else {
			g.port = vg.guid;
			has_port = true;
		}
	}
	if (!has_node || !has_port)
		return 0;
	fake_format_guid(g.node, node);
	fake_format_guid(g.port, port);
	snprintf(line, sizeof(line), "setlink pf=%s vf=%d node_guid=%s port_guid=%s", pf->name, vf,
		 node, port);
	for (k = 0; k < list->nla_len && 2 * k + 2 < sizeof(hex); k++)
		snprintf(hex + 2 * k, 3, "%02x", raw[k]);
	if ((ret = fake_record(pf, line)) < 0 || (ret = fake_append(pf, "wire", hex)) < 0 ||
	    (ret = fake_slow_set(pf, line)) < 0 || (ret = fake_fail(pf, "guid", nlerr)) < 0)
		return ret;
	if (*nlerr)
		return 0;
	return fake_update_vf(pf, vf, set_guids, &g, nlerr);
}

/* The order in which the kernel's do_setvfinfo applies the fields of one IFLA_VF_INFO. */
static const unsigned kernel_order[] = {
	PF_VF_MAC, PF_VF_VLAN, PF_VF_RATE, PF_VF_SPOOFCHK, PF_VF_LINK_STATE, PF_VF_TRUST,
};

struct set_req {
	struct pf_vf_config cfg;	/* mask: the fields the driver takes */
	int err;			/* what the driver answers for the next one, 0: none */
	int mac_clear_err;		/* for an all-zero MAC under spoofchk on, 0: taken */
	int spoof_zero_err;		/* for spoofchk on with an all-zero MAC, 0: taken */
};

/* As the kernel: field by field, up to the first the driver refuses, the ones before it kept. */
static int set_fields(struct fake_vf *v, void *arg)
{
	const struct set_req *r = arg;
	size_t i;

	for (i = 0; i < sizeof(kernel_order) / sizeof(kernel_order[0]); i++) {
		if (!(r->cfg.mask & kernel_order[i]))
			continue;
		/* IPoIB's ndo ops set a VF's link state and GUIDs, nothing else. */
		if (v->ib && kernel_order[i] != PF_VF_LINK_STATE)
			return EOPNOTSUPP;
		if (kernel_order[i] == PF_VF_MAC && r->mac_clear_err && v->cfg.spoofchk &&
		    pf_mac_unset(r->cfg.mac))
			return r->mac_clear_err;
		if (kernel_order[i] == PF_VF_SPOOFCHK && r->spoof_zero_err && r->cfg.spoofchk &&
		    pf_mac_unset(v->cfg.mac))
			return r->spoof_zero_err;
		fake_apply(&v->cfg, kernel_order[i], &r->cfg);
	}
	return r->err;
}

/* " vf=N <field>" for one field of c, as each attribute of the request carries the VF index. */
static int format_field(unsigned field, int vf, const struct pf_vf_config *c, char *buf, size_t len)
{
	int n = snprintf(buf, len, " vf=%d ", vf);

	buf += n;
	len -= (size_t)n;
	switch (field) {
	case PF_VF_MAC:
		snprintf(buf, len, "mac=%02x:%02x:%02x:%02x:%02x:%02x",
			 c->mac[0], c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
		break;
	case PF_VF_VLAN:
		if (c->vlan_proto != ETH_P_8021Q && c->vlan_proto != ETH_P_8021AD)
			return -EINVAL;
		snprintf(buf, len, "vlan=%d qos=%d proto=%s", c->vlan, c->qos,
			 proto_name(c->vlan_proto));
		break;
	case PF_VF_RATE:
		snprintf(buf, len, "rate min=%u max=%u", c->min_tx_rate, c->max_tx_rate);
		break;
	case PF_VF_SPOOFCHK:
		snprintf(buf, len, "spoofchk=%s", c->spoofchk ? "on" : "off");
		break;
	case PF_VF_TRUST:
		snprintf(buf, len, "trust=%s", c->trust ? "on" : "off");
		break;
	case PF_VF_LINK_STATE:
		if (c->link_state < 0 || c->link_state > IFLA_VF_LINK_STATE_DISABLE)
			return -EINVAL;
		snprintf(buf, len, "link_state=%s", link_state_names[c->link_state]);
		break;
	}
	return 0;
}

/*
 * An RTM_SETLINK carrying fields of one VF, as pf_set sends them: one
 * line in <pf>.calls per request, "setlink pf=P" and then " vf=N field"
 * for each field in the kernel's order; <pf>.fail refuses a field by its
 * name. *nlerr gets the errno the kernel would answer with (0: success);
 * the return value reports trouble with the fake's own files.
 */
static int fake_setlink(struct fake_pf *pf, const struct nlmsghdr *req, int *nlerr)
{
	const struct nlattr *list = link_msg_attr(req, IFLA_VFINFO_LIST), *a, *info = NULL;
	struct set_req r = { .err = 0 };
	struct pf_vf_config c;
	char line[512];
	size_t i, n;
	int vf, k = 0, ret, err;

	*nlerr = EINVAL;
	if (!list)
		return 0;
	mnl_attr_for_each_nested(a, list) {
		if (mnl_attr_get_type(a) == IFLA_VF_INFO)
			info = a;
		k++;
	}
	if (k == 1 && info && fake_has_guids(info))
		return fake_setguids(pf, list, info, nlerr);
	if (k != 1 || !info || pf_vf_info_parse(info, &vf, &c) < 0 || !c.mask)
		return 0;
	n = (size_t)snprintf(line, sizeof(line), "setlink pf=%s", pf->name);
	for (i = 0; i < sizeof(kernel_order) / sizeof(kernel_order[0]); i++) {
		if (!(c.mask & kernel_order[i]))
			continue;
		if (format_field(kernel_order[i], vf, &c, line + n, sizeof(line) - n) < 0)
			return 0;
		n += strlen(line + n);
	}
	if ((ret = fake_record(pf, line)) < 0 || (ret = fake_slow_set(pf, line)) < 0)
		return ret;
	r.cfg = c;
	r.cfg.mask = 0;
	if ((ret = fake_fail(pf, "mac-clear-spoofchk", &r.mac_clear_err)) < 0 ||
	    (ret = fake_fail(pf, "spoofchk-zero-mac", &r.spoof_zero_err)) < 0)
		return ret;
	for (i = 0; i < sizeof(kernel_order) / sizeof(kernel_order[0]); i++) {
		if (!(c.mask & kernel_order[i]))
			continue;
		if ((ret = fake_fail(pf, field_op(kernel_order[i]), &err)) < 0)
			return ret;
		if (err) {
			r.err = err;
			break;
		}
		r.cfg.mask |= kernel_order[i];
	}
	return fake_update_vf(pf, vf, set_fields, &r, nlerr);
}

static void put_ack(char *buf, const struct nlmsghdr *req, unsigned portid, int err)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = portid;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -err;
	e->msg = *req;
}

static int fake_xfer(void *priv, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	struct fake_pf *pf = priv;
	const struct nlattr *ifname = link_msg_attr(req, IFLA_IFNAME);
	size_t cap = 1 << 20, len = 0;
	char *buf, line[96];
	int nlerr = 0, ret = 0;

	req->nlmsg_seq = ++pf->seq;
	req->nlmsg_flags |= NLM_F_ACK;
	buf = calloc(1, cap);
	if (!buf)
		return -ENOMEM;
	if (!ifname || mnl_attr_validate(ifname, MNL_TYPE_NUL_STRING) < 0 ||
	    strcmp(mnl_attr_get_str(ifname), pf->name) != 0) {
		nlerr = ENODEV;
	} else if (req->nlmsg_type == RTM_GETLINK) {
		const struct nlattr *ext = link_msg_attr(req, IFLA_EXT_MASK);
		uint32_t mask = ext && mnl_attr_get_payload_len(ext) >= 4 ? mnl_attr_get_u32(ext) : 0;

		snprintf(line, sizeof(line), "getlink pf=%s ext=%s%s%s%s", pf->name,
			 mask & RTEXT_FILTER_VF ? "vf" : "",
			 (mask & RTEXT_FILTER_VF) && (mask & RTEXT_FILTER_SKIP_STATS) ? "," : "",
			 mask & RTEXT_FILTER_SKIP_STATS ? "skip_stats" : "",
			 req->nlmsg_flags & NLM_F_DUMP ? " dump" : "");
		if ((ret = fake_record(pf, line)) < 0 || (ret = fake_fail(pf, "getlink", &nlerr)) < 0)
			goto out;
		if (!nlerr && !fake_pf_present(pf))
			nlerr = ENODEV;
		if (!nlerr) {
			ret = fake_getlink(pf, req, buf, cap - MNL_NLMSG_HDRLEN - sizeof(struct nlmsgerr));
			if (ret < 0)
				goto out;
			len = ((struct nlmsghdr *)buf)->nlmsg_len;
		}
	} else if (req->nlmsg_type == RTM_SETLINK) {
		ret = fake_setlink(pf, req, &nlerr);
		if (ret < 0)
			goto out;
	} else {
		nlerr = EOPNOTSUPP;
	}
	put_ack(buf + len, req, pf->portid, nlerr);
	len += ((struct nlmsghdr *)(buf + len))->nlmsg_len;
	ret = nlio_run(buf, len, req->nlmsg_seq, pf->portid, cb, data);
	ret = ret > 0 ? -EAGAIN : ret;
out:
	free(buf);
	return ret;
}

static void fake_close(void *priv)
{
	struct fake_pf *pf = priv;

	close(pf->dirfd);
	free(pf);
}

static int fake_open(const char *pf_netdev, void **priv)
{
	struct fake_pf *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return -ENOMEM;
	snprintf(pf->name, sizeof(pf->name), "%s", pf_netdev);
	pf->dirfd = open(fake_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pf->dirfd < 0) {
		int ret = -errno;

		free(pf);
		return ret;
	}
	if (!fake_pf_present(pf)) {
		fake_close(pf);
		return -ENODEV;
	}
	pf->portid = (unsigned)getpid();
	*priv = pf;
	return 0;
}

static const struct pf_backend fake_backend = {
	.open = fake_open,
	.xfer = fake_xfer,
	.close = fake_close,
};

void pf_fake_use(const char *dir)
{
	fake_dir = dir;
	pf_set_backend(dir ? &fake_backend : NULL);
}

__attribute__((constructor)) static void pf_fake_from_env(void)
{
	const char *dir = getenv(PF_FAKE_ENV);

	if (dir && dir[0])
		pf_fake_use(dir);
}
