/* SPDX-License-Identifier: Apache-2.0 */
/* pool: the store and the allocator, on a temporary dataDir (no root needed). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "addr_check.h"
#include "check.h"
#include "ipam_conf.h"
#include "pool.h"
#include "pool_add.h"
#include "pool_gc.h"
#include "state.h"

static char root[64];		/* the test's temporary directory */
static char proc_root[128];	/* a fake procfs holding the boot ID */
static char store[200];		/* <dataDir>/net1 */
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
	CHECK_INT(add("full", NULL, out, &d), -EXFULL);
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
	CHECK_INT(add("x", NULL, out, &d), -EXFULL);
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_status(&p, &d), -EXFULL);
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
	CHECK_INT(add("x", NULL, out, &d), -EXFULL);
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

static void test_leftovers_of_killed_adds(void)
{
	char path[512];

	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_INT(del("c1"), 1);
	/* an unreadable a- holds its address; a lone unreadable c- holds nothing */
	write_file("a-10.1.0.3", "partial");
	write_file("c-c9:eth0.0", "partial");
	write_file("tmp/.tmp.1.0", "partial");
	snprintf(path, sizeof(path), "%s/tmp/stray", store);
	CHECK_INT(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/tmp/stray/x", store);
	CHECK_INT(mkdir(path, 0700), 0);
	CHECK_STR(add1("c9"), "10.1.0.4");
	CHECK(!exists("tmp/.tmp.1.0"));
	CHECK(exists("a-10.1.0.3"));
	CHECK(exists("c-c9:eth0.0"));

	/* an ADD cut short between its c- and its a-: DEL removes the lone c- */
	snprintf(path, sizeof(path), "%s/a-10.1.0.4", store);
	CHECK_INT(unlink(path), 0);
	CHECK_INT(del("c9"), 1);
	CHECK(!exists("c-c9:eth0.0"));

	/* ... and a repeated ADD completes it, with the same address */
	CHECK_STR(add1("c8"), "10.1.0.5");
	snprintf(path, sizeof(path), "%s/a-10.1.0.5", store);
	CHECK_INT(unlink(path), 0);
	CHECK_STR(add1("c8"), "10.1.0.5");
	CHECK(exists("a-10.1.0.5"));
}

/* cp -r, rsync without -H, a backup restore: every pair becomes two files. */
static void test_copied_store_holds(void)
{
	char cmd[1200];
	int i;

	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_STR(add1("c2"), "10.1.0.3");
	snprintf(cmd, sizeof(cmd), "cp -r %s %s.copy && rm -rf %s && mv %s.copy %s", store, store,
		 store, store, store);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(mode_of("a-10.1.0.2") != 0, 1);
	/* the new pods get new addresses, whatever the link counts say */
	CHECK_STR(add1("n1"), "10.1.0.4");
	CHECK_STR(add1("n2"), "10.1.0.5");
	CHECK_STR(add1("n3"), "10.1.0.6");
	CHECK_STR(add1("n4"), "(failed)");
	/* the old owner still gets its own, and its pair is one file again */
	CHECK_STR(add1("c1"), "10.1.0.2");
	CHECK_INT(del("c1"), 1);
	CHECK(!exists("a-10.1.0.2"));
	CHECK_INT(del("c2"), 1);
	CHECK(!exists("a-10.1.0.3"));
	CHECK(!exists("c-c2:eth0.0"));
	for (i = 0; i < 2; i++)
		CHECK(strcmp(add1(i ? "m2" : "m1"), "(failed)") != 0);
}

/* Overwrite the first `from` in the entry with `to` (same length), in place. */
static void edit_in_place(const char *name, const char *from, const char *to)
{
	char path[512], buf[8192], *at;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", store, name);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	at = strstr(buf, from);
	CHECK(at != NULL);
	if (at)
		CHECK_INT(pwrite(fd, to, strlen(to), at - buf), (int)strlen(to));
	if (fd >= 0)
		close(fd);
}

/* A record edited in place, or replaced by an editor, still holds its address. */
static void test_edited_record_holds(void)
{
	char path[512], cmd[1024];

	setup(V4_SMALL, NULL);
	CHECK_STR(add1("c1"), "10.1.0.2");
	edit_in_place("a-10.1.0.2", "c1", "zz");
	CHECK_STR(add1("n1"), "10.1.0.3");
	/* its owner's DEL finishes and logs it; the address stays held */
	CHECK_INT(del("c1"), 0);
	CHECK(exists("a-10.1.0.2"));
	CHECK_STR(add1("n2"), "10.1.0.4");

	/* sed -i writes a new file: a- names another owner, c- is c1's */
	CHECK_STR(add1("c2"), "10.1.0.5");
	snprintf(path, sizeof(path), "%s/a-10.1.0.5", store);
	snprintf(cmd, sizeof(cmd), "sed -i 's/c2/zz/' %s", path);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(del("c2"), 1);
	CHECK(exists("a-10.1.0.5"));
	CHECK(!exists("c-c2:eth0.0"));
	CHECK_STR(add1("n3"), "10.1.0.6");
}

/* A container ID per number, as add() takes it (one buffer: use it at once). */
static const char *cid_of(int i)
{
	static char cid[16];

	snprintf(cid, sizeof(cid), "c%d", i);
	return cid;
}

static void test_corrupt_record(void)
{
	static const struct timespec old_times[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };
	int i;
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
	/* DEL finishes, and the address stays held */
	CHECK_INT(del("c1"), 0);
	CHECK(exists("a-10.1.0.2"));
	/* STATUS of a full set counts it held */
	add1("c2");
	add1("c3");
	add1("c4");
	add1("c5");
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_status(&p, &d), -EXFULL);
	CHECK_INT(d.set, 0);
	pool_close(&p);
	/* an earlier boot frees every readable record, never the unreadable one */
	set_boot_id("22222222-2222-2222-2222-222222222222");
	CHECK_STR(add1("c6"), "10.1.0.3");
	CHECK(exists("a-10.1.0.2"));
	/*
	 * Unreadable and last written before this boot began: what a power
	 * loss leaves of a record that was never fsync'd. Of an earlier boot
	 * too: STATUS counts it stale, and a full set releases it.
	 */
	for (i = 7; add(cid_of(i), NULL, out, &d) == 0; i++)
		;
	CHECK_INT(d.set, 0);
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_status(&p, &d), -EXFULL);
	pool_close(&p);
	CHECK_INT(utimensat(AT_FDCWD, path, old_times, 0), 0);
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_status(&p, &d), 0);
	pool_close(&p);
	CHECK_STR(add1("after-power-loss"), "10.1.0.2");
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
	CHECK_INT(add("c3", NULL, out, &d), -EXFULL);
	CHECK_INT(d.set, 1);
	CHECK(!exists("a-fd00::3"));
	CHECK(!exists("c-c3:eth0.0"));
	CHECK_INT(del("c1"), 2);
	CHECK(!exists("a-fd00::1"));
	CHECK(!exists("a-10.1.0.1"));
}

