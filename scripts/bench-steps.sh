# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the benchmarks: goal_line, and step_medians for those that
# read the plugins' info lines.
#
# goal_line WHAT RATIO OP LIMIT: "goal: WHAT RATIOx (OP LIMITx) ok|over", the
# line scripts/bench's summary collects; returns 1 when over. OP is <= or >=.
goal_line() {
	local r verdict
	r=$(awk -v r="$2" 'BEGIN { printf "%.2f", r }')
	verdict=$(awk -v r="$r" -v op="$3" -v l="$4" 'BEGIN { print (op == "<=" ? r <= l : r >= l) ? "ok" : "over" }')
	printf 'goal: %s %sx (%s %sx) %s\n' "$1" "$r" "$3" "$4" "$verdict"
	[ "$verdict" = ok ]
}

# step_medians: from the info lines on stdin (sriov-rdma's "; steps a=1.2ms,
# ..., lock waits vf=0.1ms pf=2.0ms", pool-ipam's "; lock waits pool=0.3ms"),
# the median of each step over the lines, the steps that took any time;
# then the waits for the VF's, the PF's and the pool's locks, inside those
# steps.
step_medians() {
	grep -o '; steps .*\|; lock waits pool=.*' |
		sed 's/; steps //; s/; lock waits / lock waits /' | awk '
		{ w = 0
		  for (i = 1; i <= NF; i++) { sub(/,$/, "", $i)
			if ($i == "lock" || $i == "waits") { w = 1; continue }
			split($i, kv, "="); sub(/ms$/, "", kv[2]); if (w) kv[1] = "waited for " kv[1]
			if (!(kv[1] in seen)) { seen[kv[1]] = 1; order[++k] = kv[1] }
			v[kv[1], ++c[kv[1]]] = kv[2] + 0 } }
		END { for (j = 1; j <= k; j++) { s = order[j]; n = c[s]
			for (a = 1; a <= n; a++) x[a] = v[s, a]
			for (a = 2; a <= n; a++) { t = x[a]; for (b = a - 1; b >= 1 && x[b] > t; b--) x[b + 1] = x[b]; x[b + 1] = t }
			m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
			if (m >= 0.05) { printf "%s%s %.1f", sep, s, m; sep = ", " } }
			if (!k) printf "none logged" }'
}
