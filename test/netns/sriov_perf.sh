#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sriov-rdma and the node's RTNL: how many requests an ADD and a DEL send
# (a count, never a time), the per-PF lock, and the per-step timings.
. "$(dirname "$0")/sriov_lib.sh"

CONF=$T_TMP/net.conflist
LOG=$T_TMP/sriov.log
PROPS='"vlan": 100, "spoofchk": "off", "trust": "on", "mac": "02:11:22:33:44:55", "link_state": "enable"'

# The PF requests since the last call of pf_mark.
pf_mark() { PF_SEEN=$(sr_calls | wc -l); }
pf_since() { sr_calls | tail -n +$((PF_SEEN + 1)); }
# attached 'extra plugin keys' ID [COMMAND...]: one VF of a fresh PF attached
# to a new pod ($pod); COMMAND, when given, runs on the fresh PF before ADD.
attached() {
	sr_setup 1
	pod=$(t_netns)
	[ $# -le 2 ] || "${@:3}"
	sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", $1"
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID="$2"
	t_eq "$T_RC" 0 "ADD ($T_ERR)"
}
# "host N, pod M, PF K" of the last ADD or DEL in the log.
last_counts() { grep -o 'netlink requests: .*' "$LOG" | tail -1 | sed 's/netlink requests: //'; }

t_begin "ADD and DEL: one PF GETLINK at most, VF info without stats, no dump"
sr_setup 2
pod=$(t_netns)
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 1)\", $PROPS, \"logLevel\": \"debug\", \"logFile\": \"$LOG\""
pf_mark
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1
t_eq "$T_RC" 0 "ADD ($T_ERR)"
calls=$(pf_since)
t_eq "$(grep -c '^getlink' <<<"$calls")" 1 "one PF GETLINK per ADD ($calls)"
t_eq "$(grep '^getlink' <<<"$calls")" "getlink pf=$SR_PFNET ext=vf,skip_stats" "VF info asked without stats, not as a dump"
# The settings in one request; the MAC apart, once the netdev carries it.
t_eq "$(grep -c '^setlink' <<<"$calls")" 2 "two SETLINKs for five properties ($calls)"
t_contains "$calls" "vf=1 vlan=100 qos=0 proto=802.1Q vf=1 spoofchk=off vf=1 link_state=enable vf=1 trust=on" \
	"the four in one request, in the kernel's order"
# Held at what ADD sends today: a new request on the attach path shows up here.
echo "# ADD: netlink requests: $(last_counts)"
IFS=', ' read -r _ host _ pod_n _ pf <<<"$(last_counts)"
t_eq "$pf" 3 "the log counts the PF requests ($(last_counts))"
# The host's: the VF netdev with its altnames (one look), the move.
t_eq "$((host <= 2))" 1 "host requests per ADD: $host, at most 2"
# The pod's: is CNI_IFNAME free, is the VF's host name free there (for the
# undo), link-up (a request of its own: the driver's open on top of the
# move would make the longest RTNL hold the sum of both), the link once up
# (its index and carrier), its address, and the neighbour probe that has
# the kernel announce that address.
t_eq "$((pod_n <= 6))" 1 "pod requests per ADD: $pod_n, at most 6"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1
t_eq "$T_RC" 0 "CHECK ($T_ERR)"
echo "# CHECK: netlink requests: $(last_counts)"
IFS=', ' read -r _ host _ pod_n _ pf <<<"$(last_counts)"
t_eq "$host" 0 "CHECK asks nothing of the host ($(last_counts))"
t_eq "$((pf <= 1))" 1 "CHECK asks the PF once at most: $pf"
t_eq "$((pod_n <= 2))" 1 "pod requests per CHECK: $pod_n, at most 2 (the link, its address)"
pf_mark
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
calls=$(pf_since)
t_eq "$(grep -c '^getlink' <<<"$calls")" 0 "no PF GETLINK per DEL ($calls)"
# Spoof checking goes back on: the MAC is cleared in the same request (the kernel applies it first).
t_eq "$(grep -c '^setlink' <<<"$calls")" 1 "DEL puts back what ADD changed in one request ($calls)"
t_contains "$calls" "vf=1 mac=00:00:00:00:00:00 vf=1 vlan=0 qos=0 proto=802.1Q vf=1 spoofchk=on vf=1 link_state=auto vf=1 trust=off" \
	"the MAC cleared, then the four, in the kernel's order"
