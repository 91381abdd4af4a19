/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vf: PCI addresses, VF discovery on a generated sysfs tree, VF properties
 * through the recording PF fake, and claims.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include "check.h"
#include "fakes.h"
#include "claim.h"
#include "pf.h"
#include "vf.h"

/* pf_open on the recording fake in dir (NULL: the kernel). */
static int fake_pf_open(const char *name, const char *dir, struct pf **pf)
{
	pf_fake_use(dir);
	return pf_open(name, pf);
}

#define PF_BDF	"0000:3b:00.0"
#define PF	"enp59s0f0np0"

static char tmp[256];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/*
 * One tree for every test, built once (forks are slow on a loaded machine):
 * a PF with VFs that cover each case discovery must tell apart.
 */
#define TREE_OPTS "--pf " PF_BDF " " PF \
	" --vf 0 0000:3b:00.2 enp59s0f0v0" \
	" --vf 1 0000:3b:00.3 enp59s0f0v1 mlx5_7" \
	" --vf 2 0000:3b:00.4 - -" \
	" --vf 3 0000:3b:00.5 v3" \
	" --vf 5 0000:3b:00.7 - --driver 0000:3b:00.7 vfio-pci" \
	" --vf 4 0000:3b:00.6 - --driver 0000:3b:00.6 -" \
	" --vf 12 0000:3b:01.6 v12"

static char sys[512], fakedir[512], calls[600], failfile[600];
static char pristine_vfs[4096];

static int mktree(void)
{
	snprintf(sys, sizeof(sys), "%s/sys", tmp);
	snprintf(fakedir, sizeof(fakedir), "%s/pf", tmp);
	snprintf(calls, sizeof(calls), "%s/" PF ".calls", fakedir);
	snprintf(failfile, sizeof(failfile), "%s/" PF ".fail", fakedir);
	return sh("'%s/mksysfs' '%s' " TREE_OPTS " --fake-pf '%s'", FIXTURES_DIR, sys, fakedir);
}

static int put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t len = (ssize_t)strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, (size_t)len) != len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* The fake PF as mksysfs left it: default VF state, no calls, no failures. */
static void fake_reset(void)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/" PF ".vfs", fakedir);
	CHECK_INT(put_file(path, pristine_vfs), 0);
	unlink(calls);
	unlink(failfile);
}

static char *slurp(const char *path)
{
	static char buf[8192];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* ---- PCI addresses ---- */

static void test_bdf_parse(void)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "0000:3b:02.1", "0000:3b:02.1" },
		{ "0000:3B:02.1", "0000:3b:02.1" },
		{ "3b:02.1", "0000:3b:02.1" },
		{ "ABCD:ff:1f.7", "abcd:ff:1f.7" },
		{ "0001:00:00.0", "0001:00:00.0" },
	};
	static const char *const bad[] = {
		"", "3b:02", "0000:3b:02", "0000:3b:20.1", "0000:3b:02.8", "000:3b:02.1",
		"0000:3b:2.1", "0000-3b:02.1", "0000:3b:02:1", "0000:3g:02.1", "0000:3b:02.1 ",
		"../../etc", "0000:3b:02.1/..", "00000:3b:02.1",
	};
	char out[VF_BDF_LEN];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK_INT(vf_bdf_parse(ok[i].in, out), 0);
		CHECK_STR(out, ok[i].out);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(out, "unchanged");
		CHECK_INT(vf_bdf_parse(bad[i], out), -EINVAL);
	}
}

/* ---- discovery ---- */

static void test_lookup_vf(void)
{
	struct vf_dev vf;
	char name[IFNAMSIZ];

	CHECK_INT(vf_lookup(sys, "0000:3b:00.3", &vf), 0);
	CHECK_STR(vf.bdf, "0000:3b:00.3");
	CHECK_STR(vf.netdev, "enp59s0f0v1");
	CHECK_STR(vf.pf_bdf, PF_BDF);
	CHECK_STR(vf.pf_netdev, PF);
	CHECK_INT(vf.vf_index, 1);
	CHECK_STR(vf.driver, "mlx5_core");
	CHECK(!vf.dpdk);
	CHECK_STR(vf.rdma_dev, "mlx5_7");
	CHECK_INT(vf.vendor, 0x15b3);
	CHECK_INT(vf.device, 0x101e);

	/* The kernel renamed the netdev: the next read sees the new name. */
	CHECK_INT(sh("mv '%s/bus/pci/devices/0000:3b:00.3/net/enp59s0f0v1' "
		     "'%s/bus/pci/devices/0000:3b:00.3/net/eth5'", sys, sys), 0);
	CHECK_INT(vf_netdev_name(sys, "0000:3b:00.3", name), 0);
	CHECK_STR(name, "eth5");
	CHECK_INT(vf_netdev_name(sys, "0000:3b:09.3", name), -ENODEV);
	CHECK_INT(vf_netdev_name(sys, "../../../etc", name), -EINVAL);
}

