# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared helpers for the netns integration tests. Source it from a test script:
#
#   . "$(dirname "$0")/lib.sh"
#   t_begin "pool-ipam ADD returns an address"
#   ...; t_ok / t_fail "why"
#   t_done            # prints "N passed, N failed", exits 1 on any failure
#
# Environment:
#   BUILD_DIR       meson build root holding the plugins (required)
#   SOURCE_DIR      project root (defaults to two levels above this file)
#   PLUGIN_WRAPPER  command prefixed to every run of our plugins, e.g.
#                   "valgrind --error-exitcode=99 --leak-check=full -q"
#   PLUGIN_ROOT     a root filesystem our plugins run in, chrooted, as Multus
#                   thick runs them in the host's root: they and every plugin
#                   they delegate to run there, with the libraries it holds,
#                   while the test's own tools run here. The test's directory
#                   is mounted there at the same path; what else they must
#                   see (/proc, /sys, /dev, /run/netns) is the caller's to
#                   mount (test/nodeos/in-root.sh)
#
# Every test runs as root in namespaces and temporary directories it made
# itself, and removes them on exit.

# set -u, not -e: a command that fails in a test is a case that failed; the
# test records it (t_fail) and goes on to the next case and to its cleanup.
set -u
: "${BUILD_DIR:?set BUILD_DIR to the meson build directory}"
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
PEER_CNI_DIR=${PEER_CNI_DIR:-/usr/lib/cni}

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (network namespaces)"
	exit 77
fi

