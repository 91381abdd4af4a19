/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "kube.h"

static char root[64];
static char err[KUBE_ERRLEN];

#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIBcluster+CA/\n-----END CERTIFICATE-----\n"
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nMIIBnode+cert/\n-----END CERTIFICATE-----\n"
#define KEY_PEM "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIkey=\n-----END EC PRIVATE KEY-----\n"

/* Written in the test's directory (relative name) or anywhere (absolute). */
static void write_file(const char *name, const char *content)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(content, f);
	fclose(f);
}

static char *path_of(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	return path;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Padded base64 of s, as kubectl writes *-data fields; returns a static buffer. */
static const char *base64(const char *s)
{
	static char out[1024];
	size_t n = strlen(s), i, o = 0;

	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

/* A kubeconfig with one cluster, one user and one context; the parts are YAML lines. */
static void write_kubeconfig(const char *name, const char *cluster, const char *user)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
		 "apiVersion: v1\n"
		 "kind: Config\n"
		 "clusters:\n"
		 "- name: c\n"
		 "  cluster:\n%s"
		 "users:\n"
		 "- name: u\n"
		 "  user:\n%s"
		 "contexts:\n"
		 "- name: ctx\n"
		 "  context:\n"
		 "    cluster: c\n"
		 "    user: u\n"
		 "current-context: ctx\n", cluster, user);
	write_file(name, buf);
}

#define SERVER "    server: https://10.0.0.1:6443\n"
#define TOKEN "    token: abc.def-ghi\n"

static int load(const char *name, struct kube_config *kc)
{
	err[0] = '\0';
	return kube_config_load(path_of(name), kc, err, sizeof(err));
}

static void test_inline_data(void)
{
	struct kube_config kc;
	char cluster[512], user[1024];

	snprintf(cluster, sizeof(cluster),
		 "    server: https://api.example.org:6443/\n"
		 "    certificate-authority-data: %s\n", base64(CA_PEM));
	snprintf(user, sizeof(user), "    client-certificate-data: %s\n", base64(CERT_PEM));
	snprintf(user + strlen(user), sizeof(user) - strlen(user),
		 "    client-key-data: %s\n", base64(KEY_PEM));
	write_kubeconfig("inline", cluster, user);
	CHECK_INT(load("inline", &kc), 0);
	CHECK_STR(kc.server, "https://api.example.org:6443");
	CHECK_STR(kc.ca, CA_PEM);
	CHECK_INT(kc.ca_len, strlen(CA_PEM));
	CHECK_STR(kc.cert, CERT_PEM);
	CHECK_INT(kc.cert_len, strlen(CERT_PEM));
	CHECK_STR(kc.key, KEY_PEM);
	CHECK_INT(kc.key_len, strlen(KEY_PEM));
	CHECK(!kc.token);
	CHECK(!kc.insecure);
	kube_config_free(&kc);
	CHECK(!kc.ca && !kc.cert && !kc.key && !kc.token && !kc.server[0]);
}

/* Every padding length decodes to the bytes encoded. */
static void test_base64_lengths(void)
{
	const char *pems[] = { CA_PEM, CA_PEM "x", CA_PEM "xy" };
	struct kube_config kc;
	char cluster[512];
	size_t i;

	for (i = 0; i < 3; i++) {
		snprintf(cluster, sizeof(cluster), SERVER "    certificate-authority-data: %s\n",
			 base64(pems[i]));
		write_kubeconfig("pad", cluster, TOKEN);
		CHECK_INT(load("pad", &kc), 0);
		CHECK_STR(kc.ca, pems[i]);
		CHECK_INT(kc.ca_len, strlen(pems[i]));
		kube_config_free(&kc);
	}
}

