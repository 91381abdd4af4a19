/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cni.h"
#include "cni_delegate.h"
#include "cni_result.h"
#include "valid.h"

extern char **environ;

static int find_plugin(const char *type, const char *cni_path, char *out, size_t size)
{
	const char *p = cni_path;

	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
		struct stat st;

		if (dlen && (size_t)snprintf(out, size, "%.*s/%s", (int)dlen, p, type) < size &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return -ENOENT;
}

/* Is kv ("KEY=value") one of set's keys? */
static bool key_set(const char *kv, char *const set[])
{
	size_t len = strcspn(kv, "=") + 1;

	for (; set && *set; set++)
		if (strncmp(kv, *set, len) == 0)
			return true;
	return false;
}

/*
 * environ with CNI_COMMAND replaced and each "KEY=value" of set (NULL:
 * none) in place of KEY's: an array of pointers into environ and set plus
 * one owned string.
 */
static char **child_env(const char *verb, char *const set[], char **owned)
{
	size_t n = 0, n_set = 0, j = 0;
	char **envp;

	while (environ[n])
		n++;
	while (set && set[n_set])
		n_set++;
	envp = calloc(n + n_set + 2, sizeof(*envp));
	if (!envp || asprintf(owned, "CNI_COMMAND=%s", verb) < 0) {
		free(envp);
		*owned = NULL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "CNI_COMMAND=", 12) != 0 && !key_set(environ[i], set))
			envp[j++] = environ[i];
	for (size_t i = 0; i < n_set; i++)
		envp[j++] = set[i];
	envp[j] = *owned;
	return envp;
}

/*
 * Feed stdin and collect stdout at the same time: a plugin may print before
 * it has read everything, and neither pipe holds a whole config.
 */
