#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# No two source files call each other, directly or around a loop: the
# files of the libraries given form layers (a command file calls down into
# the modules below it, never into another command's file, and nothing
# below calls back up). The include check (include_cycles.sh) sees
# headers; a call through a header shared by many files it cannot see,
# the objects' symbols can.
#
#   call_cycles.sh LIB.a...
#
# File A calls B when A's object has an undefined symbol that B's object
# defines (nm). Prints each loop with a symbol that makes each step and
# exits 1; prints "ok" and exits 0 when there is none.

set -euo pipefail
[ $# -gt 0 ] || { echo "usage: call_cycles.sh LIB.a..." >&2; exit 2; }

for lib in "$@"; do
	# "lib.a:member.c.o: [address] TYPE symbol"; a member's name is its source file's.
	nm -A "$lib"
done | awk -f "$(dirname "$0")/loops.awk" -f <(cat <<'EOF'
{
	# Named with their library: common/ and a plugin may each have an ib.c.
	split($1, p, ":")
	lib = p[1]
	sub(/^.*\/(lib)?/, "", lib)
	sub(/\.a$/, "", lib)
	f = p[2]
	sub(/\.o$/, "", f)
	sub(/^.*\//, "", f)
	f = lib "/" f
	type = $(NF - 1)
	sym = $NF
	if (type == "U")
		uses[++nu] = f SUBSEP sym
	else if (type ~ /^[TDBRVW]$/)
		def[sym] = f
	files[f] = 1
}
END {
	for (i = 1; i <= nu; i++) {
		split(uses[i], u, SUBSEP)
		a = u[1]
		if (!(u[2] in def))
			continue
		b = def[u[2]]
		if (a == b || (a, b) in why)
			continue
		out[a, ++nout[a]] = b
		why[a, b] = a " calls " u[2] "() of " b
		edges++
	}
	if (edges == 0) {
		print "no call between the files of the libraries given: nothing was checked"
		exit 1
	}
	for (m in files)
		if (!color[m])
			visit(m)
	if (found) {
		print found " call loop(s) between source files"
		exit 1
	}
	print "ok - " edges " calls between " length(files) " files, no loop"
}
EOF
)
