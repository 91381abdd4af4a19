#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The DaemonSet's image for both architectures, as conf/deploy/Containerfile's
# header builds it: the amd64 image from the x86_64 tarball (NODE_TARBALL),
# the arm64 image from the aarch64 one (NODE_TARBALL_AARCH64), each on a
# base of one static busybox of its architecture (the arm64 one from the
# aarch64 stage's root, NODE_AARCH64_ROOT), and one manifest list naming
# both, with Debian's podman and no registry. The build runs nothing of the
# image, so the arm64 one builds here; it is not run here (this machine
# runs no arm64 program): its binaries are the aarch64 tarball's, byte for
# byte, which the aarch64 VM runs (test/vm/aarch64_vm.sh).
if [ "$(id -u)" = 0 ] && [ -z "${IMAGE_TEST_PRIVATE:-}" ]; then
	IMAGE_TEST_PRIVATE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

if [ -z "${NODE_TARBALL:-}" ] || [ -z "${NODE_TARBALL_AARCH64:-}" ] ||
	[ ! -x "${NODE_AARCH64_ROOT:-}/bin/busybox" ]; then
	echo "SKIP: needs NODE_TARBALL, NODE_TARBALL_AARCH64 (scripts/package [--arch aarch64]) and NODE_AARCH64_ROOT (test/vm/aarch64-root.sh)"
	exit 77
fi
. "$(dirname "$0")/podman.sh"

LIST=localhost/sriov-rdma-cni:multi
HOST=$T_TMP/host/opt/cni/bin
mkdir -p "$HOST"
declare -A tarball=([amd64]=$NODE_TARBALL [arm64]=$NODE_TARBALL_AARCH64)
declare -A busybox=([amd64]=/bin/busybox [arm64]=$NODE_AARCH64_ROOT/bin/busybox)
# What readelf -h calls each one's machine.
declare -A machine=([amd64]="Advanced Micro Devices X86-64" [arm64]=AArch64)
declare -A dir

t_begin "podman builds the image of each architecture from its tarball, no registry"
for arch in amd64 arm64; do
	top=$(basename "${tarball[$arch]}" .tar.gz)
	mkdir -p "$T_TMP/$arch"
	tar -xzf "${tarball[$arch]}" -C "$T_TMP/$arch"
	dir[$arch]=$T_TMP/$arch/$top
	pm_base "${busybox[$arch]}" "$arch" "localhost/cni-test-base:$arch"
	pm_build "${dir[$arch]}" "localhost/sriov-rdma-cni:$arch" "localhost/cni-test-base:$arch" "linux/$arch"
	t_eq "$T_RC" 0 "podman build --platform linux/$arch ($T_ERR)"
	t_pm image inspect --format '{{.Os}}/{{.Architecture}}' "localhost/sriov-rdma-cni:$arch"
	t_eq "$T_OUT" "linux/$arch" "the image's platform"
done

t_begin "each image holds its tarball's plugins, built for its machine, and install-cni.sh as its entrypoint"
for arch in amd64 arm64; do
	t_pm create --arch "$arch" "localhost/sriov-rdma-cni:$arch"
	t_eq "$T_RC" 0 "podman create ($T_ERR)"
	id=$T_OUT
	mkdir -p "$T_TMP/fs-$arch"
	t_pm export -o "$T_TMP/fs-$arch.tar" "$id"
	t_eq "$T_RC" 0 "podman export ($T_ERR)"
	tar -xf "$T_TMP/fs-$arch.tar" -C "$T_TMP/fs-$arch"
	img=$T_TMP/fs-$arch/usr/lib/sriov-rdma-cni
	for p in pool-ipam sriov-rdma; do
		cmp -s "$img/$p" "${dir[$arch]}/bin/$p" || t_fail "$arch: $p is not the tarball's"
		t_eq "$(readelf -h "$img/$p" | sed -n 's/^ *Machine: *//p')" "${machine[$arch]}" "$arch: $p's machine"
		t_eq "$(stat -c %a "$img/$p")" 755 "$arch: $p mode"
	done
	cmp -s "$img/install-cni.sh" "$SOURCE_DIR/conf/deploy/install-cni.sh" || t_fail "$arch: install-cni.sh differs"
	t_pm image inspect --format '{{json .Config.Entrypoint}}' "localhost/sriov-rdma-cni:$arch"
	t_eq "$T_OUT" '["/usr/lib/sriov-rdma-cni/install-cni.sh"]' "$arch: entrypoint"
done

t_begin "one manifest list names both images, each by its platform"
t_pm manifest create "$LIST"
t_eq "$T_RC" 0 "podman manifest create ($T_ERR)"
for arch in amd64 arm64; do
	t_pm manifest add "$LIST" "containers-storage:localhost/sriov-rdma-cni:$arch"
	t_eq "$T_RC" 0 "podman manifest add $arch ($T_ERR)"
done
t_pm manifest inspect "$LIST"
list=$T_OUT
t_eq "$(jq -r '[.manifests[].platform | "\(.os)/\(.architecture)"] | sort | join(" ")' <<< "$list")" \
	"linux/amd64 linux/arm64" "the list's platforms"
for arch in amd64 arm64; do
	t_pm image inspect --format '{{.Digest}}' "localhost/sriov-rdma-cni:$arch"
	t_eq "$(jq -r --arg a "$arch" '.manifests[] | select(.platform.architecture == $a) | .digest' <<< "$list")" \
		"$T_OUT" "$arch: the list names that image"
done

t_begin "the DaemonSet is scheduled on exactly the architectures the list holds"
ds_arches=$(awk '/key: kubernetes.io\/arch/ { f = 1; next } f && /values:/ { gsub(/[][",]/, " "); sub(/^ *values: */, ""); print; exit }' \
	"$SOURCE_DIR/conf/deploy/daemonset.yaml" | tr -s ' ' '\n' | grep . | sort | tr '\n' ' ')
t_eq "$ds_arches" "$(jq -r '[.manifests[].platform.architecture] | sort | join(" ")' <<< "$list") " \
	"kubernetes.io/arch values"

t_begin "the list runs as the DaemonSet runs it: this machine gets the amd64 image, which installs its plugins"
t_pm run --rm --network none --read-only --cap-drop all --security-opt no-new-privileges \
	-e INSTALL_ONCE=1 -v "$HOST:/host/opt/cni/bin" "$LIST"
t_eq "$T_RC" 0 "podman run ($T_OUT $T_ERR)"
for p in pool-ipam sriov-rdma; do
	cmp -s "$HOST/$p" "${dir[amd64]}/bin/$p" || t_fail "$p is not the x86_64 tarball's"
done

t_done
