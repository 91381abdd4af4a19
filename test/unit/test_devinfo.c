/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device-info file against other writers racing ADD, its undo and DEL
 * (devinfo.c), with the race staged: the program is linked with
 * --wrap=renameat2, and each of the plugin's renames can have another
 * writer act just before or just after it. No timing: the interleaving is
 * the one each case names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sriov.h"
#include "state.h"

int __real_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		     unsigned int flags);
int __wrap_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		     unsigned int flags);

#define MAX_CALLS 8

static char tmp[64], dir[128], path[192];
static int devfd = -1;
/* What another writer does just before, and just after, the plugin's Nth renameat2. */
static void (*before[MAX_CALLS])(void), (*after[MAX_CALLS])(void);
static int calls;

int __wrap_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		     unsigned int flags)
{
	int n = calls++, ret, e;

	if (n < MAX_CALLS && before[n])
		before[n]();
	ret = __real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
	e = errno;
	if (n < MAX_CALLS && after[n])
		after[n]();
	errno = e;
	return ret;
}

static void stage(void)
{
	memset(before, 0, sizeof(before));
	memset(after, 0, sizeof(after));
	calls = 0;
}

static const char dp[] = "{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":{\"pci-address\":"
			 "\"0000:3b:00.2\",\"rdma-device\":\"mlx5_2\"}}";
static const char ours[] = "{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":{\"pci-address\":"
			   "\"0000:3b:00.2\",\"rdma-device\":\"rdma_net1\"}}";
static const char text_a[] = "{\"type\":\"pci\",\"pci\":{\"pci-address\":\"0000:3b:00.7\"},\"from\":\"A\"}";
static const char text_b[] = "{\"type\":\"pci\",\"pci\":{\"pci-address\":\"0000:3b:00.5\"},\"from\":\"B\"}";

/* A file of text at name in the device-info directory, written by a writer of its own. */
static void put_at(const char *name, const char *text)
{
	int fd = openat(devfd, "writer.new", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0);
	CHECK_INT(write(fd, text, strlen(text)), (long long)strlen(text));
	close(fd);
	/* As Multus and the device plugin put a file in place: a rename. */
	CHECK_INT(__real_renameat2(devfd, "writer.new", devfd, name, 0), 0);
}

static void writer_a(void)
{
	put_at("pod.json", text_a);
}

static void writer_b(void)
{
	put_at("pod.json", text_b);
}

/* B writes into the file that is at the path, in place (open, truncate, write). */
static void writer_b_in_place(void)
{
	int fd = openat(devfd, "pod.json", O_WRONLY | O_TRUNC | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_INT(write(fd, text_b, strlen(text_b)), (long long)strlen(text_b));
	close(fd);
}

static void remover(void)
{
	CHECK_INT(unlinkat(devfd, "pod.json", 0), 0);
}

static char *read_at(const char *name)
{
	char *data = NULL;
	size_t len;

	return state_read(devfd, name, &data, &len, STATE_MAX_FILE) == 0 ? data : NULL;
}

/* Is text at the path (1), beside it under a name the sweep leaves (2), or under a temporary (3)? */
static int where_is(const char *text)
{
	DIR *d = fdopendir(dup(devfd));
	struct dirent *e;
	int where = 0;
	char *data;

	/* The dup shares devfd's offset: from the start each time. */
	if (d)
		rewinddir(d);
	while (d && (e = readdir(d))) {
		if (e->d_type != DT_REG)
			continue;
		data = read_at(e->d_name);
		if (data && !strcmp(data, text))
			where = !strcmp(e->d_name, "pod.json") ? 1 :
				!strncmp(e->d_name, ".tmp.", 5) ? 3 :
				!strncmp(e->d_name, ".pod.json.kept.", 15) ? 2 : 4;
		free(data);
		if (where)
			break;
	}
	if (d)
		closedir(d);
	return where;
}

/* How many files the directory holds. */
static int count(void)
{
	DIR *d = fdopendir(dup(devfd));
	struct dirent *e;
	int n = 0;

	if (d)
		rewinddir(d);
	while (d && (e = readdir(d)))
		n += e->d_type == DT_REG;
	if (d)
		closedir(d);
	return n;
}

static void clear(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir '%s'", dir, dir);
	CHECK_INT(system(cmd), 0);
	close(devfd);
	devfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(devfd >= 0);
	stage();
}

static void prior_of(struct sriov_devinfo_prior *prior)
{
	char other[64];

	put_at("pod.json", dp);
	CHECK_INT(sriov_devinfo_inspect(path, "0000:3b:00.2", prior, other, sizeof(other)), 0);
	CHECK(prior->text != NULL);
}

/* One writer between ADD's look and its exchange: its file comes back to the path, ours goes. */
static void test_write_one_writer(void)
{
	struct sriov_devinfo_prior prior;

	clear();
	prior_of(&prior);
	before[0] = writer_a;
	CHECK_INT(sriov_devinfo_write(path, ours, &prior), -EEXIST);
	CHECK_INT(where_is(text_a), 1);
	CHECK_INT(where_is(ours), 0);
	CHECK_INT(count(), 1);
	free(prior.text);
}

/*
 * A second writer between the exchange and the exchange back: its file
 * would come out under ADD's temporary name and be unlinked. Both stay:
 * the first one's at the path, the second one's beside it.
 */
static void test_write_two_writers(void)
{
	struct sriov_devinfo_prior prior;

	clear();
	prior_of(&prior);
	before[0] = writer_a;
	after[0] = writer_b;
	CHECK_INT(sriov_devinfo_write(path, ours, &prior), -EEXIST);
	CHECK_INT(where_is(text_a), 1);
	CHECK_INT(where_is(text_b), 2);
	CHECK_INT(where_is(ours), 0);
	CHECK_INT(count(), 2);
	free(prior.text);
	/* The same when the second one writes into the file at the path, ADD's own. */
	clear();
	prior_of(&prior);
	before[0] = writer_a;
	after[0] = writer_b_in_place;
	CHECK_INT(sriov_devinfo_write(path, ours, &prior), -EEXIST);
	CHECK_INT(where_is(text_a), 1);
	CHECK_INT(where_is(text_b), 2);
	CHECK_INT(count(), 2);
	free(prior.text);
	/* The path emptied in between: the first one's goes back to it. */
	clear();
	prior_of(&prior);
	before[0] = writer_a;
	after[0] = remover;
	CHECK_INT(sriov_devinfo_write(path, ours, &prior), -EEXIST);
	CHECK_INT(where_is(text_a), 1);
	CHECK_INT(count(), 1);
	free(prior.text);
}

/* ADD's undo puts the device plugin's copy back the same way: the same two writers. */
static void test_undo_two_writers(void)
{
	struct sriov_devinfo_prior prior;

	clear();
	prior_of(&prior);
	CHECK_INT(sriov_devinfo_write(path, ours, &prior), 0);
	stage();
	before[0] = writer_a;
	after[0] = writer_b;
	CHECK_INT(sriov_devinfo_remove(path, ours, "0000:3b:00.2", &prior), -EEXIST);
	CHECK_INT(where_is(text_a), 1);
	CHECK_INT(where_is(text_b), 2);
	CHECK_INT(where_is(dp), 0);
	CHECK_INT(count(), 2);
	free(prior.text);
	/* Without a race: the copy is back, nothing else left. */
	clear();
	prior_of(&prior);
	CHECK_INT(sriov_devinfo_write(path, ours, &prior), 0);
	CHECK_INT(sriov_devinfo_remove(path, ours, "0000:3b:00.2", &prior), 0);
	CHECK_INT(where_is(dp), 1);
	CHECK_INT(count(), 1);
	free(prior.text);
}

/*
 * DEL's removal: a writer after its look, a second one after it moved the
 * first one's out. The second keeps the path; the first one's is kept
 * beside it, not under a temporary name that the sweep removes.
 */
static void test_remove_two_writers(void)
{
	clear();
	CHECK_INT(sriov_devinfo_write(path, ours, NULL), 0);
	before[0] = writer_a;
	after[0] = writer_b;
	CHECK_INT(sriov_devinfo_remove(path, ours, "0000:3b:00.2", NULL), -EPERM);
	CHECK_INT(where_is(text_b), 1);
	CHECK_INT(where_is(text_a), 2);
	CHECK_INT(count(), 2);
	/* One writer: its file back at the path. */
	clear();
	CHECK_INT(sriov_devinfo_write(path, ours, NULL), 0);
	before[0] = writer_a;
	CHECK_INT(sriov_devinfo_remove(path, ours, "0000:3b:00.2", NULL), -EPERM);
	CHECK_INT(where_is(text_a), 1);
	CHECK_INT(count(), 1);
	/* None: ADD's file goes. */
	clear();
	CHECK_INT(sriov_devinfo_write(path, ours, NULL), 0);
	CHECK_INT(sriov_devinfo_remove(path, ours, "0000:3b:00.2", NULL), 0);
	CHECK_INT(count(), 0);
}

int main(void)
{
	char conf[256], cfgpath[128], cmd[128];
	int fd;

	snprintf(tmp, sizeof(tmp), "/tmp/test-devinfo.XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	snprintf(dir, sizeof(dir), "%s/devinfo", tmp);
	snprintf(path, sizeof(path), "%s/pod.json", dir);
	snprintf(cfgpath, sizeof(cfgpath), "%s/node-config.json", tmp);
	snprintf(conf, sizeof(conf), "{\"allowedDeviceInfoDirs\": [\"%s\"]}", dir);
	fd = open(cfgpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, conf, strlen(conf)) != (ssize_t)strlen(conf))
		return 1;
	close(fd);
	setenv("SRIOV_RDMA_CNI_NODE_CONFIG", cfgpath, 1);
	if (mkdir(dir, 0700) < 0)
		return 1;
	devfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	RUN(test_write_one_writer);
	RUN(test_write_two_writers);
	RUN(test_undo_two_writers);
	RUN(test_remove_two_writers);
	close(devfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_summary();
}
