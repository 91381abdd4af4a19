#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A runtime killed while sriov-rdma's ADD runs: the ADD completes into a
# sandbox namespace the restarted runtime no longer knows, so no DEL ever
# comes; the sandbox's pause process is gone, its pinned namespace stays.
# The next sandbox of the same pod (same K8S_POD_UID, same interface) takes
# the VF over: what the missing DEL would have done (PF settings, RDMA
# device, netdev, address, record), then its own ADD. Another pod never
# does, nor the same pod while a process lives in the old namespace, nor an
# ADD without a pod identity on both sides. rdma-doctor names the orphan
# and the command that frees it.
. "$(dirname "$0")/sriov_lib.sh"

POOL=$T_TMP/pool
RDMA=$T_TMP/rdma
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
export SRIOV_RDMA_RDMA_FAKE_DIR=$RDMA

conf() { # VLAN
	jq -nc --arg d "$(sr_vf 0)" --arg s "$SR_STATE" --arg p "$POOL" --argjson v "$1" '{
		cniVersion: "1.0.0", name: "orphan", type: "sriov-rdma", deviceID: $d, stateDir: $s,
		vlan: $v, spoofchk: "off", mac: "02:00:00:00:dd:01", mtu: 1400, rdma: "exclusive",
		rdmaName: "rdma_orphan",
		ipam: {type: "pool-ipam", subnet: "10.93.0.0/28", dataDir: $p}}'
}
args() { # NAMESPACE NAME CID [UID]
	printf 'IgnoreUnknown=true;K8S_POD_NAMESPACE=%s;K8S_POD_NAME=%s;K8S_POD_INFRA_CONTAINER_ID=%s%s' \
		"$1" "$2" "$3" "${4:+;K8S_POD_UID=$4}"
}
run() { # CMD CONF CID NETNS CNI_ARGS [IFNAME]
	t_exec sriov-rdma "$1" "$2" CNI_CONTAINERID="$3" CNI_NETNS="$4" CNI_ARGS="$5" \
		CNI_IFNAME="${6:-net1}"
}

setup() {
	sr_setup 1
	ip link set "$(sr_net 0)" mtu 1500
	rm -rf "$POOL" "$RDMA"
	mkdir -p "$RDMA"
	echo exclusive > "$RDMA/rdma.mode"
	echo "3 mlx5_2 $(sr_net 0) $HOST_NS" > "$RDMA/rdma.devs"
	ORIG_LINK=$(sr_host_link "$(sr_net 0)")
	ORIG_VF=$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")
	ORIG_RDMA=$(cat "$RDMA/rdma.devs")
}

# sandbox: a pod sandbox's namespace, pinned under /run/netns as CRI-O and
# containerd pin theirs, with a pause process in it; path in $SB, pause in $PAUSE.
sandbox() {
	SB=$(t_netns) || return 1
	nsenter --net="$SB" sleep 100000 &
	PAUSE=$!
	t_defer "kill $PAUSE"
}
# The pause process gone, the pinned namespace left: what a forgotten sandbox is.
pause_gone() { kill "$1"; wait "$1" 2>/dev/null; return 0; }

rec() { sed '/^#crc32=/d' "$SR_STATE/$1.json" 2>/dev/null; }
reservations() { find "$POOL/orphan" -name "c-$1:*" 2>/dev/null | wc -l; }
vf_in() { sr_pod_link "$1" net1 | cut -d' ' -f1; }
rdma_ns() { awk '{ print $4 }' "$RDMA/rdma.devs"; }
assert_free() { # what
	t_eq "$(sr_host_link "$(sr_net 0)")" "$ORIG_LINK" "$1: VF netdev home with its name, MAC, MTU"
	t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "$ORIG_VF" "$1: the VF's original PF settings"
	t_eq "$(cat "$RDMA/rdma.devs")" "$ORIG_RDMA" "$1: RDMA device home under its name"
	t_eq "$(sr_state_files)$(sr_markers)" "" "$1: no record, no marker"
	t_eq "$(find "$POOL/orphan" -name 'c-*' 2>/dev/null | wc -l)" 0 "$1: no reservation"
}