static void test_lookup_no_netdev(void)
{
	struct vf_dev vf;

	CHECK_INT(vf_lookup(sys, "0000:3b:00.4", &vf), 0);
	CHECK_STR(vf.netdev, "");
	CHECK_STR(vf.rdma_dev, "");
	CHECK_INT(vf.vf_index, 2);
	CHECK_STR(vf.driver, "mlx5_core");
	CHECK(!vf.dpdk);
}

static void test_lookup_dpdk(void)
{
	struct vf_dev vf;

	CHECK_INT(vf_lookup(sys, "0000:3b:00.7", &vf), 0);
	CHECK_STR(vf.driver, "vfio-pci");
	CHECK(vf.dpdk);
	CHECK_STR(vf.netdev, "");
	CHECK_INT(vf.vf_index, 5);
	/* Unbound: no driver, not DPDK. */
	CHECK_INT(vf_lookup(sys, "0000:3b:00.6", &vf), 0);
	CHECK_STR(vf.driver, "");
	CHECK(!vf.dpdk);
}

static void test_lookup_not_vf_or_missing(void)
{
	struct vf_dev vf;

	CHECK_INT(vf_lookup(sys, PF_BDF, &vf), -ENOTSUP);
	CHECK_INT(vf_lookup(sys, "0000:3b:07.1", &vf), -ENODEV);
	CHECK_INT(vf_lookup(sys, "0000:3B:00.2", &vf), -EINVAL);
	CHECK_INT(vf_lookup(sys, "../../x", &vf), -EINVAL);
}

static void test_lookup_sparse_virtfn(void)
{
	struct vf_dev vf;

	CHECK_INT(vf_lookup(sys, "0000:3b:01.6", &vf), 0);
	CHECK_INT(vf.vf_index, 12);
	CHECK_STR(vf.netdev, "v12");
	CHECK_INT(vf_lookup(sys, "0000:3b:00.5", &vf), 0);
	CHECK_INT(vf.vf_index, 3);
}

/* ---- VF properties through the fake ---- */

static void test_pf_defaults(void)
{
	static const uint8_t zero[6];
	struct pf_vf_config c;
	struct pf *pf;

	fake_reset();
	CHECK_INT(fake_pf_open(PF, fakedir, &pf), 0);
	CHECK_INT(pf_get(pf, 3, &c), 0);
	CHECK_INT(c.mask, PF_VF_MAC | PF_VF_VLAN | PF_VF_SPOOFCHK | PF_VF_TRUST |
		  PF_VF_LINK_STATE | PF_VF_RATE);
	CHECK(!memcmp(c.mac, zero, 6));
	CHECK_INT(c.vlan, 0);
	CHECK_INT(c.vlan_proto, ETH_P_8021Q);
	CHECK(c.spoofchk);
	CHECK(!c.trust);
	CHECK_INT(c.link_state, IFLA_VF_LINK_STATE_AUTO);
	CHECK_INT(c.max_tx_rate, 0);
	CHECK_INT(pf_get(pf, 7, &c), -ENOENT);
	pf_close(pf);
	CHECK_STR(slurp(calls), "getlink pf=" PF " ext=vf,skip_stats\ngetlink pf=" PF " ext=vf,skip_stats\n");
}

