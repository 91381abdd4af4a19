#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pool-ipam killed at every system call of an ADD and of a DEL (strace
# fault injection: the kill lands exactly there, not at a random time), and
# failed with a full disk at each write. After each, the DEL the runtime
# sends exits 0 and leaves nothing of that attachment in the store, and a
# pod that holds addresses all along keeps them: no address is ever held
# twice. Dual stack, so a kill can fall between the two reservations.
. "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || { echo "SKIP: strace not installed (scripts/setup test)"; exit 77; }
# LeakSanitizer ptraces the process at exit, which it cannot do under
# strace: it aborts. Leaks are the other suites' business.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

DATA=$T_TMP/data
STORE=$DATA/crash
NS=$(t_netns) || { echo "cannot create a netns"; exit 1; }
PLUGIN=$BUILD_DIR/plugins/pool-ipam/pool-ipam
CONF=$(printf '{"cniVersion":"1.1.0","name":"crash","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s","ranges":[[{"subnet":"10.77.0.0/29"}],[{"subnet":"fd77::/125"}]]}}' "$DATA")

# pool CMD CID [strace options...]: one run of the plugin, optionally under
# strace; output in T_OUT, exit code in T_RC.
pool() {
	local cmd=$1 cid=$2
	shift 2
	if [ $# -gt 0 ]; then
		T_OUT=$(printf '%s' "$CONF" | env CNI_COMMAND="$cmd" CNI_CONTAINERID="$cid" CNI_IFNAME=net1 \
			CNI_NETNS="$NS" CNI_PATH=/nonexistent strace -f -o /dev/null "$@" "$PLUGIN" 2>"$T_TMP/stderr")
	else
		T_OUT=$(printf '%s' "$CONF" | env CNI_COMMAND="$cmd" CNI_CONTAINERID="$cid" CNI_IFNAME=net1 \
			CNI_NETNS="$NS" CNI_PATH=/nonexistent "$PLUGIN" 2>"$T_TMP/stderr")
	fi
	T_RC=$?
	T_ERR=$(cat "$T_TMP/stderr")
}

# The store holds the keeper's two reservations and nothing else.
only_keeper() { # what
	local entries
	entries=$(cd "$STORE" && ls -d a-* c-* r-* 2>/dev/null | sort | tr '\n' ' ')
	t_eq "$entries" "$KEEP_ENTRIES" "$1: only the keeper's reservations are left"
	t_eq "$(stat -c %i "$STORE/a-$KEEP4")" "$(stat -c %i "$STORE/c-keeper:net1.0")" \
		"$1: the keeper's IPv4 pair is intact"
	t_eq "$(stat -c %i "$STORE/a-$KEEP6")" "$(stat -c %i "$STORE/c-keeper:net1.1")" \
		"$1: the keeper's IPv6 pair is intact"
}

t_begin "a pod that holds addresses through every crash below"
pool ADD keeper
t_eq "$T_RC" 0 "ADD ($T_OUT)"
KEEP4=$(printf '%s' "$T_OUT" | jq -r '.ips[0].address | split("/")[0]')
KEEP6=$(printf '%s' "$T_OUT" | jq -r '.ips[1].address | split("/")[0]')
KEEP_ENTRIES="a-$KEEP4 a-$KEEP6 c-keeper:net1.0 c-keeper:net1.1 "
only_keeper "start"

# Every system call of one ADD and of one DEL, as "name:n" (the n-th call
# of that name): strace's when= counts each system call on its own. The
# first execve is strace starting the plugin, and exit_group ends it anyway.
instants() { # CMD FILE
	env CNI_COMMAND="$1" CNI_CONTAINERID=probe CNI_IFNAME=net1 CNI_NETNS="$NS" \
		CNI_PATH=/nonexistent strace -qq -o "$T_TMP/trace" "$PLUGIN" <<<"$CONF" 2>"$T_TMP/stderr" | cat >/dev/null
	awk 'match($0, /^[a-z_0-9]+\(/) { name = substr($0, 1, RLENGTH - 1); n[name]++
		if (name != "exit_group" && n["execve"] && !(name == "execve" && n[name] == 1))
			print name ":" n[name] }' "$T_TMP/trace" > "$2"
}
instants ADD "$T_TMP/add.instants"
instants DEL "$T_TMP/del.instants"
N_ADD=$(wc -l < "$T_TMP/add.instants")
N_DEL=$(wc -l < "$T_TMP/del.instants")
[ "$N_ADD" -gt 50 ] && [ "$N_DEL" -gt 50 ] || t_fail "strace saw $N_ADD calls in ADD, $N_DEL in DEL"
kill_at() { # CMD CID NAME:N
	pool "$1" "$2" -e trace="${3%%:*}" -e inject="${3%%:*}":signal=KILL:when="${3##*:}"
}