static int pump(int in_fd, const char *data, size_t len, int out_fd, char **out, size_t *out_len)
{
	size_t off = 0, n = 0, cap = 4096;
	char *b = malloc(cap + 1), *nb;
	int r = 0;

	if (!b)
		return -ENOMEM;
	if (in_fd >= 0 && len == 0) {
		close(in_fd);
		in_fd = -1;
	}
	while (out_fd >= 0) {
		struct pollfd pfd[2] = {
			{ .fd = out_fd, .events = POLLIN },
			{ .fd = in_fd, .events = POLLOUT },
		};
		ssize_t w;

		if (poll(pfd, in_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (in_fd >= 0 && pfd[1].revents) {
			w = write(in_fd, data + off, len - off);
			/* EPIPE: the plugin did not want its stdin, which is its right. */
			if (w > 0)
				off += (size_t)w;
			if ((w < 0 && errno != EINTR && errno != EAGAIN) || off == len) {
				close(in_fd);
				in_fd = -1;
			}
		}
		if (pfd[0].revents) {
			if (n == cap) {
				if (cap >= CNI_MAX_STDIN) {
					r = -EFBIG;
					break;
				}
				cap *= 2;
				nb = realloc(b, cap + 1);
				if (!nb) {
					r = -ENOMEM;
					break;
				}
				b = nb;
			}
			w = read(out_fd, b + n, cap - n);
			if (w < 0 && errno != EINTR && errno != EAGAIN) {
				r = -errno;
				break;
			}
			if (w == 0)
				break;
			if (w > 0)
				n += (size_t)w;
		}
	}
	if (in_fd >= 0)
		close(in_fd);
	if (r) {
		free(b);
		return r;
	}
	b[n] = '\0';
	*out = b;
	*out_len = n;
	return 0;
}

/*
 * A config that fits in the pipe goes in before the plugin starts: the
 * plugin then reads it without waiting for this process to be scheduled
 * again, which on a loaded node is a wait of a time slice, and pump() has
 * only its output to wait for. The bytes written (the pipe is empty and
 * blocking: all of them, unless a signal cut the write short).
 */
static size_t stdin_prefill(int fd, const char *data, size_t len)
{
	int cap = fcntl(fd, F_GETPIPE_SZ);
	ssize_t w;

	if (cap < 0 || len >= (size_t)cap || len == 0)
		return 0;
	w = write(fd, data, len);
	return w > 0 ? (size_t)w : 0;
}

/*
 * The child between fork and exec: only async-signal-safe calls. It dies
 * with this process: an IPAM left running after its caller was killed
 * could reserve an address after the runtime's DEL released the
 * attachment, for an attachment that no longer exists. PR_SET_PDEATHSIG
 * follows the thread that forked (this plugin has one) and survives the
 * exec of a plugin that is not set-user-ID; the getppid() check covers a
 * parent that died before the prctl. An errno goes back on err_fd, which
 * the exec closes.
 */
static void __attribute__((noreturn)) child_exec(const char *exe, char *const argv[],
						 char *const envp[], int in_fd, int out_fd,
						 int err_fd, pid_t parent)
{
	ssize_t w;
	int e;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		goto fail;
	if (getppid() != parent)
		_exit(127);
	/* dup2 onto itself keeps FD_CLOEXEC: clear it by hand then. */
	if ((in_fd == STDIN_FILENO ? fcntl(in_fd, F_SETFD, 0) : dup2(in_fd, STDIN_FILENO)) < 0 ||
	    (out_fd == STDOUT_FILENO ? fcntl(out_fd, F_SETFD, 0) : dup2(out_fd, STDOUT_FILENO)) < 0)
		goto fail;
	execve(exe, argv, envp);
fail:
	e = errno;
	w = write(err_fd, &e, sizeof(e));
	(void)w;
	_exit(127);
}

/*
 * fork, and exec exe in the child: 0, or -errno of the fork. Whether the
 * exec worked is read later from *exec_fd (exec_result), so the caller
 * works while the kernel loads the plugin: a fork and an exec cost
 * milliseconds, which the moves of ADD and DEL can hide.
 */
static int spawn(pid_t *pid, int *exec_fd, const char *exe, char *const argv[],
		 char *const envp[], int in_fd, int out_fd)
{
	pid_t parent = getpid(), child;
	int ep[2], e;

	if (pipe2(ep, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child == 0) {
		close(ep[0]);
		child_exec(exe, argv, envp, in_fd, out_fd, ep[1], parent);
	}
	e = errno;
	close(ep[1]);
	if (child < 0) {
		close(ep[0]);
		return -e;
	}
	*pid = child;
	*exec_fd = ep[0];
	return 0;
}

/* 0 once the child's exec took (it closed the pipe), or the errno it sent back. */
static int exec_result(int *exec_fd)
{
	ssize_t n;
	int e = 0;

	if (*exec_fd < 0)
		return 0;
	while ((n = read(*exec_fd, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(*exec_fd);
	*exec_fd = -1;
	return n == (ssize_t)sizeof(e) && e ? -e : 0;
}

static void delegate_failed(const char *type, int status, const char *out, struct cni_error *err)
{
	cJSON *o = cJSON_Parse(out);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "code");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "msg");
	const cJSON *details = cJSON_GetObjectItemCaseSensitive(o, "details");

	if (cJSON_IsNumber(code) && code->valueint > 0) {
		cni_errorf(err, code->valueint, "%s: %s", type,
			   cJSON_IsString(msg) ? msg->valuestring : "failed");
		if (cJSON_IsString(details) && details->valuestring[0])
			cni_error_details(err, "%s", details->valuestring);
	} else {
		size_t line = strcspn(out, "\n");

		cni_errorf(err, CNI_ERR_PLUGIN, "%s failed with exit status %d%s%.*s", type, status,
			   line ? ": " : " and no output", (int)(line > 200 ? 200 : line), out);
	}
	cJSON_Delete(o);
}

static int delegate_result(const char *type, const char *out, struct cni_result *res,
			   struct cni_error *err)
{
	struct cni_error perr = { 0 };
	cJSON *o = cJSON_Parse(out);
	int r;

	if (!o)
		return cni_errorf(err, CNI_ERR_DECODE, "%s: its result is not JSON (output starts \"%.40s\")",
				  type, out);
	r = cni_result_parse(o, res, &perr);
	cJSON_Delete(o);
	if (r)
		return cni_errorf(err, CNI_ERR_DECODE, "%s: invalid %s", type, perr.msg);
	return 0;
}

static int delegate_start(const struct cni_request *req, const char *type, enum cni_cmd cmd,
			  char *const env_set[], struct cni_delegation *d, struct cni_error *err)
{
	char *owned = NULL, **envp = NULL;
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 }, r, ret = -1;
	char *argv[2];
	const char *data;
	pid_t pid = 0;

	memset(d, 0, sizeof(*d));
	d->in_fd = d->out_fd = d->exec_fd = -1;
	if (!type || !valid_plugin_type(type))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "plugin type \"%s\" is invalid: it must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
				  type ? type : "");
	if (find_plugin(type, req->env.path, d->exe, sizeof(d->exe)))
		return cni_errorf(err, CNI_ERR_INVALID_CONFIG,
				  "plugin type \"%s\": no executable of that name in CNI_PATH \"%s\"",
				  type, req->env.path ? req->env.path : "");
	envp = child_env(cni_cmd_name(cmd), env_set, &owned);
	if (!envp)
		return cni_errorf(err, CNI_ERR_PLUGIN, "%s: out of memory", type);
	if (pipe2(in, O_CLOEXEC) || pipe2(outp, O_CLOEXEC)) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: pipe: %s", type, strerror(errno));
		goto out;
	}
	data = req->stdin_buf ? req->stdin_buf : "";
	d->fed = stdin_prefill(in[1], data, req->stdin_len);
	if (d->fed == req->stdin_len) {
		close(in[1]);
		in[1] = -1;
	}
	argv[0] = (char *)type;
	argv[1] = NULL;
	r = spawn(&pid, &d->exec_fd, d->exe, argv, envp, in[0], outp[1]);
	if (r) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: cannot run %s: %s", type, d->exe, strerror(-r));
		goto out;
	}
	if (in[1] >= 0)
		fcntl(in[1], F_SETFL, O_NONBLOCK);
	d->req = req;
	d->type = type;
	d->cmd = cmd;
	d->pid = pid;
	d->in_fd = in[1];
	d->out_fd = outp[0];
	in[1] = outp[0] = -1;
	ret = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	free(owned);
	free(envp);
	return ret;
}