/* A VF list cut short (many VFs): the VF the PF has but did not list is -EOVERFLOW, not gone. */
static void test_pf_cut_short_and_sysfs(void)
{
	char path[800], dir[700];
	struct pf_vf_config c;
	struct pf *pf;

	fake_reset();
	snprintf(path, sizeof(path), "%s/" PF ".vfinfo_max", fakedir);
	CHECK_INT(put_file(path, "2\n"), 0);
	CHECK_INT(fake_pf_open(PF, fakedir, &pf), 0);
	CHECK_INT(pf_get(pf, 1, &c), 0);
	CHECK_INT(pf_get(pf, 3, &c), -EOVERFLOW);
	CHECK_INT(pf_get(pf, 77, &c), -ENOENT);
	pf_close(pf);
	unlink(path);

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices/" PF_BDF "/sriov/3", sys);
	CHECK_INT(pf_sysfs_config(sys, PF_BDF, 3, &c), -ENOENT);
	CHECK_INT(sh("mkdir -p '%s'", dir), 0);
	snprintf(path, sizeof(path), "%s/config", dir);
	CHECK_INT(put_file(path, "VF         : 3\nMAC        : 02:aa:bb:cc:dd:03\nVLAN       : 42\n"
			   "QoS        : 3\nVLAN Proto : 802.1ad\nSpoofCheck : OFF\nTrust      : ON\n"
			   "LinkState  : Down\nMinTxRate  : 10\nMaxTxRate  : 200\nRateGroup  : 0\n"), 0);
	CHECK_INT(pf_sysfs_config(sys, PF_BDF, 3, &c), 0);
	CHECK_INT(c.mask, PF_VF_ALL);
	CHECK(!memcmp(c.mac, "\x02\xaa\xbb\xcc\xdd\x03", 6));
	CHECK_INT(c.vlan, 42);
	CHECK_INT(c.qos, 3);
	CHECK_INT(c.vlan_proto, ETH_P_8021AD);
	CHECK(!c.spoofchk);
	CHECK(c.trust);
	CHECK_INT(c.link_state, IFLA_VF_LINK_STATE_DISABLE);
	CHECK_INT(c.min_tx_rate, 10);
	CHECK_INT(c.max_tx_rate, 200);
	CHECK_INT(put_file(path, "MAC        : 02:aa:bb:cc:dd:03\nSpoofCheck : maybe\n"), 0);
	CHECK_INT(pf_sysfs_config(sys, PF_BDF, 3, &c), -EBADMSG);
	CHECK_INT(put_file(path, "VLAN       : 42\n"), 0);
	CHECK_INT(pf_sysfs_config(sys, PF_BDF, 3, &c), -EBADMSG);	/* no MAC: not that file */
	CHECK_INT(sh("rm -r '%s'", dir), 0);
}

static void test_pf_set_roundtrip(void)
{
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	struct pf_vf_config in = {
		.mask = PF_VF_MAC | PF_VF_VLAN | PF_VF_SPOOFCHK | PF_VF_TRUST |
			PF_VF_LINK_STATE | PF_VF_RATE,
		.vlan = 100, .qos = 2, .vlan_proto = ETH_P_8021Q,
		.spoofchk = false, .trust = true, .link_state = IFLA_VF_LINK_STATE_ENABLE,
		.min_tx_rate = 10, .max_tx_rate = 100,
	}, out, other;
	struct pf *pf;

	memcpy(in.mac, mac, 6);
	fake_reset();
	CHECK_INT(fake_pf_open(PF, fakedir, &pf), 0);
	CHECK_INT(pf_set(pf, 3, &in), 0);
	CHECK_INT(pf_get(pf, 3, &out), 0);
	CHECK(!memcmp(out.mac, mac, 6));
	CHECK_INT(out.vlan, 100);
	CHECK_INT(out.qos, 2);
	CHECK_INT(out.vlan_proto, ETH_P_8021Q);
	CHECK(!out.spoofchk);
	CHECK(out.trust);
	CHECK_INT(out.link_state, IFLA_VF_LINK_STATE_ENABLE);
	CHECK_INT(out.min_tx_rate, 10);
	CHECK_INT(out.max_tx_rate, 100);
	/* VF 0 untouched. */
	CHECK_INT(pf_get(pf, 0, &other), 0);
	CHECK_INT(other.vlan, 0);
	CHECK(other.spoofchk);

	/* 802.1ad travels in IFLA_VF_VLAN_LIST and comes back with its protocol. */
	in.mask = PF_VF_VLAN;
	in.vlan = 200;
	in.qos = 0;
	in.vlan_proto = ETH_P_8021AD;
	CHECK_INT(pf_set(pf, 3, &in), 0);
	CHECK_INT(pf_get(pf, 3, &out), 0);
	CHECK_INT(out.vlan, 200);
	CHECK_INT(out.vlan_proto, ETH_P_8021AD);
	pf_close(pf);

	CHECK_STR(slurp(calls),
		  /* One request, the fields in the order the kernel applies them. */
		  "setlink pf=" PF " vf=3 mac=02:00:00:00:00:01 vf=3 vlan=100 qos=2 proto=802.1Q"
		  " vf=3 rate min=10 max=100 vf=3 spoofchk=off vf=3 link_state=enable vf=3 trust=on\n"
		  "getlink pf=" PF " ext=vf,skip_stats\n"
		  "getlink pf=" PF " ext=vf,skip_stats\n"
		  "setlink pf=" PF " vf=3 vlan=200 qos=0 proto=802.1ad\n"
		  "getlink pf=" PF " ext=vf,skip_stats\n");
}