static void test_files_relative_to_kubeconfig(void)
{
	struct kube_config kc;
	char user[512];

	CHECK_INT(mkdir(path_of("etc"), 0700), 0);
	CHECK_INT(mkdir(path_of("etc/pki"), 0700), 0);
	write_file("etc/pki/ca.crt", CA_PEM);
	write_file("etc/pki/node.crt", CERT_PEM);
	write_file("node.key", KEY_PEM);
	/* Relative to the kubeconfig's directory, not to the working directory; absolute as is. */
	snprintf(user, sizeof(user),
		 "    client-certificate: pki/node.crt\n"
		 "    client-key: %s\n", path_of("node.key"));
	write_kubeconfig("etc/kubeconfig",
			 SERVER "    certificate-authority: pki/ca.crt\n", user);
	CHECK_INT(load("etc/kubeconfig", &kc), 0);
	CHECK_STR(kc.ca, CA_PEM);
	CHECK_STR(kc.cert, CERT_PEM);
	CHECK_STR(kc.key, KEY_PEM);
	CHECK(!kc.token);
	kube_config_free(&kc);

	write_kubeconfig("etc/missing", SERVER "    certificate-authority: pki/nope.crt\n", TOKEN);
	CHECK_INT(load("etc/missing", &kc), -ENOENT);
	CHECK_HAS(err, "clusters[0].cluster.certificate-authority");
	CHECK_HAS(err, "etc/pki/nope.crt");
	CHECK_HAS(err, "No such file");
}

static void test_token_file(void)
{
	struct kube_config kc;

	write_file("token", "eyJhbGciOiJSUzI1NiJ9.payload.sig\n");
	write_kubeconfig("tf", SERVER, "    tokenFile: token\n");
	CHECK_INT(load("tf", &kc), 0);
	CHECK_STR(kc.token, "eyJhbGciOiJSUzI1NiJ9.payload.sig");
	kube_config_free(&kc);

	write_file("token", "\n  \n");
	CHECK_INT(load("tf", &kc), -EINVAL);
	CHECK_HAS(err, "users[0].user.tokenFile \"token\": empty");

	/* A token that would split the header line; the message must not show it. */
	write_file("token", "secret\r\nX-Injected: 1\n");
	CHECK_INT(load("tf", &kc), -EINVAL);
	CHECK_HAS(err, "tokenFile");
	CHECK(!strstr(err, "secret"));

	write_kubeconfig("tf2", SERVER, "    token: abc\n    tokenFile: token\n");
	CHECK_INT(load("tf2", &kc), -EINVAL);
	CHECK_HAS(err, "users[0].user: both token and tokenFile are set");
}

static const char two_contexts[] =
	"clusters:\n"
	"- name: prod\n"
	"  cluster: {server: 'https://prod:6443', insecure-skip-tls-verify: true}\n"
	"- name: lab\n"
	"  cluster: {server: \"https://lab:6443\", insecure-skip-tls-verify: false}\n"
	"users:\n"
	"- name: prod-node\n"
	"  user: {token: prod-token}\n"
	"- name: lab-node\n"
	"  user: {token: lab-token}\n"
	"contexts:\n"
	"- name: prod\n"
	"  context: {cluster: prod, user: prod-node}\n"
	"- name: lab\n"
	"  context: {cluster: lab, user: lab-node, namespace: nvidia-network-operator}\n";

static void test_current_context(void)
{
	struct kube_config kc;
	char buf[2048];

	snprintf(buf, sizeof(buf), "%scurrent-context: lab\n", two_contexts);
	write_file("two", buf);
	CHECK_INT(load("two", &kc), 0);
	CHECK_STR(kc.server, "https://lab:6443");
	CHECK_STR(kc.token, "lab-token");
	CHECK(!kc.insecure);
	kube_config_free(&kc);

	snprintf(buf, sizeof(buf), "current-context: prod\n%s", two_contexts);
	write_file("two", buf);
	CHECK_INT(load("two", &kc), 0);
	CHECK_STR(kc.server, "https://prod:6443");
	CHECK_STR(kc.token, "prod-token");
	CHECK(kc.insecure);
	CHECK(!kc.ca);
	kube_config_free(&kc);

	snprintf(buf, sizeof(buf), "%scurrent-context: staging\n", two_contexts);
	write_file("two", buf);
	CHECK_INT(load("two", &kc), -ENOENT);
	CHECK_HAS(err, "current-context \"staging\": no such entry in contexts");

	/* Two contexts and none chosen: guessing could talk to the wrong cluster. */
	write_file("two", two_contexts);
	CHECK_INT(load("two", &kc), -EINVAL);
	CHECK_HAS(err, "current-context: not set and there are 2 contexts");
}

