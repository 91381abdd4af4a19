/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_record: a reservation's record and entry names. What is written
 * reads back whole; an entry that is not a whole, in-range record is
 * -EBADMSG, so the store keeps its address held rather than trust it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ipam_conf.h"
#include "pool_record.h"
#include "state.h"

static char tmp[64];
static int dirfd = -1;

static struct ipam_addr A(const char *s)
{
	struct ipam_addr a = { 0, 0 };

	if (ipam_addr_parse(s, &a) < 0)
		fprintf(stderr, "  bad test address %s\n", s);
	return a;
}

/* Write a record into tmp/ and move it to `name`, as pool does for c-. */
static int put(const char *name, const struct pool_owner *o, int set, const char *addr)
{
	struct ipam_addr a = A(addr);
	char tmpname[POOL_NAME_MAX];
	int ret;

	ret = pool_record_write_tmp(dirfd, o, set, &a, "boot-1", tmpname, sizeof(tmpname));
	if (ret < 0)
		return ret;
	return renameat(dirfd, tmpname, dirfd, name) < 0 ? -errno : 0;
}

/* Seal text and parse it as a record. */
static int parse_text(const char *text)
{
	struct pool_record r;
	char *buf = strdup(text);
	size_t len = strlen(text);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = state_seal(&buf, &len);
	if (ret == 0)
		ret = pool_record_parse(buf, len, &r);
	free(buf);
	return ret;
}

static void test_names(void)
{
	struct pool_owner o = { "cid", "eth0", NULL };
	struct ipam_addr a = A("10.1.0.5"), b = A("fd00::5");
	char buf[POOL_NAME_MAX];

	pool_record_name_addr(buf, sizeof(buf), 'a', &a);
	CHECK_STR(buf, "a-10.1.0.5");
	pool_record_name_addr(buf, sizeof(buf), 'r', &b);
	CHECK_STR(buf, "r-fd00::5");
	pool_record_name_owner(buf, sizeof(buf), &o, 1);
	CHECK_STR(buf, "c-cid:eth0.1");
}

static void test_round_trip(void)
{
	struct pool_owner o = { "3f2a9c1d0b7e", "net1", "/var/run/netns/cni-1" };
	struct pool_owner d = { "c2", "eth0", NULL };
	struct ipam_addr want = A("fd00::a");
	struct pool_record r, s;
	struct stat st;
	time_t now = time(NULL);

	CHECK_INT(put("c-3f2a9c1d0b7e:net1.1", &o, 1, "fd00::a"), 0);
	CHECK_INT(pool_record_load(dirfd, "c-3f2a9c1d0b7e:net1.1", &r, &st), 0);
	CHECK_INT(ipam_addr_cmp(&r.addr, &want), 0);
	CHECK_INT(r.set, 1);
	CHECK_STR(r.container_id, "3f2a9c1d0b7e");
	CHECK_STR(r.ifname, "net1");
	CHECK_STR(r.netns, "/var/run/netns/cni-1");
	CHECK_STR(r.boot_id, "boot-1");
	CHECK(r.created >= now - 5 && r.created <= now + 5);
	CHECK(S_ISREG(st.st_mode) && st.st_size > 0);
	CHECK(pool_record_names_c("c-3f2a9c1d0b7e:net1.1", &r));
	CHECK(!pool_record_names_c("c-3f2a9c1d0b7e:net1.0", &r));
	CHECK(pool_record_names_a("a-fd00::a", &r));
	CHECK(!pool_record_names_a("a-fd00::b", &r));
	CHECK(pool_record_same_owner(&r, "3f2a9c1d0b7e", "net1", 1));
	CHECK(!pool_record_same_owner(&r, "3f2a9c1d0b7e", "net1", 0));
	CHECK(!pool_record_same_owner(&r, "3f2a9c1d0b7e", "net2", 1));

	/* DEL knows no netns: the record says "". */
	CHECK_INT(put("c-c2:eth0.0", &d, 0, "10.1.0.9"), 0);
	CHECK_INT(pool_record_load(dirfd, "c-c2:eth0.0", &s, &st), 0);
	CHECK_STR(s.netns, "");
	CHECK(!pool_record_same(&r, &s));
	s = r;
	CHECK(pool_record_same(&r, &s));
	s.addr = A("fd00::b");
	CHECK(!pool_record_same(&r, &s));
}

