#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sriov-rdma ADD, CHECK and DEL through libcni, as a runtime and Multus call it.
. "$(dirname "$0")/sriov_lib.sh"

CONF=$T_TMP/net.conflist

t_begin "ADD moves the VF netdev into the pod with its address; DEL gives it back intact"
sr_setup 2
ip link set "$(sr_net 0)" mtu 1500
orig=$(sr_host_link "$(sr_net 0)")
pod=$(t_netns)
POOL="{\"type\": \"pool-ipam\", \"ranges\": [[{\"subnet\": \"10.66.0.0/24\"}]], \"dataDir\": \"$T_TMP/pool\"}"
# libcni 1.1.2 (Debian's) reads results up to 1.0.0; 1.1 fields are tested with a direct call below.
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"mtu\": 1400" "$POOL"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1
t_eq "$T_RC" 0 "ADD exit code ($T_ERR)"
t_eq "$(t_jq '.interfaces[0].name')" net1 "result interface"
t_eq "$(t_jq '.interfaces[0].sandbox')" "$pod" "result sandbox"
addr=$(t_jq '.ips[0].address')
t_eq "$(t_jq '.ips[0].interface')" 0 "ips[0].interface"
t_eq "$(sr_host_link "$(sr_net 0)")" "" "VF netdev left the host"
t_eq "$(sr_pod_link "$pod" net1 | cut -d' ' -f3)" 1400 "MTU in the pod"
t_contains "$(ip -n "$(basename "$pod")" -br addr show net1)" "$addr" "address in the pod"
t_contains "$(ip -n "$(basename "$pod")" -br link show net1)" "UP" "link up in the pod"
t_eq "$(ip netns exec "$(basename "$pod")" sysctl -n net.ipv4.conf.net1.arp_notify)" 1 "arp_notify"
t_eq "$(sr_calls)" "" "no VF property asked: the PF is not touched"
t_contains "$(sr_markers)" "$(sr_vf 0)" "in-use marker"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1
t_eq "$T_RC" 0 "CHECK after ADD ($T_ERR $T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1
t_eq "$T_RC" 0 "DEL exit code ($T_ERR)"
t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "VF back on the host with its name, MAC, MTU"
t_eq "$(sr_pod_link "$pod" net1)" "" "nothing left in the pod"
t_eq "$(sr_state_files)" "" "no record left"
t_eq "$(sr_markers)" "" "no marker left"

t_begin "cniVersion 1.1.0: the result carries mtu and pciID"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF" 1.1.0 "\"deviceID\": \"$(sr_vf 0)\", \"mtu\": 1400" "$POOL"
t_exec sriov-rdma ADD "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c11 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
t_eq "$(t_jq '.interfaces[0].pciID')" "$(sr_vf 0)" "result pciID"
t_eq "$(t_jq '.interfaces[0].mtu')" 1400 "result mtu"
t_eq "$(t_jq '.ips[0].interface')" 0 "ips[0].interface"
t_exec sriov-rdma DEL "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c11 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
t_eq "$(sr_state_files)" "" "no record left"

t_begin "altnames: dropped on the way in, so neither side keeps a stale one (sriov-cni #445)"
sr_setup 1
pod=$(t_netns)
ip link property add dev "$(sr_net 0)" altname "sr$$-alt0"
sr_conflist "$CONF" 1.1.0 "\"deviceID\": \"$(sr_vf 0)\"" "$POOL"
t_exec sriov-rdma ADD "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c13 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
t_eq "$(ip -n "$(basename "$pod")" -j link show net1 | jq -c '.[0].altnames // []')" "[]" "no altname in the pod"
t_eq "$(ip link show "sr$$-alt0" 2>/dev/null)" "" "the altname does not name anything on the host"
t_exec sriov-rdma DEL "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c13 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "back on the host under its name"

