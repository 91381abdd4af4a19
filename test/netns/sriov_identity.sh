#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A link is the attachment's VF only by its PCI device, and the recorded
# namespace is the attachment's only while its path names the namespace
# ADD moved the VF into. DEL without CNI_NETNS (containerd's later DELs),
# GC and the takeover of a stale claim go by the record's path: once that
# path is bound to another pod's namespace, that pod's net1 stays where it
# is. A pod that renamed its VF and made a veth of the VF's name keeps the
# veth; the VF goes home. Without a readable record, DEL without CNI_NETNS
# finds the VF in the namespace the in-use marker names. A takeover of a
# stale claim releases the address the holder's ADD reserved, or notes for
# rdma-doctor why it cannot. Through the plugins as a runtime runs them,
# the recording fake PF, veth stand-ins for the VFs.
. "$(dirname "$0")/sriov_lib.sh"

POOL=$T_TMP/pool
vf_line() { grep "^vf=$1 " "$SR_FAKE/$SR_PFNET.vfs"; }
conf() { # VF VLAN [NETWORK]
	jq -nc --arg d "$(sr_vf "$1")" --arg s "$SR_STATE" --arg p "$POOL" --argjson v "$2" \
		--arg n "${3:-ident}" '{cniVersion: "1.0.0", name: $n, type: "sriov-rdma",
		deviceID: $d, stateDir: $s, vlan: $v, mac: "02:00:00:00:ee:0\($v % 10)",
		ipam: {type: "pool-ipam", subnet: "10.94.0.0/28", dataDir: $p}}'
}
run() { # CMD CONF CID NETNS [IFNAME] [CNI_ARGS]
	t_exec sriov-rdma "$1" "$2" CNI_CONTAINERID="$3" CNI_NETNS="$4" CNI_IFNAME="${5:-net1}" \
		CNI_ARGS="${6:-IgnoreUnknown=true}"
}
reservations() { find "$POOL/ident" -name "c-$1:*" 2>/dev/null | wc -l; }

# Pod NETNS, holding VF 0 as net1, goes without a DEL: the kernel returns
# the VF to the host under the pod's name (and sysfs names it so).
pod_gone() { # NETNS
	local dev
	ip -n "$(basename "$1")" link set net1 netns 1
	dev=$(readlink -f "$SR_SYS/bus/pci/devices/$(sr_vf 0)")
	mv "$dev/net/$(sr_net 0)" "$dev/net/net1"
	command ip netns del "$(basename "$1")"
}

# Pods A (VF 0, vlan 7) and B (VF 1, vlan 8), each as net1; then pod A's
# namespace goes without a DEL (the kernel returns its VF to the host under
# the pod's name) and the runtime binds pod A's path to pod B's namespace.
reused_path() {
	sr_setup 2
	rm -rf "$POOL"
	podA=$(t_netns)
	podB=$(t_netns)
	run ADD "$(conf 0 7)" a "$podA"
	t_eq "$T_RC" 0 "pod A's ADD ($T_ERR)" || return 1
	run ADD "$(conf 1 8)" b "$podB"
	t_eq "$T_RC" 0 "pod B's ADD ($T_ERR)" || return 1
	vfB=$(vf_line 1)
	linkB=$(sr_pod_link "$podB" net1)
	pod_gone "$podA"
	touch "$podA"
	mount --bind "$podB" "$podA"
	t_defer "umount $podA; rm -f $podA"
	t_eq "$(stat -L -c %i "$podA")" "$(stat -L -c %i "$podB")" "pod A's path names pod B's namespace"
}
# Pod B and its VF as they were; VF 0 back on the host under its own name.
b_untouched() { # what
	t_eq "$(sr_pod_link "$podB" net1)" "$linkB" "$1: pod B's net1 stays in pod B"
	t_eq "$(vf_line 1)" "$vfB" "$1: pod B's VF settings intact"
	t_eq "$(sr_host_link net1)" "" "$1: no net1 brought to the host"
	t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "$1: VF 0 home under its name"
	t_contains "$(vf_line 0)" "vlan=0" "$1: VF 0's PF settings back"
}

