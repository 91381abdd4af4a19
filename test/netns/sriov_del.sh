#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sriov-rdma DEL in every branch, GC, and VFs contended between pods.
. "$(dirname "$0")/sriov_lib.sh"

FAKE_IPAM_LOG=$T_TMP/fake-ipam.log
export FAKE_IPAM_LOG
# Tests that put a pod's interface on the host, as the kernel does when
# the pod's namespace goes, give it a name no other test on this host uses.
KIF=k$$
# A stand-in IPAM that logs its calls and answers slowly when asked (races).
cat > "$(t_cni_path)/slow-ipam" <<'EOS'
#!/bin/sh
conf=$(cat)
echo "$CNI_COMMAND $CNI_CONTAINERID" >> "$FAKE_IPAM_LOG"
ver=$(printf '%s' "$conf" | jq -r '.cniVersion')
sleep "$(printf '%s' "$conf" | jq -r '.ipam.sleep // 0')"
[ "$CNI_COMMAND" = ADD ] && echo "{\"cniVersion\": \"$ver\", \"ips\": [{\"address\": \"10.71.0.5/24\"}]}"
exit 0
EOS
chmod +x "$(t_cni_path)/slow-ipam"

conf() { # VF [extra jq object]
	jq -nc --arg d "$(sr_vf "$1")" --arg s "$SR_STATE" \
		'{cniVersion: "1.1.0", name: "dl", type: "sriov-rdma", deviceID: $d, stateDir: $s,
		  mac: "02:00:00:00:bb:01", mtu: 1300, vlan: 7, ipam: {type: "slow-ipam"}} + '"${2:-{\}}"
}
run() { # CMD CONF CID NETNS (the pod's interface: $IFNAME, default net1)
	t_exec sriov-rdma "$1" "$2" CNI_CONTAINERID="$3" CNI_NETNS="$4" CNI_IFNAME="${IFNAME:-net1}"
}
setup() {
	sr_setup 2
	ip link set "$(sr_net 0)" mtu 1500
	ip link set "$(sr_net 1)" mtu 1500
	orig0=$(sr_host_link "$(sr_net 0)")
	ORIG_VF=$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")
	: > "$FAKE_IPAM_LOG"
}
assert_home() {
	t_eq "$(sr_host_link "$(sr_net 0)")" "$orig0" "VF on the host with its name, MAC, MTU"
	t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "$ORIG_VF" "VF settings restored"
	t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"
}

t_begin "DEL twice: both succeed"
setup
pod=$(t_netns)
run ADD "$(conf 0)" d1 "$pod"
t_eq "$T_RC" 0 "ADD ($T_OUT)"
run DEL "$(conf 0)" d1 "$pod"
t_eq "$T_RC" 0 "first DEL ($T_OUT)"
run DEL "$(conf 0)" d1 "$pod"
t_eq "$T_RC" 0 "second DEL ($T_OUT)"
assert_home
t_eq "$(grep -c '^DEL d1' "$FAKE_IPAM_LOG")" 2 "IPAM DEL each time"

t_begin "DEL without CNI_NETNS while the pod's namespace lives: the VF comes home from the namespace ADD recorded"
setup
pod=$(t_netns)
run ADD "$(conf 0)" d5 "$pod"
t_eq "$T_RC" 0 "ADD ($T_OUT)"
run DEL "$(conf 0)" d5 ""
t_eq "$T_RC" 0 "DEL without CNI_NETNS ($T_OUT)"
t_eq "$(sr_pod_link "$pod" net1)" "" "no VF left in the pod"
assert_home

t_begin "DEL without any record (e.g. after a reboot): IPAM still released, success"
setup
pod=$(t_netns)
run DEL "$(conf 0)" never "$pod"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(cat "$FAKE_IPAM_LOG")" "DEL never" "IPAM DEL ran"
run DEL "$(conf 0)" never ""
t_eq "$T_RC" 0 "DEL without CNI_NETNS ($T_OUT)"

t_begin "namespace destroyed before DEL, VF returned to the host under the pod's name: found by PCI address, renamed back"
setup
pod=$(t_netns)
IFNAME=$KIF run ADD "$(conf 0)" d2 "$pod"
t_eq "$T_RC" 0 "ADD ($T_OUT)"
# What the kernel does to a physical VF when its namespace goes away.
ip -n "$(basename "$pod")" link set $KIF netns 1
dev=$(readlink -f "$SR_SYS/bus/pci/devices/$(sr_vf 0)")
mv "$dev/net/$(sr_net 0)" "$dev/net/$KIF"
ip netns del "$(basename "$pod")"
IFNAME=$KIF run DEL "$(conf 0)" d2 ""
t_eq "$T_RC" 0 "DEL with no CNI_NETNS ($T_OUT)"
mv "$dev/net/$KIF" "$dev/net/$(sr_net 0)"
t_eq "$(sr_host_link $KIF)" "" "no $KIF left on the host"
assert_home
t_contains "$(cat "$FAKE_IPAM_LOG")" "DEL d2" "IPAM released"