echo "# DEL: netlink requests: $(last_counts)"
IFS=', ' read -r _ host _ pod_n _ pf <<<"$(last_counts)"
t_eq "$pf" 1 "the log counts DEL's PF requests ($(last_counts))"
t_eq "$((host <= 2))" 1 "host requests per DEL: $host, at most 2"
# The link, its down (an up link's move waits longer in the kernel: link.h), its move; no
# rule to look for, the record says (no multiRail).
t_eq "$((pod_n <= 3))" 1 "pod requests per DEL: $pod_n, at most 3"

t_begin "DEL that turns spoof checking off clears the MAC after it, as older mlx5 kernels need"
# Spoof checking off before the attachment, the NAD turns it on; the PF
# refuses to clear a MAC under it.
like_old_mlx5() {
	sed -i 's/spoofchk=on/spoofchk=off/' "$SR_FAKE/$SR_PFNET.vfs"
	echo "fail mac-clear-spoofchk EINVAL" > "$SR_FAKE/$SR_PFNET.fail"
}
attached '"spoofchk": "on", "mac": "02:11:22:33:44:56"' s1 like_old_mlx5
pf_mark
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=s1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
calls=$(pf_since)
t_eq "$(grep -c '^setlink' <<<"$calls")" 2 "two requests, none refused ($calls)"
t_eq "$(sed -n 1p <<<"$calls")" "setlink pf=$SR_PFNET vf=0 spoofchk=off" "spoof checking off first"
t_eq "$(sed -n 2p <<<"$calls")" "setlink pf=$SR_PFNET vf=0 mac=00:00:00:00:00:00" "then the MAC cleared"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "mac=00:00:00:00:00:00 vlan=0 qos=0 proto=802.1Q spoofchk=off" \
	"VF 0 as it was"

t_begin "DEL where spoof checking stays on and the PF refuses the MAC cleared under it: off, cleared, back on"
# mlx4 and older mlx5 ("MAC invalidation is not allowed when spoofchk is
# on"): spoof checking on before the attachment, the NAD sets only a MAC.
refuses_clear() { echo "fail mac-clear-spoofchk EPERM" > "$SR_FAKE/$SR_PFNET.fail"; }
attached '"mac": "02:11:22:33:44:5a"' sc1 refuses_clear
before=$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs" | sed 's/mac=[^ ]*/mac=00:00:00:00:00:00/')
pf_mark
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=sc1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
calls=$(grep '^setlink' <<<"$(pf_since)")
t_eq "$(wc -l <<<"$calls")" 3 "the refused one, then two ($calls)"
t_eq "$(sed -n 2p <<<"$calls")" "setlink pf=$SR_PFNET vf=0 spoofchk=off" "spoof checking off"
t_eq "$(sed -n 3p <<<"$calls")" "setlink pf=$SR_PFNET vf=0 mac=00:00:00:00:00:00 vf=0 spoofchk=on" \
	"the MAC cleared, then spoof checking back on, in one request"
t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "$before" "VF 0 as it was: no MAC, spoof checking on"
t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"

t_begin "ADD's undo on that PF: the MAC it pinned cleared with spoof checking off and back on"
sr_setup 1
pod=$(t_netns)
refuses_clear
before=$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")
# The IPAM fails after the MAC is pinned: its one address is held by another attachment.
hl='{"type": "host-local", "subnet": "10.66.9.0/30", "dataDir": "'"$T_TMP/hl9"'"}'
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"mac\": \"02:11:22:33:44:5b\"" "$hl"
t_exec host-local ADD "$(sr_plugin_conf "$CONF" | jq -c '.ipam + {} | {cniVersion: "1.0.0", name: "sriov-test", ipam: .}')" \
	CNI_CONTAINERID=holder CNI_NETNS="$pod" CNI_IFNAME=net9
