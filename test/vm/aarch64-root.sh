#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# What the aarch64 stage runs on, made once and kept in DIR:
#
#   DIR/root     an arm64 Debian 12 userland, the release of the machine
#                the x86_64 unit suite runs on: the packages the guest's
#                tests use (bash, coreutils, util-linux, iproute2, jq,
#                findutils, grep, sed, mawk, diffutils, tar, gzip), the libraries the
#                unit suite loads on first use (libibverbs1, libyaml-0-2,
#                libcurl4) and busybox-static (the guest's initramfs, the
#                image's base), with what they depend on, unpacked with
#                dpkg -x: nothing of it is configured or run on this
#                machine. It is the root of the aarch64 VM (scripts/vm,
#                VM_ARCH=aarch64), and its libraries are what the unit
#                programs run on under QEMU's user mode
#   DIR/kernel   Debian 12's arm64 kernel (linux-image-arm64): its
#                /boot/vmlinuz-* and the modules the VM loads
#   DIR/run.ini  a meson cross file to add after scripts/sysroot's aarch64
#                one: the unit programs run under qemu-aarch64-static, by
#                DIR/root's dynamic loader on DIR/root's libraries, and the
#                VM test (test/vm/meson.build) finds the root and the kernel
#
#   test/vm/aarch64-root.sh DIR
#
# Downloads from the machine's own apt source with a private apt
# configuration (scripts/apt-source.sh), about 90 MB; prints DIR.
#
# Not qemu-aarch64-static -L DIR/root: QEMU then opens an absolute path
# under DIR/root wherever one exists there, "/" and "/tmp" included, and a
# walk from "/" (common/file.c) would find DIR/root's.
set -euo pipefail

SUITE=bookworm
PKGS="bash coreutils util-linux iproute2 jq findutils grep sed mawk diffutils tar gzip libibverbs1
	libyaml-0-2 libcurl4 busybox-static"
# What the VM needs of the kernel's modules (scripts/vm): 9p over virtio,
# veth for the stand-in VF, tun for the link unit test, igb and igbvf (and
# what igb needs) for QEMU's igb; where they are.
MODULES="9p 9pnet 9pnet_virtio virtio_pci veth tun i2c-algo-bit igb igbvf"
MODULE_PATHS="fs/9p fs/netfs fs/fscache net/9p drivers/virtio drivers/net/veth.ko drivers/net/tun.ko
	drivers/i2c/algos/i2c-algo-bit.ko drivers/net/ethernet/intel/igb drivers/net/ethernet/intel/igbvf"

