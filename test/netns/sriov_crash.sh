#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sriov-rdma under SIGKILL, as runtimes kill a plugin past its deadline and
# then call DEL: ADD killed at a random instant, DEL killed at a random
# instant, and pool-ipam (the delegated child) killed at a random instant
# inside an ADD. After each, the DEL the runtime sends brings the VF home
# with its name, MAC, MTU, PF-side settings (vlan, spoof check, MAC...) and
# RDMA device (name and namespace), clears the claim and the record, and
# releases the address; while an ADD holds an address, no other attachment
# holds it.
#
# CRASH_WORKERS workers (default 2) run side by side, each on its own VF,
# pod and RDMA device, on one PF (the recording fake) and one pool;
# CRASH_ROUNDS rounds each (default 60), a third of each kind. Counts are
# variables so slow builds (valgrind, sanitizers) can run less. The kill
# instants fall within twice the median ADD (or DEL, or pool-ipam ADD)
# measured first as PLUGIN_WRAPPER runs them, so some finish and some die
# half way in any build; the test fails when either kind is missing.
. "$(dirname "$0")/sriov_lib.sh"

WORKERS=${CRASH_WORKERS:-2}
ROUNDS=${CRASH_ROUNDS:-60}
CAL_ROUNDS=3
POOL=$T_TMP/pool
OUT=$T_TMP/out
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
mkdir -p "$OUT"

sr_setup "$WORKERS" || { echo "cannot set up the VFs"; exit 1; }

# A FIFO nobody writes to: a read on it waits without a fork.
mkfifo "$T_TMP/never"
# pool-ipam, killed after IPAM_KILL_US microseconds when that is set (ADD only).
cat > "$(t_cni_path)/crash-ipam" <<EOS
#!/bin/bash
[ "\$CNI_COMMAND" = ADD ] && [ -n "\${IPAM_KILL_US:-}" ] || exec "$(t_cni_path)/pool-ipam"
conf=\$(cat)
printf '%s' "\$conf" | "$(t_cni_path)/pool-ipam" &
pid=\$!
printf -v t '%d.%06d' \$((IPAM_KILL_US / 1000000)) \$((IPAM_KILL_US % 1000000))
read -r -t "\$t" _ <> "$T_TMP/never"
kill -9 "\$pid" 2>/dev/null
wait "\$pid"
EOS
chmod +x "$(t_cni_path)/crash-ipam"

for ((w = 0; w < WORKERS; w++)); do
	ip link set "$(sr_net $w)" mtu 1500
	sr_host_link "$(sr_net $w)" > "$OUT/orig.$w"
	grep "^vf=$w " "$SR_FAKE/$SR_PFNET.vfs" > "$OUT/pf.$w"
	mkdir -p "$T_TMP/rdma.$w"
	echo exclusive > "$T_TMP/rdma.$w/rdma.mode"
	echo "$((w + 3)) mlx5_$((w + 2)) $(sr_net $w) $HOST_NS" > "$T_TMP/rdma.$w/rdma.devs"
	cp "$T_TMP/rdma.$w/rdma.devs" "$OUT/rdma.$w"
	t_netns > "$OUT/pod.$w"
	# The NAD as Multus passes it, with PF-side settings and an RDMA device in play.
	jq -nc --arg d "$(sr_vf $w)" --arg s "$SR_STATE" --arg p "$POOL" --arg m "02:00:00:00:cc:0$w" '{
		cniVersion: "0.3.1", name: "crash", type: "sriov-rdma", deviceID: $d, pciBusID: $d,
		stateDir: $s, vlan: 300, vlanQoS: 5, mac: $m, spoofchk: "off", trust: "on", mtu: 4200,
		rdma: "exclusive", rdmaName: ("rdma_crash" + ($d | .[-1:])),
		ipam: {type: "crash-ipam", subnet: "10.90.0.0/28", dataDir: $p}}' > "$OUT/conf.$w"
done

# A wait in microseconds without a fork (see pool_concurrency.sh).
exec {NEVER_FD}<>"$T_TMP/never"
pause_us() {
	local t
	printf -v t '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000))
	read -r -t "$t" -u "$NEVER_FD" _ || :
}
rand_us() { echo $(((RANDOM << 15 | RANDOM) % $1)); }