static void test_pf_set_nothing(void)
{
	struct pf_vf_config in = { .mask = 0, .vlan = 5000, .vlan_proto = 1 };
	struct pf *pf;

	fake_reset();
	CHECK_INT(fake_pf_open(PF, fakedir, &pf), 0);
	CHECK_INT(pf_set(pf, 3, &in), 0);
	/* Out-of-range values are refused before anything is sent. */
	in.mask = PF_VF_MAC | PF_VF_VLAN;
	CHECK_INT(pf_set(pf, 3, &in), -EINVAL);
	in.vlan = 0;
	in.qos = 3;
	in.vlan_proto = ETH_P_8021Q;
	CHECK_INT(pf_set(pf, 3, &in), -EINVAL);
	in.mask = PF_VF_LINK_STATE;
	in.link_state = 3;
	CHECK_INT(pf_set(pf, 3, &in), -EINVAL);
	in.mask = PF_VF_RATE;
	in.min_tx_rate = 50;
	in.max_tx_rate = 10;
	CHECK_INT(pf_set(pf, 3, &in), -EINVAL);
	pf_close(pf);
	CHECK(access(calls, F_OK) != 0);
}

static void test_pf_failures(void)
{
	struct pf_vf_config in = {
		.mask = PF_VF_VLAN | PF_VF_SPOOFCHK | PF_VF_TRUST | PF_VF_LINK_STATE,
		.vlan = 7, .vlan_proto = ETH_P_8021Q, .spoofchk = false, .trust = true,
	}, out;
	struct pf *pf;

	fake_reset();
	CHECK_INT(put_file(failfile, "fail spoofchk EPERM\n"), 0);
	CHECK_INT(fake_pf_open(PF, fakedir, &pf), 0);
	/*
	 * The request stops at the refused field, as the kernel does; then
	 * the fields go one by one up to it, to name it: link state and trust
	 * are never set.
	 */
	CHECK_INT(pf_set(pf, 3, &in), -EPERM);
	CHECK_INT(pf_refused(pf), PF_VF_SPOOFCHK);
	CHECK_INT(pf_get(pf, 3, &out), 0);
	CHECK_INT(out.vlan, 7);
	CHECK(out.spoofchk);
	CHECK(!out.trust);

	CHECK_INT(put_file(failfile, "fail getlink\n"), 0);
	CHECK_INT(pf_get(pf, 3, &out), -EOPNOTSUPP);
	CHECK_INT(put_file(failfile, "fail mac ENOSUCHERRNO\n"), 0);
	in.mask = PF_VF_MAC;
	CHECK_INT(pf_set(pf, 3, &in), -EINVAL);
	CHECK_INT(pf_refused(pf), PF_VF_MAC);
	unlink(failfile);

	/* A VF the PF does not have: the kernel's EINVAL. */
	in.mask = PF_VF_TRUST;
	CHECK_INT(pf_set(pf, 9, &in), -EINVAL);
	pf_close(pf);

	CHECK_STR(slurp(calls),
		  "setlink pf=" PF " vf=3 vlan=7 qos=0 proto=802.1Q vf=3 spoofchk=off"
		  " vf=3 link_state=auto vf=3 trust=on\n"
		  "setlink pf=" PF " vf=3 vlan=7 qos=0 proto=802.1Q\n"
		  "setlink pf=" PF " vf=3 spoofchk=off\n"
		  "getlink pf=" PF " ext=vf,skip_stats\n"
		  "getlink pf=" PF " ext=vf,skip_stats\n"
		  "setlink pf=" PF " vf=3 mac=00:00:00:00:00:00\n"
		  "setlink pf=" PF " vf=9 trust=on\n");
}

static void test_pf_names(void)
{
	struct pf *pf;

	CHECK_INT(fake_pf_open("../x", tmp, &pf), -EINVAL);
	CHECK_INT(fake_pf_open("a/b", tmp, &pf), -EINVAL);
	CHECK_INT(fake_pf_open("", tmp, &pf), -EINVAL);
	CHECK_INT(fake_pf_open("pf0", "/nonexistent-dir-for-test", &pf), -ENOENT);
}

