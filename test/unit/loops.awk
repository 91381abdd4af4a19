# SPDX-License-Identifier: Apache-2.0
# The loop search shared by include_cycles.sh and call_cycles.sh: the
# caller fills out[node, 1..nout[node]] (the edges) and why[from, to] (what
# makes each), then calls visit() on every node not yet coloured. Each loop
# is printed with the why of each step; found counts them.
# Depth-first search; a grey node met again closes a loop.
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
