#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pool-ipam under contention and under SIGKILL:
#   POOL_CONC_N ADDs (default 1000) from POOL_CONC_P parallel callers (default 16)
#   give distinct addresses, and as many DELs leave the pool empty;
#   writers killed at random instants leave a valid store in which every
#   ADD that returned success still holds its address, and no address is
#   held twice.
# Counts are variables so slow builds (valgrind, sanitizers) can run less.
# The kill instants need no tuning: they fall within twice the median
# duration of an ADD measured first, with the plugin as PLUGIN_WRAPPER runs
# it and as many writers, so in any build some ADDs finish and some die
# half-way; the test fails when either kind is missing.
. "$(dirname "$0")/lib.sh"

N=${POOL_CONC_N:-1000}
P=${POOL_CONC_P:-16}
KILL_WRITERS=${POOL_KILL_WRITERS:-8}
KILL_ROUNDS=${POOL_KILL_ROUNDS:-40}
CAL_ROUNDS=3	# ADDs per writer that measure the kill window

DATA=$T_TMP/data
NS=$(t_netns) || { echo "cannot create a netns"; exit 1; }
PLUGIN=$(t_cni_path)/pool-ipam
export PLUGIN NS

conf() { # NAME VERSION
	printf '{"cniVersion":"%s","name":"%s","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s","subnet":"10.128.0.0/16"}}' \
		"$2" "$1" "$DATA"
}
conf conc 1.1.0 > "$T_TMP/conc.json"
KILL_CONF=$T_TMP/kill.json CAL_CONF=$T_TMP/cal.json
conf kill 1.1.0 > "$KILL_CONF"
conf cal 1.1.0 > "$CAL_CONF"
export CONC_CONF=$T_TMP/conc.json OUT=$T_TMP/out
mkdir -p "$OUT"

# one VERB ID: one plugin run; stdout to $OUT/ID.VERB, exit code to $OUT/ID.VERB.rc
one() {
	CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_IFNAME=net1 CNI_NETNS=$NS CNI_PATH=/nonexistent \
		"$PLUGIN" < "$CONC_CONF" > "$OUT/$2.$1" 2>/dev/null
	echo $? > "$OUT/$2.$1.rc"
}
export -f one

t_begin "$N ADDs from $P parallel callers give $N distinct addresses"
seq -f 'c%g' 1 "$N" | xargs -P "$P" -I{} bash -c 'one ADD {}'
t_eq "$(cat "$OUT"/*.ADD.rc | grep -cvx 0)" 0 "failed ADDs"
t_eq "$(cat "$OUT"/*.ADD | jq -r '.ips[0].address' | sort -u | wc -l)" "$N" "distinct addresses"
t_eq "$(find "$DATA/conc" -name 'a-*' | wc -l)" "$N" "a- records"
t_eq "$(find "$DATA/conc" -name 'c-*' -links 2 | wc -l)" "$N" "complete c- records"

t_begin "$N DELs from $P parallel callers leave an empty pool"
seq -f 'c%g' 1 "$N" | xargs -P "$P" -I{} bash -c 'one DEL {}'
t_eq "$(cat "$OUT"/*.DEL.rc | grep -cvx 0)" 0 "failed DELs"
t_eq "$(find "$DATA/conc" -name 'a-*' -o -name 'c-*' | wc -l)" 0 "records left"
t_eq "$(find "$DATA/conc/tmp" -type f | wc -l)" 0 "temp files left"

# A wait in microseconds without a fork: a read that times out on a FIFO
# nobody writes to (every writer holds it open, so it never sees EOF).
mkfifo "$T_TMP/never"
exec {NEVER_FD}<>"$T_TMP/never"
pause_us() {
	local t
	printf -v t '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000))
	read -r -t "$t" -u "$NEVER_FD" _ || :
}

# calibrator W: CAL_ROUNDS ADDs run to completion, their durations (us) to $OUT/cal.W
calibrator() {
	local w=$1 i t0 t1
	for ((i = 0; i < CAL_ROUNDS; i++)); do
		t0=${EPOCHREALTIME/./}
		CNI_COMMAND=ADD CNI_CONTAINERID=cal$w-$i CNI_IFNAME=net1 CNI_NETNS=$NS CNI_PATH=/nonexistent \
			"$PLUGIN" < "$CAL_CONF" > /dev/null 2>&1 || echo "cal$w-$i" >> "$OUT/calfail"
		t1=${EPOCHREALTIME/./}
		echo $((t1 - t0)) >> "$OUT/cal.$w"
	done
}