/* Numbers and strings are checked before use: out of range is not a record. */
static void test_parse_ranges(void)
{
	static const char head[] = "{\"address\":\"10.1.0.5\",\"containerID\":\"c1\","
				   "\"ifname\":\"eth0\",\"netns\":\"\",\"bootID\":\"b\"";
	static const struct { const char *tail; int want; } cases[] = {
		{ ",\"set\":0,\"created\":0}", 0 },
		{ ",\"set\":7,\"created\":9007199254740992}", 0 },
		{ ",\"set\":8,\"created\":0}", -EBADMSG },
		{ ",\"set\":-1,\"created\":0}", -EBADMSG },
		{ ",\"set\":0.5,\"created\":0}", -EBADMSG },
		{ ",\"set\":\"0\",\"created\":0}", -EBADMSG },
		{ ",\"created\":0}", -EBADMSG },
		{ ",\"set\":0,\"created\":-1}", -EBADMSG },
		{ ",\"set\":0,\"created\":9007199254740994}", -EBADMSG },
		{ ",\"set\":0}", -EBADMSG },
	};
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", head, cases[i].tail);
		if (parse_text(text) != cases[i].want)
			fprintf(stderr, "  %s\n", text);
		CHECK_INT(parse_text(text), cases[i].want);
	}
	CHECK_INT(parse_text("{\"address\":\"10.1.0.500\",\"set\":0,\"containerID\":\"c1\","
			     "\"ifname\":\"eth0\",\"netns\":\"\",\"bootID\":\"b\",\"created\":0}"),
		  -EBADMSG);
	CHECK_INT(parse_text("{\"address\":\"10.1.0.5\",\"set\":0,\"containerID\":\"c1\","
			     "\"ifname\":\"eth0-longer-than-ifnamsiz\",\"netns\":\"\",\"bootID\":\"b\","
			     "\"created\":0}"),
		  -EBADMSG);
	CHECK_INT(parse_text("{\"address\":\"10.1.0.5\",\"set\":0,\"containerID\":\"c1\","
			     "\"ifname\":\"eth0\",\"bootID\":\"b\",\"created\":0}"),
		  -EBADMSG);
	CHECK_INT(parse_text("[]"), -EBADMSG);
	CHECK_INT(parse_text("not json"), -EBADMSG);
}

/* Cut anywhere, or one byte changed: unreadable, never a record with fields missing. */
static void test_truncated_and_corrupt(void)
{
	struct pool_owner o = { "c3", "eth0", "/run/netns/x" };
	struct pool_record r;
	char *data = NULL, *buf;
	size_t len = 0, cut;
	int bad = 0;

	CHECK_INT(put("c-c3:eth0.0", &o, 0, "10.1.0.3"), 0);
	CHECK_INT(state_read(dirfd, "c-c3:eth0.0", &data, &len, STATE_MAX_FILE), 0);
	buf = malloc(len + 1);
	CHECK(buf != NULL && data != NULL);
	if (!buf || !data) {
		free(buf);
		free(data);
		return;
	}
	for (cut = 0; cut < len; cut++) {
		memcpy(buf, data, cut);
		buf[cut] = '\0';
		if (pool_record_parse(buf, cut, &r) != -EBADMSG)
			bad++;
	}
	CHECK_INT(bad, 0);
	memcpy(buf, data, len + 1);
	CHECK(strstr(buf, "10.1.0.3") != NULL);
	if (strstr(buf, "10.1.0.3"))
		strstr(buf, "10.1.0.3")[7] = '4';
	CHECK_INT(pool_record_parse(buf, len, &r), -EBADMSG);
	memcpy(buf, data, len + 1);
	CHECK_INT(pool_record_parse(buf, len, &r), 0);
	free(buf);
	free(data);
}

