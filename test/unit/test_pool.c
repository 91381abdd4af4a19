/* SPDX-License-Identifier: Apache-2.0 */
/* pool: the store and the allocator, on a temporary dataDir (no root needed). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "pool.h"

static char root[64];		/* the test's temporary directory */
static char proc_root[128];	/* a fake procfs holding the boot ID */
static char store[256];		/* <dataDir>/net1 */
static struct ipam_conf conf;

static void set_boot_id(const char *id)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", proc_root);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%s\n", id);
	fclose(f);
}

/* A fresh dataDir and config; ranges_json is the value of "ranges". */
static void setup(const char *ranges_json, const char *extra)
{
	struct cni_error err = { 0 };
	char json[2048], cmd[256];
	cJSON *j;

	snprintf(cmd, sizeof(cmd), "rm -rf %s/data", root);
	if (system(cmd) != 0)
		fprintf(stderr, "  cannot clear %s/data\n", root);
	snprintf(json, sizeof(json), "{\"dataDir\":\"%s/data\",\"ranges\":%s%s}", root, ranges_json,
		 extra ? extra : "");
	j = cJSON_Parse(json);
	if (!j || ipam_conf_parse(j, &conf, &err) < 0)
		fprintf(stderr, "  bad test config %s: %s\n", json, err.msg);
	cJSON_Delete(j);
	snprintf(store, sizeof(store), "%s/data/net1", root);
	set_boot_id("11111111-1111-1111-1111-111111111111");
}

static const char *fmt(const struct ipam_addr *a)
{
	static char buf[4][IPAM_ADDR_STRLEN];
	static int i;

	i = (i + 1) % 4;
	ipam_addr_format(a, buf[i], sizeof(buf[i]));
	return buf[i];
}

/* One ADD as the plugin does it: open (lock), add, close. */
static int add(const char *cid, const char *req, struct ipam_addr out[IPAM_MAX_SETS],
	       struct pool_diag *d)
{
	struct pool_owner o = { cid, "eth0", "/run/netns/x" };
	struct ipam_addr want;
	struct pool p;
	int ret;

	memset(d, 0, sizeof(*d));
	ret = pool_open(&p, &conf, "net1", proc_root, 1000, d);
	if (ret < 0)
		return ret;
	if (req)
		ipam_addr_parse(req, &want);
	ret = pool_add(&p, &o, &want, req ? 1 : 0, out, d);
	pool_close(&p);
	return ret;
}

static const char *add1(const char *cid)
{
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;

	if (add(cid, NULL, out, &d) < 0)
		return "(failed)";
	return fmt(&out[0]);
}

static int del(const char *cid)
{
	struct pool_owner o = { cid, "eth0", NULL };
	struct pool_diag d = { 0 };
	struct pool p;
	int ret, n;

	ret = pool_open(&p, &conf, "net1", proc_root, 1000, &d);
	if (ret < 0)
		return ret;
	ret = pool_del(&p, &o, &n, &d);
	pool_close(&p);
	return ret < 0 ? ret : n;
}

static bool exists(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", store, name);
	return lstat(path, &st) == 0;
}

static mode_t mode_of(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", store, name);
	return lstat(path, &st) == 0 ? st.st_mode & 07777 : 0;
}

static void write_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", store, name);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

#define V4_SMALL "[[{\"subnet\":\"10.1.0.0/29\",\"gateway\":\"10.1.0.1\"}]]"	/* .2 .. .6 */

static void test_allocate_skips_gateway(void)
{
	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_STR(add1("c2"), "10.1.0.3");
	CHECK(exists("a-10.1.0.2"));
	CHECK(exists("c-c1:eth0.0"));
}

static void test_same_owner_gets_same_address(void)
{
	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_STR(add1("c2"), "10.1.0.3");
	CHECK(!exists("a-10.1.0.4"));
}

static void test_release_and_round_robin(void)
{
	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_STR(add1("c2"), "10.1.0.3");
	CHECK_INT(del("c1"), 1);
	CHECK(!exists("a-10.1.0.2"));
	CHECK(!exists("c-c1:eth0.0"));
	/* the released .2 is not handed out at once */
	CHECK_STR(add1("c3"), "10.1.0.4");
	CHECK_INT(del("c1"), 0);
	CHECK_INT(del("never-added"), 0);
}

