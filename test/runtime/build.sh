#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds CRI-O (crio, pinns, copyimg) and crictl from their source archives,
# offline, into a chain directory:
#
#   test/runtime/build.sh CHAIN_DIR
#
# The archives come from $SRIOV_RDMA_PEERS (default: shared/peers beside the
# checkout). Idempotent: a stamp in CHAIN_DIR/runtime records the archives'
# sha256, the Go version and the sha256 of this script; nothing is rebuilt
# while they match and the binaries are there. Any failure (a missing
# archive or Go, a failed build) is reported and exits non-zero.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# = 1 ] || { echo "runtime build: usage: $0 CHAIN_DIR" >&2; exit 2; }
mkdir -p "$1"
chain=$(cd "$1" && pwd)
peers=${SRIOV_RDMA_PEERS:-$(cd "$root/.." && pwd)/shared/peers}
out=$chain/runtime
GO=${GO:-/usr/lib/go-1.24/bin/go}

CRIO=cri-o-v1.33.13
CRICTL=cri-tools-v1.33.0
CRIO_TAGS="containers_image_ostree_stub containers_image_openpgp exclude_graphdriver_btrfs btrfs_noversion exclude_graphdriver_devicemapper libsqlite3"

die() { echo "runtime build: $*" >&2; exit 1; }

for a in "$CRIO" "$CRICTL"; do
	[ -f "$peers/$a.tar.xz" ] || die "missing source archive $peers/$a.tar.xz (set SRIOV_RDMA_PEERS)"
done
[ -x "$GO" ] || die "Go 1.24 not found at $GO (scripts/setup chain installs golang-1.24-go)"
for t in xz tar make gcc; do
	command -v "$t" >/dev/null || die "'$t' not found (scripts/setup chain installs it)"
done

goversion=$("$GO" version) || die "'$GO version' failed"
stamp_want=$(
	echo "$goversion"
	sha256sum "$peers/$CRIO.tar.xz" "$peers/$CRICTL.tar.xz" | awk '{ print $1 }'
	sha256sum "$here/build.sh" | awk '{ print $1 }'
)
bins="crio pinns copyimg crictl"
have_all() {
	local b
	for b in $bins; do [ -x "$out/bin/$b" ] || return 1; done
}
if have_all && [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp_want" ]; then
	echo "runtime build: up to date in $out"
	exit 0
fi

echo "runtime build: building CRI-O and crictl into $out (a few minutes cold)"
rm -rf "$out/src" "$out/stamp"
mkdir -p "$out/src" "$out/bin"
tar -C "$out/src" -xJf "$peers/$CRIO.tar.xz" || die "cannot unpack $CRIO.tar.xz"
tar -C "$out/src" -xJf "$peers/$CRICTL.tar.xz" || die "cannot unpack $CRICTL.tar.xz"
crio_src=$(find "$out/src" -maxdepth 2 -name go.mod -path '*cri-o*' -printf '%h\n' | head -n 1)
crictl_src=$(find "$out/src" -maxdepth 2 -name go.mod -path '*cri-tools*' -printf '%h\n' | head -n 1)
[ -d "$crio_src/cmd/crio" ] || die "no cmd/crio in $CRIO.tar.xz"
[ -d "$crictl_src/cmd/crictl" ] || die "no cmd/crictl in $CRICTL.tar.xz"

# Debian's Go is 1.24.4: a go.mod asking for a later 1.24.x is lowered.
for d in "$crio_src" "$crictl_src"; do
	sed -i -E 's/^go 1\.24\.[0-9]+$/go 1.24/' "$d/go.mod"
	sed -i -E '/^toolchain /d' "$d/go.mod"
done

export GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOPROXY=off GOWORK=off
(
	cd "$crio_src"
	CGO_ENABLED=1 "$GO" build -trimpath -tags "$CRIO_TAGS" -o "$out/bin/crio" ./cmd/crio
	CGO_ENABLED=1 "$GO" build -trimpath -tags "$CRIO_TAGS" -o "$out/bin/copyimg" ./test/copyimg
	make -C pinns >/dev/null
	cp bin/pinns "$out/bin/pinns"
) || die "CRI-O build failed"
(
	cd "$crictl_src"
	CGO_ENABLED=0 "$GO" build -trimpath -o "$out/bin/crictl" ./cmd/crictl
) || die "crictl build failed"
have_all || die "a binary is missing after the build"
rm -rf "$out/src"
echo "$stamp_want" >"$out/stamp"
echo "runtime build: done: $(cd "$out/bin" && echo $bins)"