t_begin "the runtime killed during ADD: the ADD completes into a sandbox nobody will DEL"
setup
sandbox
OLD=$SB
OLD_PAUSE=$PAUSE
# The runtime runs the plugin and is SIGKILLed while it runs: the plugin
# finishes on its own, and nothing reads its answer.
( printf '%s' "$(conf 9)" | env CNI_COMMAND=ADD CNI_CONTAINERID=sb1 CNI_NETNS="$OLD" \
	CNI_IFNAME=net1 CNI_ARGS="$(args train worker-0 sb1 uid-a)" CNI_PATH="$(t_cni_path)" \
	"$(t_cni_path)/sriov-rdma" > "$T_TMP/add1.out" 2> "$T_TMP/add1.err" & wait ) &
RUNTIME=$!
for _ in $(seq 600); do [ -e "$SR_STATE/pci/$(sr_vf 0)" ] && break; sleep 0.1; done
kill -9 "$RUNTIME" 2>/dev/null
wait "$RUNTIME" 2>/dev/null
# A hang guard: the orphaned plugin completes its ADD, and prints its result last.
for _ in $(seq 600); do [ -s "$T_TMP/add1.out" ] && break; sleep 0.1; done
t_eq "$(jq -r '.interfaces[0].name' "$T_TMP/add1.out" 2>/dev/null)" net1 "the ADD completed ($(cat "$T_TMP/add1.err"))"
t_eq "$(vf_in "$OLD")" net1 "the VF is in the old sandbox"
t_eq "$(reservations sb1)" 1 "the old sandbox holds an address"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=9" "the old sandbox's PF settings"
t_eq "$(rec sb1:net1 | jq -r '.pod.namespace, .pod.name, .pod.uid' | tr '\n' ' ')" \
	"train worker-0 uid-a " "the record holds the pod"
pause_gone "$OLD_PAUSE"

t_begin "another pod (another K8S_POD_UID) never takes the VF, though no process lives in the old namespace"
sandbox
run ADD "$(conf 7)" other1 "$SB" "$(args train worker-1 other1 uid-b)"
t_eq "$T_RC/$(t_jq .code)" 1/101 "code ($T_ERR)"
t_contains "$(t_jq .msg)" "VF in use by $OLD (container sb1, interface net1)" "names the holder"
t_eq "$(vf_in "$OLD")" net1 "the VF stays in the old sandbox"
t_eq "$(reservations sb1)" 1 "the old sandbox's address stays"

t_begin "an ADD without a pod identity (no K8S_POD_UID) never takes the VF"
run ADD "$(conf 7)" sb2 "$SB" "$(args train worker-0 sb2)"
t_eq "$T_RC/$(t_jq .code)" 1/101 "code ($T_ERR)"
t_eq "$(vf_in "$OLD")" net1 "the VF stays in the old sandbox"

t_begin "the same pod's sandbox under another interface name does not take it"
run ADD "$(conf 7)" sb2 "$SB" "$(args train worker-0 sb2 uid-a)" net2
t_eq "$T_RC/$(t_jq .code)" 1/101 "code ($T_ERR)"
t_eq "$(vf_in "$OLD")" net1 "the VF stays in the old sandbox"

t_begin "rdma-doctor names the orphan, its pod and the command that frees it"
out=$("$SOURCE_DIR/scripts/rdma-doctor" --sysfs-root "$SR_SYS" --cni-bin-dir "$(t_cni_path)" \
	--state-dir "$SR_STATE" 2>&1)
line=$(printf '%s\n' "$out" | grep '^WARN attachment sb1:net1')
t_contains "$out" "WARN attachment sb1:net1" "reports the attachment"
t_contains "$line" "pod train/worker-0 (uid uid-a)" "names the pod"
t_contains "$line" "VF $(sr_vf 0)" "names the VF"
t_contains "$line" "holds no process" "says why"
t_contains "$line" "CNI_COMMAND=DEL" "gives the command"

t_begin "the same pod's next sandbox takes the VF over: the old attachment released, then the ADD"
NEW=$SB
run ADD "$(conf 7)" sb2 "$NEW" "$(args train worker-0 sb2 uid-a)"
t_eq "$T_RC" 0 "ADD of the new sandbox ($T_OUT)"
t_contains "$T_ERR" "taking over" "the log says so"
t_eq "$(vf_in "$NEW")" net1 "the VF is in the new sandbox"
t_eq "$(ip -n "$(basename "$OLD")" -o link | grep -vc ' lo:')" 0 "nothing left in the old sandbox"
t_eq "$(rdma_ns)" "$(stat -L -c %i "$NEW")" "the RDMA device is in the new sandbox"
t_eq "$(reservations sb1)" 0 "the old sandbox's address released"
t_eq "$(reservations sb2)" 1 "the new sandbox holds one"
t_eq "$(sr_state_files)" "$SR_STATE/sb2:net1.json " "the old record gone"
t_eq "$(rec sb2:net1 | jq -c '.vfOriginal | {vlan, spoofchk}')" \
	'{"vlan":0,"spoofchk":true}' "the new record keeps the pod's originals, not the old sandbox's settings"