t_eq "$T_RC" 0 "host-local gives its one address to another attachment ($T_ERR)"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=sc2
t_eq "$T_RC" 1 "ADD fails at the IPAM ($T_OUT)"
t_contains "$(sr_calls)" "setlink pf=$SR_PFNET vf=0 mac=02:11:22:33:44:5b" "the MAC was pinned first"
t_contains "$(grep '^setlink' <<<"$(sr_calls)" | tail -2 | head -1)" "vf=0 spoofchk=off" "the undo turns spoof checking off"
t_eq "$(grep '^setlink' <<<"$(sr_calls)" | tail -1)" "setlink pf=$SR_PFNET vf=0 mac=00:00:00:00:00:00 vf=0 spoofchk=on" \
	"then clears the MAC and puts spoof checking back"
t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "$before" "VF 0 as it was"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no marker: nothing left for DEL"
t_not_contains "$(t_jq .details)" "refused to restore" "the error names nothing left unrestored"

t_begin "DEL on a PF that also refuses spoof checking without a MAC (mlx4): the MAC from before goes in instead"
# There spoof checking on means a MAC: the VF had one before the attachment.
like_mlx4() {
	sed -i 's/^vf=0 mac=00:00:00:00:00:00/vf=0 mac=02:aa:00:00:00:02/' "$SR_FAKE/$SR_PFNET.vfs"
	printf 'fail mac-clear-spoofchk EPERM\nfail spoofchk-zero-mac EPERM\n' > "$SR_FAKE/$SR_PFNET.fail"
}
attached '"mac": "02:11:22:33:44:5c"' sc3 like_mlx4
t_contains "$(grep '^setlink' <<<"$(sr_calls)" | sed -n 2p)" "vf=0 mac=02:11:22:33:44:5c" \
	"ADD: the clear refused, the configured MAC pinned in its place"
before=$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs" | sed 's/mac=[^ ]*/mac=02:aa:00:00:00:02/')
pf_mark
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=sc3
t_eq "$T_RC" 0 "DEL ($T_ERR)"
calls=$(grep '^setlink' <<<"$(pf_since)")
t_eq "$(wc -l <<<"$calls")" 2 "the refused one, then one ($calls)"
t_eq "$(sed -n 2p <<<"$calls")" "setlink pf=$SR_PFNET vf=0 mac=02:aa:00:00:00:02" "the MAC from before, spoof checking never off"
t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "$before" "VF 0 as it was"
t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"

t_begin "DEL on a PF that refuses the one request: the settings one by one, then the MAC"
attached "$PROPS" f1
echo "fail mac EPERM" > "$SR_FAKE/$SR_PFNET.fail"
pf_mark
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=f1
t_eq "$T_RC" 1 "DEL fails while the PF refuses the MAC"
t_contains "$(t_jq .msg)" "cannot restore VF 0's mac" "the error names the MAC ($T_ERR)"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=0 qos=0 proto=802.1Q spoofchk=on trust=off link_state=auto" \
	"the other settings are back all the same"
t_contains "$(pf_since)" "setlink pf=$SR_PFNET vf=0 vlan=0 qos=0 proto=802.1Q vf=0 spoofchk=off vf=0 link_state=auto vf=0 trust=off" \
	"after the one request, the settings in a request of their own, spoof checking off for the MAC"
t_contains "$(pf_since)" "setlink pf=$SR_PFNET vf=0 spoofchk=on" "spoof checking back on though the MAC was refused"
rm "$SR_FAKE/$SR_PFNET.fail"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=f1
t_eq "$T_RC" 0 "the runtime's next DEL ($T_ERR)"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "mac=00:00:00:00:00:00 vlan=0" "the MAC cleared"

