/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* CURLOPT_PROTOCOLS, deprecated in 7.85, is what an older libcurl knows. */
#define CURL_DISABLE_DEPRECATION
#include <curl/curl.h>

#include "file.h"

#include "kube.h"

#define KUBE_MAX_REPLY	(8u << 20)
#define KUBE_MAX_URL	4096

/* ------------------------------------------------------------------ */
/* libcurl, loaded on first use */

static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	/* 0 before the one load, then its outcome for every later caller: 1, or -errno and why. */
	int state;
	char error[KUBE_ERRLEN];
} cu;

static void cu_load(void)
{
	static const char *const names[] = {
		"curl_global_init", "curl_easy_init", "curl_easy_setopt", "curl_easy_perform",
		"curl_easy_getinfo", "curl_easy_cleanup", "curl_easy_strerror",
		"curl_slist_append", "curl_slist_free_all",
	};
	void *syms[sizeof(names) / sizeof(names[0])];

	cu.state = kube_lib_open("libcurl.so.4", names, sizeof(names) / sizeof(names[0]), syms,
				 cu.error, sizeof(cu.error));
	if (cu.state < 0)
		return;
	cu.global_init = (CURLcode (*)(long))syms[0];
	cu.easy_init = (CURL *(*)(void))syms[1];
	cu.easy_setopt = (CURLcode (*)(CURL *, CURLoption, ...))syms[2];
	cu.easy_perform = (CURLcode (*)(CURL *))syms[3];
	cu.easy_getinfo = (CURLcode (*)(CURL *, CURLINFO, ...))syms[4];
	cu.easy_cleanup = (void (*)(CURL *))syms[5];
	cu.easy_strerror = (const char *(*)(CURLcode))syms[6];
	cu.slist_append = (struct curl_slist *(*)(struct curl_slist *, const char *))syms[7];
	cu.slist_free_all = (void (*)(struct curl_slist *))syms[8];
	if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(cu.error, sizeof(cu.error), "curl_global_init failed");
		cu.state = -ENOMEM;
		return;
	}
	cu.state = 1;
}

struct sink {
	char *buf;
	size_t len, cap;
	bool too_big, oom;
};

static size_t sink_write(char *data, size_t size, size_t nmemb, void *user)
{
	struct sink *s = user;
	size_t add = size * nmemb, cap;
	char *nbuf;

	if (add > KUBE_MAX_REPLY - s->len) {
		s->too_big = true;
		return 0;
	}
	if (s->len + add + 1 > s->cap) {
		cap = s->cap ? s->cap : 16384;
		while (cap < s->len + add + 1)
			cap *= 2;
		nbuf = realloc(s->buf, cap);
		if (!nbuf) {
			s->oom = true;
			return 0;
		}
		s->buf = nbuf;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, add);
	s->len += add;
	s->buf[s->len] = '\0';
	return add;
}

static int errno_of(CURLcode rc, const struct sink *s)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2_STREAM:
		return -ECONNRESET;
	case CURLE_FILESIZE_EXCEEDED:
		return -EFBIG;
	case CURLE_WRITE_ERROR:
		return s->too_big ? -EFBIG : s->oom ? -ENOMEM : -EIO;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_UNKNOWN_OPTION:
	case CURLE_NOT_BUILT_IN:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return -ENOSYS;
	default:
		return -EPROTO;
	}
}

static const char *hint_of(int r)
{
	switch (r) {
	case -ETIMEDOUT:
		return "the API server did not answer in time";
	case -ECONNREFUSED:
		return "check the kubeconfig's server address and that the API server is up";
	case -ECONNRESET:
		return "the connection was dropped before a whole answer came";
	case -EFBIG:
		return "the answer is larger than 8 MiB";
	case -ENOSYS:
		return "libcurl 7.61 or later is needed (package libcurl4, or libcurl on Oracle Linux and RHEL)";
	case -EPROTO:
		return "check the certificate authority and client certificate in the kubeconfig";
	default:
		return "";
	}
}

/* Print text as one line: curl's messages sometimes end in a newline. */
static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

static bool valid_path(const char *p)
{
	if (*p != '/')
		return false;
	for (; *p; p++)
		if (*p < 0x21 || *p > 0x7e || *p == '#')
			return false;
	return true;
}

/* Wipe and free the header list: one entry holds the token. */
static void free_headers(struct curl_slist *h)
{
	struct curl_slist *e;

	for (e = h; e; e = e->next)
		explicit_bzero(e->data, strlen(e->data));
	cu.slist_free_all(h);
}