# writer W: KILL_ROUNDS ADDs, each SIGKILLed after a random delay below
# KILL_WINDOW_US; each ID goes to ok.W (exited 0 before the kill), killed.W
# (died of the SIGKILL) or failed.W (exited with an error on its own).
writer() {
	local w=$1 i id pid rc
	for ((i = 0; i < KILL_ROUNDS; i++)); do
		id=k$w-$i
		CNI_COMMAND=ADD CNI_CONTAINERID=$id CNI_IFNAME=net1 CNI_NETNS=$NS CNI_PATH=/nonexistent \
			"$PLUGIN" < "$KILL_CONF" > "$OUT/$id.kadd" 2>/dev/null &
		pid=$!
		pause_us $(((RANDOM << 15 | RANDOM) % KILL_WINDOW_US))
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rc=$?
		case $rc in
		0) echo "$id" >> "$OUT/ok.$w" ;;
		137) echo "$id" >> "$OUT/killed.$w" ;;
		*) echo "$id exited $rc" >> "$OUT/failed.$w" ;;
		esac
	done
}

t_begin "SIGKILLed writers leave a valid store and lose no successful ADD"
# The ADDs of the kill phase wait for the lock behind each other: measure
# them with as many writers in parallel.
for ((w = 0; w < KILL_WRITERS; w++)); do calibrator "$w" & done
wait
t_eq "$(cat "$OUT"/calfail 2>/dev/null | wc -l)" 0 "failed ADDs while measuring"
median_us=$(cat "$OUT"/cal.* | sort -n | awk '{ d[NR] = $1 } END { print d[int((NR + 1) / 2)] }')
KILL_WINDOW_US=$((2 * median_us + 1))
for ((w = 0; w < KILL_WRITERS; w++)); do writer "$w" & done
wait
cat "$OUT"/ok.* 2>/dev/null | sort > "$T_TMP/ok"
n_ok=$(wc -l < "$T_TMP/ok")
n_killed=$(cat "$OUT"/killed.* 2>/dev/null | wc -l)
echo "# kill window 0-$((KILL_WINDOW_US / 1000)) ms (2 x the median ADD, $((median_us / 1000)) ms, of $((KILL_WRITERS * CAL_ROUNDS)) measured)"
echo "# of $((KILL_WRITERS * KILL_ROUNDS)) ADDs under SIGKILL: $n_ok had returned success, $n_killed were killed before finishing"
[ "$n_ok" -gt 0 ] || t_fail "no ADD returned before its SIGKILL: nothing shows that a successful ADD survives"
[ "$n_killed" -gt 0 ] || t_fail "every ADD finished before its SIGKILL: nothing shows that a half-done ADD is cleaned up"
t_eq "$(cat "$OUT"/failed.* 2>/dev/null)" "" "ADDs that failed on their own"
# an operation under the lock clears what dead writers left; GC also reads every c- record
valid=$(jq -R '{containerID: ., ifname: "net1"}' < "$T_TMP/ok" | jq -sc .)
printf '{"cniVersion":"1.1.0","name":"kill","type":"pool-ipam","cni.dev/valid-attachments":%s,"ipam":{"type":"pool-ipam","dataDir":"%s","subnet":"10.128.0.0/16"}}' \
	"$valid" "$DATA" > "$T_TMP/gc.json"
t_exec pool-ipam GC "$(cat "$T_TMP/gc.json")"
t_eq "$T_RC" 0 "GC over the store (every record readable: $T_OUT)"
t_eq "$(find "$DATA/kill/tmp" -type f | wc -l)" 0 "temp files after the next operation"
t_eq "$(find "$DATA/kill" -name 'a-*' -links 1 | wc -l)" 0 "half-made a- records after GC"
lost=0
while read -r id; do
	addr=$(jq -r '.ips[0].address' < "$OUT/$id.kadd")
	addr=${addr%/*}
	rec=$DATA/kill/c-$id:net1.0
	if [ ! -f "$rec" ] || [ ! -f "$DATA/kill/a-$addr" ] ||
	   [ "$(stat -c %i "$rec")" != "$(stat -c %i "$DATA/kill/a-$addr")" ]; then
		t_fail "$id: ADD returned $addr but its reservation is missing or differs"
		lost=$((lost + 1))
	fi
	t_exec pool-ipam CHECK "$(cat "$KILL_CONF")" CNI_CONTAINERID="$id" CNI_IFNAME=net1 CNI_NETNS="$NS"
	[ "$T_RC" = 0 ] || t_fail "$id: CHECK failed: $T_OUT"
done < "$T_TMP/ok"
t_eq "$lost" 0 "successful ADDs whose reservation was lost"
t_eq "$(while read -r id; do jq -r '.ips[0].address' < "$OUT/$id.kadd"; done < "$T_TMP/ok" | sort | uniq -d | wc -l)" 0 "addresses returned twice"
t_eq "$(find "$DATA/kill" -name 'c-*' -printf '%i\n' | sort | uniq -d | wc -l)" 0 "records shared by two owners"
bad=$(find "$DATA/kill" -name 'a-*' -print0 | xargs -0 -r python3 -c '
import sys, zlib
bad = 0
for name in sys.argv[1:]:
    data = open(name, "rb").read()
    if data[-16:] != b"#crc32=%08x\n" % zlib.crc32(data[:-16]):
        bad += 1
print(bad)')
t_eq "${bad:-0}" 0 "records with a bad checksum"

t_done