static void test_exhaustion(void)
{
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;
	char cid[16];
	int i;

	setup(V4_SMALL, NULL);
	for (i = 0; i < 5; i++) {
		snprintf(cid, sizeof(cid), "c%d", i);
		CHECK(strcmp(add1(cid), "(failed)") != 0);
	}
	CHECK_INT(add("full", NULL, out, &d), -ENOSPC);
	CHECK_INT(d.set, 0);
	/* once one is released, the walk wraps around to it */
	CHECK_INT(del("c2"), 1);
	CHECK_STR(add1("late"), "10.1.0.4");
}

static void test_earlier_boot_reclaimed_when_full(void)
{
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;
	struct pool p;
	char cid[16];
	int i;

	setup(V4_SMALL, NULL);
	for (i = 0; i < 5; i++) {
		snprintf(cid, sizeof(cid), "c%d", i);
		add1(cid);
	}
	CHECK_INT(add("x", NULL, out, &d), -ENOSPC);
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_status(&p, &d), -ENOSPC);
	pool_close(&p);

	set_boot_id("22222222-2222-2222-2222-222222222222");
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_status(&p, &d), 0);
	pool_close(&p);
	CHECK_INT(add("after-reboot", NULL, out, &d), 0);
	/* every earlier-boot record was reclaimed, not only the one reused */
	CHECK(!exists("c-c0:eth0.0"));
	CHECK(!exists("c-c4:eth0.0"));
	CHECK(exists("c-after-reboot:eth0.0"));
}

static void test_cooldown(void)
{
	struct timespec times[2];
	char path[512];
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;
	char cid[16];
	int i;

	setup(V4_SMALL, ",\"releaseCooldown\":3600");
	CHECK_STR(add1("c0"), "10.1.0.2");
	CHECK_INT(del("c0"), 1);
	CHECK(exists("r-10.1.0.2"));
	CHECK(!exists("a-10.1.0.2"));
	for (i = 1; i < 5; i++) {
		snprintf(cid, sizeof(cid), "c%d", i);
		add1(cid);
	}
	/* only the resting .2 is left: it may not be handed out yet */
	CHECK_INT(add("x", NULL, out, &d), -ENOSPC);
	/* an explicit request may take a resting address */
	CHECK_INT(add("y", "10.1.0.2", out, &d), 0);
	CHECK(!exists("r-10.1.0.2"));

	/* rested long enough: back in the pool */
	CHECK_INT(del("y"), 1);
	snprintf(path, sizeof(path), "%s/r-10.1.0.2", store);
	times[0].tv_sec = times[1].tv_sec = time(NULL) - 3601;
	times[0].tv_nsec = times[1].tv_nsec = 0;
	CHECK_INT(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW), 0);
	CHECK_STR(add1("z"), "10.1.0.2");
}

static void test_orphans_of_killed_adds(void)
{
	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_INT(del("c1"), 1);
	/* an ADD killed after linking a- (one link), and one killed after c- */
	write_file("a-10.1.0.3", "partial");
	write_file("c-c9:eth0.0", "partial");
	write_file("tmp/.tmp.1.0", "partial");
	CHECK_STR(add1("c9"), "10.1.0.3");
	CHECK(!exists("tmp/.tmp.1.0"));
	CHECK(exists("a-10.1.0.3"));
}

static void test_corrupt_record(void)
{
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;
	struct pool p;
	char path[512];
	int fd;

	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	snprintf(path, sizeof(path), "%s/a-10.1.0.2", store);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_INT(pwrite(fd, "X", 1, 3), 1);
	close(fd);
	CHECK_INT(add("c1", NULL, out, &d), -EBADMSG);
	CHECK_HAS(d.file, "/data/net1/c-c1:eth0.0");
	CHECK_INT(del("c1"), -EBADMSG);
	/* STATUS of a full set reads every record: the corrupt one is named */
	add1("c2");
	add1("c3");
	add1("c4");
	add1("c5");
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_status(&p, &d), -EBADMSG);
	CHECK_HAS(d.file, "/data/net1/a-10.1.0.2");
	CHECK_STR(d.addr, "10.1.0.2");
	pool_close(&p);
}

static void test_modes(void)
{
	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_INT(mode_of(""), 0700);
	CHECK_INT(mode_of("tmp"), 0700);
	CHECK_INT(mode_of("a-10.1.0.2"), 0600);
	CHECK_INT(mode_of("lock"), 0600);
}