# `ip -n NS ...` and `ip netns exec NS ...` unshare a mount namespace and
# remount /sys, which fails where / is not a mount point (a chroot, some
# containers); setns() through nsenter needs nothing of the kind. NS may be
# a name under /run/netns or a path.
t_ns_path() { case "$1" in /*) echo "$1" ;; *) echo "/run/netns/$1" ;; esac; }
ip() {
	local ns
	if [ "${1:-}" = -n ] || [ "${1:-}" = -netns ]; then
		ns=$(t_ns_path "$2")
		shift 2
		nsenter --net="$ns" ip "$@"
		return
	fi
	if [ "${1:-}" = netns ] && [ "${2:-}" = exec ]; then
		ns=$(t_ns_path "$3")
		shift 3
		nsenter --net="$ns" "$@"
		return
	fi
	command ip "$@"
}

T_PASSED=0
T_FAILED=0
T_DONE=0
T_NAME=
T_CUR_FAILED=0
T_TMP=$(mktemp -d /tmp/cni-test.XXXXXX)
# The plugins create, write and delete files only where the node config
# allows (docs/security.md): here, the test's own tree.
printf '{"allowedStateDirs":["%s"],"allowedDataDirs":["%s"],"allowedLogDirs":["%s"],"allowedDeviceInfoDirs":["%s"],"allowedResolvConfDirs":["%s"]}\n' \
	"$T_TMP" "$T_TMP" "$T_TMP" "$T_TMP" "$T_TMP" > "$T_TMP/node-config.json"
export SRIOV_RDMA_CNI_NODE_CONFIG=$T_TMP/node-config.json
T_CLEANUP=()

t_cleanup() {
	local rc=$? i
	# A script that ends before t_done (an error under set -u, an exit in
	# a case) has not run every case: never a pass, whatever it counted.
	# A skip (77) is left as it is.
	if [ "$T_DONE" = 0 ] && [ "$rc" != 77 ]; then
		echo "not ok - ${T_NAME:-(before the first case)}: the script ended before t_done (exit $rc)"
		echo "$T_PASSED passed, $((T_FAILED + 1)) failed"
		[ "$rc" != 0 ] || rc=1
	fi
	for ((i = ${#T_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${T_CLEANUP[$i]}" >/dev/null 2>&1 || true
	done
	if [ -f "$T_TMP/netns.list" ]; then
		while read -r ns; do
			command ip netns del "$ns" >/dev/null 2>&1 || true
		done < "$T_TMP/netns.list"
	fi
	rm -rf "$T_TMP"
	[ "$T_DONE" = 1 ] || exit "$rc"
}
trap t_cleanup EXIT

# Run a command at exit (in reverse order of registration).
t_defer() { T_CLEANUP+=("$*"); }

if [ -n "${PLUGIN_ROOT:-}" ]; then
	if ! mkdir -p "$PLUGIN_ROOT$T_TMP" || ! mount --bind "$T_TMP" "$PLUGIN_ROOT$T_TMP"; then
		echo "Bail out: cannot mount $T_TMP in PLUGIN_ROOT $PLUGIN_ROOT" >&2
		exit 1
	fi
	t_defer "umount $PLUGIN_ROOT$T_TMP"
fi

t_begin() {
	t_end_current
	T_NAME=$1
	T_CUR_FAILED=0
}

t_fail() {
	echo "  FAIL: $T_NAME: $*" >&2
	T_CUR_FAILED=1
}

t_end_current() {
	[ -n "$T_NAME" ] || return 0
	if [ "$T_CUR_FAILED" = 0 ]; then
		echo "ok - $T_NAME"
		T_PASSED=$((T_PASSED + 1))
	else
		echo "not ok - $T_NAME"
		T_FAILED=$((T_FAILED + 1))
	fi
	T_NAME=
}

t_done() {
	t_end_current
	T_DONE=1
	echo "$T_PASSED passed, $T_FAILED failed"
	[ "$T_FAILED" = 0 ]
	exit $?
}

# Assertions: each records a failure in the current test and returns non-zero.
t_eq() { # actual expected what
	[ "$1" = "$2" ] && return 0
	t_fail "$3: got '$1', want '$2'"
	return 1
}
t_contains() { # haystack needle what
	case "$1" in *"$2"*) return 0 ;; esac
	t_fail "$3: '$2' not in: $1"
	return 1
}
t_not_contains() {
	case "$1" in *"$2"*) t_fail "$3: '$2' unexpectedly in: $1"; return 1 ;; esac
	return 0
}

# A namespace that is removed at exit; prints its path. Callers capture the
# path with $(t_netns), a subshell, so the name is recorded in a file.
t_netns() {
	local name=cnitest-$$-$BASHPID-$RANDOM
	command ip netns add "$name" || return 1
	echo "$name" >> "$T_TMP/netns.list"
	echo "/run/netns/$name"
}

# CNI_PATH holding our plugins (wrapped by PLUGIN_WRAPPER) and the peers.
# With PLUGIN_ROOT, a copy of each plugin in the test's directory, and a
# wrapper that enters the root first: inside, the root's own path does not
# exist, so a plugin delegating through the same wrapper stays where it is.
t_cni_path() {
	local dir=$T_TMP/cni-bin p bin
	if [ ! -d "$dir" ]; then
		mkdir -p "$dir"
		for p in pool-ipam sriov-rdma; do
			bin=$BUILD_DIR/plugins/$p/$p
			{
				echo '#!/bin/sh'
				if [ -n "${PLUGIN_ROOT:-}" ]; then
					mkdir -p "$T_TMP/root-bin" && cp "$bin" "$T_TMP/root-bin/$p"
					bin=$T_TMP/root-bin/$p
					# shellcheck disable=SC2016 # $0 and $@ are the wrapper's
					printf '[ ! -d %q ] || exec chroot %q "$0" "$@"\n' \
						"$PLUGIN_ROOT" "$PLUGIN_ROOT"
				fi
				printf 'exec %s %q "$@"\n' "${PLUGIN_WRAPPER:-}" "$bin"
			} > "$dir/$p"
			chmod +x "$dir/$p"
		done
		for p in "$PEER_CNI_DIR"/*; do
			[ -e "$p" ] && ln -sf "$p" "$dir/$(basename "$p")"
		done
	fi
	echo "$dir"
}

# Run a plugin directly as a runtime does: t_exec PLUGIN COMMAND CONFIG_JSON [VAR=VALUE...]
# Leaves stdout in $T_OUT, stderr in $T_ERR, exit code in $T_RC.
# shellcheck disable=SC2034  # T_OUT, T_ERR and T_RC are for the test that sourced this
t_exec() {
	local plugin=$1 cmd=$2 conf=$3
	shift 3
	T_OUT=$(printf '%s' "$conf" | env CNI_COMMAND="$cmd" CNI_PATH="$(t_cni_path)" "$@" \
		"$(t_cni_path)/$plugin" 2>"$T_TMP/stderr")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/stderr")
	return 0
}

# The libcni client (the library inside CRI-O, containerd, podman and Multus).
t_cnitool_bin() {
	local bin=$BUILD_DIR/test-cnitool
	if [ ! -x "$bin" ]; then
		( flock 9
		  [ -x "$bin" ] || GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS=-mod=mod \
			GOCACHE=${GOCACHE:-$T_TMP/gocache} \
			go build -o "$bin" "$SOURCE_DIR/test/client/cnitool.go"
		) 9>"$BUILD_DIR/.test-cnitool.lock" || return 1
	fi
	echo "$bin"
}

# t_cnitool add|check|del CONFLIST_FILE NETNS_PATH [VAR=VALUE...]
# (CNI_IFNAME, CNI_CONTAINERID, CNI_ARGS, CAP_ARGS as variables). Output in T_OUT/T_ERR/T_RC.
# shellcheck disable=SC2034  # T_OUT, T_ERR and T_RC are for the test that sourced this
t_cnitool() {
	local cmd=$1 conf=$2 netns=$3 bin
	shift 3
	bin=$(t_cnitool_bin) || { T_RC=127; T_OUT=; T_ERR="cannot build the libcni client"; return 0; }
	T_OUT=$(env CNI_PATH="$(t_cni_path)" NETCONFPATH="$T_TMP" CNI_CACHE_DIR="$T_TMP/cni-cache" "$@" \
		"$bin" "$cmd" "$conf" "$netns" 2>"$T_TMP/stderr")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/stderr")
	return 0
}

# t_count DIR GLOB: how many entries of DIR (not below) match GLOB; 0 when DIR is missing.
t_count() { find "$1" -mindepth 1 -maxdepth 1 -name "$2" 2>/dev/null | wc -l; }

# jq over $T_OUT: t_jq '.ips[0].address'
t_jq() { printf '%s' "$T_OUT" | jq -r "$1"; }

# t_podman_storage DIR: podman's storage for the test in DIR (vfs), every
# container of it removed at exit; t_pm ARGS... then runs podman on it, a
# hang guard only, its output in T_OUT/T_ERR/T_RC.
t_podman_storage() {
	T_PM_DIR=$1
	t_defer "podman --root $1/root --runroot $1/runroot --tmpdir $1/tmp --storage-driver vfs rm -f -a -t 0"
}
# shellcheck disable=SC2034  # T_ERR and T_RC are the cases' to read
t_pm() {
	T_OUT=$(timeout -k 10 600 podman --root "$T_PM_DIR/root" --runroot "$T_PM_DIR/runroot" \
		--tmpdir "$T_PM_DIR/tmp" --storage-driver vfs "$@" 2>"$T_PM_DIR/stderr")
	T_RC=$?
	T_ERR=$(cat "$T_PM_DIR/stderr")
	return 0
}

# A test Kubernetes API server (test/client/kubeapi.go) serving nv-ipam's
# IPPool and CIDRPool resources over HTTPS with a CA it makes at start.
t_kubeapi_bin() {
	local bin=$BUILD_DIR/test-kubeapi
	if [ ! -x "$bin" ]; then
		( flock 9
		  [ -x "$bin" ] || GO111MODULE=off GOCACHE=${GOCACHE:-$T_TMP/gocache} \
			go build -o "$bin" "$SOURCE_DIR/test/client/kubeapi.go"
		) 9>"$BUILD_DIR/.test-kubeapi.lock" || return 1
	fi
	echo "$bin"
}

# t_kubeapi_start DIR [EXTRA-ARGS...]: start the server on 127.0.0.1 with
# objects read from DIR/objects/NS/{ippools,cidrpools}/NAME.json, behaviour
# switches DIR/objects/{.delay-ms,.drop,.status} and one line per request in
# DIR/requests.log. Writes DIR/kubeconfig (bearer token, CA inline) and
# DIR/kubeconfig-cert (client certificate and key as files, relative paths),
# exports KUBEAPI_ADDR (127.0.0.1:PORT), KUBEAPI_PID, KUBEAPI_DIR and
# KUBEAPI_TOKEN, and stops the server at exit. Call it directly, not in
# $(...), or the exports are lost. Without a Go toolchain the test skips
# (exit 77); other failures return 1.
t_kubeapi_start() {
	local dir=$1 bin token i ca
	shift
	if ! command -v go >/dev/null 2>&1 && [ ! -x "$BUILD_DIR/test-kubeapi" ]; then
		echo "SKIP: needs go (golang-go) for the test API server"
		exit 77
	fi
	bin=$(t_kubeapi_bin) || { echo "t_kubeapi_start: cannot build the test API server" >&2; return 1; }
	mkdir -p "$dir/objects" || return 1
	dir=$(cd "$dir" && pwd)
	rm -f "$dir/addr"
	token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	"$bin" -out "$dir" -objects "$dir/objects" -log "$dir/requests.log" -token "$token" "$@" \
		2>>"$dir/server.log" &
	KUBEAPI_PID=$!
	t_defer "kill $KUBEAPI_PID; wait $KUBEAPI_PID"
	# Up to a minute, a hang guard: on a busy machine making the keys alone takes seconds.
	for ((i = 0; i < 1200; i++)); do
		[ -s "$dir/addr" ] && break
		kill -0 "$KUBEAPI_PID" 2>/dev/null || break
		sleep 0.05
	done
	if [ ! -s "$dir/addr" ]; then
		echo "t_kubeapi_start: the server did not start: $(cat "$dir/server.log" 2>/dev/null)" >&2
		return 1
	fi
	KUBEAPI_ADDR=$(cat "$dir/addr")
	KUBEAPI_DIR=$dir
	KUBEAPI_TOKEN=$token
	export KUBEAPI_ADDR KUBEAPI_PID KUBEAPI_DIR KUBEAPI_TOKEN
	ca=$(base64 -w0 < "$dir/ca.crt")
	cat > "$dir/kubeconfig" <<-KUBECONFIG
	apiVersion: v1
	kind: Config
	clusters:
	- name: test
	  cluster:
	    server: https://$KUBEAPI_ADDR
	    certificate-authority-data: $ca
	users:
	- name: node
	  user:
	    token: $token
	contexts:
	- name: test
	  context:
	    cluster: test
	    user: node
	current-context: test
	KUBECONFIG
	cat > "$dir/kubeconfig-cert" <<-KUBECONFIG
	apiVersion: v1
	kind: Config
	clusters:
	- name: test
	  cluster:
	    server: https://$KUBEAPI_ADDR
	    certificate-authority: ca.crt
	users:
	- name: system:node:test
	  user:
	    client-certificate: client.crt
	    client-key: client.key
	contexts:
	- name: test
	  context:
	    cluster: test
	    user: system:node:test
	current-context: test
	KUBECONFIG
	chmod 600 "$dir/kubeconfig" "$dir/kubeconfig-cert"
}

# t_kubeapi_stop: stop the server t_kubeapi_start started last.
t_kubeapi_stop() {
	[ -n "${KUBEAPI_PID:-}" ] || return 0
	kill "$KUBEAPI_PID" 2>/dev/null
	wait "$KUBEAPI_PID" 2>/dev/null
	KUBEAPI_PID=
	return 0
}
