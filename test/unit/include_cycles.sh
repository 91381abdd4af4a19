#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# No two modules of a folder (common/, a plugin's) use each other, directly
# or around a loop.
#
#   include_cycles.sh DIR
#
# A module is a header's name: foo.h, and every foo.c, foo_*.c that has no
# header of its own, and foo_int.h, its private header (link_ip.c and
# link_int.h are link's).
# Module A uses B when a file of A includes "B.h". Prints each loop with the
# includes that make it and exits 1; prints "ok" and exits 0 when there is
# none.

set -euo pipefail
dir=${1:?usage: include_cycles.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$dir"
name=$(basename "$dir")

for f in *.c *.h; do
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		while read -r inc; do
			if [ -f "$inc" ]; then
				printf 'edge %s %s\n' "$f" "$inc"
			fi
		done
	printf 'file %s\n' "$f"
done | awk -v name="$name" -f "$here/loops.awk" -f <(cat <<'EOF'
# The module of a file: its own header, else the longest header name that
# prefixes it followed by "_".
function module_of(f,    stem, best, m) {
	stem = f
	sub(/\.[ch]$/, "", stem)
	if (stem in mods)
		return stem
	best = ""
	for (m in mods)
		if (index(stem, m "_") == 1 && length(m) > length(best))
			best = m
	return best == "" ? stem : best
}
$1 == "file" && $2 ~ /\.h$/ && $2 !~ /_int\.h$/ { s = $2; sub(/\.h$/, "", s); mods[s] = 1 }
$1 == "edge" { ne++; ef[ne] = $2; et[ne] = $3 }
END {
	for (i = 1; i <= ne; i++) {
		a = module_of(ef[i])
		b = module_of(et[i])
		if (a == b)
			continue
		if (!((a, b) in why)) {
			out[a, ++nout[a]] = b
			why[a, b] = ef[i] " includes " et[i]
		}
		all[a] = all[b] = 1
	}
	for (m in all)
		if (!color[m])
			visit(m)
	if (found) {
		print found " include loop(s) between modules of " name "/"
		exit 1
	}
	print "ok - no include loops between modules of " name "/"
}
EOF
)
