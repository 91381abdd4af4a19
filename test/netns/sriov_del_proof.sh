#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# DEL touches a VF only when it can prove it is the attachment's: a NAD
# naming another pod's VF (deviceID) and a state directory DEL cannot use
# makes DEL ask the PF nothing and move nothing; CNI_IFNAME=lo is never
# moved; a PF renamed since ADD is found again by its PCI address, and the
# VF's PF-side settings go back on it. Through the libcni client, with the
# recording fake PF and veth stand-ins for the VFs.
. "$(dirname "$0")/sriov_lib.sh"

CONF_A=$T_TMP/a.conflist
CONF_B=$T_TMP/b.conflist
POOL="{\"type\": \"pool-ipam\", \"ranges\": [[{\"subnet\": \"10.68.0.0/24\"}]], \"dataDir\": \"$T_TMP/pool\"}"
vf_line() { grep "^vf=$1 " "$SR_FAKE/$SR_PFNET.vfs"; }

# Pod B holds VF 0 on vlan 100, pod A holds VF 1: both as net1.
two_pods() {
	sr_setup 2
	podA=$(t_netns)
	podB=$(t_netns)
	sr_conflist "$CONF_B" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"vlan\": 100, \"mac\": \"02:00:00:00:bb:01\"" "$POOL"
	sr_conflist "$CONF_A" 1.0.0 "\"deviceID\": \"$(sr_vf 1)\"" "$POOL"
	t_cnitool add "$CONF_B" "$podB" CNI_IFNAME=net1 CNI_CONTAINERID=podb
	t_eq "$T_RC" 0 "pod B's ADD ($T_ERR)" || return 1
	t_cnitool add "$CONF_A" "$podA" CNI_IFNAME=net1 CNI_CONTAINERID=poda
	t_eq "$T_RC" 0 "pod A's ADD ($T_ERR)" || return 1
	vfB=$(vf_line 0)
	t_contains "$vfB" "vlan=100" "pod B's VF is on vlan 100"
	calls=$(sr_calls)
}
# Nothing of pod B's changed, the PF was asked nothing, pod A's interface stayed.
untouched() { # what
	t_eq "$T_RC" 0 "$1: DEL exits 0 ($T_OUT)"
	t_eq "$(sr_calls)" "$calls" "$1: the PF was asked nothing"
	t_eq "$(vf_line 0)" "$vfB" "$1: pod B's VF settings intact"
	t_eq "$(sr_pod_link "$podA" net1 | cut -d' ' -f1)" net1 "$1: pod A's net1 stays in pod A"
	t_eq "$(sr_host_link "${SR_PFNET}v0")" "" "$1: nothing came home as ${SR_PFNET}v0"
	local err=$T_ERR
	t_cnitool check "$CONF_B" "$podB" CNI_IFNAME=net1 CNI_CONTAINERID=podb
	t_eq "$T_RC" 0 "$1: pod B's CHECK still passes ($T_ERR $T_OUT)"
	calls=$(sr_calls)	# CHECK reads the PF
	T_ERR=$err
}
# Pod A's DEL with pod B's deviceID and a stateDir the node does not allow.
hostile_del() { # IFNAME
	local bad
	bad=$(jq -c --arg d "$(sr_vf 0)" '.plugins[0] |= (.deviceID = $d | .stateDir = "/nonexistent/state")' "$CONF_A")
	printf '%s\n' "$bad" > "$T_TMP/hostile.conflist"
	t_cnitool del "$T_TMP/hostile.conflist" "$podA" CNI_IFNAME="$1" CNI_CONTAINERID=poda
}

t_begin "no usable stateDir and another pod's deviceID: DEL leaves that VF and its own interface alone"
two_pods
# Pod A's net1 is VF 1 by its device.
hostile_del net1
untouched "pod A's net1 is VF 1"
t_contains "$T_ERR" "VF $(sr_vf 0): net1 in the pod is PCI device $(sr_vf 1), not the VF" "the log says why"
t_contains "$T_ERR" "not restored" "the log says the VF is not restored"

t_begin "... and when pod A's net1 is a veth of its own (the VF renamed away), the same"
ip -n "$(basename "$podA")" link set net1 name vfa
ip -n "$(basename "$podA")" link add net1 type veth peer name tenant1
hostile_del net1
untouched "a tenant's net1"
t_contains "$T_ERR" "net1 in the pod is a link with no PCI device, not the VF" "the log says what net1 is"
t_contains "$T_ERR" "which holds no link whose PCI device is the VF" "the log says what is missing"
ip -n "$(basename "$podA")" link del net1
ip -n "$(basename "$podA")" link set vfa name net1