t_begin "later in a chain: the prevResult is kept and our interface appended"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF" 1.1.0 "\"deviceID\": \"$(sr_vf 0)\"" "$POOL"
prev='{"cniVersion": "1.1.0", "interfaces": [{"name": "eth0", "sandbox": "'"$pod"'"}], "ips": [{"address": "192.168.7.5/24", "interface": 0}]}'
conf=$(sr_plugin_conf "$CONF" | jq -c --argjson p "$prev" '. + {prevResult: $p}')
t_exec sriov-rdma ADD "$conf" CNI_CONTAINERID=c12 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
t_eq "$(t_jq '[.interfaces[].name] | join(",")')" "eth0,net1" "interfaces"
t_eq "$(t_jq '.ips[0].address + " " + (.ips[0].interface | tostring)')" "192.168.7.5/24 0" "earlier address kept"
t_eq "$(t_jq '.ips[1].interface')" 1 "our address points at our interface"
# A runtime's CHECK carries the chain's final result.
check=$(sr_plugin_conf "$CONF" | jq -c --argjson p "$T_OUT" '. + {prevResult: $p}')
t_exec sriov-rdma CHECK "$check" CNI_CONTAINERID=c12 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "CHECK skips the other interface's address ($T_OUT)"
t_exec sriov-rdma DEL "$conf" CNI_CONTAINERID=c12 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "DEL ($T_OUT)"

t_begin "CHECK finds drift against prevResult: MAC and MTU changed, address removed"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_eq "$T_RC" 0 "ADD ($T_ERR)"
addr=$(t_jq '.ips[0].address')
mac=$(t_jq '.interfaces[0].mac')
prev=$T_OUT
ip -n "$(basename "$pod")" link set net1 address 02:de:ad:be:ef:01
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_eq "$T_RC" 1 "CHECK fails on MAC drift"
t_contains "$T_OUT" '"code":107' "drift code"
t_contains "$T_OUT" "mac is 02:de:ad:be:ef:01" "names the MAC"
ip -n "$(basename "$pod")" link set net1 address "$mac"
# A 1.0.0 result carries no MTU: a 1.1.0 prevResult does, and CHECK holds the pod to it.
ip -n "$(basename "$pod")" link set net1 mtu 1300
t_exec sriov-rdma CHECK "$(sr_plugin_conf "$CONF" | jq -c --argjson p "$prev" \
	'.cniVersion = "1.1.0" | .prevResult = ($p | .cniVersion = "1.1.0" | .interfaces[0].mtu = 1500)')" \
	CNI_CONTAINERID=c2 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$(t_jq .code)" 107 "CHECK fails on MTU drift ($T_OUT)"
t_contains "$(t_jq .msg)" "mtu is 1300, prevResult says 1500" "names the MTU"
ip -n "$(basename "$pod")" link set net1 mtu 1500
ip -n "$(basename "$pod")" addr del "$addr" dev net1
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_contains "$T_OUT" "$addr" "CHECK names the missing address"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_eq "$T_RC" 0 "DEL ($T_ERR)"

t_begin "CHECK holds the pod to ADD's MTU when the prevResult does not name one"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"mtu\": 9000"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2m
t_eq "$T_RC" 0 "ADD ($T_ERR)"
prev=$T_OUT
ip -n "$(basename "$pod")" link set net1 mtu 1500
# libcni 1.1.2 caches the result without mtu, and results below 1.0.0 never had one.
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2m
t_contains "$T_OUT" '"code":107' "CHECK through libcni fails on MTU drift ($T_OUT)"
t_contains "$T_OUT" "mtu is 1500, ADD set 9000" "names the MTU and where the 9000 comes from"
for v in 0.4.0 1.0.0; do
	t_exec sriov-rdma CHECK "$(sr_plugin_conf "$CONF" | jq -c --arg v $v --argjson p "$prev" \
		'.cniVersion = $v | .prevResult = ($p | .cniVersion = $v | del(.interfaces[0].mtu))')" \
		CNI_CONTAINERID=c2m CNI_IFNAME=net1 CNI_NETNS="$pod"
	t_eq "$(t_jq .code)" 107 "CHECK with a $v prevResult without mtu fails on MTU drift ($T_OUT)"
	t_contains "$(t_jq .msg)" "mtu is 1500, ADD set 9000" "names the MTU ($v)"