int cni_delegate_start(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		       struct cni_delegation *d, struct cni_error *err)
{
	return delegate_start(req, type, cmd, NULL, d, err);
}

int cni_delegate_finish(struct cni_delegation *d, struct cni_result *res, struct cni_error *err)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	const char *type = d->type, *data;
	char *out = NULL;
	size_t out_len;
	int status, r, ret = -1;

	if (d->pid <= 0)
		return cni_errorf(err, CNI_ERR_PLUGIN, "no delegated plugin is running");
	r = exec_result(&d->exec_fd);
	if (r) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: cannot run %s: %s", type, d->exe, strerror(-r));
		if (d->in_fd >= 0)
			close(d->in_fd);
		close(d->out_fd);
		d->in_fd = d->out_fd = -1;
		while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
			;
		d->pid = 0;
		return -1;
	}
	d->ran = true;
	data = d->req->stdin_buf ? d->req->stdin_buf : "";
	sigaction(SIGPIPE, &ign, &old_pipe);
	r = pump(d->in_fd, data + d->fed, d->req->stdin_len - d->fed, d->out_fd, &out, &out_len);
	sigaction(SIGPIPE, &old_pipe, NULL);
	d->in_fd = -1;
	close(d->out_fd);
	d->out_fd = -1;

	while (waitpid(d->pid, &status, 0) < 0)
		if (errno != EINTR) {
			cni_errorf(err, CNI_ERR_PLUGIN, "%s: waitpid: %s", type, strerror(errno));
			goto out;
		}
	if (r == -EFBIG) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: printed more than 1 MiB", type);
		goto out;
	}
	if (r) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s: reading its output: %s", type, strerror(-r));
		goto out;
	}
	if (WIFSIGNALED(status)) {
		cni_errorf(err, CNI_ERR_PLUGIN, "%s was killed by signal %d (%s)", type,
			   WTERMSIG(status), strsignal(WTERMSIG(status)));
		goto out;
	}
	if (WEXITSTATUS(status) != 0) {
		delegate_failed(type, WEXITSTATUS(status), out, err);
		goto out;
	}
	if (d->cmd == CNI_CMD_ADD && res && delegate_result(type, out, res, err))
		goto out;
	ret = 0;
out:
	d->pid = 0;
	free(out);
	return ret;
}

void cni_delegate_abandon(struct cni_delegation *d)
{
	struct cni_error ignored = { 0 };

	if (d->pid > 0)
		cni_delegate_finish(d, NULL, &ignored);
}

int cni_delegate_env(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		     char *const env_set[], struct cni_result *res, struct cni_error *err)
{
	struct cni_delegation d;

	if (delegate_start(req, type, cmd, env_set, &d, err))
		return -1;
	return cni_delegate_finish(&d, res, err);
}

int cni_delegate(const struct cni_request *req, const char *type, enum cni_cmd cmd,
		 struct cni_result *res, struct cni_error *err)
{
	return cni_delegate_env(req, type, cmd, NULL, res, err);
}
