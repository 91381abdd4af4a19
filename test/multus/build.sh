#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# test/multus/build.sh CHAIN_DIR: Multus v4.2.4 (multus, multus-shim,
# multus-daemon) built from its source archive, offline, and the fake node
# of the multus suite (fakenode: API server and kubelet pod-resources
# endpoint) built inside the same module tree against Multus's vendored
# client-go and podresources API. Binaries land in CHAIN_DIR/multus/bin.
#
# The archive is $SRIOV_RDMA_PEERS/multus-cni-v4.2.4.tar.xz (default: the
# shared/peers folder beside the checkout). Builds only when the archive,
# the Go version or the fake's sources changed (stamp CHAIN_DIR/multus/stamp);
# Go's build cache stays where Go keeps it. Exits non-zero on any failure.
set -euo pipefail

die() { echo "test/multus/build.sh: $*" >&2; exit 1; }

[ $# = 1 ] || die "usage: test/multus/build.sh CHAIN_DIR"
here=$(cd "$(dirname "$0")" && pwd)
src_root=$(cd "$here/../.." && pwd)
peers=${SRIOV_RDMA_PEERS:-$(cd "$src_root/.." && pwd)/shared/peers}
archive=$peers/multus-cni-v4.2.4.tar.xz
want_sha=f51f9efa3a8620f71ebbfd028bfa9e89751022aafca1c48deb964ef826434c8b

[ -f "$archive" ] || die "no Multus source archive at $archive (set SRIOV_RDMA_PEERS to the folder holding multus-cni-v4.2.4.tar.xz)"

go=
for g in /usr/lib/go-1.24/bin/go "$(command -v go || true)"; do
	[ -n "$g" ] && [ -x "$g" ] || continue
	case $("$g" env GOVERSION 2>/dev/null) in go1.2[4-9]*|go1.[3-9]*) go=$g; break ;; esac
done
[ -n "$go" ] || die "no Go 1.24 or newer (scripts/setup chain installs golang-1.24-go)"

mkdir -p "$1"
out=$(cd "$1" && pwd)/multus
mkdir -p "$out"

sha=$(sha256sum "$archive" | cut -d' ' -f1)
[ "$sha" = "$want_sha" ] || die "$archive: sha256 $sha, want $want_sha (see peers/README.md)"
stamp="archive $sha
go $("$go" env GOVERSION)
fakenode $(cat "$here"/fakenode/*.go | sha256sum | cut -d' ' -f1)"

bins="multus multus-shim multus-daemon fakenode"
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ]; then
	ok=1
	for b in $bins; do [ -x "$out/bin/$b" ] || ok=0; done
	[ "$ok" = 0 ] || exit 0
fi

echo "test/multus/build.sh: building Multus v4.2.4 and the fake node into $out (a few minutes cold)"
rm -rf "${out:?}/src" "${out:?}/bin" "${out:?}/stamp"
mkdir -p "$out/src" "$out/bin"
tar -xJf "$archive" -C "$out/src" || die "cannot extract $archive"
tree=$out/src/multus-cni-v4.2.4
[ -f "$tree/go.mod" ] || die "$archive holds no multus-cni-v4.2.4/go.mod"
# The archive asks for go 1.24.11; Debian's 1.24 builds it (GOTOOLCHAIN=local).
sed -i 's/^go 1\.24\.[0-9]*$/go 1.24/' "$tree/go.mod"
mkdir -p "$tree/test/sriovrdma-fakenode"
cp "$here"/fakenode/*.go "$tree/test/sriovrdma-fakenode/"

(
	cd "$tree"
	export GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOPROXY=off CGO_ENABLED=0
	"$go" build -o "$out/bin/" ./cmd/multus ./cmd/multus-shim ./cmd/multus-daemon
	"$go" build -o "$out/bin/fakenode" ./test/sriovrdma-fakenode
) || die "go build failed (see above)"
for b in $bins; do [ -x "$out/bin/$b" ] || die "$b was not built"; done
printf '%s\n' "$stamp" > "$out/stamp"
echo "test/multus/build.sh: built $bins"