t_begin "DEL without CNI_NETNS, the recorded path bound to another pod's namespace: that pod keeps its net1"
reused_path
doctor=$("$SOURCE_DIR/scripts/rdma-doctor" --sysfs-root "$SR_SYS" --cni-bin-dir "" --state-dir "$SR_STATE" 2>&1)
t_contains "$doctor" "by sandbox a, whose network namespace $podA is gone (the path names another namespace now)" \
	"rdma-doctor: pod A's namespace is gone, though its path opens"
run DEL "$(conf 0 7)" a ""
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_contains "$T_ERR" "$podA names another namespace than the one ADD moved it into" "the log says why"
b_untouched "DEL"
t_eq "$(reservations a)" 0 "pod A's address released"
t_eq "$(sr_state_files)" "$SR_STATE/b:net1.json " "only pod B's record left"

t_begin "GC by the same path: the same"
reused_path
run GC "$(conf 0 7 | jq -c '. + {cniVersion: "1.1.0",
	"cni.dev/valid-attachments": [{containerID: "b", ifname: "net1"}]}')" "" ""
t_eq "$T_RC" 0 "GC ($T_OUT)"
b_untouched "GC"
t_eq "$(sr_state_files)" "$SR_STATE/b:net1.json " "only pod B's record left"

t_begin "a takeover by the same path: the claim is stale (its namespace is gone), pod B keeps its net1"
reused_path
podC=$(t_netns)
run ADD "$(conf 0 9)" c "$podC"
t_eq "$T_RC" 0 "pod C's ADD takes VF 0 over ($T_OUT)"
t_contains "$T_ERR" "taking over the stale claim of $podA" "the log says whose claim"
t_eq "$(sr_pod_link "$podB" net1)" "$linkB" "pod B's net1 stays in pod B"
t_eq "$(vf_line 1)" "$vfB" "pod B's VF settings intact"
t_eq "$(sr_pod_link "$podC" net1 | cut -d' ' -f1)" net1 "pod C has VF 0"
t_contains "$(vf_line 0)" "vlan=9" "pod C's settings on VF 0"
t_eq "$(reservations a)" 0 "the takeover released pod A's address"
t_eq "$(reservations c)" 1 "pod C holds its own"
run DEL "$(conf 0 9)" c "$podC"
t_eq "$T_RC" 0 "pod C's DEL ($T_OUT)"

for netns in own none; do
	t_begin "a pod renamed its VF and made a veth of its name: DEL ($netns CNI_NETNS) brings the VF home, the veth stays"
	sr_setup 1
	rm -rf "$POOL"
	pod=$(t_netns)
	orig=$(sr_host_link "$(sr_net 0)")
	run ADD "$(conf 0 7)" r "$pod"
	t_eq "$T_RC" 0 "ADD ($T_ERR)"
	added=$T_OUT
	ip -n "$(basename "$pod")" link set net1 down
	ip -n "$(basename "$pod")" link set net1 name vfx
	ip -n "$(basename "$pod")" link add net1 type veth peer name tenant1
	veth=$(ip -n "$(basename "$pod")" -j link show net1 | jq -r '.[0].ifindex')
	if [ "$netns" = own ]; then
		run CHECK "$(conf 0 7 | jq -c --argjson p "$added" '. + {prevResult: $p}')" r "$pod"
		t_eq "$(t_jq .code)" 107 "CHECK: drift ($T_OUT)"
		t_contains "$(t_jq .msg)" "net1 in $pod is a link with no PCI device, not VF $(sr_vf 0)" \
			"CHECK says what net1 is"
	fi
	[ "$netns" = own ] && ns=$pod || ns=
	run DEL "$(conf 0 7)" r "$ns"
	t_eq "$T_RC" 0 "DEL ($T_OUT)"
	t_contains "$T_ERR" "net1 in the pod is a link with no PCI device, not the VF" "the log says what net1 is"
	t_contains "$T_ERR" "is vfx in the pod" "the log says where the VF was"
	t_eq "$(ip -n "$(basename "$pod")" -j link show net1 | jq -r '.[0].ifindex')" "$veth" "the pod's veth stays"
	t_eq "$(sr_pod_link "$pod" vfx)" "" "the VF left the pod"
	t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1,2,3)" "$(echo "$orig" | cut -d' ' -f1,2,3)" \
		"the VF home with its name, MAC, MTU"
	t_contains "$(vf_line 0)" "vlan=0" "its PF settings back"
	t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no marker"
