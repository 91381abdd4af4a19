#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What a NAD can and cannot make sriov-rdma and pool-ipam do with the keys it
# writes: the spec's names, exactly, on ADD; DEL and GC of a config edited
# since still release what ADD reserved.
. "$(dirname "$0")/sriov_lib.sh"

HL=$T_TMP/hl
POOL=$T_TMP/pool

conf() { # VF [extra jq object]
	jq -nc --arg d "$(sr_vf "$1")" --arg s "$SR_STATE" --arg hl "$HL" \
		'{cniVersion: "1.0.0", name: "nad", type: "sriov-rdma", deviceID: $d, stateDir: $s,
		  ipam: {type: "host-local", subnet: "10.72.0.0/24", dataDir: $hl}} + '"${2:-{\}}"
}
# The same config with its "ipam" renamed, as a NAD edited after ADD.
recase() { # CONF NEWKEY
	printf '%s' "$1" | jq -c --arg k "$2" '.[$k] = .ipam | del(.ipam)'
}
run() { # CMD CONF CID NETNS
	t_exec sriov-rdma "$1" "$2" CNI_CONTAINERID="$3" CNI_NETNS="$4" CNI_IFNAME=net1
}
hl_held() { find "$HL/nad" -maxdepth 1 -name '10.72.*' 2>/dev/null | wc -l; }
pool_held() { find "$POOL/$1" -maxdepth 1 -name 'c-*' 2>/dev/null | wc -l; }

t_begin "a known key in another case is code 7 naming it, before anything changes"
sr_setup 1
pod=$(t_netns)
for k in IPAM Ipam; do
	run ADD "$(recase "$(conf 0)" "$k")" k1 "$pod"
	t_eq "$(t_jq .code)" 7 "$k: code"
	t_contains "$(t_jq .msg)" "$k: keys are case-sensitive" "$k: named"