/* One GET: what its steps share. */
struct request {
	char url[KUBE_MAX_URL];
	char errbuf[CURL_ERROR_SIZE];
	struct curl_slist *headers;
	char *auth;			/* "Authorization: Bearer <token>" */
	size_t auth_len;
	struct curl_blob blob[3];	/* CA, client certificate, key */
	int memfd[3];			/* their copies for a libcurl without blobs, or -1 */
	char memfd_path[3][32];
	struct sink sink;
};

static int request_url(struct request *rq, const struct kube_config *kc, const char *path,
		       long timeout_ms, char *err, size_t errlen)
{
	int n;

	if (!path || !valid_path(path))
		return kube_fail(err, errlen, -EINVAL, "API path \"%s\": want an absolute path without "
			    "spaces", path ? path : "");
	if (timeout_ms <= 0)
		return kube_fail(err, errlen, -EINVAL, "API timeout %ld ms: want more than 0",
			    timeout_ms);
	n = snprintf(rq->url, sizeof(rq->url), "%s%s", kc->server, path);
	if (n < 0 || (size_t)n >= sizeof(rq->url))
		return kube_fail(err, errlen, -ENAMETOOLONG, "API URL longer than %d characters",
			    KUBE_MAX_URL - 1);
	return 0;
}

static int request_headers(struct request *rq, const struct kube_config *kc)
{
	struct curl_slist *h;

	h = cu.slist_append(NULL, "Accept: application/json");
	if (!h)
		return -ENOMEM;
	rq->headers = h;
	if (!kc->token)
		return 0;
	rq->auth_len = strlen("Authorization: Bearer ") + strlen(kc->token) + 1;
	rq->auth = malloc(rq->auth_len);
	if (!rq->auth)
		return -ENOMEM;
	snprintf(rq->auth, rq->auth_len, "Authorization: Bearer %s", kc->token);
	h = cu.slist_append(rq->headers, rq->auth);
	if (!h)
		return -ENOMEM;
	rq->headers = h;
	return 0;
}

/*
 * A PEM blob for BLOB_OPT, or, where libcurl predates it (CAINFO_BLOB came in
 * 7.77, SSLCERT_BLOB and SSLKEY_BLOB in 7.71; Oracle Linux 8 ships 7.61) or
 * its TLS backend takes none, the same bytes as FILE_OPT's file: a memfd's
 * /proc path, so that a key never reaches a disk.
 */
static CURLcode request_pem(CURL *curl, struct request *rq, int i, CURLoption blob_opt,
			    CURLoption file_opt, char *data, size_t len)
{
	CURLcode rc;

	rq->blob[i] = (struct curl_blob){ data, len, CURL_BLOB_NOCOPY };
	rc = cu.easy_setopt(curl, blob_opt, &rq->blob[i]);
	if (rc == CURLE_OK)
		/* The blob alone: no file beside it (for the CA, the system store's). */
		return cu.easy_setopt(curl, file_opt, NULL);
	if (rc != CURLE_UNKNOWN_OPTION && rc != CURLE_NOT_BUILT_IN)
		return rc;
	rq->memfd[i] = memfd_create("pool-ipam-pem", MFD_CLOEXEC);
	if (rq->memfd[i] < 0)
		return rc;
	if (file_write_all(rq->memfd[i], data, len) < 0)
		return CURLE_OUT_OF_MEMORY;
	snprintf(rq->memfd_path[i], sizeof(rq->memfd_path[i]), "/proc/self/fd/%d", rq->memfd[i]);
	return cu.easy_setopt(curl, file_opt, rq->memfd_path[i]);
}