done

for lost in unreadable missing; do
	t_begin "DEL without CNI_NETNS and the record $lost: the VF found in the namespace the marker names"
	sr_setup 1
	rm -rf "$POOL"
	pod=$(t_netns)
	run ADD "$(conf 0 7)" u "$pod"
	t_eq "$T_RC" 0 "ADD ($T_ERR)"
	if [ "$lost" = unreadable ]; then echo garbage > "$SR_STATE/u:net1.json"; else rm "$SR_STATE/u:net1.json"; fi
	run DEL "$(conf 0 7)" u ""
	t_eq "$T_RC" 0 "DEL ($T_OUT)"
	t_eq "$(sr_pod_link "$pod" net1)" "" "the VF left the pod"
	t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "the VF home under its name (the marker's)"
	t_contains "$(vf_line 0)" "vlan=0" "its PF settings back to the driver's defaults"
	t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no marker"
	t_eq "$(reservations u)" 0 "its address released"
done

t_begin "a takeover of a stale claim releases the address the holder's ADD reserved"
sr_setup 1
rm -rf "$POOL"
podA=$(t_netns)
podB=$(t_netns)
run ADD "$(conf 0 7)" s1 "$podA" net1 "IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p1;K8S_POD_UID=u1"
t_eq "$T_RC" 0 "ADD into A ($T_ERR)"
t_eq "$(reservations s1)" 1 "A holds an address"
pod_gone "$podA"
run ADD "$(conf 0 8)" s2 "$podB"
t_eq "$T_RC" 0 "ADD into B takes it over ($T_OUT)"
t_eq "$(reservations s1)" 0 "A's address released"
t_eq "$(reservations s2)" 1 "B holds its own"
t_eq "$(t_count "$SR_STATE/leftover" '*')" 0 "nothing left for the doctor"
run DEL "$(conf 0 8)" s2 "$podB"
t_eq "$T_RC" 0 "B's DEL ($T_OUT)"

t_begin "... and when the holder's record is lost, the log and rdma-doctor say the address stays, until its DEL"
sr_setup 1
rm -rf "$POOL"
podA=$(t_netns)
podB=$(t_netns)
run ADD "$(conf 0 7)" s1 "$podA"
t_eq "$T_RC" 0 "ADD into A ($T_ERR)"
rm "$SR_STATE/s1:net1.json"
pod_gone "$podA"
run ADD "$(conf 0 8)" s2 "$podB"
t_eq "$T_RC" 0 "ADD into B takes it over ($T_OUT)"
t_contains "$T_ERR" "may hold from pool-ipam is not released: its record is lost or unreadable" "the log says why"
t_eq "$(reservations s1)" 1 "A's address stays reserved"
t_eq "$(t_count "$SR_STATE/leftover" 's1:net1.json')" 1 "a note for the doctor"
doctor=$("$SOURCE_DIR/scripts/rdma-doctor" --sysfs-root "$SR_SYS" --cni-bin-dir "" --state-dir "$SR_STATE" 2>&1)
t_contains "$doctor" "WARN leftover s1:net1: VF $(sr_vf 0) was taken over from sandbox s1" "rdma-doctor names it"
t_contains "$doctor" "a DEL of that sandbox releases it" "and what frees it"
# The runtime's late DEL of pod A's sandbox: its address goes, and the note.
run DEL "$(conf 0 7)" s1 ""
t_eq "$T_RC" 0 "A's late DEL ($T_OUT)"
t_eq "$(reservations s1)" 0 "A's address released by its DEL"
t_eq "$(t_count "$SR_STATE/leftover" '*')" 0 "the note is gone"
t_eq "$(sr_pod_link "$podB" net1 | cut -d' ' -f1)" net1 "B keeps the VF"
run DEL "$(conf 0 8)" s2 "$podB"
t_eq "$T_RC" 0 "B's DEL ($T_OUT)"

t_done