t_begin "ADD killed at each of its $N_ADD system calls, then DEL"
killed=0 finished=0 k=0
while read -r at; do
	k=$((k + 1))
	kill_at ADD "k$k" "$at"
	case $T_RC in
	0) finished=$((finished + 1)); echo "# not killed at $at" ;;
	137) killed=$((killed + 1)) ;;
	*) t_fail "ADD killed at $k: exit $T_RC ($T_OUT)" ;;
	esac
	pool DEL "k$k"
	[ "$T_RC" = 0 ] || t_fail "DEL after ADD killed at call $k: exit $T_RC ($T_OUT $T_ERR)"
	[ -z "$(find "$STORE" -mindepth 1 -maxdepth 1 ! -name lock ! -name tmp ! -name 'last.*' \
		! -name 'a-*' ! -name 'c-*' -printf '%f\n')" ] ||
		t_fail "unknown entries after a kill at $k: $(ls "$STORE")"
	only_keeper "ADD killed at $k" >/dev/null
done < "$T_TMP/add.instants"
echo "# $killed killed, $finished finished"
t_eq "$killed" "$N_ADD" "every ADD was killed ($killed of $N_ADD)"
only_keeper "after the ADD kills"

t_begin "ADD killed, then ADD again: the same attachment completes"
k=0
while read -r at; do
	k=$((k + 1))
	kill_at ADD "r$k" "$at"
	pool ADD "r$k"
	[ "$T_RC" = 0 ] || t_fail "ADD after ADD killed at $k: exit $T_RC ($T_OUT)"
	a4=$(printf '%s' "$T_OUT" | jq -r '.ips[0].address | split("/")[0]')
	[ "$a4" != "$KEEP4" ] || t_fail "the keeper's $KEEP4 handed out again after a kill at $k"
	[ "$(stat -c %h "$STORE/a-$a4")" = 2 ] || t_fail "r$k's reservation is not one pair after a kill at $k"
	pool DEL "r$k"
done < "$T_TMP/add.instants"
only_keeper "after the repeated ADDs"

t_begin "DEL killed at each of its system calls, then DEL again"
killed=0 k=0
while read -r at; do
	k=$((k + 1))
	pool ADD "d$k"
	[ "$T_RC" = 0 ] || t_fail "ADD d$k: exit $T_RC ($T_OUT)"
	kill_at DEL "d$k" "$at"
	[ "$T_RC" = 137 ] && killed=$((killed + 1))
	[ "$T_RC" = 137 ] || echo "# DEL not killed at $at"
	pool DEL "d$k"
	[ "$T_RC" = 0 ] || t_fail "DEL after DEL killed at $k: exit $T_RC ($T_OUT $T_ERR)"
	only_keeper "DEL killed at $k" >/dev/null
done < "$T_TMP/del.instants"
t_eq "$killed" "$N_DEL" "every DEL was killed ($killed of $N_DEL)"
only_keeper "after the DEL kills"

t_begin "a full disk is an I/O error naming the store, never an exhausted pool"
pool ADD full1 -e trace=write -e inject=write:error=ENOSPC:when=1
t_eq "$(t_jq .code)" 5 "code ($T_OUT)"
t_contains "$(t_jq .msg)" "$STORE" "message names the store"
t_contains "$(t_jq .msg)" "No space left on device" "message says why"
pool ADD full2 -e trace=linkat -e inject=linkat:error=ENOSPC
t_eq "$(t_jq .code)" 5 "a failed link too ($T_OUT)"
pool STATUS x -e trace=write -e inject=write:error=ENOSPC:when=1
t_eq "$(t_jq .code)" 50 "STATUS is not ready ($T_OUT)"
t_contains "$(t_jq .msg)" "$STORE" "STATUS names the store"
pool STATUS x
t_eq "$T_RC" 0 "STATUS is ready once the disk has room ($T_OUT)"
pool DEL full1
pool DEL full2
only_keeper "after the full disk"

t_begin "an exhausted pool names the network and the range set"
for i in 1 2 3 4 5 6; do pool ADD "x$i"; done
t_eq "$(t_jq .code)" 103 "code ($T_OUT)"
t_contains "$(t_jq .msg)" "network crash" "names the network"
t_contains "$(t_jq .msg)" "10.77.0.0/29" "names the range set"
for i in 1 2 3 4 5 6; do pool DEL "x$i"; done
only_keeper "after exhaustion"

t_done