/* The runtime's valid attachments in these tests: c1 and c3 on eth0. */
static bool owned_c1_c3(const char *container_id, const char *ifname, void *arg)
{
	(void)arg;
	return (!strcmp(container_id, "c1") || !strcmp(container_id, "c3")) &&
	       !strcmp(ifname, "eth0");
}

static void test_gc(void)
{
	char path[512];
	struct pool_diag d;
	struct pool p;
	int released = -1;

	setup(V4_SMALL, NULL);
	add1("c1");
	add1("c2");
	add1("c3");
	write_file("a-10.1.0.6", "partial");
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_gc(&p, owned_c1_c3, NULL, &released, &d), 0);
	pool_close(&p);
	CHECK_INT(released, 1);
	CHECK(exists("c-c1:eth0.0"));
	CHECK(!exists("c-c2:eth0.0"));
	CHECK(!exists("a-10.1.0.3"));
	CHECK(exists("c-c3:eth0.0"));
	/* an unreadable a- is left held; a valid owner's lost index comes back */
	CHECK(exists("a-10.1.0.6"));
	CHECK_INT(unlink(strcat(strcpy(path, store), "/c-c1:eth0.0")), 0);
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_gc(&p, owned_c1_c3, NULL, &released, &d), 0);
	pool_close(&p);
	CHECK_INT(released, 0);
	CHECK(exists("c-c1:eth0.0"));
	CHECK_INT(del("c1"), 1);
	CHECK(!exists("a-10.1.0.2"));
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

static bool owned_none(const char *container_id, const char *ifname, void *arg)
{
	(void)container_id;
	(void)ifname;
	(void)arg;
	return false;
}

/*
 * Rewrite entry name in place (both of its links) as release by would
 * have written it: its members, "version" and "writtenBy" set, and one
 * member this version does not know.
 */
