#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The node of the node's OS stage: DIR/root, a Debian 11 root made by
# debootstrap --variant=minbase from the machine's own apt source, with
# nothing of the project's libraries (no libcjson1, libmnl0, libnl, ...).
# The tests never write to it: each mounts an overlay on it
# (test/nodeos/in-root.sh). Made once, kept; prints DIR/root.
#
# Beside it, DIR/curl: what installing libcurl4 and libyaml-0-2 adds to that
# root, Debian 11's (libcurl 7.74, older than the blob options pool-ipam
# prefers), unpacked with dpkg -x, for an overlay over the root
# (in-root.sh's NODE_LAYER) in which cluster pools are read; DIR/curl.version
# names the libcurl4 package's version.
#
#   test/nodeos/mkroot.sh DIR
set -euo pipefail

SUITE=bullseye

[ $# = 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
command -v debootstrap >/dev/null ||
	{ echo "mkroot: debootstrap is needed (scripts/setup test installs it)" >&2; exit 1; }
# shellcheck source=SCRIPTDIR/../../scripts/apt-source.sh
. "$(dirname "$0")/../../scripts/apt-source.sh"

mkdir -p "$1"
dir=$(cd "$1" && pwd)
exec 9>"$dir/.lock"
flock 9
if [ -f "$dir/root.done" ] && [ -x "$dir/root/bin/sh" ] && [ -f "$dir/curl.done" ]; then
	echo "$dir/root"
	exit 0
fi
host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
read -r uri key < <(release_uri "$host" | head -n 1) || true
[ -n "${uri:-}" ] || { echo "mkroot: no apt source serves '$host': no mirror to take $SUITE from" >&2; exit 1; }

# make_curl_layer: DIR/curl, with apt's own view of the root (its package
# database), so that only what the root lacks is downloaded.
make_curl_layer() {
	local apt=$dir/apt deb
	rm -rf "$dir/curl" "$dir/curl.done" "$dir/curl.version" "$apt"
	private_apt "$apt" amd64
	cp "$dir/root/var/lib/dpkg/status" "$apt/status"
	printf 'deb %s%s %s main\n' "${key:+[signed-by=$key] }" "$uri" "$SUITE" > "$apt/etc/sources.list"
	{ apt-get "${APT_OPTS[@]}" update &&
		apt-get "${APT_OPTS[@]}" install --download-only -y --no-install-recommends libcurl4 libyaml-0-2
	} > "$dir/curl.log" 2>&1 ||
		{ echo "mkroot: downloading libcurl4 failed: $(tail -n 3 "$dir/curl.log")" >&2; return 1; }
	mkdir -p "$dir/curl"
	for deb in "$apt"/cache/archives/*.deb; do
		dpkg -x "$deb" "$dir/curl"
	done
	dpkg-deb -f "$apt"/cache/archives/libcurl4_*.deb Version > "$dir/curl.version"
	rm -rf "$apt"
	touch "$dir/curl.done"
}

if [ -f "$dir/root.done" ] && [ -x "$dir/root/bin/sh" ]; then
	make_curl_layer
	echo "$dir/root"
	exit 0
fi
rm -rf "$dir/root" "$dir/root.done"
debootstrap --variant=minbase ${key:+--keyring="$key"} "$SUITE" "$dir/root" "$uri" \
	>"$dir/debootstrap.log" 2>&1 ||
	{ echo "mkroot: debootstrap failed: $(tail -n 5 "$dir/debootstrap.log")" >&2; exit 1; }
# What a node of this release has: no library of the project's.
for lib in libcjson.so.1 libmnl.so.0 libnl-3.so.200 libnl-route-3.so.200 libibverbs.so.1 \
	libcurl.so.4 libyaml-0.so.2; do
	if [ -n "$(find "$dir/root" -name "$lib" -print -quit)" ]; then
		echo "mkroot: $dir/root holds $lib: a minbase root should not" >&2
		exit 1
	fi
done
rm -rf "$dir/root/var/cache/apt/archives"/*.deb
touch "$dir/root.done"
make_curl_layer
echo "$dir/root"
