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
done | awk -v name="$name" '
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
# Depth-first search; a grey module met again closes a loop.
function visit(m,    n, i, j, loop) {
	color[m] = 1
	stack[++depth] = m
	for (i = 1; i <= nout[m]; i++) {
		n = out[m, i]
		if (color[n] == 1) {
			for (j = depth; stack[j] != n; j--)
				;
			loop = ""
			for (; j <= depth; j++)
				loop = loop stack[j] " -> "
			print "loop: " loop n
			for (j = depth; stack[j] != n; j--)
				;
			for (; j <= depth; j++)
				print "  " why[stack[j], j < depth ? stack[j + 1] : n]
			found++
		} else if (!color[n]) {
			visit(n)
		}
	}
	depth--
	color[m] = 2
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
}'
