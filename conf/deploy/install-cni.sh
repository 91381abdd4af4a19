#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The DaemonSet container's entrypoint: put sriov-rdma and pool-ipam from
# the image into the host's CNI bin dir, then stay alive so the DaemonSet
# shows the node as done (or exit when INSTALL_ONCE=1, e.g. as an init
# container or in a test).
#
# Environment:
#   SRC_DIR       where the image holds the binaries (/usr/lib/sriov-rdma-cni)
#   CNI_BIN_DIR   the host's CNI bin dir as mounted here (/host/opt/cni/bin)
#   INSTALL_ONCE  1: exit after installing instead of sleeping
#
# Each binary is copied to a temporary name in CNI_BIN_DIR, checked against
# the source (size and sha256), flushed, and only then renamed over the old
# one: kubelet may run a plugin at any moment, and rename(2) guarantees it
# executes either the old file or the new one, never a partial copy. A
# binary already identical on the host is left alone, so a restarted pod
# does not rewrite files.
set -eu

SRC_DIR=${SRC_DIR:-/usr/lib/sriov-rdma-cni}
CNI_BIN_DIR=${CNI_BIN_DIR:-/host/opt/cni/bin}
INSTALL_ONCE=${INSTALL_ONCE:-0}
PLUGINS="pool-ipam sriov-rdma"

log() { echo "install-cni: $*"; }
die() {
	echo "install-cni: $*" >&2
	exit 1
}

TMP_FILE=
cleanup() { [ -z "$TMP_FILE" ] || rm -f "$TMP_FILE"; }
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

sha256() { sha256sum < "$1" | cut -d' ' -f1; }
size() { wc -c < "$1" | tr -d ' '; }

# install_one NAME: 0 when the host copy is current (installed or already identical).
install_one() {
	name=$1
	src=$SRC_DIR/$name
	dst=$CNI_BIN_DIR/$name
	[ -f "$src" ] || die "$src is missing: the image must hold the binaries in SRC_DIR"
	[ ! -d "$dst" ] || die "$dst is a directory: remove it, the plugin binary goes there"
	want_sum=$(sha256 "$src")
	want_size=$(size "$src")
	if [ -f "$dst" ] && [ -x "$dst" ] && [ "$(sha256 "$dst")" = "$want_sum" ]; then
		log "$dst is up to date ($want_sum)"
		return 0
	fi
	TMP_FILE=$(mktemp "$CNI_BIN_DIR/.$name.XXXXXX") ||
		die "cannot create a file in $CNI_BIN_DIR: is the hostPath mounted read-write?"
	cp "$src" "$TMP_FILE"
	chmod 0755 "$TMP_FILE"
	sync "$TMP_FILE"
	got_size=$(size "$TMP_FILE")
	got_sum=$(sha256 "$TMP_FILE")
	if [ "$got_size" != "$want_size" ] || [ "$got_sum" != "$want_sum" ]; then
		die "copy of $src is corrupt (size $got_size, want $want_size; sha256 $got_sum," \
			"want $want_sum): is $CNI_BIN_DIR full? $dst was not touched"
	fi
	mv -f "$TMP_FILE" "$dst"
	TMP_FILE=
	sync "$CNI_BIN_DIR"
	log "installed $dst ($want_sum)"
}

[ -d "$CNI_BIN_DIR" ] ||
	die "$CNI_BIN_DIR does not exist: mount the host's /opt/cni/bin there (hostPath) or set CNI_BIN_DIR"
for p in $PLUGINS; do
	install_one "$p"
done

[ "$INSTALL_ONCE" = 1 ] && exit 0
log "done; sleeping (set INSTALL_ONCE=1 to exit instead)"
# sleep in the background and wait, so SIGTERM from kubelet ends the pod at once.
while :; do
	sleep 3600 &
	wait $! || true
done