done
ip -n "$(basename "$pod")" link set net1 mtu 9000
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2m
t_eq "$T_RC" 0 "CHECK passes with the MTU back ($T_ERR $T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2m
t_eq "$T_RC" 0 "DEL ($T_ERR)"

t_begin "VF properties go to the PF in order, are checked, and are restored on DEL"
sr_setup 2
pod=$(t_netns)
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 1)\", \"vlan\": 100, \"vlanQoS\": 2, \"spoofchk\": \"off\", \"trust\": \"on\", \"mac\": \"02:11:22:33:44:55\", \"max_tx_rate\": 1000, \"link_state\": \"enable\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$T_RC" 0 "ADD ($T_ERR)"
calls=$(sr_calls)
t_contains "$calls" "vf=1 vlan=100 qos=2" "vlan request"
t_contains "$calls" "vf=1 mac=02:11:22:33:44:55" "admin MAC request"
t_contains "$calls" "vf=1 spoofchk=off" "spoofchk request"
t_contains "$calls" "vf=1 trust=on" "trust request"
t_contains "$calls" "vf=1 link_state=enable" "link state request"
t_eq "$(sr_pod_link "$pod" net1 | cut -d' ' -f2)" 02:11:22:33:44:55 "effective MAC in the pod"
t_eq "$(t_jq '.interfaces[0].mac')" 02:11:22:33:44:55 "result MAC"
t_contains "$(grep '^vf=1 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=100" "PF holds the vlan"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$T_RC" 0 "CHECK ($T_ERR $T_OUT)"
sed -i '/^vf=1 /s/trust=on/trust=off/' "$SR_FAKE/$SR_PFNET.vfs"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_contains "$T_OUT" "trust" "CHECK names the trust drift"
sed -i '/^vf=1 /s/trust=off/trust=on/' "$SR_FAKE/$SR_PFNET.vfs"
# A driver (or one reloaded since ADD) that reports no trust: unknown, not "changed".
echo trust > "$SR_FAKE/$SR_PFNET.unreported"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$(t_jq .code)" 107 "CHECK with trust unreported fails ($T_ERR $T_OUT)"
t_contains "$(t_jq .msg)" "no longer reports VF 1's trust" "CHECK names the field the PF stopped reporting"
t_not_contains "$(t_jq .msg)" "no longer holds" "an unreported field is not called changed"
# What the PF reports is still compared, and named apart from what it does not.
sed -i '/^vf=1 /s/vlan=100/vlan=7/' "$SR_FAKE/$SR_PFNET.vfs"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_contains "$(t_jq .msg)" "VF 1 vlan on PF $SR_PFNET no longer holds what ADD set; the PF no longer reports trust" \
	"CHECK names the vlan drift and the unreported trust"
