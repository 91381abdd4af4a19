#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The DaemonSet's image, built and run: conf/deploy/Containerfile built by
# Debian's podman from the release tarball (NODE_TARBALL), unpacked, on a
# base the test makes (a root of one static busybox, podman import: no
# registry), then run as conf/deploy/daemonset.yaml runs it (read-only
# root, every capability dropped, no network) with a directory of this
# machine as its hostPath. The binaries land there by rename while a runtime keeps
# executing the old ones; a second run of the same image changes nothing;
# an image of a newer release replaces them.
#
# podman keeps state under /run: the test runs in a mount namespace of its
# own with /run a fresh tmpfs, podman's storage in the test's directory.
if [ "$(id -u)" = 0 ] && [ -z "${IMAGE_TEST_PRIVATE:-}" ]; then
	IMAGE_TEST_PRIVATE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

if [ -z "${NODE_TARBALL:-}" ]; then
	echo "SKIP: needs NODE_TARBALL, a release tarball (scripts/package)"
	exit 77
fi
. "$(dirname "$0")/podman.sh"

HOST=$T_TMP/host/opt/cni/bin
mkdir -p "$HOST"
pm_base /bin/busybox amd64 localhost/cni-test-base:1

# build DIR TAG: the image of the unpacked tarball DIR, for this machine.
build() { pm_build "$1" "$2" localhost/cni-test-base:1 linux/amd64; }
# run TAG: the DaemonSet's container once (INSTALL_ONCE), HOST as its hostPath.
run() {
	t_pm run --rm --network none --read-only --cap-drop all --security-opt no-new-privileges \
		-e INSTALL_ONCE=1 -v "$HOST:/host/opt/cni/bin" "$1"
}
inode() { stat -c %i "$1"; }
version_ok() { # the plugin's VERSION answer as a runtime reads it
	printf '{"cniVersion":"1.1.0"}' | CNI_COMMAND=VERSION "$1" 2>/dev/null | grep -q '"supportedVersions"'
}

top=$(basename "$NODE_TARBALL" .tar.gz)
tar -xzf "$NODE_TARBALL" -C "$T_TMP"
REL=$T_TMP/$top/bin

t_begin "podman builds the image from the unpacked tarball on a base of the test's own, no registry"
build "$T_TMP/$top" localhost/sriov-rdma-cni:1
t_eq "$T_RC" 0 "podman build ($T_ERR)"

t_begin "the image installs both plugins into the hostPath by rename, while the old ones keep running"
# An older release in place: the same binaries with a byte more, each runnable.
for p in pool-ipam sriov-rdma; do
	cp "$REL/$p" "$HOST/$p"
	printf '\n' >> "$HOST/$p"
	chmod 0755 "$HOST/$p"
done
old_inode=$(inode "$HOST/sriov-rdma")
( run localhost/sriov-rdma-cni:1; echo "$T_RC" > "$T_TMP/run.rc"; printf '%s\n%s' "$T_OUT" "$T_ERR" > "$T_TMP/run.out" ) &
runner=$!
runs=0
bad=0
while :; do
	alive=0
	kill -0 "$runner" 2>/dev/null && alive=1
	version_ok "$HOST/sriov-rdma" || bad=$((bad + 1))
	runs=$((runs + 1))
	if [ "$alive" = 0 ] || [ "$runs" -ge 20000 ]; then break; fi
done
wait "$runner"
out=$(cat "$T_TMP/run.out")
t_eq "$(cat "$T_TMP/run.rc")" 0 "podman run ($out)"
t_eq "$bad" 0 "runs of the plugin that failed, out of $runs"
for p in pool-ipam sriov-rdma; do
	cmp -s "$HOST/$p" "$REL/$p" || t_fail "$p is not the tarball's"
	t_eq "$(stat -c %a "$HOST/$p")" 755 "$p mode"
	t_contains "$out" "installed /host/opt/cni/bin/$p ($(sha256sum < "$REL/$p" | cut -d' ' -f1))" "$p logged"
done
[ "$(inode "$HOST/sriov-rdma")" != "$old_inode" ] || t_fail "sriov-rdma rewritten in place (same inode)"
t_eq "$(find "$HOST" -name '.*' | wc -l)" 0 "no temporary file left"
version_ok "$HOST/pool-ipam" || t_fail "the installed pool-ipam does not answer VERSION"

t_begin "the same image again: nothing changes"
before="$(inode "$HOST/pool-ipam") $(inode "$HOST/sriov-rdma") $(stat -c %Y "$HOST/sriov-rdma")"
run localhost/sriov-rdma-cni:1
t_eq "$T_RC" 0 "podman run ($T_OUT $T_ERR)"
for p in pool-ipam sriov-rdma; do
	t_contains "$T_OUT" "/host/opt/cni/bin/$p is up to date" "$p up to date"
done
t_eq "$(inode "$HOST/pool-ipam") $(inode "$HOST/sriov-rdma") $(stat -c %Y "$HOST/sriov-rdma")" \
	"$before" "inodes and mtime kept"

t_begin "an image of a newer release replaces both"
next=$T_TMP/next/$top
mkdir -p "$(dirname "$next")"
cp -a "$T_TMP/$top" "$next"
for p in pool-ipam sriov-rdma; do printf '\n\n' >> "$next/bin/$p"; done
build "$next" localhost/sriov-rdma-cni:2
t_eq "$T_RC" 0 "podman build ($T_ERR)"
before=$(inode "$HOST/sriov-rdma")
run localhost/sriov-rdma-cni:2
t_eq "$T_RC" 0 "podman run ($T_OUT $T_ERR)"
for p in pool-ipam sriov-rdma; do
	cmp -s "$HOST/$p" "$next/bin/$p" || t_fail "$p is not the newer release's"
	t_contains "$T_OUT" "installed /host/opt/cni/bin/$p" "$p logged"
done
[ "$(inode "$HOST/sriov-rdma")" != "$before" ] || t_fail "sriov-rdma rewritten in place (same inode)"
version_ok "$HOST/sriov-rdma" || t_fail "the newer sriov-rdma does not answer VERSION"

t_done
