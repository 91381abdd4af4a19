#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Run a command in a mount namespace of its own in which the build-id debug
# files are hidden, all but the dynamic linker's:
#
#   test/lean-debuginfo.sh COMMAND [ARGS...]
#
# scripts/test runs its valgrind stage this way. Debian strips ld.so's
# symbols, and memcheck must replace ld.so's strlen: that is why Debian's
# valgrind pulls in libc6-dbg. But valgrind then also reads libc's 4 MB of
# DWARF at every start, which is half of what one plugin run under it
# costs, and a netns test runs hundreds. Without that file valgrind names
# libc's functions from the symbols libc exports, as it does on the
# distributions that keep ld.so's own; errors in the project's code are
# found and reported as before. The rest of the machine keeps its files.
#
# Where no mount namespace can be made (no CAP_SYS_ADMIN, no unshare), the
# command runs as it is: slower, the same checks.
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: lean-debuginfo.sh COMMAND [ARGS...]" >&2; exit 2; }

ids=/usr/lib/debug/.build-id
if [ -z "${LEAN_DEBUGINFO_NS:-}" ]; then
	if [ -d "$ids" ] && command -v unshare >/dev/null &&
		unshare --mount --propagation private true 2>/dev/null; then
		LEAN_DEBUGINFO_NS=1 exec unshare --mount --propagation private "$0" "$@"
	fi
	exec "$@"
fi

# The dynamic linker's debug file, found by its build id.
command -v readelf >/dev/null || exec "$@"
interp=$(readelf -l /bin/sh | sed -n 's/.*interpreter: \(.*\)]$/\1/p') || exec "$@"
id=$(readelf -n "$interp" | awk '/Build ID/ { print $3 }') || exec "$@"
keep=$ids/${id:0:2}/${id:2}.debug
if [ -z "$id" ] || [ ! -f "$keep" ]; then
	echo "lean-debuginfo: no debug file for $interp: running with them all" >&2
	exec "$@"
fi
tmp=$(mktemp)
cp "$keep" "$tmp"
if ! mount -t tmpfs -o mode=0755 lean-debuginfo "$ids"; then
	rm -f "$tmp"
	echo "lean-debuginfo: cannot mount over $ids: running with them all" >&2
	exec "$@"
fi
mkdir -p "$ids/${id:0:2}"
cp "$tmp" "$keep"
rm -f "$tmp"
exec "$@"