/* A recorded VF's PF vanishes: every request answers ENODEV, as the kernel's. */
static void test_pf_gone(void)
{
	char vfs[600], saved[600];
	struct pf_vf_config c = { .mask = PF_VF_TRUST, .trust = true };
	struct pf *pf;

	fake_reset();
	snprintf(vfs, sizeof(vfs), "%s/" PF ".vfs", fakedir);
	snprintf(saved, sizeof(saved), "%s/saved.vfs", tmp);
	CHECK_INT(fake_pf_open(PF, fakedir, &pf), 0);
	CHECK_INT(rename(vfs, saved), 0);
	CHECK_INT(pf_set(pf, 3, &c), -ENODEV);
	CHECK_INT(pf_get(pf, 3, &c), -ENODEV);
	pf_close(pf);
	CHECK_INT(fake_pf_open(PF, fakedir, &pf), -ENODEV);
	CHECK_INT(rename(saved, vfs), 0);
	/* The kernel's PF: a netdev that does not exist is gone, not an error. */
	CHECK_INT(fake_pf_open("nosuchpf0", NULL, &pf), -ENODEV);
}

/*
 * Plugins run side by side on one PF: each of them sets its own VF many
 * times while the others do the same. No update may be lost and no reader
 * may ever see a torn state file.
 */
#define PAR_WRITERS 6
#define PAR_ROUNDS 30

static void par_writer(int vf)
{
	struct pf_vf_config c = { .mask = PF_VF_VLAN, .vlan_proto = ETH_P_8021Q }, got;
	struct pf *pf;
	int i;

	if (fake_pf_open(PF, fakedir, &pf) < 0)
		_exit(2);
	for (i = 1; i <= PAR_ROUNDS; i++) {
		c.vlan = i;
		if (pf_set(pf, vf, &c) < 0 || pf_get(pf, vf, &got) < 0 || got.vlan != i)
			_exit(3);
	}
	pf_close(pf);
	_exit(0);
}

