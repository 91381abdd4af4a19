/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cni_delegate: run another plugin (the IPAM) as the runtime would, through
 * CNI_PATH, and read its answer.
 */
#ifndef CNI_DELEGATE_H
#define CNI_DELEGATE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cni.h"

/*
 * Run plugin `type` found in CNI_PATH with the request's env, CNI_COMMAND
 * replaced by `cmd`, and the request's stdin. Its stderr passes through.
 * On ADD, *res (if not NULL) gets the parsed result. A failing delegate's
 * error object is propagated into *err with its code, its msg prefixed
 * by the plugin name.
 */
int cni_delegate(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		 struct cni_result *res, struct cni_error *err);

/*
 * The same for another attachment than the request's: each "KEY=value" of
 * env_set (NULL-terminated) stands in for KEY in the plugin's environment
 * (CNI_CONTAINERID, CNI_IFNAME, CNI_NETNS, CNI_ARGS), and req's stdin is
 * that attachment's config.
 */
int cni_delegate_env(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		     char *const env_set[], struct cni_result *res, struct cni_error *err);

/*
 * The same in two halves, so the caller can work while the plugin runs:
 * start spawns it with its stdin written (or, for a config larger than a
 * pipe, left for finish to write), finish reads its answer and reaps it.
 * A started delegation must be finished (or abandoned: finished, answer
 * dropped), once. d->pid is 0 when none is running.
 */
struct cni_delegation {
	const struct cni_request *req;
	const char *type;
	enum cni_cmd cmd;
	pid_t pid;
	int in_fd;		/* what did not fit in the pipe at start, or -1 */
	int out_fd;
	int exec_fd;		/* the child's exec: closed when it took, an errno if not */
	size_t fed;
	bool ran;		/* its exec took: it may have acted, whatever it answered */
	char exe[PATH_MAX];	/* the plugin found in CNI_PATH */
};

int cni_delegate_start(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		       struct cni_delegation *d, struct cni_error *err);
int cni_delegate_finish(struct cni_delegation *d, struct cni_result *res, struct cni_error *err);
void cni_delegate_abandon(struct cni_delegation *d);

#endif
