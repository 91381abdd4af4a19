#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pool-ipam under contention and under SIGKILL:
#   POOL_CONC_N ADDs (default 1000) from POOL_CONC_P parallel callers (default 16)
#   give distinct addresses, and as many DELs leave the pool empty;
#   writers killed at random instants leave a valid store in which every
#   ADD that returned success still holds its address, and no address is
#   held twice.
# Counts are variables so slow builds (valgrind, sanitizers) can run less.
. "$(dirname "$0")/lib.sh"

N=${POOL_CONC_N:-1000}
P=${POOL_CONC_P:-16}
KILL_WRITERS=${POOL_KILL_WRITERS:-8}
KILL_ROUNDS=${POOL_KILL_ROUNDS:-40}
KILL_MAX_MS=${POOL_KILL_MAX_MS:-30}	# raise it for slow builds, so some ADDs finish

DATA=$T_TMP/data
NS=$(t_netns) || { echo "cannot create a netns"; exit 1; }
PLUGIN=$(t_cni_path)/pool-ipam
export PLUGIN NS

conf() { # NAME VERSION
	printf '{"cniVersion":"%s","name":"%s","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s","subnet":"10.128.0.0/16"}}' \
		"$2" "$1" "$DATA"
}
conf conc 1.1.0 > "$T_TMP/conc.json"
conf kill 1.1.0 > "$T_TMP/kill.json"
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

# writer W: KILL_ROUNDS ADDs, each SIGKILLed after a random delay below KILL_MAX_MS;
# an ADD that exited 0 before the kill is recorded with its output.
writer() {
	local w=$1 i id pid rc delay
	for ((i = 0; i < KILL_ROUNDS; i++)); do
		id=k$w-$i
		CNI_COMMAND=ADD CNI_CONTAINERID=$id CNI_IFNAME=net1 CNI_NETNS=$NS CNI_PATH=/nonexistent \
			"$PLUGIN" < "$KILL_CONF" > "$OUT/$id.kadd" 2>/dev/null &
		pid=$!
		delay=$((RANDOM % KILL_MAX_MS))
		sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rc=$?
		[ "$rc" = 0 ] && echo "$id" >> "$OUT/ok.$w"
	done
}
export -f writer
export KILL_CONF=$T_TMP/kill.json KILL_ROUNDS KILL_MAX_MS

t_begin "SIGKILLed writers leave a valid store and lose no successful ADD"
for ((w = 0; w < KILL_WRITERS; w++)); do writer "$w" & done
wait
cat "$OUT"/ok.* 2>/dev/null | sort > "$T_TMP/ok"
echo "# $(wc -l < "$T_TMP/ok") of $((KILL_WRITERS * KILL_ROUNDS)) killed ADDs had returned success"
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
t_eq "$(for f in "$T_TMP"/ok; do while read -r id; do jq -r '.ips[0].address' < "$OUT/$id.kadd"; done < "$f"; done | sort | uniq -d | wc -l)" 0 "addresses returned twice"
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