/*
 * docs/upgrading.md: a record says its version and writer; members this
 * version does not know are ignored in version 1, a newer one is refused
 * by name.
 */
static void test_version(void)
{
	static const char base[] = "\"address\":\"10.1.0.7\",\"set\":0,\"containerID\":\"c7\","
				   "\"ifname\":\"eth0\",\"netns\":\"\",\"bootID\":\"b\",\"created\":1";
	struct pool_owner o = { "c7", "eth0", NULL };
	struct pool_record r;
	char text[512], *buf;
	size_t len;

	CHECK_INT(put("c-c7:eth0.0", &o, 0, "10.1.0.7"), 0);
	CHECK_INT(state_read(dirfd, "c-c7:eth0.0", &buf, &len, STATE_MAX_FILE), 0);
	CHECK_HAS(buf, "{\"version\":1,\"writtenBy\":\"sriov-rdma-cni " PROJECT_VERSION "\",");
	free(buf);
	snprintf(text, sizeof(text), "{%s}", base);
	CHECK_INT(parse_text(text), 0);
	snprintf(text, sizeof(text), "{\"version\":1,\"writtenBy\":\"sriov-rdma-cni 9.0.0\","
		 "\"futureMember\":[1],%s}", base);
	CHECK_INT(parse_text(text), 0);
	snprintf(text, sizeof(text), "{\"version\":\"1\",%s}", base);
	CHECK_INT(parse_text(text), -EBADMSG);
	snprintf(text, sizeof(text), "{\"version\":0,%s}", base);
	CHECK_INT(parse_text(text), -EBADMSG);
	snprintf(text, sizeof(text), "{\"version\":2,\"writtenBy\":\"sriov-rdma-cni 9.0.0\"}");
	buf = strdup(text);
	len = strlen(text);
	CHECK(buf != NULL && state_seal(&buf, &len) == 0);
	CHECK_INT(buf ? pool_record_parse(buf, len, &r) : -ENOMEM, -EPROTO);
	CHECK_INT(r.written.version, 2);
	CHECK_STR(r.written.written_by, "sriov-rdma-cni 9.0.0");
	free(buf);
}

/* Only a regular file, reached without a symlink and no larger than a record, is read. */
static void test_load_refuses(void)
{
	struct pool_owner o = { "c4", "eth0", NULL };
	struct pool_record r;
	struct stat st;
	char big[POOL_RECORD_MAX + 2];
	int fd;

	CHECK_INT(pool_record_load(dirfd, "c-absent:eth0.0", &r, &st), -ENOENT);
	CHECK_INT(mkdirat(dirfd, "c-dir:eth0.0", 0700), 0);
	CHECK_INT(pool_record_load(dirfd, "c-dir:eth0.0", &r, &st), -EBADMSG);
	CHECK_INT(put("c-c4:eth0.0", &o, 0, "10.1.0.4"), 0);
	CHECK_INT(symlinkat("c-c4:eth0.0", dirfd, "a-10.1.0.4"), 0);
	CHECK_INT(pool_record_load(dirfd, "a-10.1.0.4", &r, &st), -EBADMSG);
	CHECK_INT(pool_record_load(dirfd, "c-c4:eth0.0", &r, &st), 0);
	memset(big, ' ', sizeof(big));
	fd = openat(dirfd, "c-big:eth0.0", O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, big, sizeof(big)), sizeof(big));
	close(fd);
	CHECK_INT(pool_record_load(dirfd, "c-big:eth0.0", &r, &st), -EBADMSG);
}

int main(void)
{
	char cmd[128];

	snprintf(tmp, sizeof(tmp), "/tmp/test-pool-record.XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return 1;
	RUN(test_names);
	RUN(test_round_trip);
	RUN(test_parse_ranges);
	RUN(test_truncated_and_corrupt);
	RUN(test_load_refuses);
	RUN(test_version);
	close(dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_summary();
}