done
run ADD "$(conf 0 | jq -c '.DeviceID = .deviceID | del(.deviceID)')" k1 "$pod"
t_eq "$(t_jq .code)" 7 "DeviceID: code"
t_contains "$(t_jq .msg)" "DeviceID: keys are case-sensitive; write \"deviceID\"" "DeviceID: named"
run ADD "$(conf 0 '{runtimeConfig: {DeviceID: "0000:3b:00.3"}}')" k1 "$pod"
t_eq "$(t_jq .code)" 7 "runtimeConfig.DeviceID: code"
t_contains "$(t_jq .msg)" "runtimeConfig.DeviceID" "runtimeConfig.DeviceID: named"
run ADD "$(conf 0 "{ipam: {type: \"pool-ipam\", subnet: \"10.73.0.0/24\", DataDir: \"$POOL\"}}")" k1 "$pod"
t_eq "$(t_jq .code)" 7 "ipam.DataDir: code"
t_contains "$(t_jq .msg)" "ipam.DataDir: keys are case-sensitive; write \"dataDir\"" "ipam.DataDir: named"
t_eq "$(sr_calls)" "" "the PF was never asked"
t_eq "$(sr_state_files)$(sr_markers)$(hl_held)" "0" "no record, no marker, no address"

t_begin "a recased \"type\" inside ipam is code 7 naming it, not an attach without an address"
sr_setup 1
pod=$(t_netns)
typed=$(conf 0 | jq -c '.ipam.Type = .ipam.type | del(.ipam.type)')
run ADD "$typed" k4 "$pod"
t_eq "$T_RC" 1 "ADD fails ($T_OUT)"
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" "ipam.Type: keys are case-sensitive; write \"type\"" "ipam.Type: named"
t_eq "$(sr_calls)" "" "the PF was never asked"
t_eq "$(sr_state_files)$(sr_markers)$(hl_held)" "0" "no record, no marker, no address"
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "the VF stays on the host"
# An older ADD took such a config for no IPAM, and reserved nothing: its DEL still finishes.
run ADD "$(conf 0 | jq -c 'del(.ipam)')" k4 "$pod"
t_eq "$T_RC" 0 "the older ADD's attachment, no IPAM ($T_ERR)"
run DEL "$typed" k4 "$pod"
t_eq "$T_RC" 0 "DEL of the recased config ($T_ERR)"
t_eq "$(sr_state_files)$(sr_markers)$(hl_held)" "0" "released: no record, no marker, no address"

t_begin "DEL of a config whose ipam was recased after ADD: the record's IPAM releases the address"
sr_setup 1
pod=$(t_netns)
run ADD "$(conf 0)" k2 "$pod"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(hl_held)" 1 "host-local holds the address"
run DEL "$(recase "$(conf 0)" IPAM)" k2 "$pod"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(hl_held)" 0 "the address is released"
t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"

t_begin "DEL without a record of a config with \"IPAM\" (an older ADD took it): released all the same"
sr_setup 1
pod=$(t_netns)
old=$(recase "$(conf 0)" IPAM)
# What an older sriov-rdma did at ADD: host-local, which reads keys in any case, got this config.
t_exec host-local ADD "$old" CNI_CONTAINERID=k3 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "host-local ADD ($T_ERR)"
t_eq "$(hl_held)" 1 "host-local holds the address"
run DEL "$old" k3 "$pod"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_contains "$T_ERR" "IPAM: keys are case-sensitive" "the warning names the key"
t_eq "$(hl_held)" 0 "the address is released"

t_begin "pool-ipam DEL of an edited config: a recased dataDir still names the store to release from"
pconf() { jq -nc --arg p "$POOL" '{cniVersion: "1.0.0", name: "pn", ipam: {type: "pool-ipam", subnet: "10.74.0.0/24", dataDir: $p}} + '"${1:-{\}}"; }
t_exec pool-ipam ADD "$(pconf)" CNI_CONTAINERID=p1 CNI_NETNS=/x CNI_IFNAME=net1
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(pool_held pn)" 1 "reserved"
t_exec pool-ipam ADD "$(pconf "{ipam: {type: \"pool-ipam\", subnet: \"10.74.0.0/24\", DataDir: \"$POOL\"}}")" \
	CNI_CONTAINERID=p2 CNI_NETNS=/x CNI_IFNAME=net1
t_eq "$(t_jq .code)" 7 "ADD with DataDir: code 7"
t_contains "$(t_jq .msg)" "ipam.DataDir" "ADD names the key"
t_exec pool-ipam ADD "$(pconf | jq -c '.IPAM = .ipam | del(.ipam)')" CNI_CONTAINERID=p2 CNI_NETNS=/x CNI_IFNAME=net1
t_eq "$(t_jq .code)" 7 "ADD with IPAM: code 7"
t_contains "$(t_jq .msg)" "IPAM: keys are case-sensitive" "ADD names IPAM"
# The node's block gone from the config: DEL falls back on the store alone.
t_exec pool-ipam DEL "$(pconf "{ipam: {type: \"pool-ipam\", DataDir: \"$POOL\"}}")" \
	CNI_CONTAINERID=p1 CNI_NETNS=/x CNI_IFNAME=net1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(pool_held pn)" 0 "released from the store DataDir names"
t_exec pool-ipam ADD "$(pconf)" CNI_CONTAINERID=p3 CNI_NETNS=/x CNI_IFNAME=net1
t_exec pool-ipam DEL "$(pconf | jq -c '.IPAM = .ipam | del(.ipam)')" CNI_CONTAINERID=p3 CNI_NETNS=/x CNI_IFNAME=net1
t_eq "$T_RC" 0 "DEL with IPAM ($T_ERR)"
t_eq "$(pool_held pn)" 0 "released through IPAM"

t_begin "GC of a config whose ipam was recased: the VF and the address of a gone attachment are released"
sr_setup 1
pod=$(t_netns)
gconf=$(conf 0 "{cniVersion: \"1.1.0\", ipam: {type: \"pool-ipam\", subnet: \"10.75.0.0/24\", dataDir: \"$POOL\"}}")
run ADD "$gconf" g1 "$pod"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(pool_held nad)" 1 "reserved"
run GC "$(recase "$gconf" IPAM | jq -c '.["cni.dev/valid-attachments"] = []')" "" ""
t_eq "$T_RC" 0 "GC ($T_ERR)"
t_eq "$(sr_state_files)$(sr_markers)" "" "the VF released"
t_eq "$(pool_held nad)" 0 "the address released"

# A NAD's plugin config as Multus hands it to libcni: deviceID and pciBusID
# from the device plugin's allocation (VF 0) written over the NAD's, and
# the NAD's capabilities and runtimeConfig as the NAD has them.
multus_conf() { # FILE 'capabilities object' 'runtimeConfig object or ""'
	jq -n --arg d "$(sr_vf 0)" --arg s "$SR_STATE" --arg hl "$HL" --argjson caps "$2" \
		--argjson rc "${3:-null}" \
		'{cniVersion: "0.3.1", name: "nad", type: "sriov-rdma", capabilities: $caps,
		  deviceID: $d, pciBusID: $d, stateDir: $s,
		  ipam: {type: "host-local", subnet: "10.72.0.0/24", dataDir: $hl}}
		 + (if $rc == null then {} else {runtimeConfig: $rc} end)' > "$1"
}

t_begin "Multus with the deviceID capability declared: all three sources name the VF, ADD and DEL work"
sr_setup 2
pod=$(t_netns)
multus_conf "$T_TMP/m1.conf" '{"deviceID": true}'
t_cnitool add "$T_TMP/m1.conf" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m1 \
	CAP_ARGS="{\"deviceID\": \"$(sr_vf 0)\"}"
t_eq "$T_RC" 0 "ADD ($T_ERR $T_OUT)"
t_contains "$(sr_markers)" "$(sr_vf 0)" "VF 0 is the pod's"
t_cnitool del "$T_TMP/m1.conf" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m1 \
	CAP_ARGS="{\"deviceID\": \"$(sr_vf 0)\"}"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(sr_state_files)$(sr_markers)" "" "released"

t_begin "a NAD without capabilities names another VF in its own runtimeConfig: code 7 naming both, no VF touched"
sr_setup 2
pod=$(t_netns)
multus_conf "$T_TMP/m2.conf" '{}' "{\"deviceID\": \"$(sr_vf 1)\"}"
t_cnitool add "$T_TMP/m2.conf" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m2 \
	CAP_ARGS="{\"deviceID\": \"$(sr_vf 0)\"}"
t_eq "$(t_jq .code)" 7 "code ($T_ERR)"
t_contains "$(t_jq .msg)" "deviceID \"$(sr_vf 0)\" and runtimeConfig.deviceID \"$(sr_vf 1)\" name different VFs" "names both"
t_eq "$(sr_calls)$(sr_state_files)$(sr_markers)$(hl_held)" "0" "no PF request, record, marker or address"
t_eq "$(ip -n "$(basename "$pod")" -o link | grep -vc ' lo:')" 0 "nothing moved into the pod"
# The runtime's DEL after the failed ADD touches neither VF.
t_cnitool del "$T_TMP/m2.conf" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m2
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(sr_calls)" "" "DEL asked the PF nothing"

t_begin "a NAD's own pciBusID (no resourceName, so Multus writes none over it) against its deviceID: code 7"
sr_setup 2
pod=$(t_netns)
run ADD "$(conf 0 "{pciBusID: \"$(sr_vf 1)\"}")" m3 "$pod"
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" "deviceID \"$(sr_vf 0)\" and pciBusID \"$(sr_vf 1)\"" "names both"
t_eq "$(sr_calls)$(sr_state_files)$(sr_markers)" "" "nothing changed"

t_begin "the same VF written differently in each source, and one source alone (DRA, a runtime's capability): accepted"
sr_setup 1
pod=$(t_netns)
run ADD "$(conf 0 '{pciBusID: "3b:00.2", runtimeConfig: {deviceID: "0000:3B:00.2"}}')" m4 "$pod"
t_eq "$T_RC" 0 "one VF in three spellings ($T_ERR)"
run DEL "$(conf 0)" m4 "$pod"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
run ADD "$(conf 0 | jq -c --arg d "$(sr_vf 0)" 'del(.deviceID) + {runtimeConfig: {deviceID: $d}}')" m5 "$pod"
t_eq "$T_RC" 0 "runtimeConfig.deviceID alone ($T_ERR)"
run DEL "$(conf 0)" m5 "$pod"
t_eq "$(sr_state_files)$(sr_markers)" "" "released"

t_begin "\"pkey\": null is absent, as null is for every member; \"PKey\" is code 7 naming it"
sr_setup 1
pod=$(t_netns)
run ADD "$(conf 0 '{pkey: null, vlan: null}')" n1 "$pod"
t_eq "$T_RC" 0 "pkey null on an Ethernet VF ($T_ERR $T_OUT)"
run DEL "$(conf 0)" n1 "$pod"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
run ADD "$(conf 0 '{PKey: "0x8001"}')" n2 "$pod"
t_eq "$(t_jq .code)" 7 "PKey: code"
t_contains "$(t_jq .msg)" "PKey: keys are case-sensitive; write \"pkey\"" "PKey: named"
t_eq "$(sr_state_files)$(sr_markers)" "" "nothing held"

t_done