static void test_one_context_fallback(void)
{
	struct kube_config kc;

	write_file("one",
		   "clusters: [{name: c, cluster: {server: 'https://one:443'}}]\n"
		   "users: [{name: u, user: {token: t1}}]\n"
		   "contexts: [{name: only, context: {cluster: c, user: u}}]\n"
		   "current-context: \"\"\n");
	CHECK_INT(load("one", &kc), 0);
	CHECK_STR(kc.server, "https://one:443");
	CHECK_STR(kc.token, "t1");
	/* No CA: the system's trust store verifies the server. */
	CHECK(!kc.ca && !kc.insecure);
	kube_config_free(&kc);
}

static void expect_refused(const char *cluster, const char *user, int want, const char *msg)
{
	struct kube_config kc;

	write_kubeconfig("refused", cluster, user);
	CHECK_INT(load("refused", &kc), want);
	CHECK_HAS(err, path_of("refused"));
	CHECK_HAS(err, msg);
	/* Nothing is left allocated on failure. */
	CHECK(!kc.ca && !kc.cert && !kc.key && !kc.token);
}

static void test_refusals(void)
{
	char cluster[512];

	expect_refused(SERVER,
		       "    exec:\n"
		       "      apiVersion: client.authentication.k8s.io/v1\n"
		       "      command: aws\n", -EOPNOTSUPP,
		       "users[0].user: \"exec\" credential plugins are not supported; use a "
		       "service-account token (token or tokenFile) or client-certificate-data");
	expect_refused(SERVER, "    auth-provider: {name: oidc}\n", -EOPNOTSUPP,
		       "users[0].user: \"auth-provider\" plugins are not supported");
	expect_refused(SERVER, "    username: admin\n    password: hunter2\n", -EOPNOTSUPP,
		       "basic authentication");
	expect_refused(SERVER, TOKEN "    as: system:admin\n", -EOPNOTSUPP,
		       "users[0].user.as: impersonation is not supported");
	expect_refused("    server: http://10.0.0.1:8080\n", TOKEN, -EINVAL,
		       "clusters[0].cluster.server \"http://10.0.0.1:8080\": plain http is refused");
	expect_refused("    server: 10.0.0.1:6443\n", TOKEN, -EINVAL, "want https://host:port");
	expect_refused("    insecure-skip-tls-verify: true\n", TOKEN, -EINVAL,
		       "clusters[0].cluster.server: not set");
	expect_refused(SERVER "    insecure-skip-tls-verify: maybe\n", TOKEN, -EINVAL,
		       "insecure-skip-tls-verify \"maybe\": want true or false");
	expect_refused(SERVER "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJU*\n", TOKEN,
		       -EINVAL, "clusters[0].cluster.certificate-authority-data: not valid base64");
	expect_refused(SERVER "    certificate-authority-data: LS0tLS1CRUdJTg\n", TOKEN,
		       -EINVAL, "certificate-authority-data: not valid base64");
	expect_refused(SERVER "    certificate-authority-data: aGVsbG8=\n", TOKEN, -EINVAL,
		       "certificate-authority-data: holds no PEM block");
	snprintf(cluster, sizeof(cluster), SERVER "    insecure-skip-tls-verify: true\n"
		 "    certificate-authority-data: %s\n", base64(CA_PEM));
	expect_refused(cluster, TOKEN, -EINVAL, "insecure-skip-tls-verify with a certificate "
		       "authority");
	snprintf(cluster, sizeof(cluster), SERVER "    certificate-authority: ca.crt\n"
		 "    certificate-authority-data: %s\n", base64(CA_PEM));
	expect_refused(cluster, TOKEN, -EINVAL,
		       "both certificate-authority and certificate-authority-data are set");
	expect_refused(SERVER, "    {}\n", -EINVAL, "users[0].user: no credentials");
	expect_refused(SERVER, "    token: null\n", -EINVAL, "users[0].user: no credentials");
	expect_refused(SERVER, "    token: \"a b\"\n", -EINVAL,
		       "users[0].user.token: contains spaces");
	write_file("lone.crt", CERT_PEM);
	expect_refused(SERVER, "    client-certificate: lone.crt\n", -EINVAL, "set client-key");
	expect_refused(SERVER, "    client-certificate: /dev/null\n", -EINVAL,
		       "client-certificate \"/dev/null\": not a regular file");
	expect_refused(SERVER, "    tokenFile: .\n", -EISDIR, "users[0].user.tokenFile");
	expect_refused(SERVER "    proxy-url: http://proxy:3128\n", TOKEN, -EOPNOTSUPP,
		       "clusters[0].cluster.proxy-url: not supported");
}