static void test_static_requests(void)
{
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;

	setup(V4_SMALL, NULL);
	CHECK_INT(add("c1", "10.1.0.5", out, &d), 0);
	CHECK_STR(fmt(&out[0]), "10.1.0.5");
	CHECK_INT(add("c2", "10.1.0.5", out, &d), -EADDRINUSE);
	CHECK_STR(d.addr, "10.1.0.5");
	CHECK_STR(d.holder, "c1:eth0");
	CHECK_INT(add("c2", "10.9.0.5", out, &d), -EADDRNOTAVAIL);
	CHECK_INT(add("c2", "10.1.0.1", out, &d), -EADDRNOTAVAIL);
	/* a static request does not move the round-robin position */
	CHECK_STR(add1("c3"), "10.1.0.2");
}

static void test_dual_stack_rolls_back(void)
{
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;

	/* set 0: fd00::1-3, set 1: 10.1.0.1-2 */
	setup("[[{\"subnet\":\"fd00::/126\"}],[{\"subnet\":\"10.1.0.0/30\"}]]", NULL);
	CHECK_INT(add("c1", NULL, out, &d), 0);
	CHECK_STR(fmt(&out[0]), "fd00::1");
	CHECK_STR(fmt(&out[1]), "10.1.0.1");
	CHECK_INT(add("c2", NULL, out, &d), 0);
	CHECK_INT(add("c3", NULL, out, &d), -ENOSPC);
	CHECK_INT(d.set, 1);
	CHECK(!exists("a-fd00::3"));
	CHECK(!exists("c-c3:eth0.0"));
	CHECK_INT(del("c1"), 2);
	CHECK(!exists("a-fd00::1"));
	CHECK(!exists("a-10.1.0.1"));
}

static void test_gc(void)
{
	struct cni_attachment valid[] = { { "c1", "eth0" }, { "c3", "eth0" } };
	struct pool_diag d;
	struct pool p;
	int released = -1;

	setup(V4_SMALL, NULL);
	add1("c1");
	add1("c2");
	add1("c3");
	write_file("a-10.1.0.6", "partial");
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_gc(&p, valid, 2, &released, &d), 0);
	pool_close(&p);
	CHECK_INT(released, 1);
	CHECK(exists("c-c1:eth0.0"));
	CHECK(!exists("c-c2:eth0.0"));
	CHECK(!exists("a-10.1.0.3"));
	CHECK(exists("c-c3:eth0.0"));
	CHECK(!exists("a-10.1.0.6"));
}

static void test_check(void)
{
	struct pool_owner o = { "c1", "eth0", NULL };
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;
	struct pool p;

	setup(V4_SMALL, NULL);
	add1("c1");
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_check(&p, &o, out, &d), 0);
	CHECK_STR(fmt(&out[0]), "10.1.0.2");
	pool_close(&p);
	CHECK_INT(del("c1"), 1);
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_check(&p, &o, out, &d), -ENOENT);
	CHECK_HAS(d.file, "c-c1:eth0.0");
	pool_close(&p);
}

static void test_symlinked_data_dir_refused(void)
{
	struct pool_diag d;
	struct pool p;
	char link[128], target[128];
	int ret;

	setup(V4_SMALL, NULL);
	snprintf(target, sizeof(target), "%s/real", root);
	snprintf(link, sizeof(link), "%s/data", root);
	CHECK_INT(mkdir(target, 0700), 0);
	CHECK_INT(symlink(target, link), 0);
	ret = pool_open(&p, &conf, "net1", proc_root, 1000, &d);
	CHECK(ret == -ELOOP || ret == -ENOTDIR);
	CHECK_HAS(d.file, "/data/net1");
}

int main(void)
{
	char cmd[256];
	int ret;

	snprintf(root, sizeof(root), "/tmp/test-pool.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	snprintf(proc_root, sizeof(proc_root), "%s/proc", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/kernel/random", proc_root);
	if (system(cmd) != 0)
		return 1;

	RUN(test_allocate_skips_gateway);
	RUN(test_same_owner_gets_same_address);
	RUN(test_release_and_round_robin);
	RUN(test_exhaustion);
	RUN(test_earlier_boot_reclaimed_when_full);
	RUN(test_cooldown);
	RUN(test_orphans_of_killed_adds);
	RUN(test_corrupt_record);
	RUN(test_modes);
	RUN(test_static_requests);
	RUN(test_dual_stack_rolls_back);
	RUN(test_gc);
	RUN(test_check);
	RUN(test_symlinked_data_dir_refused);
	ret = check_summary();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		ret = 1;
	return ret;
}