# plugin W CMD CID [VAR=VALUE...]: start sriov-rdma for worker W in its own
# process group (so a delegated child it leaves behind can be waited for),
# PID in $PLUGIN_PID.
plugin() {
	local w=$1 cmd=$2 cid=$3
	shift 3
	env CNI_COMMAND="$cmd" CNI_CONTAINERID="$cid" CNI_NETNS="$(cat "$OUT/pod.$w")" CNI_IFNAME=net1 \
		CNI_PATH="$(t_cni_path)" SRIOV_RDMA_RDMA_FAKE_DIR="$T_TMP/rdma.$w" \
		CNI_ARGS="IgnoreUnknown=true;K8S_POD_NAMESPACE=crash;K8S_POD_NAME=p$w;K8S_POD_INFRA_CONTAINER_ID=$cid" \
		"$@" setsid "$(t_cni_path)/sriov-rdma" < "$OUT/conf.$w" > "$OUT/last.$w" 2>> "$OUT/log.$w" &
	PLUGIN_PID=$!
}
# finish: wait for the plugin, then for what it left running (a runtime's
# DEL comes after a killed plugin's IPAM child is done); its exit code.
finish() {
	local rc
	wait "$PLUGIN_PID" 2>/dev/null
	rc=$?
	while kill -0 -- "-$PLUGIN_PID" 2>/dev/null; do pause_us 2000; done
	return $rc
}
run() { plugin "$@"; finish; }
# kill_after US: SIGKILL the plugin after US microseconds; its exit code.
kill_after() {
	pause_us "$1"
	kill -9 "$PLUGIN_PID" 2>/dev/null
	finish
}

fail() { echo "$*" >> "$OUT/fail.$W"; }