static void rewrite_as(const char *name, int version, const char *by)
{
	char path[512], *data = NULL, *text;
	size_t len = 0;
	cJSON *o;
	int fd = open(store, O_RDONLY | O_DIRECTORY);

	snprintf(path, sizeof(path), "%s/%s", store, name);
	CHECK_INT(state_read(fd, name, &data, &len, STATE_MAX_FILE), 0);
	close(fd);
	CHECK_INT(state_unseal(data, &len), 0);
	o = cJSON_ParseWithLength(data, len);
	free(data);
	CHECK(o != NULL);
	if (!o)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "version");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "writtenBy");
	cJSON_AddNumberToObject(o, "version", version);
	cJSON_AddStringToObject(o, "writtenBy", by);
	cJSON_AddObjectToObject(o, "futureMember");
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	len = text ? strlen(text) : 0;
	CHECK_INT(text ? state_seal(&text, &len) : -ENOMEM, 0);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, text, len), (int)len);
	close(fd);
	free(text);
}

/*
 * docs/upgrading.md: a record this version writes says so; one of version 1
 * with members it does not know is released; one of a newer version is
 * refused by name in DEL, CHECK and a repeated ADD, and every set of its
 * owner stays as it is; GC passes over it.
 */
static void test_newer_record(void)
{
	struct pool_owner o = { "c1", "eth0", NULL };
	struct ipam_addr out[IPAM_MAX_SETS];
	struct pool_diag d;
	struct pool p;
	char path[512], *text = NULL;
	size_t len;
	int released, fd;

	setup("[[{\"subnet\":\"fd00::/126\"}],[{\"subnet\":\"10.1.0.0/29\"}]]", NULL);
	CHECK_INT(add("c1", NULL, out, &d), 0);
	fd = open(store, O_RDONLY | O_DIRECTORY);
	CHECK_INT(state_read(fd, "a-10.1.0.1", &text, &len, STATE_MAX_FILE), 0);
	close(fd);
	CHECK_HAS(text, "\"version\":1,");
	CHECK_HAS(text, "\"writtenBy\":\"sriov-rdma-cni " PROJECT_VERSION "\"");
	free(text);
	rewrite_as("a-10.1.0.1", 1, "sriov-rdma-cni 9.0.0");
	CHECK_INT(del("c1"), 2);
	CHECK(!exists("a-fd00::1") && !exists("a-10.1.0.1"));

	CHECK_INT(add("c1", NULL, out, &d), 0);
	rewrite_as("a-10.1.0.2", 2, "sriov-rdma-cni 9.0.0");
	memset(&d, 0, sizeof(d));
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_del(&p, &o, &released, &d), -EPROTO);
	CHECK_HAS(d.file, "/data/net1/c-c1:eth0.1");
	CHECK_INT(d.written.version, 2);
	CHECK_STR(d.written.written_by, "sriov-rdma-cni 9.0.0");
	CHECK_INT(released, 0);
	CHECK_INT(pool_check(&p, &o, out, &d), -EPROTO);
	pool_close(&p);
	/* Not one set released, not one entry touched: set 0's pair is read before. */
	CHECK(exists("a-fd00::2") && exists("c-c1:eth0.0"));
	CHECK(exists("a-10.1.0.2") && exists("c-c1:eth0.1"));
	CHECK_INT(add("c1", NULL, out, &d), -EPROTO);
	CHECK(exists("a-fd00::2") && exists("a-10.1.0.2"));
	/* A lone c- of a newer release (its own release cut short) is no stray to remove. */
	snprintf(path, sizeof(path), "%s/a-10.1.0.2", store);
	CHECK_INT(unlink(path), 0);
	CHECK_INT(add("c1", NULL, out, &d), -EPROTO);
	CHECK(exists("c-c1:eth0.1"));
	/* GC of an owner the runtime no longer has: set 0's released, the newer one left. */
	CHECK_INT(pool_open(&p, &conf, "net1", proc_root, 1000, &d), 0);
	CHECK_INT(pool_gc(&p, owned_none, NULL, &released, &d), 0);
	pool_close(&p);
	CHECK_INT(released, 1);
	CHECK(!exists("a-fd00::2") && !exists("c-c1:eth0.0"));
	CHECK(exists("c-c1:eth0.1"));
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
	RUN(test_newer_record);
	RUN(test_leftovers_of_killed_adds);
	RUN(test_copied_store_holds);
	RUN(test_edited_record_holds);
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