static CURLcode request_options(CURL *curl, struct request *rq, const struct kube_config *kc,
				long timeout_ms)
{
	CURLcode rc;

#define SETOPT(opt, val) do {							\
		rc = cu.easy_setopt(curl, opt, val);				\
		if (rc != CURLE_OK)						\
			return rc;						\
	} while (0)
	SETOPT(CURLOPT_URL, rq->url);
	rc = cu.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
	if (rc == CURLE_UNKNOWN_OPTION)
		rc = cu.easy_setopt(curl, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTPS);
	if (rc != CURLE_OK)
		return rc;
	SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
	SETOPT(CURLOPT_NOSIGNAL, 1L);
	SETOPT(CURLOPT_TIMEOUT_MS, timeout_ms);
	SETOPT(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	/* One request per process: HTTP/2's multiplexing buys nothing here. */
	SETOPT(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	SETOPT(CURLOPT_HTTPHEADER, rq->headers);
	SETOPT(CURLOPT_USERAGENT, "sriov-rdma-cni/" PROJECT_VERSION);
	SETOPT(CURLOPT_ERRORBUFFER, rq->errbuf);
	SETOPT(CURLOPT_WRITEFUNCTION, sink_write);
	SETOPT(CURLOPT_WRITEDATA, &rq->sink);
	SETOPT(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)KUBE_MAX_REPLY);
	if (kc->insecure) {
		SETOPT(CURLOPT_SSL_VERIFYPEER, 0L);
		SETOPT(CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (kc->ca) {
		/* The cluster's CA alone: a certificate the system store trusts is no API server. */
		rc = request_pem(curl, rq, 0, CURLOPT_CAINFO_BLOB, CURLOPT_CAINFO, kc->ca, kc->ca_len);
		if (rc != CURLE_OK)
			return rc;
		SETOPT(CURLOPT_CAPATH, NULL);
	}
	if (kc->cert) {
		/* NOCOPY: the key stays in memory we wipe, not in a copy inside curl. */
		rc = request_pem(curl, rq, 1, CURLOPT_SSLCERT_BLOB, CURLOPT_SSLCERT, kc->cert,
				 kc->cert_len);
		if (rc == CURLE_OK)
			rc = request_pem(curl, rq, 2, CURLOPT_SSLKEY_BLOB, CURLOPT_SSLKEY, kc->key,
					 kc->key_len);
		if (rc != CURLE_OK)
			return rc;
		SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
		SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
	}
#undef SETOPT
	return CURLE_OK;
}

static int request_failed(struct request *rq, CURLcode rc, long timeout_ms, char *err,
			  size_t errlen)
{
	int ret = errno_of(rc, &rq->sink);

	if (!rq->errbuf[0])
		snprintf(rq->errbuf, sizeof(rq->errbuf), "%s", cu.easy_strerror(rc));
	one_line(rq->errbuf);
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return kube_fail(err, errlen, ret, "GET %s: no answer within %ld ms; %s", rq->url,
				 timeout_ms, hint_of(ret));
	return kube_fail(err, errlen, ret, "GET %s: %s; %s", rq->url, rq->errbuf, hint_of(ret));
}

int kube_get(const struct kube_config *kc, const char *path, long timeout_ms,
	     struct kube_reply *r, char *err, size_t errlen)
{
	struct request rq = { .memfd = { -1, -1, -1 } };
	CURLcode rc;
	CURL *curl;
	int ret, i;

	memset(r, 0, sizeof(*r));
	ret = request_url(&rq, kc, path, timeout_ms, err, errlen);
	if (ret < 0)
		return ret;
	/* One thread: a flag, not pthread_once (in libpthread.so.0 before glibc 2.34). */
	if (!cu.state)
		cu_load();
	if (cu.state < 0)
		return kube_fail(err, errlen, cu.state, "cannot load libcurl (%s): install libcurl4 "
			    "to read from the Kubernetes API server", cu.error);
	curl = cu.easy_init();
	if (!curl)
		return kube_fail(err, errlen, -ENOMEM, "GET %s: curl_easy_init failed", rq.url);
	if (request_headers(&rq, kc) < 0)
		goto oom;
	rc = request_options(curl, &rq, kc, timeout_ms);
	if (rc == CURLE_OK)
		rc = cu.easy_perform(curl);
	if (rc != CURLE_OK) {
		ret = request_failed(&rq, rc, timeout_ms, err, errlen);
		goto out;
	}
	cu.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
	if (!rq.sink.buf && !(rq.sink.buf = calloc(1, 1)))
		goto oom;
	r->body = rq.sink.buf;
	r->len = rq.sink.len;
	rq.sink.buf = NULL;
	goto out;

oom:
	ret = kube_fail(err, errlen, -ENOMEM, "GET %s: out of memory", rq.url);
out:
	free(rq.sink.buf);
	if (rq.headers)
		free_headers(rq.headers);
	kube_secret_free(&rq.auth, rq.auth_len);
	cu.easy_cleanup(curl);
	for (i = 0; i < 3; i++)
		if (rq.memfd[i] >= 0)
			close(rq.memfd[i]);
	return ret;
}

void kube_reply_free(struct kube_reply *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}