t_eq "$(rec sb2:net1 | jq -r '.hostIfname, .hostMtu' | tr '\n' ' ')" \
	"$(sr_net 0) 1500 " "the VF's host identity, not the old sandbox's"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=7" "the new sandbox's PF settings"

t_begin "after the pod's DEL nothing is held"
run DEL "$(conf 7)" sb2 "$NEW" "$(args train worker-0 sb2 uid-a)"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
assert_free "after DEL"

t_begin "the same pod never takes the VF while a process lives in the old namespace"
setup
sandbox
OLD=$SB
OLD_PAUSE=$PAUSE
run ADD "$(conf 9)" sb1 "$OLD" "$(args train worker-0 sb1 uid-a)"
t_eq "$T_RC" 0 "ADD of the old sandbox ($T_OUT)"
sandbox
NEW=$SB
run ADD "$(conf 7)" sb2 "$NEW" "$(args train worker-0 sb2 uid-a)"
t_eq "$T_RC/$(t_jq .code)" 1/101 "code while the pause runs ($T_ERR)"
t_eq "$(vf_in "$OLD")" net1 "the VF stays in the old sandbox"
pause_gone "$OLD_PAUSE"
# Another process entered it (an admin's nsenter, a debug container).
unshare --fork --kill-child --pid --mount-proc nsenter --net="$OLD" sleep 100000 &
STRAY=$!
t_defer "kill -KILL $STRAY"
for _ in $(seq 600); do
	STRAY_CHILD=$(pgrep -P "$STRAY") && break
	sleep 0.1
done
run ADD "$(conf 7)" sb2 "$NEW" "$(args train worker-0 sb2 uid-a)"
t_eq "$T_RC/$(t_jq .code)" 1/101 "code while another process lives there ($T_ERR)"
out=$("$SOURCE_DIR/scripts/rdma-doctor" --sysfs-root "$SR_SYS" --cni-bin-dir "" \
	--state-dir "$SR_STATE" 2>&1)
t_not_contains "$out" "WARN attachment sb1:net1" "rdma-doctor leaves a live sandbox alone"
# unshare ignores SIGTERM while it waits for its child; --kill-child takes the child along.
kill -KILL "$STRAY"
wait "$STRAY" 2>/dev/null
# A hang guard: the kernel reaps the killed child a moment after its parent.
for _ in $(seq 600); do kill -0 "$STRAY_CHILD" 2>/dev/null || break; sleep 0.1; done
run ADD "$(conf 7)" sb2 "$NEW" "$(args train worker-0 sb2 uid-a)"
t_eq "$T_RC" 0 "taken over once no process lives there ($T_OUT)"
t_eq "$(reservations sb1)" 0 "the old sandbox's address released"
run DEL "$(conf 7)" sb2 "$NEW" "$(args train worker-0 sb2 uid-a)"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
assert_free "after DEL"

t_begin "an old attachment that recorded no pod is never taken over"
setup
sandbox
OLD=$SB
run ADD "$(conf 9)" sb1 "$OLD" "$(args train worker-0 sb1)"
t_eq "$T_RC" 0 "ADD without K8S_POD_UID ($T_OUT)"
pause_gone "$PAUSE"
sandbox
run ADD "$(conf 7)" sb2 "$SB" "$(args train worker-0 sb2 uid-a)"
t_eq "$T_RC/$(t_jq .code)" 1/101 "code ($T_ERR)"

t_begin "rdma-doctor's command frees an orphan whose pod is gone"
out=$("$SOURCE_DIR/scripts/rdma-doctor" --sysfs-root "$SR_SYS" --cni-bin-dir "$(t_cni_path)" \
	--state-dir "$SR_STATE" 2>&1)
line=$(printf '%s\n' "$out" | grep '^WARN attachment sb1:net1')
t_contains "$out" "WARN attachment sb1:net1" "reports the attachment"
t_contains "$line" "pod train/worker-0 (no uid recorded)" "names the pod"
fix=${line##*free it: }
bash -c "$fix" > "$T_TMP/fix.out" 2>&1
t_eq "$?" 0 "the command runs ($(cat "$T_TMP/fix.out"))"
assert_free "after the doctor's command"

t_done