static void test_pf_parallel_writers(void)
{
	pid_t pids[PAR_WRITERS];
	struct pf_vf_config got;
	struct pf *pf;
	int i, status, failed = 0;

	fake_reset();
	for (i = 0; i < PAR_WRITERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			par_writer(i);
	}
	for (i = 0; i < PAR_WRITERS; i++) {
		if (pids[i] < 0 || waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed++;
	}
	CHECK_INT(failed, 0);
	CHECK_INT(fake_pf_open(PF, fakedir, &pf), 0);
	for (i = 0; i < PAR_WRITERS; i++) {
		CHECK_INT(pf_get(pf, i, &got), 0);
		CHECK_INT(got.vlan, PAR_ROUNDS);
	}
	pf_close(pf);
}

static void test_config_default(void)
{
	static const uint8_t zero[6];
	struct pf_vf_config d;

	pf_vf_config_default(&d);
	CHECK_INT(d.mask, PF_VF_MAC | PF_VF_VLAN | PF_VF_SPOOFCHK | PF_VF_TRUST |
		  PF_VF_LINK_STATE | PF_VF_RATE);
	CHECK(!memcmp(d.mac, zero, 6));
	CHECK_INT(d.vlan, 0);
	CHECK_INT(d.qos, 0);
	CHECK_INT(d.vlan_proto, ETH_P_8021Q);
	CHECK(!d.spoofchk);
	CHECK(!d.trust);
	CHECK_INT(d.link_state, IFLA_VF_LINK_STATE_AUTO);
	CHECK_INT(d.min_tx_rate, 0);
	CHECK_INT(d.max_tx_rate, 0);
}

/* ---- claims ---- */

static int claims_dir(const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	mkdir(path, 0700);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static struct claim_owner owner(const char *cid, const char *ifname, const char *netns)
{
	struct claim_owner o;

	memset(&o, 0, sizeof(o));
	snprintf(o.container_id, sizeof(o.container_id), "%s", cid);
	snprintf(o.ifname, sizeof(o.ifname), "%s", ifname);
	snprintf(o.netns, sizeof(o.netns), "%s", netns);
	return o;
}

static void test_claim_busy_and_release(void)
{
	int dirfd = claims_dir("claims");
	struct claim_owner me = owner("c1", "net1", "/proc/self/ns/net");
	struct claim_owner other = owner("c2", "net1", "/var/run/netns/other");
	struct claim a, b;
	char path[600];

	CHECK(dirfd >= 0);
	CHECK_INT(claim_take(dirfd, "3b:00.2", &me, 1000, &a), 0);
	CHECK_STR(a.bdf, "0000:3b:00.2");
	CHECK(a.lock_fd >= 0);
	CHECK(fcntl(a.lock_fd, F_GETFD) & FD_CLOEXEC);
	CHECK_INT(a.marker, CLAIM_MARKER_NONE);
	CHECK_INT(claim_mark(&a, &me), 0);
	snprintf(path, sizeof(path), "%s/claims/0000:3b:00.2", tmp);
	CHECK_HAS(slurp(path), "\"containerID\":\t\"c1\"");
	claim_release(&a);
	CHECK_INT(a.lock_fd, -1);

	/* The owner's namespace is alive and it is not us: busy, lock dropped. */
	CHECK_INT(claim_take(dirfd, "0000:3b:00.2", &other, 1000, &b), -EBUSY);
	CHECK_STR(b.owner.netns, "/proc/self/ns/net");
	CHECK_STR(b.owner.container_id, "c1");
	CHECK_INT(b.lock_fd, -1);
	/* The lock really was dropped: it can be taken again at once. */
	CHECK_INT(claim_lock(dirfd, "0000:3b:00.2", 0, &b), 0);
	CHECK_INT(b.marker, CLAIM_MARKER_READ);
	/* Only the attachment that wrote the marker clears it. */
	CHECK_INT(claim_clear(&b, &other), -EBUSY);
	CHECK(access(path, F_OK) == 0);
	claim_release(&b);

	/* The same attachment again (a repeated ADD) succeeds, and may clear it. */
	CHECK_INT(claim_take(dirfd, "0000:3b:00.2", &me, 1000, &b), 0);
	CHECK(claim_held_by(&b, &me));
	CHECK_INT(claim_clear(&b, &me), 0);
	CHECK(access(path, F_OK) != 0);
	CHECK_INT(claim_clear(&b, &me), 0);
	claim_release(&b);
	close(dirfd);
}

/* A claim belongs to an attachment: another interface of the same pod is refused. */
static void test_claim_same_pod_other_ifname(void)
{
	int dirfd = claims_dir("samepod");
	struct claim_owner net1 = owner("c1", "net1", "/proc/self/ns/net");
	struct claim_owner net2 = owner("c1", "net2", "/proc/self/ns/net");
	struct claim c;
	char path[600];

	CHECK(dirfd >= 0);
	snprintf(path, sizeof(path), "%s/samepod/0000:3b:00.7", tmp);
	CHECK_INT(claim_take(dirfd, "0000:3b:00.7", &net1, 1000, &c), 0);
	CHECK_INT(claim_mark(&c, &net1), 0);
	claim_release(&c);
	CHECK_INT(claim_take(dirfd, "0000:3b:00.7", &net2, 1000, &c), -EBUSY);
	CHECK_STR(c.owner.ifname, "net1");
	CHECK_INT(claim_lock(dirfd, "0000:3b:00.7", 0, &c), 0);
	CHECK(!claim_held_by(&c, &net2));
	CHECK_INT(claim_clear(&c, &net2), -EBUSY);
	claim_release(&c);
	CHECK(access(path, F_OK) == 0);
	close(dirfd);
}

static void test_claim_stale(void)
{
	int dirfd = claims_dir("stale");
	struct claim_owner me = owner("c9", "net1", "/proc/self/ns/net");
	struct claim_owner gone = owner("c8", "net1", "/var/run/netns/gone-pod-ns");
	struct claim c;

	CHECK(dirfd >= 0);
	snprintf(gone.host_ifname, sizeof(gone.host_ifname), "enp59s0f0v3");
	gone.host_mtu = 1500;
	gone.host_mac[5] = 0x42;
	snprintf(gone.rdma_dev, sizeof(gone.rdma_dev), "mlx5_5");
	gone.rdma_index = 7;
	CHECK_INT(claim_lock(dirfd, "0000:3b:00.5", 0, &c), 0);
	CHECK_INT(claim_mark(&c, &gone), 0);
	claim_release(&c);
	/* Its namespace is gone: taken over, with what the marker kept of the VF's host identity. */
	CHECK_INT(claim_take(dirfd, "0000:3b:00.5", &me, 1000, &c), 0);
	CHECK_INT(c.marker, CLAIM_MARKER_READ);
	CHECK(!claim_held_by(&c, &me));
	CHECK_STR(c.owner.container_id, "c8");
	CHECK_STR(c.owner.host_ifname, "enp59s0f0v3");
	CHECK_INT(c.owner.host_mtu, 1500);
	CHECK_INT(c.owner.host_mac[5], 0x42);
	CHECK_STR(c.owner.rdma_dev, "mlx5_5");
	CHECK_INT(c.owner.rdma_index, 7);
	CHECK_INT(claim_mark(&c, &me), 0);
	CHECK(claim_held_by(&c, &me));
	claim_release(&c);

	CHECK_INT(claim_take(dirfd, "0000:3b:0", &me, 1000, &c), -EINVAL);
	close(dirfd);
}

/*
 * The marker keeps the namespace's identity: a path bound to another
 * namespace since (a runtime's path reused) names a holder that is gone.
 */
static void test_claim_path_reused(void)
{
	int dirfd = claims_dir("reused");
	struct claim_owner me = owner("c9", "net1", "/proc/self/ns/net");
	struct claim_owner held = owner("c8", "net1", "/proc/self/ns/net");
	struct claim c;
	int fd;

	CHECK(dirfd >= 0);
	CHECK_INT(netns_open("/proc/self/ns/net", &fd), 0);
	CHECK_INT(netns_id_of(fd, &held.netns_id), 0);
	close(fd);
	CHECK_INT(claim_lock(dirfd, "0000:3b:00.6", 0, &c), 0);
	CHECK_INT(claim_mark(&c, &held), 0);
	claim_release(&c);
	/* Alive, the same namespace: busy. */
	CHECK_INT(claim_take(dirfd, "0000:3b:00.6", &me, 1000, &c), -EBUSY);
	CHECK(c.owner.netns_id.ino == held.netns_id.ino && c.owner.netns_id.dev == held.netns_id.dev);
	/* The path names another namespace than the marker's: stale, taken over. */
	held.netns_id.ino++;
	CHECK_INT(claim_lock(dirfd, "0000:3b:00.6", 0, &c), 0);
	CHECK_INT(claim_mark(&c, &held), 0);
	claim_release(&c);
	CHECK_INT(claim_take(dirfd, "0000:3b:00.6", &me, 1000, &c), 0);
	CHECK_INT(c.marker, CLAIM_MARKER_READ);
	CHECK_STR(c.owner.container_id, "c8");
	claim_release(&c);
	close(dirfd);
}

/* Markers of the earlier format named a namespace alone; torn ones name nobody. */
static void test_claim_legacy_and_unreadable(void)
{
	int dirfd = claims_dir("legacy");
	struct claim_owner me = owner("c1", "net1", "/proc/self/ns/net");
	struct claim_owner other = owner("c2", "net1", "/var/run/netns/x");
	struct claim c;
	char path[600];

	CHECK(dirfd >= 0);
	snprintf(path, sizeof(path), "%s/legacy/0000:3b:00.4", tmp);
	CHECK_INT(sh("printf /proc/self/ns/net > '%s'", path), 0);
	CHECK_INT(claim_take(dirfd, "0000:3b:00.4", &other, 1000, &c), -EBUSY);
	CHECK_STR(c.owner.netns, "/proc/self/ns/net");
	CHECK_STR(c.owner.container_id, "");
	/* The namespace it names is the attachment's: its DEL clears it. */
	CHECK_INT(claim_take(dirfd, "0000:3b:00.4", &me, 1000, &c), 0);
	CHECK(claim_held_by(&c, &me));
	CHECK_INT(claim_clear(&c, &me), 0);
	claim_release(&c);

	CHECK_INT(sh("printf '{\"containerID\": \"c2\"' > '%s'", path), 0);
	CHECK_INT(claim_take(dirfd, "0000:3b:00.4", &me, 1000, &c), 0);
	CHECK_INT(c.marker, CLAIM_MARKER_UNREADABLE);
	CHECK(!claim_held_by(&c, &me));
	CHECK_INT(claim_clear(&c, &me), 0);
	claim_release(&c);
	CHECK(access(path, F_OK) != 0);
	close(dirfd);
}

/* A marker as a release writes one: this one's, or another's with its own version and members. */
static void put_marker(int dirfd, const char *bdf, const char *json)
{
	cJSON *o = cJSON_Parse(json);

	CHECK(o != NULL);
	CHECK_INT(state_write_json(dirfd, bdf, o, false), 0);
	cJSON_Delete(o);
}

/*
 * docs/upgrading.md: a marker says its version and writer; one of version
 * 1 with members this version does not know is read, one of a newer
 * version names a holder this version cannot tell: never taken over,
 * never cleared, whatever namespace it seems to name.
 */
static void test_claim_versions(void)
{
	int dirfd = claims_dir("versions");
	struct claim_owner me = owner("c1", "net1", "/proc/self/ns/net");
	struct claim c;
	char path[600];

	CHECK(dirfd >= 0);
	snprintf(path, sizeof(path), "%s/versions/0000:3b:00.6", tmp);
	CHECK_INT(claim_lock(dirfd, "0000:3b:00.6", 0, &c), 0);
	CHECK_INT(claim_mark(&c, &me), 0);
	claim_release(&c);
	CHECK_HAS(slurp(path), "\"version\":\t1,");
	CHECK_HAS(slurp(path), "\"writtenBy\":\t\"sriov-rdma-cni " PROJECT_VERSION "\"");

	put_marker(dirfd, "0000:3b:00.6", "{\"version\": 1, \"writtenBy\": \"sriov-rdma-cni 9.0.0\", "
		   "\"containerID\": \"c1\", \"ifname\": \"net1\", \"netns\": \"/proc/self/ns/net\", "
		   "\"podNetnsId\": {\"dev\": 4, \"ino\": 4026532890}}");
	CHECK_INT(claim_take(dirfd, "0000:3b:00.6", &me, 1000, &c), 0);
	CHECK_INT(c.marker, CLAIM_MARKER_READ);
	CHECK(claim_held_by(&c, &me));
	CHECK_STR(c.written.written_by, "sriov-rdma-cni 9.0.0");
	claim_release(&c);

	/* Newer, naming a namespace that is gone: a stale claim to an older version, not to this one. */
	put_marker(dirfd, "0000:3b:00.6", "{\"version\": 2, \"writtenBy\": \"sriov-rdma-cni 9.0.0\", "
		   "\"containerID\": \"c1\", \"ifname\": \"net1\", \"netns\": \"/var/run/netns/gone\"}");
	CHECK_INT(claim_take(dirfd, "0000:3b:00.6", &me, 1000, &c), -EBUSY);
	CHECK_INT(c.marker, CLAIM_MARKER_NEWER);
	CHECK_INT(c.written.version, 2);
	CHECK_STR(c.written.written_by, "sriov-rdma-cni 9.0.0");
	CHECK_STR(c.owner.container_id, "");
	CHECK_INT(claim_lock(dirfd, "0000:3b:00.6", 0, &c), 0);
	CHECK(!claim_held_by(&c, &me));
	CHECK(claim_busy(&c, &me));
	CHECK_INT(claim_clear(&c, &me), -EBUSY);
	claim_release(&c);
	CHECK(access(path, F_OK) == 0);

	/* A version that is no number names nobody: unreadable, as a torn one. */
	put_marker(dirfd, "0000:3b:00.6", "{\"version\": \"2\", \"containerID\": \"c2\", "
		   "\"ifname\": \"net1\", \"netns\": \"/proc/self/ns/net\"}");
	CHECK_INT(claim_take(dirfd, "0000:3b:00.6", &me, 1000, &c), 0);
	CHECK_INT(c.marker, CLAIM_MARKER_UNREADABLE);
	claim_release(&c);
	close(dirfd);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	int ret;

	snprintf(tmp, sizeof(tmp), "%s/test_vf.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	if (mktree() != 0) {
		fprintf(stderr, "mksysfs failed\n");
		return 1;
	}
	{
		char path[600];
		const char *vfs;

		snprintf(path, sizeof(path), "%s/" PF ".vfs", fakedir);
		vfs = slurp(path);
		if (!vfs || strlen(vfs) >= sizeof(pristine_vfs)) {
			fprintf(stderr, "no fake PF state in %s\n", path);
			return 1;
		}
		strcpy(pristine_vfs, vfs);
	}
	RUN(test_bdf_parse);
	RUN(test_lookup_vf);
	RUN(test_lookup_no_netdev);
	RUN(test_lookup_dpdk);
	RUN(test_lookup_not_vf_or_missing);
	RUN(test_lookup_sparse_virtfn);
	RUN(test_pf_defaults);
	RUN(test_pf_cut_short_and_sysfs);
	RUN(test_pf_set_roundtrip);
	RUN(test_pf_set_nothing);
	RUN(test_pf_failures);
	RUN(test_pf_names);
	RUN(test_pf_gone);
	RUN(test_pf_parallel_writers);
	RUN(test_config_default);
	RUN(test_claim_busy_and_release);
	RUN(test_claim_same_pod_other_ifname);
	RUN(test_claim_stale);
	RUN(test_claim_path_reused);
	RUN(test_claim_legacy_and_unreadable);
	RUN(test_claim_versions);
	ret = check_summary();
	sh("rm -rf '%s'", tmp);
	return ret;
}