t_begin "namespace path gone and the VF netdev with it: DEL succeeds and cleans up"
setup
pod=$(t_netns)
run ADD "$(conf 0)" d3 "$pod"
ip netns del "$(basename "$pod")"
run DEL "$(conf 0)" d3 "$pod"
t_eq "$T_RC" 0 "DEL with a dead netns path ($T_OUT)"
t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"
t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "$ORIG_VF" "VF settings restored"
t_contains "$(cat "$FAKE_IPAM_LOG")" "DEL d3" "IPAM released"

t_begin "interface already gone from a live pod: DEL succeeds"
setup
pod=$(t_netns)
run ADD "$(conf 0)" d4 "$pod"
ip -n "$(basename "$pod")" link del net1
run DEL "$(conf 0)" d4 "$pod"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"

t_begin "two ADDs race for one VF: one wins, the other is told who holds it"
setup
podA=$(t_netns)
podB=$(t_netns)
slow=$(conf 0 '{ipam: {type: "slow-ipam", sleep: 1}}')
( run ADD "$slow" rA "$podA"; echo "$T_RC" > "$T_TMP/rcA"; printf '%s' "$T_OUT" > "$T_TMP/outA" ) &
( run ADD "$slow" rB "$podB"; echo "$T_RC" > "$T_TMP/rcB"; printf '%s' "$T_OUT" > "$T_TMP/outB" ) &
wait
rcs="$(cat "$T_TMP/rcA") $(cat "$T_TMP/rcB")"
case $rcs in
"0 1") win=$podA; lose=B ;;
"1 0") win=$podB; lose=A ;;
*) t_fail "want one success and one failure, got rcs $rcs" ;;
esac
if [ -n "${lose:-}" ]; then
	T_OUT=$(cat "$T_TMP/out$lose")
	t_eq "$(t_jq .code)" 101 "loser's code"
	t_contains "$(t_jq .msg)" "in use by $win" "loser's message names the owner"
	t_eq "$(sr_pod_link "$win" net1 | cut -d' ' -f1)" net1 "winner has the VF"
	t_eq "$(ls "$SR_STATE"/*.json | wc -l)" 1 "one record"
fi

t_begin "a stale claim (pod gone without a DEL, VF returned under the pod's name) is taken over, the VF restored first"
setup
podA=$(t_netns)
podB=$(t_netns)
IFNAME=$KIF run ADD "$(conf 0 '{vlan: 9, spoofchk: "off"}')" sA "$podA"
t_eq "$T_RC" 0 "ADD into A ($T_OUT)"
# What the kernel does when the pod's namespace goes: the VF back on the host under the pod's name.
ip -n "$(basename "$podA")" link set $KIF netns 1
dev=$(readlink -f "$SR_SYS/bus/pci/devices/$(sr_vf 0)")
mv "$dev/net/$(sr_net 0)" "$dev/net/$KIF"
ip netns del "$(basename "$podA")"
run ADD "$(conf 0)" sB "$podB"
t_eq "$T_RC" 0 "ADD into B ($T_OUT)"
t_contains "$T_ERR" "taking over the stale claim of $podA (container sA, interface $KIF): restoring the VF as its record says" "the log says whose claim and how"
t_eq "$(sr_pod_link "$podB" net1 | cut -d' ' -f1)" net1 "B has the VF"
t_eq "$(sr_state_files)" "$SR_STATE/sB:net1.json " "A's record is consumed by the takeover"
t_eq "$(jq -r '.hostIfname, .hostMac, .hostMtu' "$SR_STATE/sB:net1.json" 2>/dev/null | tr '\n' ' ')" \
	"$(echo "$orig0" | cut -d' ' -f1-3) " "B recorded the VF's original host identity, not A's"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=7 qos=0 proto=802.1Q spoofchk=on" "A's PF settings undone, B's applied"
t_begin "a late DEL of the old pod leaves the VF of the new owner alone"
calls_before=$(sr_calls | wc -l)
IFNAME=$KIF run DEL "$(conf 0)" sA "$podA"
t_eq "$T_RC" 0 "old DEL ($T_OUT)"
t_eq "$(sr_pod_link "$podB" net1 | cut -d' ' -f1)" net1 "B still has the VF"
t_eq "$(sr_calls | wc -l)" "$calls_before" "PF not touched by the old DEL"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=7" "B's VF settings kept"
t_eq "$(sr_state_files)" "$SR_STATE/sB:net1.json " "only B's record remains"
run DEL "$(conf 0)" sB "$podB"
t_eq "$T_RC" 0 "B's DEL ($T_OUT)"
mv "$dev/net/$KIF" "$dev/net/$(sr_net 0)"
# The original name, MAC and MTU: not A's interface name, MAC and MTU.
assert_home