# igb reports a VF's own MAC on the PF, held or not: ADD clears it before
# the move, as Intel PFs refuse a VF-side change under a held MAC.
like_igb() { sed -i 's/^vf=0 mac=00:00:00:00:00:00/vf=0 mac=02:aa:00:00:00:01/' "$SR_FAKE/$SR_PFNET.vfs"; }
vf0() { grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs"; }

t_begin "ADD on a PF that reports the VF's MAC (igb): cleared with the settings in one request"
attached '"vlan": 100, "mac": "02:11:22:33:44:57"' g1 like_igb
calls=$(sr_calls)
t_eq "$(grep -c '^setlink' <<<"$calls")" 2 "two requests: the settings with the MAC cleared, the pin ($calls)"
t_eq "$(grep '^setlink' <<<"$calls" | sed -n 1p)" "setlink pf=$SR_PFNET vf=0 mac=00:00:00:00:00:00 vf=0 vlan=100 qos=0 proto=802.1Q" \
	"the MAC cleared, then the VLAN, in the kernel's order"
t_eq "$(grep '^setlink' <<<"$calls" | sed -n 2p)" "setlink pf=$SR_PFNET vf=0 mac=02:11:22:33:44:57" \
	"the MAC pinned once the netdev carries it"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=g1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_contains "$(vf0)" "mac=02:aa:00:00:00:01 vlan=0 " "VF 0's MAC and VLAN as they were"

t_begin "ADD that turns spoof checking off on such a PF clears the MAC after it, as older mlx5 kernels need"
igb_like_old_mlx5() {
	like_igb
	echo "fail mac-clear-spoofchk EINVAL" > "$SR_FAKE/$SR_PFNET.fail"
}
attached '"spoofchk": "off", "mac": "02:11:22:33:44:58"' g2 igb_like_old_mlx5
calls=$(grep '^setlink' <<<"$(sr_calls)")
t_eq "$(wc -l <<<"$calls")" 3 "three requests, none refused ($calls)"
t_eq "$(sed -n 1p <<<"$calls")" "setlink pf=$SR_PFNET vf=0 spoofchk=off" "spoof checking off first"
t_eq "$(sed -n 2p <<<"$calls")" "setlink pf=$SR_PFNET vf=0 mac=00:00:00:00:00:00" "then the MAC cleared"

t_begin "ADD on such a PF that refuses a setting: the error names it, the VF's MAC comes back"
sr_setup 1
pod=$(t_netns)
like_igb
echo "fail vlan EPERM" > "$SR_FAKE/$SR_PFNET.fail"
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"vlan\": 100, \"mac\": \"02:11:22:33:44:59\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=g3
t_eq "$T_RC" 1 "ADD fails while the PF refuses the VLAN"
t_contains "$(t_jq .msg)" "refused VF 0's vlan" "the error names the VLAN ($T_ERR)"
t_contains "$(vf0)" "mac=02:aa:00:00:00:01 vlan=0 " "VF 0's MAC as it was"
t_eq "$(find "$SR_STATE" -name "*g3*" 2>/dev/null | wc -l)" 0 "no record left"

t_begin "multiRail ADD and DEL: the pod's socket and sysctls once, no look-up of a known index"
sr_setup 1
pod=$(t_netns)
: > "$LOG"
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"multiRail\": true, \"logLevel\": \"debug\", \"logFile\": \"$LOG\"" \
	"{\"type\": \"host-local\", \"subnet\": \"10.67.0.0/24\", \"gateway\": \"10.67.0.1\", \"dataDir\": \"$T_TMP/hl\"}"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m1
t_eq "$T_RC" 0 "ADD ($T_ERR)"
echo "# multiRail ADD: netlink requests: $(last_counts)"
IFS=', ' read -r _ host _ pod_n _ pf <<<"$(last_counts)"
# Those of a plain ADD, plus link up after the sysctls (by index, without a
# look first), the free-table look, two table routes, and the rule (a look
# for it first, and its add).
t_eq "$((pod_n <= 11))" 1 "pod requests per multiRail ADD: $pod_n, at most 11"
t_eq "$(ip netns exec "$(basename "$pod")" ip -4 rule | grep -c 'from 10.67.0')" 1 "the rule is there"
t_eq "$(ip netns exec "$(basename "$pod")" sysctl -n net.ipv4.conf.net1.arp_ignore)" 1 "the rail's sysctls are set"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m1
t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
echo "# multiRail CHECK: netlink requests: $(last_counts)"
IFS=', ' read -r _ host _ pod_n _ pf <<<"$(last_counts)"
t_eq "$host" 0 "multiRail CHECK asks nothing of the host ($(last_counts))"
# Those of a plain CHECK, plus one rule dump and one route dump for the rail.
t_eq "$((pod_n <= 4))" 1 "pod requests per multiRail CHECK: $pod_n, at most 4"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
echo "# multiRail DEL: netlink requests: $(last_counts)"
IFS=', ' read -r _ host _ pod_n _ pf <<<"$(last_counts)"
# The link, its down, its move, the rules from its address (a look, and the delete).
t_eq "$((pod_n <= 5))" 1 "pod requests per multiRail DEL: $pod_n, at most 5"
t_eq "$(ip netns exec "$(basename "$pod")" ip -4 rule | grep -c 'from 10.67.0')" 0 "the rule is gone"

t_begin "A VF the PF's cut-short VF list leaves out: its settings come from sysfs"
sr_setup 3
pod=$(t_netns)
echo 1 > "$SR_FAKE/$SR_PFNET.vfinfo_max"
# What the fake PF and the driver's sysfs both say of VF 2 before the attachment.
sed -i '/^vf=2 /s/vlan=0/vlan=7/' "$SR_FAKE/$SR_PFNET.vfs"
before=$(grep '^vf=2 ' "$SR_FAKE/$SR_PFNET.vfs")
mkdir -p "$SR_SYS/bus/pci/devices/$SR_PF/sriov/2"
cat > "$SR_SYS/bus/pci/devices/$SR_PF/sriov/2/config" <<EOF
VF         : 2
MAC        : 00:00:00:00:00:00
VLAN       : 7
QoS        : 0
VLAN Proto : 802.1Q
SpoofCheck : ON
Trust      : OFF
LinkState  : Follow
MinTxRate  : 0
MaxTxRate  : 0
EOF
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 2)\", $PROPS"
pf_mark
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(pf_since | grep -c '^getlink')" 1 "still one PF GETLINK"
t_contains "$(grep '^vf=2 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=100" "VF 2 configured"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(grep '^vf=2 ' "$SR_FAKE/$SR_PFNET.vfs")" "$before" "VF 2 back to what sysfs said (vlan 7)"
# Without the file: the driver's defaults, said so in the log.
rm -r "$SR_SYS/bus/pci/devices/$SR_PF/sriov"
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 2)\", $PROPS, \"logFile\": \"$LOG\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$T_RC" 0 "ADD without sysfs settings ($T_ERR)"
t_contains "$(cat "$LOG")" "lists only some of its VFs, not VF 2" "the log says why"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(grep '^vf=2 ' "$SR_FAKE/$SR_PFNET.vfs")" "vf=2 mac=00:00:00:00:00:00 vlan=0 qos=0 proto=802.1Q \
spoofchk=off trust=off link_state=auto min_tx_rate=0 max_tx_rate=0" "VF 2 back to the driver's defaults"