static void test_missing_entries(void)
{
	struct kube_config kc;

	write_file("dangling",
		   "clusters: [{name: other, cluster: {server: 'https://x'}}]\n"
		   "users: [{name: u, user: {token: t}}]\n"
		   "contexts: [{name: ctx, context: {cluster: c, user: u}}]\n"
		   "current-context: ctx\n");
	CHECK_INT(load("dangling", &kc), -ENOENT);
	CHECK_HAS(err, "contexts[0].context.cluster \"c\": no such entry in clusters");

	write_file("dangling",
		   "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
		   "contexts: [{name: ctx, context: {cluster: c, user: u}}]\n");
	CHECK_INT(load("dangling", &kc), -ENOENT);
	CHECK_HAS(err, "contexts[0].context.user \"u\": no such entry in users");

	write_file("dangling",
		   "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
		   "contexts: [{name: ctx, context: {cluster: c}}]\n");
	CHECK_INT(load("dangling", &kc), -EINVAL);
	CHECK_HAS(err, "contexts[0].context.user: not set");

	write_file("dangling", "clusters: [\n");
	CHECK_INT(load("dangling", &kc), -EINVAL);
	CHECK_HAS(err, "line 2 column 1");
	CHECK_HAS(err, "fix the YAML");

	write_file("dangling", "- just\n- a list\n");
	CHECK_INT(load("dangling", &kc), -EINVAL);
	CHECK_HAS(err, "not a kubeconfig");

	CHECK_INT(load("nothing-here", &kc), -ENOENT);
	CHECK_HAS(err, "nothing-here: No such file");
}

/* kubectl config view -o json output, and YAML's block and quoted styles. */
static void test_quoting_styles(void)
{
	struct kube_config kc;
	char buf[4096], folded[256];
	const char *enc = base64(CA_PEM);

	snprintf(buf, sizeof(buf),
		 "{\n"
		 "  \"kind\": \"Config\",\n"
		 "  \"apiVersion\": \"v1\",\n"
		 "  \"preferences\": {},\n"
		 "  \"clusters\": [\n"
		 "    {\"name\": \"kubernetes\", \"cluster\": {\n"
		 "      \"server\": \"https://10.96.0.1:443\",\n"
		 "      \"certificate-authority-data\": \"%s\"}}\n"
		 "  ],\n"
		 "  \"users\": [{\"name\": \"multus\", \"user\": {\"token\": \"j.w.t\", \"exec\": null}}],\n"
		 "  \"contexts\": [{\"name\": \"multus-context\",\n"
		 "    \"context\": {\"cluster\": \"kubernetes\", \"user\": \"multus\"}}],\n"
		 "  \"current-context\": \"multus-context\"\n"
		 "}\n", enc);
	write_file("json", buf);
	CHECK_INT(load("json", &kc), 0);
	CHECK_STR(kc.server, "https://10.96.0.1:443");
	CHECK_STR(kc.ca, CA_PEM);
	CHECK_STR(kc.token, "j.w.t");
	kube_config_free(&kc);

	/* A folded block scalar split over lines: the line breaks become spaces. */
	snprintf(folded, sizeof(folded), "%.20s\n      %s", enc, enc + 20);
	snprintf(buf, sizeof(buf),
		 "current-context: 'ctx'\n"
		 "contexts:\n"
		 "  - name: \"ctx\"\n"
		 "    context:\n"
		 "      cluster: \"c\"\n"
		 "      user: 'u'\n"
		 "clusters:\n"
		 "  - name: c\n"
		 "    cluster:\n"
		 "      server: \"https://[fd00::1]:6443\"\n"
		 "      certificate-authority-data: >-\n"
		 "        %.20s\n"
		 "        %s\n"
		 "users:\n"
		 "  - name: u\n"
		 "    user:\n"
		 "      token: |-\n"
		 "        block-token\n", enc, enc + 20);
	write_file("block", buf);
	CHECK_INT(load("block", &kc), 0);
	CHECK_STR(kc.server, "https://[fd00::1]:6443");
	CHECK_STR(kc.ca, CA_PEM);
	CHECK_STR(kc.token, "block-token");
	kube_config_free(&kc);
}