t_begin "a failed second ADD of the VF by the same pod (another ifname) keeps the first attachment's claim"
setup
podA=$(t_netns)
podB=$(t_netns)
run ADD "$(conf 0)" c1 "$podA"
t_eq "$T_RC" 0 "first ADD ($T_OUT)"
t_exec sriov-rdma ADD "$(conf 0)" CNI_CONTAINERID=c1 CNI_NETNS="$podA" CNI_IFNAME=net2
t_eq "$(t_jq .code)" 101 "second attachment of the VF refused"
t_contains "$(t_jq .msg)" "in use by $podA (container c1, interface net1)" "names the attachment holding it"
t_contains "$(sr_markers)" "$(sr_vf 0)" "the first attachment's marker is still there"
run ADD "$(conf 0)" c2 "$podB"
t_eq "$(t_jq .code)" 101 "another pod is refused too"
t_eq "$(sr_pod_link "$podA" net1 | cut -d' ' -f1)" net1 "the first pod keeps the VF"
run DEL "$(conf 0)" c1 "$podA"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
assert_home

t_begin "a DPDK (vfio) VF is attached once: a second interface of the same pod and a repeated ADD are refused"
sr_setup 1 --vf 2 0000:3b:00.4 - --driver 0000:3b:00.4 vfio-pci
podA=$(t_netns)
dconf=$(conf 0 '{deviceID: "0000:3b:00.4"}' | jq -c 'del(.mtu)')
run ADD "$dconf" v1 "$podA"
t_eq "$T_RC" 0 "ADD of the DPDK VF ($T_OUT)"
t_exec sriov-rdma ADD "$dconf" CNI_CONTAINERID=v1 CNI_NETNS="$podA" CNI_IFNAME=net2
t_eq "$(t_jq .code)" 101 "same pod, another ifname"
run ADD "$dconf" v1 "$podA"
t_eq "$(t_jq .code)" 101 "the same attachment again"
t_contains "$(t_jq .msg)" "attached already" "says so"
t_eq "$(ls "$SR_STATE"/*.json | wc -l)" 1 "one record"
t_contains "$(sr_markers)" "0000:3b:00.4" "the marker stays"
podB=$(t_netns)
run ADD "$dconf" v2 "$podB"
t_eq "$(t_jq .code)" 101 "another pod is still refused after the failed repeats"
run DEL "$dconf" v1 "$podA"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"

t_begin "DEL without a record, of an attachment whose marker is there (its record lost): cleared, VF home"
setup
podA=$(t_netns)
podB=$(t_netns)
run ADD "$(conf 0)" k1 "$podA"
cp "$SR_STATE/pci/$(sr_vf 0)" "$T_TMP/marker"
run DEL "$(conf 0)" k1 "$podA"
cp "$T_TMP/marker" "$SR_STATE/pci/$(sr_vf 0)"
run ADD "$(conf 0)" k2 "$podB"
t_eq "$(t_jq .code)" 101 "the VF is held while the marker names a live pod"
run DEL "$(conf 0)" k1 "$podA"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_contains "$T_ERR" "no record, but its in-use marker names this attachment" "says what it found"
t_eq "$(sr_markers)" "" "marker cleared"
run ADD "$(conf 0)" k2 "$podB"
t_eq "$T_RC" 0 "the VF is free again ($T_OUT)"
run DEL "$(conf 0)" k2 "$podB"