[ $# = 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
for tool in apt-get dpkg dpkg-deb; do
	command -v "$tool" >/dev/null || { echo "aarch64-root: $tool is needed" >&2; exit 1; }
done
# shellcheck source=SCRIPTDIR/../../scripts/apt-source.sh
. "$(dirname "$0")/../../scripts/apt-source.sh"

mkdir -p "$1"
dir=$(cd "$1" && pwd)
exec 9>"$dir/.lock"
flock 9
stamp=$(cat "$0" "$(dirname "$0")/../../scripts/apt-source.sh" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ] && [ -f "$dir/run.ini" ]; then
	echo "$dir"
	exit 0
fi
rm -rf "$dir/root" "$dir/kernel" "$dir/run.ini" "$dir/.stamp" "$dir/apt"

host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
read -r uri key < <(release_uri "$host" | head -n 1) || true
[ -n "${uri:-}" ] || { echo "aarch64-root: no apt source serves '$host': no mirror to take $SUITE from" >&2; exit 1; }
signed=
[ -z "${key:-}" ] || signed="[signed-by=$key] "
APT=$dir/apt
private_apt "$APT" arm64
printf 'deb %s%s %s main\n' "$signed" "$uri" "$SUITE" > "$APT/etc/sources.list"
log=$dir/apt.log
apt-get "${APT_OPTS[@]}" update >"$log" 2>&1 ||
	{ echo "aarch64-root: apt-get update from $uri failed: $(tail -n 3 "$log")" >&2; exit 1; }

# The packages and all they depend on, as apt would install them into an
# empty root; unpacked, not installed.
# shellcheck disable=SC2086 # one word per package
apt-get "${APT_OPTS[@]}" install --download-only -y \
	--no-install-recommends $PKGS >>"$log" 2>&1 ||
	{ echo "aarch64-root: downloading the userland failed: $(tail -n 3 "$log")" >&2; exit 1; }
mkdir -p "$dir/root"
for deb in "$APT"/cache/archives/*.deb; do
	dpkg -x "$deb" "$dir/root"
done
for tool in bin/bash bin/busybox usr/bin/jq bin/ip lib/ld-linux-aarch64.so.1; do
	[ -e "$dir/root/$tool" ] || { echo "aarch64-root: no /$tool in $dir/root" >&2; exit 1; }
done
# Mount points of the guest (scripts/vm).
mkdir -p "$dir/root/proc" "$dir/root/sys" "$dir/root/dev" "$dir/root/run" "$dir/root/tmp" \
	"$dir/root/var/lib" "$dir/root/var/log"
# /bin/sh is dash's to make when it is configured: here, bash.
[ -e "$dir/root/bin/sh" ] || ln -s bash "$dir/root/bin/sh"

# The kernel: the package linux-image-arm64 names, its image and modules.
kpkg=$(apt-cache "${APT_OPTS[@]}" depends "linux-image-arm64/$SUITE" 2>>"$log" |
	sed -n 's/^ *Depends: \(linux-image-[0-9].*-arm64\)$/\1/p' | head -n 1)
[ -n "$kpkg" ] || { echo "aarch64-root: no kernel package behind linux-image-arm64/$SUITE" >&2; exit 1; }
mkdir -p "$dir/kdeb" "$dir/kernel"
(cd "$dir/kdeb" && apt-get "${APT_OPTS[@]}" download "$kpkg/$SUITE") >>"$log" 2>&1 ||
	{ echo "aarch64-root: downloading $kpkg failed: $(tail -n 3 "$log")" >&2; exit 1; }
# A module built in is in no directory: tar's "not found" is no error here;
# modules.builtin says which.
want=('./boot/vmlinuz-*' './lib/modules/*/modules.builtin')
for m in $MODULE_PATHS; do want+=("./lib/modules/*/kernel/$m*"); done
dpkg-deb --fsys-tarfile "$dir"/kdeb/"$kpkg"_*.deb |
	tar -x -C "$dir/kernel" --wildcards --anchored "${want[@]}" 2>"$dir/tar.log" || true
if grep -v 'Not found in archive\|Exiting with failure status' "$dir/tar.log" | grep -q .; then
	echo "aarch64-root: unpacking $kpkg failed: $(tail -n 3 "$dir/tar.log")" >&2
	exit 1
fi
kernel=$(find "$dir/kernel/boot" -name "vmlinuz-*-arm64" 2>/dev/null | head -n 1)
[ -n "$kernel" ] || { echo "aarch64-root: $kpkg holds no /boot/vmlinuz-*-arm64" >&2; exit 1; }
mods=$dir/kernel/lib/modules/${kernel##*/vmlinuz-}
for m in $MODULES; do
	[ -n "$(find "$mods/kernel" -name "$m.ko*" 2>/dev/null)" ] ||
		grep -q "/$m\.ko\$" "$mods/modules.builtin" ||
		{ echo "aarch64-root: $kpkg has no module $m, nor has it built in" >&2; exit 1; }
done
rm -rf "$dir/kdeb" "$APT/cache/archives"/*.deb

libs=$dir/root/lib/aarch64-linux-gnu:$dir/root/usr/lib/aarch64-linux-gnu
cat > "$dir/run.ini" <<EOF
# The aarch64 test build's programs run under QEMU's user mode, on the arm64
# libraries of $dir/root. Made by test/vm/aarch64-root.sh; do not edit.
[binaries]
exe_wrapper = ['qemu-aarch64-static', '$dir/root/lib/ld-linux-aarch64.so.1', '--library-path', '$libs']

[properties]
run_wrapper = 'qemu-aarch64-static $dir/root/lib/ld-linux-aarch64.so.1 --library-path $libs'
vm_root = '$dir/root'
vm_kernel_dir = '$dir/kernel'
EOF
echo "$stamp" > "$dir/.stamp"
echo "$dir"