sed -i '/^vf=1 /s/vlan=7/vlan=100/' "$SR_FAKE/$SR_PFNET.vfs"
rm "$SR_FAKE/$SR_PFNET.unreported"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$T_RC" 0 "CHECK once the PF reports all again ($T_ERR $T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(grep '^vf=1 ' "$SR_FAKE/$SR_PFNET.vfs")" \
	"$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs" | sed 's/^vf=0/vf=1/')" "VF 1 back to its original settings"
t_not_contains "$(sr_calls)" "vf=0 " "VF 0 never touched"

t_begin "Multus-style call: cniVersion 0.3.1, K8S_* and MAC CNI_ARGS, deviceID injected, device-info file"
sr_setup 1
pod=$(t_netns)
mkdir -p "$T_TMP/devinfo"
sr_conflist "$CONF" 0.3.1 "\"pciBusID\": \"$(sr_vf 0)\", \"capabilities\": {\"deviceID\": true, \"CNIDeviceInfoFile\": true}"
args="IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=c4;K8S_POD_UID=u;MAC=02:00:00:00:ee:01"
cap="{\"deviceID\": \"$(sr_vf 0)\", \"CNIDeviceInfoFile\": \"$T_TMP/devinfo/sriov-test-c4_net1\"}"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c4 CNI_ARGS="$args" CAP_ARGS="$cap"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(t_jq '.cniVersion')" 0.3.1 "result version"
t_eq "$(t_jq '.ips[0].version')" 4 "0.3.1 ips carry version"
t_eq "$(t_jq '.interfaces[0].pciID')" null "no pciID before 1.1"
t_eq "$(sr_pod_link "$pod" net1 | cut -d' ' -f2)" 02:00:00:00:ee:01 "CNI_ARGS MAC applied in the pod"
t_eq "$(jq -r '.type + " " + .version + " " + .pci["pci-address"] + " " + .pci["pf-pci-address"]' \
	"$T_TMP/devinfo/sriov-test-c4_net1")" "pci 1.1.0 $(sr_vf 0) $SR_PF" "device-info file"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c4 CNI_ARGS="$args" CAP_ARGS="$cap"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(ls "$T_TMP/devinfo")" "" "device-info file removed on DEL"

t_begin "CHECK and DEL create no directory: stateDir missing for CHECK, device-info directory gone for DEL"
sr_setup 1
pod=$(t_netns)
di=$T_TMP/devinfo-gone/sub/c7.json
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"capabilities\": {\"CNIDeviceInfoFile\": true}"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c7 CAP_ARGS="{\"CNIDeviceInfoFile\": \"$di\"}"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(jq -r .pci[\"pci-address\"] "$di")" "$(sr_vf 0)" "ADD wrote the device-info file"
gone=$T_TMP/no-state/sub
t_exec sriov-rdma CHECK "$(sr_plugin_conf "$CONF" | jq -c --arg s "$gone" '.stateDir = $s')" \
	CNI_CONTAINERID=c7 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$(t_jq .code)" 3 "CHECK against a missing stateDir: no such attachment ($T_OUT)"
t_contains "$(t_jq .msg)" "stateDir $gone does not exist (No such file or directory)" "CHECK says why, with the errno"
[ ! -e "$T_TMP/no-state" ] || t_fail "CHECK created the stateDir"
rm -r "$T_TMP/devinfo-gone/sub"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c7 CAP_ARGS="{\"CNIDeviceInfoFile\": \"$di\"}"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
[ ! -e "$T_TMP/devinfo-gone/sub" ] || t_fail "DEL created the device-info directory again"
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "VF back on the host"

t_begin "chained with the tuning plugin, host-local IPAM, cniVersion 0.4.0"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF" 0.4.0 "\"deviceID\": \"$(sr_vf 0)\"" "" \
	'{"type": "tuning", "sysctl": {"net.ipv4.conf.net1.arp_ignore": "1"}, "promisc": true}'
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(ip netns exec "$(basename "$pod")" sysctl -n net.ipv4.conf.net1.arp_ignore)" 1 "tuning applied"
t_contains "$(ip -n "$(basename "$pod")" link show net1)" PROMISC "tuning promisc"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5
t_eq "$T_RC" 0 "CHECK of the chain ($T_ERR $T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "VF back on the host"
t_eq "$(t_count "$T_TMP/hl/sriov-test" '10.*')" 0 "host-local released the address"

t_begin "invalid configs: code 7 naming the field, nothing changed"
sr_setup 1
pod=$(t_netns)
for bad in '"vlan": 4095|vlan' '"vlanQoS": 3|vlanQoS' '"mac": "01:00:5e:00:00:01"|multicast' \
	   '"spoofchk": "maybe"|spoofchk' '"link_state": "up"|link_state' '"stateDir": "relative/dir"|stateDir' \
	   '"vlan": 10, "vlanProto": "802.1x"|vlanProto'; do
	extra=${bad%|*} field=${bad#*|}
	conf=$(jq -nc --arg d "$(sr_vf 0)" --arg s "$SR_STATE" "{cniVersion: \"1.0.0\", name: \"n\", type: \"sriov-rdma\", deviceID: \$d, stateDir: \$s, $extra}")
	t_exec sriov-rdma ADD "$conf" CNI_CONTAINERID=c6 CNI_NETNS="$pod" CNI_IFNAME=net1
	t_eq "$(t_jq .code)" 7 "code for $extra"
	t_contains "$(t_jq .msg)" "$field" "message names $field"
done
conf=$(jq -nc --arg s "$SR_STATE" '{cniVersion: "1.0.0", name: "n", type: "sriov-rdma", deviceID: "0000:3b:02.x", stateDir: $s}')
t_exec sriov-rdma ADD "$conf" CNI_CONTAINERID=c6 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$(t_jq .code)" 7 "code for a bad deviceID"
t_contains "$(t_jq .msg)" 'deviceID "0000:3b:02.x": not a PCI address' "deviceID message"
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "VF still on the host"
t_eq "$(sr_calls)" "" "PF untouched"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state written"

t_begin "DPDK VF (vfio-pci, no netdev): PF properties and IPAM, no move; a VF with no netdev otherwise is an error"
sr_setup 1 --vf 1 "$(sr_vf 1)" - --vf 2 "$(sr_vf 2)" - --driver "$(sr_vf 1)" vfio-pci
pod=$(t_netns)
orig_vf1=$(grep '^vf=1 ' "$SR_FAKE/$SR_PFNET.vfs")
sr_conflist "$CONF" 1.1.0 "\"deviceID\": \"$(sr_vf 1)\", \"mac\": \"02:00:00:00:dd:01\", \"vlan\": 5" "$POOL"
t_exec sriov-rdma ADD "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c9 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
t_eq "$(t_jq '.interfaces[0].mac')" 02:00:00:00:dd:01 "result carries the admin MAC"
t_eq "$(t_jq '.interfaces[0].sandbox')" "$pod" "result sandbox"
t_contains "$(t_jq '.ips[0].address')" 10.66.0. "IPAM ran"
t_contains "$T_ERR" "vfio-pci" "logged as DPDK"
t_contains "$(sr_calls)" "vf=1 mac=02:00:00:00:dd:01" "admin MAC set on the PF"
t_eq "$(ip -n "$(basename "$pod")" -o link | grep -vc ' lo:')" 0 "nothing moved into the pod"
t_exec sriov-rdma DEL "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c9 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(grep '^vf=1 ' "$SR_FAKE/$SR_PFNET.vfs")" "$orig_vf1" "VF 1 settings restored"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"
# multiRail asks for sysctls and routes on a netdev a DPDK VF does not have:
# the attach goes on (the NAD may serve both kinds of pods), and says so.
sr_conflist "$CONF" 1.1.0 "\"deviceID\": \"$(sr_vf 1)\", \"multiRail\": true" "$POOL"
t_exec sriov-rdma ADD "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c11 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "DPDK VF with multiRail: ADD ($T_OUT $T_ERR)"
t_contains "$T_ERR" "multiRail and sysctl act on a netdev" "says multiRail is not applied"
t_exec sriov-rdma DEL "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c11 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"
sr_conflist "$CONF" 1.1.0 "\"deviceID\": \"$(sr_vf 2)\"" "$POOL"
t_exec sriov-rdma ADD "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c10 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$(t_jq .code)" 102 "no netdev: code"
t_contains "$(t_jq .msg)" "no netdev" "no netdev: message"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state after the failure"

t_begin "VERSION and STATUS"
t_exec sriov-rdma VERSION '{"cniVersion": "1.1.0"}'
t_contains "$T_OUT" '"0.3.1"' "supports 0.3.1"
t_contains "$T_OUT" '"1.1.0"' "supports 1.1.0"
conf=$(jq -nc --arg s "$SR_STATE" --arg d "$T_TMP/pool2" '{cniVersion: "1.1.0", name: "n", type: "sriov-rdma", stateDir: $s, ipam: {type: "pool-ipam", ranges: [[{subnet: "10.67.0.0/24"}]], dataDir: $d}}')
t_exec sriov-rdma STATUS "$conf"
t_eq "$T_RC" 0 "STATUS with a usable state dir and IPAM ($T_OUT)"

t_done
