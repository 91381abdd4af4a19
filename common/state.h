/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state: files that survive a crash at any instant.
 *
 * Every write goes to a temporary file that is fsync'd, then renamed (or
 * linked, for exclusive creation) into place, and the directory is fsync'd:
 * a reader sees the old content or the new, never a torn one. Files are
 * 0600, directories 0700, and no symlink is followed. Checksummed files end
 * in a line "#crc32=xxxxxxxx\n" over every byte before it.
 */
#ifndef STATE_H
#define STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#define STATE_MAX_FILE (1u << 20)
/*
 * A temporary file of a pid that is not alive is swept once it is this
 * old (seconds): younger, it may be a live writer's in another pid
 * namespace, which a write and an fsync take far less than.
 */
#define STATE_TMP_GRACE_S 600

/*
 * mkdir -p with 0700 for what it creates, then open it
 * O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC; a symlink anywhere below the existing
 * prefix is -ELOOP. Opened for writing, it is cleared of the temporary
 * files of writers killed before their rename (see STATE_TMP_GRACE_S).
 */
int state_dir_open(const char *path, int *dirfd);
/* The same for a directory that must exist already (-ENOENT): readers create nothing. */
int state_dir_open_existing(const char *path, int *dirfd);
/*
 * state_dir_open without the sweep, which reads every entry: for a
 * directory of many files whose writers keep their temporary files in a
 * subdirectory that the caller clears itself.
 */
int state_dir_open_unswept(const char *path, int *dirfd);
/* Same as state_dir_open, relative to a directory fd. */
int state_subdir_open(int dirfd, const char *name, int *subfd);
/* state_subdir_open without the sweep: for a directory the caller empties itself. */
int state_subdir_open_unswept(int dirfd, const char *name, int *subfd);

/* Temporary file in tmpdirfd, written (and fsync'd when durable); its name is returned in tmpname. */
int state_write_tmp(int tmpdirfd, const void *data, size_t len, char *tmpname, size_t tmpname_len,
		    bool durable);
/*
 * Replace dirfd/name atomically: tmp file, rename. durable adds an fsync of
 * the file before the rename and of the directory after; without it a
 * crash may leave a truncated file, so readers of non-durable files must
 * check them (state_seal) and cope with an unreadable one.
 */
int state_write_atomic(int dirfd, const char *name, const void *data, size_t len, bool durable);
/* Read a whole file (O_NOFOLLOW), NUL-terminated, at most max bytes: -ENOENT, -EFBIG. */
int state_read(int dirfd, const char *name, char **data, size_t *len, size_t max);
/* unlinkat; a missing file is success. */
int state_remove(int dirfd, const char *name);
int state_fsync_dir(int dirfd);

uint32_t state_crc32(const void *data, size_t len);
/* Append the checksum line to a serialised buffer (realloc'd). */
int state_seal(char **buf, size_t *len);
/* Verify and strip the checksum line in place: -EBADMSG when it is absent or wrong. */
int state_unseal(char *buf, size_t *len);

/* Checksummed JSON: write atomically, read and verify (-EBADMSG on a bad checksum or JSON). */
int state_write_json(int dirfd, const char *name, const cJSON *obj, bool durable);
int state_read_json(int dirfd, const char *name, cJSON **obj);

/*
 * Versions of what one release leaves for another (docs/upgrading.md): a
 * file says "version", the oldest format a reader must know to release
 * what it holds safely (a writer writes the lowest that is true of that
 * file, so a member an older reader may ignore raises nothing), and
 * "writtenBy", the release that wrote it. A reader of format N reads any
 * file up to N, ignoring members it does not know, and refuses a higher
 * one without touching anything it describes, naming who wrote it.
 */
#define STATE_WRITTEN_BY "sriov-rdma-cni " PROJECT_VERSION

struct state_version {
	int version;			/* 1 for a file that says none (before versions were kept) */
	char written_by[64];		/* "" for a file that says none */
};

/* "version" and "writtenBy" (STATE_WRITTEN_BY) into o: 0 or -ENOMEM. */
int state_version_put(cJSON *o, int version);
/*
 * The version of o (which required says must name one): 0 when this
 * reader, of format max, reads it; -EPROTO when it is newer (*v says by
 * whom); -EBADMSG when "version" is not a positive integer or "writtenBy"
 * not a short string.
 */
int state_version_get(const cJSON *o, int max, bool required, struct state_version *v);
/*
 * "<release that wrote it> as <what> version <N>; this sriov-rdma-cni
 * <ours> reads <what>s up to version <max>", for the message of a refusal.
 */
void state_version_format(const struct state_version *v, const char *what, int max, char *buf,
			  size_t len);

#endif
