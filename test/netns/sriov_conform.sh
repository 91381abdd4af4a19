#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the CNI spec and real chains expect of sriov-rdma, through libcni:
# a route without "gw" goes via the IPAM's gateway (as macvlan, host-device
# and sriov-cni do), CHECK follows the chain's prevResult (tuning after us
# changes the MAC and MTU) and checks routes too.
. "$(dirname "$0")/sriov_lib.sh"

CONF=$T_TMP/net.conflist
POOL="{\"type\": \"pool-ipam\", \"ranges\": [[{\"subnet\": \"10.71.0.0/24\", \"gateway\": \"10.71.0.1\"}]], \"routes\": [{\"dst\": \"0.0.0.0/0\"}, {\"dst\": \"10.99.0.0/16\"}, {\"dst\": \"10.98.0.0/16\", \"gw\": \"10.71.0.254\"}], \"dataDir\": \"$T_TMP/pool\"}"

t_begin "a route without gw goes via the IPAM's gateway; one with gw via its own"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\"" "$POOL"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=r1
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_contains "$(ip -n "$(basename "$pod")" route show default)" "default via 10.71.0.1 dev net1" "default route via the gateway"
t_contains "$(ip -n "$(basename "$pod")" route show 10.99.0.0/16)" "via 10.71.0.1" "10.99.0.0/16 via the gateway"
t_contains "$(ip -n "$(basename "$pod")" route show 10.98.0.0/16)" "via 10.71.0.254" "10.98.0.0/16 via its own gw"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=r1
t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"

t_begin "CHECK finds a missing route"
ip -n "$(basename "$pod")" route del 10.99.0.0/16
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=r1
t_eq "$T_RC" 1 "CHECK fails"
t_contains "$T_OUT" "route to 10.99.0.0/16 via 10.71.0.1 is missing" "names the route"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=r1
t_eq "$T_RC" 0 "DEL ($T_ERR)"

t_begin "tuning after sriov-rdma changes MAC and MTU: CHECK passes, DEL restores the VF"
if [ ! -x "$PEER_CNI_DIR/tuning" ]; then
	echo "# skipped: no tuning plugin in $PEER_CNI_DIR"
else
	sr_setup 1
	ip link set "$(sr_net 0)" mtu 1500
	orig=$(sr_host_link "$(sr_net 0)")
	pod=$(t_netns)
	sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\"" "$POOL" \
		'{"type": "tuning", "mac": "02:aa:bb:cc:dd:ee", "mtu": 1400, "sysctl": {"net.ipv4.conf.net1.arp_ignore": "1"}}'
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=t1
	t_eq "$T_RC" 0 "ADD ($T_ERR)"
	t_eq "$(sr_pod_link "$pod" net1 | cut -d' ' -f2,3)" "02:aa:bb:cc:dd:ee 1400" "tuning's MAC and MTU in the pod"
	t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=t1
	t_eq "$T_RC" 0 "CHECK right after a good ADD ($T_OUT $T_ERR)"
	t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=t1
	t_eq "$T_RC" 0 "DEL ($T_ERR)"
	t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "the VF is home with its name, MAC, MTU"
fi

t_begin "an invalid pool-ipam section is refused before the first host change"
sr_setup 1
orig=$(sr_host_link "$(sr_net 0)")
pod=$(t_netns)
for bad in '"subnet": "10.72.0.0/24", "rangeStrat": "10.72.0.9"' '"subnet": "10.72.0.0/33"' \
	"\"subnet\": \"10.72.0.0/24\", \"dataDir\": \"/etc/evil\""; do
	sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"vlan\": 100" "{\"type\": \"pool-ipam\", $bad}"
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=v1
	t_eq "$(t_jq .code)" 7 "$bad: code ($T_OUT)"
	t_contains "$(t_jq .msg)" "ipam." "$bad: names the field"
	t_eq "$(sr_calls)" "" "$bad: nothing asked of the PF"
	t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "$bad: the VF is untouched"
	t_eq "$(sr_state_files)$(sr_markers)" "" "$bad: no record, no claim"
done

t_done