t_begin "ADD and DEL of one attachment racing: record, marker, VF and address stay in step"
# pool-ipam behind a wrapper whose DEL lingers after releasing: ADD runs
# while DEL is inside its IPAM call. Whatever the order, the end is all or
# nothing.
cat > "$(t_cni_path)/slowdel-ipam" <<EOS
#!/bin/sh
[ "\$CNI_COMMAND" = DEL ] || exec "$(t_cni_path)/pool-ipam"
"$(t_cni_path)/pool-ipam"
rc=\$?
sleep 1
exit \$rc
EOS
chmod +x "$(t_cni_path)/slowdel-ipam"
setup
pod=$(t_netns)
rconf=$(conf 0 "{ipam: {type: \"slowdel-ipam\", subnet: \"10.72.0.0/24\", dataDir: \"$T_TMP/pool\"}}")
reserved() { find "$T_TMP/pool" -name 'c-r1:net1.*' 2>/dev/null | wc -l; }
for delay in 0.1 0.4 0.7; do
	( run DEL "$rconf" r1 "$pod"; echo "$T_RC" > "$T_TMP/del.rc" ) &
	sleep "$delay"
	run ADD "$rconf" r1 "$pod"
	add_rc=$T_RC
	wait
	t_eq "$(cat "$T_TMP/del.rc")" 0 "DEL (ADD $delay s after it)"
	if [ -f "$SR_STATE/r1:net1.json" ]; then
		t_eq "$add_rc" 0 "attached: ADD succeeded"
		t_eq "$(reserved)" 1 "attached: the address is held"
		t_contains "$(cat "$SR_STATE/pci/$(sr_vf 0)" 2>/dev/null)" '"containerID":	"r1"' "attached: the marker names it"
		t_eq "$(sr_pod_link "$pod" net1 | cut -d' ' -f1)" net1 "attached: the VF is in the pod"
	else
		t_eq "$(reserved)$(sr_markers)" "0" "not attached: no address, no marker"
		t_eq "$(sr_host_link "$(sr_net 0)")" "$orig0" "not attached: the VF is home"
	fi
	run DEL "$rconf" r1 "$pod"
	t_eq "$T_RC" 0 "the final DEL ($T_OUT)"
	t_eq "$(reserved)" 0 "no address left"
	assert_home
done

t_begin "GC releases attachments not in cni.dev/valid-attachments, keeps the others"
setup
podA=$(t_netns)
podB=$(t_netns)
run ADD "$(conf 0)" gA "$podA"
run ADD "$(conf 1)" gB "$podB"
gc=$(conf 0 '{"cni.dev/valid-attachments": [{containerID: "gB", ifname: "net1"}]}')
t_exec sriov-rdma GC "$gc"
t_eq "$T_RC" 0 "GC ($T_OUT)"
t_eq "$(sr_host_link "$(sr_net 0)")" "$orig0" "gA's VF back on the host"
t_eq "$(sr_pod_link "$podB" net1 | cut -d' ' -f1)" net1 "gB keeps its VF"
t_eq "$(sr_state_files)" "$SR_STATE/gB:net1.json " "only gB's record remains"
t_contains "$(cat "$FAKE_IPAM_LOG")" "GC" "GC forwarded to the IPAM"
t_exec sriov-rdma GC "$(conf 0)"
t_eq "$T_RC" 0 "GC without the key ($T_OUT)"
t_eq "$(sr_state_files)" "$SR_STATE/gB:net1.json " "without valid-attachments nothing is released"
run DEL "$(conf 1)" gB "$podB"
t_eq "$T_RC" 0 "DEL gB ($T_OUT)"

t_begin "GC of one network leaves another network's attachments alone; null is the empty list"
# A runtime with two networks in its net.d (CRI-O) GCs each with the
# attachments to that network only, and sends null for a network without pods.
setup
podA=$(t_netns)
podB=$(t_netns)
run ADD "$(conf 0)" gA "$podA"
t_eq "$T_RC" 0 "ADD gA on network dl ($T_OUT)"
run ADD "$(conf 1 '{name: "other"}')" gB "$podB"
t_eq "$T_RC" 0 "ADD gB on network other ($T_OUT)"
calls=$(sr_calls)
t_exec sriov-rdma GC "$(conf 1 '{name: "other", "cni.dev/valid-attachments": [{containerID: "gB", ifname: "net1"}]}')"
t_eq "$T_RC" 0 "GC of network other ($T_OUT)"
t_eq "$(sr_pod_link "$podA" net1 | cut -d' ' -f1)" net1 "gA (network dl) keeps its VF"
t_eq "$(sr_pod_link "$podB" net1 | cut -d' ' -f1)" net1 "gB keeps its VF"
t_eq "$(sr_state_files)" "$SR_STATE/gA:net1.json $SR_STATE/gB:net1.json " "both records remain"
t_eq "$(sr_calls)" "$calls" "the PF was asked nothing"
: > "$FAKE_IPAM_LOG"
t_exec sriov-rdma GC "$(conf 1 '{name: "other", "cni.dev/valid-attachments": null}')"
t_eq "$T_RC" 0 "GC of network other with null ($T_OUT)"
t_eq "$(sr_state_files)" "$SR_STATE/gA:net1.json " "gB released, gA's record remains"
t_eq "$(sr_pod_link "$podA" net1 | cut -d' ' -f1)" net1 "gA keeps its VF"
t_contains "$(cat "$FAKE_IPAM_LOG")" "GC" "GC with null forwarded to the IPAM"
t_exec sriov-rdma GC "$(conf 0 '{"cni.dev/valid-attachments": null}')"
t_eq "$T_RC" 0 "GC of network dl with null ($T_OUT)"
t_eq "$(sr_state_files)" "" "gA released by its own network's GC"
t_eq "$(sr_host_link "$(sr_net 0)")" "$orig0" "gA's VF back on the host"

t_done
