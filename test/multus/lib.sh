# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared setup of the clients tests that drive test/client/multus.go (the
# suite's reproduction of Multus, dra-driver-sriov and CRI-O's GC).
# test/netns/sriov_lib.sh sources the lib.sh beside the script that sources
# it: this one hands it test/netns/lib.sh, then adds the client's helpers.
. "$SOURCE_DIR/test/netns/lib.sh"

if ! command -v go >/dev/null 2>&1 && [ ! -x "$BUILD_DIR/test-multus" ]; then
	echo "SKIP: needs go (golang-go) and golang-github-appc-cni-dev for the reproduced clients"
	exit 77
fi

# The reproduced clients, built once per build directory and again when
# their source changed.
mt_bin() {
	local bin=$BUILD_DIR/test-multus src=$SOURCE_DIR/test/client/multus.go
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		( flock 9
		  [ -x "$bin" ] && [ ! "$src" -nt "$bin" ] || GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS=-mod=mod \
			GOCACHE=${GOCACHE:-$T_TMP/gocache} \
			go build -o "$bin" "$src"
		) 9>"$BUILD_DIR/.test-multus.lock" || return 1
	fi
	echo "$bin"
}

# mt_recorder NAME REAL: NAME in $MT_BIN runs REAL (under PLUGIN_WRAPPER when
# REAL is ours) and keeps, per call, its stdin ($MT_REC/CMD-ID-IF.NAME.stdin),
# its environment (.env), what it saw before running (.seen: the mode of
# runtimeConfig.CNIDeviceInfoFile, and whether it ran chrooted: only the
# chroot shows $MT_CHROOT_MARK) and one line "NAME CMD ID IF rc=N" in
# $MT_CALLS. While $MT_FAIL_DEL exists, NAME's DEL fails with code 7
# without running REAL (a DEL that failed for a reason of its own).
mt_recorder() {
	local name=$1 real=$2 wrap=
	case $real in "$BUILD_DIR"/*) wrap=${PLUGIN_WRAPPER:-} ;; esac
	cat > "$MT_BIN/$name" <<EOS
#!/bin/sh
in=\$(cat)
id="\$CNI_COMMAND-\$CNI_CONTAINERID-\$CNI_IFNAME.$name"
if [ "\$CNI_COMMAND" = DEL ] && [ -e "$MT_FAIL_DEL" ]; then
	echo "$name DEL \$CNI_CONTAINERID \$CNI_IFNAME rc=7" >> "$MT_CALLS"
	echo '{"cniVersion":"1.0.0","code":7,"msg":"DEL failed (made to fail by the test)"}'
	exit 1
fi
if [ "\$CNI_COMMAND" != VERSION ]; then
	printf '%s\n' "\$in" > "$MT_REC/\$id.stdin"
	env | sort > "$MT_REC/\$id.env"
	di=\$(printf '%s' "\$in" | jq -r '.runtimeConfig.CNIDeviceInfoFile // empty' 2>/dev/null)
	{ [ -n "\$di" ] && echo "devinfo-mode \$(stat -c %a "\$di" 2>/dev/null)"
	  [ -e "$MT_CHROOT_MARK" ] && echo chroot; } > "$MT_REC/\$id.seen"
fi
out=\$(printf '%s' "\$in" | $wrap "$real")
rc=\$?
[ "\$CNI_COMMAND" = VERSION ] || echo "$name \$CNI_COMMAND \$CNI_CONTAINERID \$CNI_IFNAME rc=\$rc" >> "$MT_CALLS"
printf '%s' "\$out"
exit \$rc
EOS
	chmod +x "$MT_BIN/$name"
}

# mt_setup: $MT_BIN with sriov-rdma and tuning behind recorders, pool-ipam
# (under PLUGIN_WRAPPER) and host-local.
mt_setup() {
	MT_BIN=$T_TMP/bin
	MT_REC=$T_TMP/rec
	MT_CALLS=$T_TMP/calls.log
	MT_FAIL_DEL=$T_TMP/fail-del
	MT_CHROOT_MARK=$T_TMP/chroot-mark/here
	mkdir -p "$MT_BIN" "$MT_REC" "$T_TMP/chroot-mark"
	mt_recorder sriov-rdma "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma"
	mt_recorder tuning "$PEER_CNI_DIR/tuning"
	printf '#!/bin/sh\nexec %s %q "$@"\n' "${PLUGIN_WRAPPER:-}" "$BUILD_DIR/plugins/pool-ipam/pool-ipam" \
		> "$MT_BIN/pool-ipam"
	chmod +x "$MT_BIN/pool-ipam"
	ln -sf "$PEER_CNI_DIR/host-local" "$MT_BIN/host-local"
}

# mt_calls NAME CMD ID IF RC: how many such calls were recorded.
mt_calls() { grep -c "^$1 $2 $3 $4 rc=$5\$" "$MT_CALLS" 2>/dev/null; }
# mt_stdin CMD ID IF [NAME]: what the plugin read on that call.
mt_stdin() { cat "$MT_REC/$1-$2-$3.${4:-sriov-rdma}.stdin" 2>/dev/null; }
mt_env() { cat "$MT_REC/$1-$2-$3.${4:-sriov-rdma}.env" 2>/dev/null; }
mt_seen() { cat "$MT_REC/$1-$2-$3.${4:-sriov-rdma}.seen" 2>/dev/null; }
