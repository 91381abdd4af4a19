#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Unpack Debian's containerd of a release, and the CRI API its client is
# generated from, into a cache directory, without installing them: two
# containerds side by side, neither the machine's.
#
#   test/containerd/debs.sh CACHE_DIR SUITE
#
# Prints the directory holding SUITE's containerd (usr/bin/containerd,
# ctr, containerd-shim-runc-v2) and writes CACHE_DIR/cri-api/api.proto.
# A second run finds both there and downloads nothing. trixie's packages
# need the apt source scripts/setup clients adds.
set -euo pipefail

cache=$1 suite=$2
mkdir -p "$cache"
cd "$cache"

# Several tests may unpack at once; one does it, the others find it done.
exec 9>"$cache/.lock"
flock 9

# unpack PACKAGE/SUITE DIR: the newest version of PACKAGE in SUITE, once.
unpack() {
	local what=$1 dir=$2 deb
	[ -e "$dir/.done" ] && return 0
	rm -rf "$dir" "$dir.debs"
	mkdir -p "$dir.debs"
	if ! (cd "$dir.debs" && apt-get download -q -o APT::Sandbox::User=root "$what" >&2); then
		echo "debs.sh: cannot download $what (scripts/setup clients adds the $suite source)" >&2
		return 1
	fi
	deb=$(echo "$dir.debs"/*.deb)
	dpkg-deb -x "$deb" "$dir"
	dpkg-deb -f "$deb" Version >"$dir/.version"
	rm -rf "$dir.debs"
	touch "$dir/.done"
}

unpack "containerd/$suite" "containerd-$suite"
if [ ! -e cri-api/api.proto ]; then
	unpack golang-github-kubernetes-cri-api-dev/trixie cri-api-deb
	mkdir -p cri-api
	cp "$(find cri-api-deb -path '*/cri-api/pkg/apis/runtime/v1/api.proto')" cri-api/api.proto.tmp
	mv cri-api/api.proto.tmp cri-api/api.proto
fi
echo "$cache/containerd-$suite"