t_begin "CNI_IFNAME=lo: never moved, the PF asked nothing, even where its device is said to be the VF"
hostile_del lo
untouched "lo"
t_contains "$T_ERR" "lo in the pod is the loopback, not the VF" "the log says lo is not the VF"
sr_standin "$podA" lo 0
hostile_del lo
untouched "lo claimed to be the VF"
t_eq "$(ip -n "$(basename "$podA")" -o link show lo | wc -l)" 1 "lo is still in pod A"
sr_standin "$podA" lo

t_begin "a record naming a link in the pod that is another device: the link stays"
# Pod A's record says net1, VF 1; pod A's net1 is, by its PCI device, VF 0.
sr_standin "$podA" net1 0
t_cnitool del "$CONF_A" "$podA" CNI_IFNAME=net1 CNI_CONTAINERID=poda
t_eq "$T_RC" 0 "DEL exits 0 ($T_ERR)"
t_contains "$T_ERR" "net1 in the pod is PCI device $(sr_vf 0), not the VF: leaving it alone" "the log says why"
t_eq "$(sr_pod_link "$podA" net1 | cut -d' ' -f1)" net1 "the link stays in the pod"
sr_standin "$podA" net1 1
t_cnitool del "$CONF_B" "$podB" CNI_IFNAME=net1 CNI_CONTAINERID=podb
t_eq "$T_RC" 0 "pod B's DEL ($T_ERR)"
t_eq "$(vf_line 0 | cut -d' ' -f3)" "vlan=0" "pod B's own DEL restores its VF"

t_begin "record and marker unreadable, and no link of the pod is the VF: nothing is touched"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF_B" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"vlan\": 100" "$POOL"
t_cnitool add "$CONF_B" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=unr
t_eq "$T_RC" 0 "ADD ($T_ERR)"
echo garbage > "$SR_STATE/unr:net1.json"
echo garbage > "$SR_STATE/pci/$(sr_vf 0)"
calls=$(sr_calls)
vf0=$(vf_line 0)
# The pod's net1 stands on no device: nothing says it is the VF.
sr_standin "$pod" net1
t_cnitool del "$CONF_B" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=unr
t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT)"
t_contains "$T_ERR" "which holds no link whose PCI device is the VF" "the log says why"
t_eq "$(sr_calls)" "$calls" "the PF was asked nothing"
t_eq "$(vf_line 0)" "$vf0" "the VF's settings are as they were"
t_eq "$(sr_pod_link "$pod" net1 | cut -d' ' -f1)" net1 "net1 stays in the pod"
t_contains "$(sr_markers)" "$(sr_vf 0)" "the marker stays for a person to look at"
t_begin "... and once the pod's net1 is the VF by its device, DEL brings it home"
sr_standin "$pod" net1 0
t_cnitool del "$CONF_B" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=unr
t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT)"
t_eq "$(sr_host_link "${SR_PFNET}v0" | cut -d' ' -f1)" "${SR_PFNET}v0" "VF home under the fallback name"
t_contains "$(vf_line 0)" "vlan=0" "the VF's vlan reset"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no marker"
ip link set "${SR_PFNET}v0" name "$(sr_net 0)"

t_begin "a PF renamed between ADD and DEL: CHECK and DEL find it by its PCI address"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF_B" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"vlan\": 100, \"spoofchk\": \"off\"" "$POOL"
t_cnitool add "$CONF_B" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=ren
t_eq "$T_RC" 0 "ADD ($T_ERR)"
# udev after a driver reload, or an admin's `ip link set ... name`: sysfs and the PF's netdev.
NEWPF=${SR_PFNET}r
sr_rename_pf "$NEWPF"
t_cnitool check "$CONF_B" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=ren
t_eq "$T_RC" 0 "CHECK reads the VF from the renamed PF ($T_ERR $T_OUT)"
t_cnitool del "$CONF_B" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=ren
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_contains "$T_ERR" "its PF $SR_PF is $NEWPF now" "the log names the PF's new name"
t_contains "$(cat "$SR_FAKE/$NEWPF.calls" 2>/dev/null)" "vf=0 vlan=0" "the VF's vlan reset on the renamed PF"
t_contains "$(cat "$SR_FAKE/$NEWPF.calls" 2>/dev/null)" "vf=0 spoofchk=on" "its spoofchk back on the renamed PF"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$NEWPF.vfs")" "vlan=0 qos=0 proto=802.1Q spoofchk=on" "the VF's PF-side settings are back"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no marker"

t_done