/* A TCP socket on a free loopback port; listening or not. */
static int loopback_socket(bool listening, int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ||
	    (listening && listen(fd, 4) < 0)) {
		perror("loopback socket");
		exit(1);
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static void config_for_port(struct kube_config *kc, int port)
{
	memset(kc, 0, sizeof(*kc));
	snprintf(kc->server, sizeof(kc->server), "https://127.0.0.1:%d", port);
	kc->insecure = true;
}

static void test_get_bad_arguments(void)
{
	struct kube_config kc;
	struct kube_reply r;

	config_for_port(&kc, 1);
	CHECK_INT(kube_get(&kc, "apis/x", 1000, &r, err, sizeof(err)), -EINVAL);
	CHECK_HAS(err, "want an absolute path");
	CHECK_INT(kube_get(&kc, "/apis/a b", 1000, &r, err, sizeof(err)), -EINVAL);
	CHECK_INT(kube_get(&kc, "/apis", 0, &r, err, sizeof(err)), -EINVAL);
	CHECK(!r.body);
}

static void test_get_refused(void)
{
	struct kube_config kc;
	struct kube_reply r;
	int port, fd = loopback_socket(false, &port);

	/* Bound, not listening: the kernel answers the SYN with a reset. */
	config_for_port(&kc, port);
	CHECK_INT(kube_get(&kc, "/version", 2000, &r, err, sizeof(err)), -ECONNREFUSED);
	CHECK_HAS(err, "GET https://127.0.0.1:");
	CHECK(!r.body);
	close(fd);
}

static void test_get_timeout(void)
{
	struct kube_config kc;
	struct kube_reply r;
	int port, fd = loopback_socket(true, &port);

	/* Listening, never accepting: TCP connects, TLS never answers, so only the timeout ends the call. */
	config_for_port(&kc, port);
	CHECK_INT(kube_get(&kc, "/version", 300, &r, err, sizeof(err)), -ETIMEDOUT);
	CHECK_HAS(err, "no answer within 300 ms");
	close(fd);
}

static void test_get_dropped(void)
{
	struct kube_config kc;
	struct kube_reply r;
	int port, fd = loopback_socket(true, &port), ret;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		int c = accept(fd, NULL, NULL);

		close(c);
		_exit(0);
	}
	config_for_port(&kc, port);
	ret = kube_get(&kc, "/version", 2000, &r, err, sizeof(err));
	CHECK(ret == -ECONNRESET || ret == -EPROTO);
	CHECK(!r.body);
	waitpid(pid, NULL, 0);
	close(fd);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/test-kube.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_inline_data);
	RUN(test_base64_lengths);
	RUN(test_files_relative_to_kubeconfig);
	RUN(test_token_file);
	RUN(test_current_context);
	RUN(test_one_context_fallback);
	RUN(test_refusals);
	RUN(test_missing_entries);
	RUN(test_quoting_styles);
	RUN(test_get_bad_arguments);
	RUN(test_get_refused);
	RUN(test_get_timeout);
	RUN(test_get_dropped);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return check_summary();
}
