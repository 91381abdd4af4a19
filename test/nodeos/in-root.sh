#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Run COMMAND with PLUGIN_ROOT set to a throwaway node made from NODE_IMAGE
# (a root test/nodeos/mkroot.sh made; default build-nodeos/root in the
# source tree): an overlay on it whose writes vanish,
# with what a plugin on a node sees there: /proc, /sys, /dev, /run/netns
# (new namespaces show there as they are made) and the CNI peers of
# /usr/lib/cni, read-only (static binaries: no library comes with them). The
# test's own tools run outside it (test/netns/lib.sh, PLUGIN_ROOT). All in a
# mount namespace of its own: nothing is left mounted on the machine.
#
#   NODE_IMAGE=DIR [NODE_LAYER=DIR] test/nodeos/in-root.sh COMMAND [ARG...]
#
# Without the root it exits 77 (a skip, for meson test).
set -euo pipefail

if [ -z "${IN_ROOT_PRIVATE:-}" ]; then
	IN_ROOT_PRIVATE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
[ $# -ge 1 ] || { echo "usage: NODE_IMAGE=DIR $0 COMMAND [ARG...]" >&2; exit 2; }
image=${NODE_IMAGE:-$(cd "$(dirname "$0")/../.." && pwd)/build-nodeos/root}
if [ ! -x "$image/bin/sh" ]; then
	echo "SKIP: no node root at $image (test/nodeos/mkroot.sh build-nodeos makes one)"
	exit 77
fi

top=$(mktemp -d /tmp/cni-root.XXXXXX)
trap 'umount -R "$top" 2>/dev/null; rmdir "$top"' EXIT
mount -t tmpfs -o mode=0755 tmpfs "$top"
mkdir "$top/upper" "$top/work" "$top/root"
# NODE_LAYER: a directory laid over the root first (mkroot.sh's curl).
lower=$image
if [ -n "${NODE_LAYER:-}" ]; then
	[ -d "$NODE_LAYER" ] || { echo "SKIP: no layer at $NODE_LAYER (test/nodeos/mkroot.sh makes it)"; exit 77; }
	lower=$NODE_LAYER:$image
fi
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$top/upper,workdir=$top/work" "$top/root"
root=$top/root
for d in proc sys dev; do
	mount --rbind "/$d" "$root/$d"
	mount --make-rslave "$root/$d"
done
# A shared /run/netns, bound into the root as its peer: every namespace
# `ip netns add` makes from now on is mounted in both.
mkdir -p /run/netns "$root/run/netns"
mount --make-shared /run/netns 2>/dev/null ||
	{ mount --bind /run/netns /run/netns && mount --make-shared /run/netns; }
mount --rbind /run/netns "$root/run/netns"
if [ -d /usr/lib/cni ]; then
	mkdir -p "$root/usr/lib/cni"
	mount --bind /usr/lib/cni "$root/usr/lib/cni"
	mount -o remount,bind,ro "$root/usr/lib/cni"
fi

export PLUGIN_ROOT=$root
rc=0
"$@" || rc=$?
exit "$rc"