# While the attachment holds the VF: the pod's address is the pool's
# reservation of this attachment, and of no other.
check_held() {
	local cid=$1 addr rec
	addr=$(ip -n "$(basename "$(cat "$OUT/pod.$W")")" -o -4 addr show net1 | awk '{print $4}')
	addr=${addr%/*}
	rec=$POOL/crash/c-$cid:net1.0
	if [ -z "$addr" ] || [ ! -f "$rec" ] || [ ! -f "$POOL/crash/a-$addr" ] ||
	   [ "$(stat -c %i "$rec")" != "$(stat -c %i "$POOL/crash/a-$addr")" ]; then
		fail "$cid: the pod has '$addr' but the pool does not hold it for this attachment"
	fi
}
# After the DEL: everything home, nothing held.
check_home() {
	local cid=$1 what=$2 got
	got=$(sr_host_link "$(sr_net $W)")
	[ "$got" = "$(cat "$OUT/orig.$W")" ] || fail "$cid ($what): VF netdev is '$got', want '$(cat "$OUT/orig.$W")'"
	got=$(grep "^vf=$W " "$SR_FAKE/$SR_PFNET.vfs")
	[ "$got" = "$(cat "$OUT/pf.$W")" ] || fail "$cid ($what): PF has '$got', want '$(cat "$OUT/pf.$W")'"
	got=$(cat "$T_TMP/rdma.$W/rdma.devs")
	[ "$got" = "$(cat "$OUT/rdma.$W")" ] || fail "$cid ($what): RDMA device is '$got', want '$(cat "$OUT/rdma.$W")'"
	[ ! -e "$SR_STATE/pci/$(sr_vf $W)" ] || fail "$cid ($what): the in-use marker is left"
	[ ! -e "$SR_STATE/$cid:net1.json" ] || fail "$cid ($what): the record is left"
	[ -z "$(find "$POOL/crash" -name "c-$cid:*" 2>/dev/null)" ] || fail "$cid ($what): the address is still reserved"
	got=$(ip -n "$(basename "$(cat "$OUT/pod.$W")")" -o link | grep -vc ' lo:')
	[ "$got" = 0 ] || fail "$cid ($what): $got links left in the pod"
}

# calibrate W: ADD and DEL run to completion, their durations (us).
calibrate() {
	local W=$1 i t0 t1 t2 cid
	for ((i = 0; i < CAL_ROUNDS; i++)); do
		cid=cal$W-$i
		t0=${EPOCHREALTIME/./}
		run "$W" ADD "$cid" || fail "$cid: ADD failed while measuring: $(cat "$OUT/last.$W")"
		t1=${EPOCHREALTIME/./}
		run "$W" DEL "$cid" || fail "$cid: DEL failed while measuring: $(cat "$OUT/last.$W")"
		t2=${EPOCHREALTIME/./}
		echo $((t1 - t0)) >> "$OUT/cal-add"
		echo $((t2 - t1)) >> "$OUT/cal-del"
		check_home "$cid" "measuring"
	done
}
median() { sort -n "$1" | awk '{ d[NR] = $1 } END { print d[int((NR + 1) / 2)] }'; }

worker() {
	local W=$1 i cid rc
	for ((i = 0; i < ROUNDS; i++)); do
		cid=k$W-$i
		case $((i % 3)) in
		0)	# ADD killed, then the runtime's DEL
			plugin "$W" ADD "$cid"
			kill_after "$(rand_us "$ADD_WINDOW_US")"
			rc=$?
			case $rc in
			0) echo "$cid" >> "$OUT/add-ok.$W"; check_held "$cid" ;;
			137) echo "$cid" >> "$OUT/add-killed.$W" ;;
			*) fail "$cid: ADD failed on its own ($rc): $(cat "$OUT/last.$W")" ;;
			esac
			run "$W" DEL "$cid" || fail "$cid: DEL after a killed ADD failed: $(cat "$OUT/last.$W")"
			check_home "$cid" "ADD killed"
			;;
		1)	# DEL killed, then DEL again
			run "$W" ADD "$cid" || fail "$cid: ADD failed: $(cat "$OUT/last.$W")"
			check_held "$cid"
			plugin "$W" DEL "$cid"
			kill_after "$(rand_us "$DEL_WINDOW_US")"
			rc=$?
			case $rc in
			0) echo "$cid" >> "$OUT/del-ok.$W" ;;
			137) echo "$cid" >> "$OUT/del-killed.$W" ;;
			*) fail "$cid: DEL failed on its own ($rc): $(cat "$OUT/last.$W")" ;;
			esac
			run "$W" DEL "$cid" || fail "$cid: DEL after a killed DEL failed: $(cat "$OUT/last.$W")"
			check_home "$cid" "DEL killed"
			;;
		2)	# pool-ipam killed inside ADD: the ADD fails and is undone, or succeeds.
			# One round in three kills it as it starts: the window is measured once,
			# and a machine whose load drops after that runs every later one in time.
			run "$W" ADD "$cid" IPAM_KILL_US="$(((i / 3) % 3 ? $(rand_us "$IPAM_WINDOW_US") : 1))"
			rc=$?
			if [ "$rc" = 0 ]; then
				echo "$cid" >> "$OUT/ipam-ok.$W"
				check_held "$cid"
			else
				echo "$cid" >> "$OUT/ipam-killed.$W"
			fi
			run "$W" DEL "$cid" || fail "$cid: DEL after a killed pool-ipam failed: $(cat "$OUT/last.$W")"
			check_home "$cid" "pool-ipam killed"
			;;
		esac
	done
}

t_begin "$ROUNDS rounds in each of $WORKERS workers: ADD, DEL or pool-ipam SIGKILLed; every DEL brings the VF home"
for ((w = 0; w < WORKERS; w++)); do calibrate "$w" & done
wait
# pool-ipam's own ADD, as the wrapper runs it, for the window of its kills.
jq -c '{cniVersion, name, type: "pool-ipam", ipam: (.ipam + {type: "pool-ipam"})}' "$OUT/conf.0" > "$OUT/ipam.conf"
for ((i = 0; i < CAL_ROUNDS; i++)); do
	for cmd in ADD DEL; do
		t0=${EPOCHREALTIME/./}
		CNI_COMMAND=$cmd CNI_CONTAINERID=calipam$i CNI_NETNS="$(cat "$OUT/pod.0")" CNI_IFNAME=net1 \
			"$(t_cni_path)/pool-ipam" < "$OUT/ipam.conf" > /dev/null 2>&1
		t1=${EPOCHREALTIME/./}
		[ "$cmd" = ADD ] && echo $((t1 - t0)) >> "$OUT/cal-ipam"
	done
done
ADD_WINDOW_US=$((2 * $(median "$OUT/cal-add") + 1))
DEL_WINDOW_US=$((2 * $(median "$OUT/cal-del") + 1))
IPAM_WINDOW_US=$((2 * $(median "$OUT/cal-ipam") + 1))
echo "# kill windows: ADD 0-$((ADD_WINDOW_US / 1000)) ms, DEL 0-$((DEL_WINDOW_US / 1000)) ms, pool-ipam 0-$((IPAM_WINDOW_US / 1000)) ms (2 x the medians measured)"
for ((w = 0; w < WORKERS; w++)); do worker "$w" & done
wait
count() { cat "$OUT"/"$1".* 2>/dev/null | wc -l; }
echo "# ADD killed: $(count add-killed) half way, $(count add-ok) had finished; DEL killed: $(count del-killed) half way, $(count del-ok) had finished; pool-ipam killed: $(count ipam-killed) ADDs failed, $(count ipam-ok) succeeded"
[ "$(count add-killed)" -gt 0 ] || t_fail "no ADD was killed half way: nothing shows a half-done ADD is undone"
[ "$(count add-ok)" -gt 0 ] || t_fail "every ADD was killed: nothing shows a finished ADD is undone"
[ "$(count del-killed)" -gt 0 ] || t_fail "no DEL was killed half way"
[ "$(count ipam-killed)" -gt 0 ] || t_fail "no pool-ipam was killed half way"
while read -r line; do t_fail "$line"; done < <(cat "$OUT"/fail.* 2>/dev/null)
t_eq "$(find "$POOL/crash" -name 'c-*' | wc -l)" 0 "reservations left in the pool"
# A writer killed between writing its temporary file and renaming it leaves the file behind.
t_eq "$(find "$SR_STATE" -type f ! -name '*.lock' ! -name '.tmp.*' | wc -l)" 0 "records and markers left"
echo "# temporary files left by killed writers: $(find "$SR_STATE" -name '.tmp.*' | wc -l)"

t_done