t_begin "Two ADDs on one PF: each VF's settings reach the PF whole, one request per batch"
sr_setup 2
pods=("$(t_netns)" "$(t_netns)")
echo 40 > "$SR_FAKE/$SR_PFNET.delay_ms"
for i in 0 1; do
	sr_conflist "$T_TMP/net$i.conflist" 1.0.0 "\"deviceID\": \"$(sr_vf $i)\", $PROPS"
done
for i in 0 1; do
	t_cnitool add "$T_TMP/net$i.conflist" "${pods[$i]}" CNI_IFNAME=net1 CNI_CONTAINERID=p$i &
done
wait
timeline=$(cat "$SR_FAKE/$SR_PFNET.timeline")
# ADD sets the MAC apart, after the netdev took it from its own side (Intel
# PFs refuse that while the PF holds a MAC for the VF): two requests each.
t_eq "$(wc -l <<<"$timeline")" 4 "both ADDs: two requests each ($timeline)"
for i in 0 1; do
	t_eq "$(grep -c "vf=$i vlan=100 qos=0 proto=802.1Q vf=$i spoofchk=off vf=$i link_state=enable vf=$i trust=on" <<<"$timeline")" 1 \
		"VF $i's four settings in one request"
	t_contains "$(grep "^vf=$i " "$SR_FAKE/$SR_PFNET.vfs")" "vlan=100" "VF $i configured"
done
: > "$SR_FAKE/$SR_PFNET.timeline"
for i in 0 1; do
	t_cnitool del "$T_TMP/net$i.conflist" "${pods[$i]}" CNI_IFNAME=net1 CNI_CONTAINERID=p$i &
done
wait
timeline=$(cat "$SR_FAKE/$SR_PFNET.timeline")
# DEL: the MAC cleared and the four back in one request.
t_eq "$(wc -l <<<"$timeline")" 2 "both DELs: one request each ($timeline)"
for i in 0 1; do
	t_eq "$(grep -c "vf=$i vlan=0 qos=0 proto=802.1Q vf=$i spoofchk=.* vf=$i link_state=auto vf=$i trust=off" <<<"$timeline")" 1 \
		"VF $i's four settings back in one request"
done
t_eq "$(t_count "$SR_STATE/pci" '*pf.lock*')" 1 "one lock file for the PF"

t_begin "ADD and DEL log their steps' durations and the caller's trace id"
sr_setup 1
pod=$(t_netns)
: > "$LOG"
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"vlan\": 5, \"logFile\": \"$LOG\""
TP=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
TRACEPARENT=$TP TRACESTATE=vendor=1 t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c9
t_eq "$T_RC" 0 "ADD ($T_ERR)"
line=$(grep ' INFO ADD .*-> net1' "$LOG")
for step in checks claim rdma-plan record vf-config ipam-spawn rdma netdev sysctl ipam address routing devinfo commit result total; do
	t_eq "$(grep -cE "[ ;]$step=[0-9]+\.[0-9]{2}ms" <<<"$line")" 1 "ADD line has $step ($line)"
done
t_contains "$line" ", trace 4bf92f3577b34da6a3ce929d0e0e4736" "ADD line names the trace"
# What it waited for the VF's and the PF's locks (vlan goes through the PF).
t_eq "$(grep -cE "total=[0-9.]+ms, lock waits vf=[0-9]+\.[0-9]{2}ms pf=[0-9]+\.[0-9]{2}ms" <<<"$line")" 1 \
	"ADD line has its lock waits ($line)"
# A malformed traceparent is ignored, never echoed.
TRACEPARENT="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1;x" t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c9
t_eq "$T_RC" 0 "DEL ($T_ERR)"
line=$(grep ' INFO DEL .*released' "$LOG")
# host-local runs while the VF moves home: only its start is on the line.
for step in record lock ipam-spawn vf-config rdma netdev state total; do
	t_eq "$(grep -cE "[ ;]$step=[0-9]+\.[0-9]{2}ms" <<<"$line")" 1 "DEL line has $step ($line)"
done
t_not_contains "$line" "trace" "DEL line: no trace from a bad traceparent"
t_eq "$(grep -cE "total=[0-9.]+ms, lock waits vf=[0-9]+\.[0-9]{2}ms pf=[0-9]+\.[0-9]{2}ms" <<<"$line")" 1 \
	"DEL line has its lock waits ($line)"
TRACEPARENT=$TP t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c10
TRACEPARENT=$TP t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c10
t_contains "$(grep ' INFO DEL .*released' "$LOG" | tail -1)" ", trace 4bf92f3577b34da6a3ce929d0e0e4736" "DEL line names the trace"

t_begin "start-up: libibverbs is not loaded by a run that asks no RDMA device anything"
SR=$BUILD_DIR/plugins/sriov-rdma/sriov-rdma
t_not_contains "$(readelf -d "$SR")" "libibverbs" "libibverbs is not among the libraries loaded at exec"
t_not_contains "$(CNI_COMMAND=VERSION LD_DEBUG=libs "$SR" </dev/null 2>&1 >/dev/null)" "libibverbs" "VERSION loads it"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c11
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_exec sriov-rdma DEL "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=c11 CNI_NETNS="$pod" CNI_IFNAME=net1 LD_DEBUG=libs
t_eq "$T_RC" 0 "DEL"
t_not_contains "$T_ERR" "libibverbs" "DEL loads it"

t_done
