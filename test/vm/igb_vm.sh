#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sriov-rdma on a real SR-IOV NIC: QEMU's Intel 82576 (igb) with its Linux
# drivers igb (PF) and igbvf (VF), inside scripts/vm with VM_IGB=2 (two PFs
# on one hub: one wire) and VM_IGB_PCAP (that wire, recorded). The plugins
# are the default build (no fake linked, no fake variable set), driven
# through libcni as a runtime drives them; every PF-side setting is read
# back from the kernel (`ip link show <pf>`), and the traffic crosses the
# emulated NIC's switch and the wire.
#
# One boot runs every case: a TCG boot costs about a minute.
if [ -z "${VM_GUEST:-}" ]; then
	echo "SKIP: runs inside the VM (VM_IGB=2 scripts/vm run $0)"
	exit 77
fi
. "$SOURCE_DIR/test/netns/lib.sh"

# Built on the host by meson (the guest's root is read-only).
t_cnitool_bin() { [ -x "${VM_ARG_CNITOOL:-}" ] && echo "$VM_ARG_CNITOOL"; }
t_cnitool_bin >/dev/null || { echo "SKIP: no libcni client (golang-go, golang-github-appc-cni-dev)"; exit 77; }
for p in sriov-rdma pool-ipam; do
	if strings "$BUILD_DIR/plugins/$p/$p" | grep -q FAKE_DIR; then
		echo "FAIL: $BUILD_DIR is a test build (-Dtest_fakes=true): these tests run the default build"
		exit 1
	fi
done
unset SRIOV_RDMA_PF_FAKE_DIR SRIOV_RDMA_RDMA_FAKE_DIR SRIOV_RDMA_SYSFS_ROOT

# ---- the NIC ----
modprobe igb || { echo "SKIP: no igb module"; exit 77; }
PF_BDF=()
PF=()
for d in /sys/bus/pci/drivers/igb/0000:*; do
	[ -d "$d/net" ] || continue
	PF_BDF+=("$(basename "$d")")
	PF+=("$(ls "$d/net")")
done
[ "${#PF[@]}" = 2 ] || { echo "SKIP: want 2 igb PFs, found ${#PF[@]} (VM_IGB=2)"; exit 77; }
NVF=7

# wait_for, carrier, vf_netdev_of: as the igb benchmarks use them.
# shellcheck source=SCRIPTDIR/../../scripts/igb-guest.sh
. "$SOURCE_DIR/scripts/igb-guest.sh"
# PCI address of VF N of PF K.
vf_bdf() { basename "$(readlink "/sys/bus/pci/devices/${PF_BDF[$1]}/virtfn$2")"; }
make_vfs() { # K
	local i
	echo "$NVF" >"/sys/bus/pci/devices/${PF_BDF[$1]}/sriov_numvfs" || return 1
	modprobe igbvf || return 1
	for ((i = 0; i < NVF; i++)); do
		wait_for 60 vf_netdev_of "$(vf_bdf "$1" "$i")" >/dev/null || return 1
	done
}
# The VFs get carrier only once their PF has it ("PF still in reset state").
for k in 0 1; do
	ip link set "${PF[$k]}" up
	wait_for 120 carrier "${PF[$k]}" || { echo "FAIL: ${PF[$k]} never got carrier"; exit 1; }
	make_vfs "$k" || { echo "FAIL: ${PF[$k]}: no VFs"; exit 1; }
done
echo "# PFs ${PF[*]} (${PF_BDF[*]}), $NVF VFs each"

# ---- helpers ----
STATE=$T_TMP/state
POOLDIR=$T_TMP/pool
# The PF's line for VF N, as `ip link show <pf>` prints it.
vf_line() { # K N
	ip link show "${PF[$1]}" | sed -n "s/^ *vf $2 //p"
}
# "name mac mtu" of a VF's netdev on the host.
vf_host() { # BDF
	local n
	n=$(vf_netdev_of "$1") || return 0
	ip -j link show "$n" | jq -r '.[0] | "\(.ifname) \(.address) \(.mtu)"'
}
# conflist FILE BDF 'extra sriov-rdma keys' [v4 subnet]
conflist() {
	cat >"$1" <<EOJ
{
  "cniVersion": "1.0.0",
  "name": "igbnet",
  "plugins": [
    {
      "type": "sriov-rdma",
      "deviceID": "$2",
      "stateDir": "$STATE"${3:+,
      $3},
      "ipam": {"type": "pool-ipam", "dataDir": "$POOLDIR",
        "ranges": [[{"subnet": "${4:-10.80.0.0/24}"}], [{"subnet": "fd80::/64"}]]}
    }
  ]
}
EOJ
}
cni() { # add|check|del CONFLIST NETNS CONTAINERID [IFNAME]
	t_cnitool "$1" "$2" "$3" CNI_CONTAINERID="$4" CNI_IFNAME="${5:-net1}" \
		CNI_ARGS="IgnoreUnknown=true;K8S_POD_NAMESPACE=igb;K8S_POD_NAME=$4;K8S_POD_INFRA_CONTAINER_ID=$4"
}
# Nothing of the attachment left: no record, no marker, no reservation.
no_leftovers() { # BDF what
	t_eq "$(t_count "$STATE" '*.json')" 0 "$2: records left in stateDir"
	t_eq "$(t_count "$STATE/pci" "$1")" 0 "$2: in-use marker of $1 left"
	t_eq "$(find "$POOLDIR" -name 'a-*' 2>/dev/null | wc -l)" 0 "$2: addresses still reserved"
}
# Can the VF's netdev change its own MAC (the PF pins none)? Puts it back.
vf_mac_free() { # BDF
	local n mac ok=no
	n=$(vf_netdev_of "$1")
	mac=$(cat "/sys/class/net/$n/address")
	ip link set "$n" address 02:00:00:00:0a:01 2>/dev/null && ok=yes
	ip link set "$n" address "$mac"
	echo "$ok"
}
pod_link() { # NETNS IFNAME
	ip -n "$1" -j link show "$2" 2>/dev/null |
		jq -r '.[0] | "\(.address) \(.mtu) \(.operstate)"'
}
# The PF line a VF should have after DEL: the one from before, except that a
# VF the PF reported no MAC for (igb's VFs re-created by sriov_numvfs) shows
# its netdev's own MAC once the netdev took it back from its side, as igb's
# first VFs show theirs: nothing is pinned either way.
home_line() { # LINE-BEFORE "name mac mtu"
	local mac
	mac=$(cut -d' ' -f2 <<<"$2")
	sed "s|link/ether 00:00:00:00:00:00 |link/ether $mac |" <<<"$1"
}

SETTINGS='"mac": "02:aa:bb:cc:dd:01", "vlan": 100, "vlanQoS": 3, "spoofchk": "off", "trust": "on", "max_tx_rate": 100, "mtu": 9000'

# ---- a: every PF-side setting igb supports ----
t_begin "igb: ADD applies mac, vlan+qos, spoofchk, trust, max_tx_rate and mtu; CHECK passes; DEL restores the VF's PF line and netdev exactly"
BDF=$(vf_bdf 0 0)
before_line=$(vf_line 0 0)
before_host=$(vf_host "$BDF")
before_free=$(vf_mac_free "$BDF")
pod=$(t_netns)
conflist "$T_TMP/a.conflist" "$BDF" "$SETTINGS"
cni add "$T_TMP/a.conflist" "$pod" igba
t_eq "$T_RC" 0 "ADD (stdout: $T_OUT, stderr: $T_ERR)"
line=$(vf_line 0 0)
t_contains "$line" "link/ether 02:aa:bb:cc:dd:01" "PF line: mac"
t_contains "$line" "vlan 100, qos 3" "PF line: vlan and qos"
t_contains "$line" "spoof checking off" "PF line: spoofchk"
t_contains "$line" "trust on" "PF line: trust"
t_contains "$line" "max_tx_rate 100Mbps" "PF line: max_tx_rate"
t_eq "$(pod_link "$pod" net1)" "02:aa:bb:cc:dd:01 9000 UP" "net1 in the pod: mac, mtu, up"
t_eq "$(vf_netdev_of "$BDF")" "" "the VF's netdev left the host"
cni check "$T_TMP/a.conflist" "$pod" igba
t_eq "$T_RC" 0 "CHECK (stdout: $T_OUT, stderr: $T_ERR)"
cni del "$T_TMP/a.conflist" "$pod" igba
t_eq "$T_RC" 0 "DEL (stdout: $T_OUT, stderr: $T_ERR)"
t_eq "$(vf_line 0 0)" "$before_line" "the VF's PF line after DEL"
t_eq "$(vf_host "$BDF")" "$before_host" "the VF's netdev home: name, MAC, MTU"
t_eq "$(vf_mac_free "$BDF")" "$before_free" "the VF may change its own MAC as before (no MAC left pinned)"
no_leftovers "$BDF" "after DEL"

# ---- b: DEL after the pod's namespace is gone ----
t_begin "igb: DEL after 'ip netns del' brings the VF home (the kernel returned it as ethN with the pod's MAC)"
BDF=$(vf_bdf 0 1)
before_line=$(vf_line 0 1)
before_host=$(vf_host "$BDF")
pod=$(t_netns)
conflist "$T_TMP/b.conflist" "$BDF" "$SETTINGS"
cni add "$T_TMP/b.conflist" "$pod" igbb
t_eq "$T_RC" 0 "ADD (stdout: $T_OUT, stderr: $T_ERR)"
ip netns del "${pod##*/}"
# The kernel hands the VF back once the namespace's last reference is gone.
wait_for 60 vf_netdev_of "$BDF" >/dev/null
echo "# the kernel gave it back as: $(vf_host "$BDF")"
cni del "$T_TMP/b.conflist" "$pod" igbb
t_eq "$T_RC" 0 "DEL (stdout: $T_OUT, stderr: $T_ERR)"
t_eq "$(vf_line 0 1)" "$before_line" "the VF's PF line after DEL"
t_eq "$(vf_host "$BDF")" "$before_host" "the VF's netdev home: name, MAC, MTU"
t_eq "$(vf_mac_free "$BDF")" yes "the VF may change its own MAC (no MAC left pinned)"
no_leftovers "$BDF" "after DEL"
dmesg | grep -i "override administratively" | tail -n 3 | sed 's/^/# dmesg: /'

# ---- c: settings igb refuses ----
refused() { # name 'extra keys' setting-name-in-message
	local bdf pod before_line before_host
	bdf=$(vf_bdf 0 2)
	t_begin "igb: $1 is refused by the driver: ADD fails with code 100 naming it and igb, and changes nothing"
	before_line=$(vf_line 0 2)
	before_host=$(vf_host "$bdf")
	pod=$(t_netns)
	conflist "$T_TMP/c.conflist" "$bdf" "\"mac\": \"02:aa:bb:cc:dd:02\", \"spoofchk\": \"off\", $2"
	cni add "$T_TMP/c.conflist" "$pod" igbc
	t_eq "$T_RC" 1 "ADD exit code (stderr: $T_ERR)"
	t_eq "$(t_jq .code)" 100 "error code"
	t_contains "$(t_jq .msg)" "$3" "the message names the setting"
	t_contains "$(t_jq .msg)" "igb" "the message names the PF's driver"
	t_eq "$(vf_line 0 2)" "$before_line" "the VF's PF line unchanged"
	t_eq "$(vf_host "$bdf")" "$before_host" "the VF's netdev unchanged on the host"
	t_eq "$(ip -n "$pod" -o link show | grep -vc ': lo:')" 0 "nothing in the pod"
	no_leftovers "$bdf" "after the failed ADD"
	ip netns del "${pod##*/}"
}
refused link_state '"link_state": "enable"' link_state
refused min_tx_rate '"min_tx_rate": 10, "max_tx_rate": 100' min_tx_rate
refused "vlanProto 802.1ad" '"vlan": 10, "vlanProto": "802.1ad"' 802.1ad

# ---- d: VLAN isolation by the PFs, over the wire ----
# A and B on VLAN 200 (A behind PF 0, B behind PF 1: through the wire), C on
# VLAN 300 behind PF 0 (the same PF as A: its switch must keep them apart).
# One subnet for all: only the VLAN separates them.
declare -A POD IP4 IP6 MAC
pod_add() { # NAME PF VF 'extra'
	local bdf
	bdf=$(vf_bdf "$2" "$3")
	POD[$1]=$(t_netns)
	conflist "$T_TMP/$1.conflist" "$bdf" "$4" 10.81.0.0/24
	cni add "$T_TMP/$1.conflist" "${POD[$1]}" "igb$1"
	t_eq "$T_RC" 0 "ADD of pod $1 (stdout: $T_OUT, stderr: $T_ERR)" || return 1
	IP4[$1]=$(t_jq '.ips[] | select(.address | contains(".")) | .address' | cut -d/ -f1)
	IP6[$1]=$(t_jq '.ips[] | select(.address | contains(":")) | .address' | cut -d/ -f1)
	MAC[$1]=$(t_jq '.interfaces[] | select(.sandbox != null) | .mac')
}
pod_del() { # NAME PF VF
	cni del "$T_TMP/$1.conflist" "${POD[$1]}" "igb$1"
	t_eq "$T_RC" 0 "DEL of pod $1 (stdout: $T_OUT, stderr: $T_ERR)"
}
reach() { # FROM TO: yes or no
	ip netns exec "${POD[$1]}" ping -q -c 3 -i 0.3 -W 2 "${IP4[$2]}" >/dev/null 2>&1 && echo yes || echo no
}
t_begin "igb: two pods on VLAN 200 reach each other over their VFs and the wire; a pod on VLAN 300 reaches neither, both ways"
pod_add A 0 3 '"vlan": 200' && pod_add B 1 0 '"vlan": 200' && pod_add C 0 4 '"vlan": 300'
t_eq "$(reach A B)" yes "A -> B (VLAN 200, PF 0 -> wire -> PF 1)"
t_eq "$(reach B A)" yes "B -> A"
t_eq "$(reach A C)" no "A -> C (VLAN 200 -> 300, one PF)"
t_eq "$(reach C A)" no "C -> A"
t_eq "$(reach B C)" no "B -> C (VLAN 200 -> 300, over the wire)"
t_eq "$(reach C B)" no "C -> B"

# ---- e: the announcements on the wire ----
# What crossed the wire from a pod's MAC: its ARP and its neighbour advertisements.
wire() { # MAC
	tcpdump -nn -e -r "$VM_IGB_PCAP" "ether src $1" 2>/dev/null
}
announced() { # NAME: "arp na" as seen on the wire
	local w ip=${IP4[$1]}
	w=$(wire "${MAC[$1]}")
	printf '%s %s' \
		"$(grep -qF -e "who-has $ip tell $ip," -e "Reply $ip is-at" <<<"$w" && echo arp)" \
		"$(grep -qF "neighbor advertisement, tgt is ${IP6[$1]}," <<<"$w" && echo na)"
}
t_begin "igb: the pods' frames reach the wire tagged by their PF with their VLAN"
if [ -z "${VM_IGB_PCAP:-}" ] || [ ! -r "$VM_IGB_PCAP" ]; then
	t_fail "no wire capture (VM_IGB_PCAP)"
else
	t_contains "$(wire "${MAC[A]}")" "vlan 200," "A's frames (PF 0) carry VLAN 200"
	t_contains "$(wire "${MAC[B]}")" "vlan 200," "B's frames (PF 1) carry VLAN 200"
	t_contains "$(wire "${MAC[C]}")" "vlan 300," "C's frames (PF 0) carry VLAN 300"
	t_not_contains "$(wire "${MAC[C]}")" "vlan 200," "C's frames never carry VLAN 200"
fi
# The announcements are the kernel's (docs/how-it-works.md, "Announcements"): the
# neighbour probe's gratuitous ARPs, repeated for 15 s when the VF arrives
# without carrier (igbvf reports it a watchdog tick after link-up), and the
# NA when DAD completes after carrier. 60 s is a hang guard only.
both_announced() { [ "$(announced "$1")" = "arp na" ]; }
t_begin "igb: each pod's gratuitous ARP and unsolicited NA reach the wire"
for p in A B C; do
	wait_for 60 both_announced $p
	t_eq "$(announced $p)" "arp na" "pod $p (${IP4[$p]}, ${IP6[$p]}) announced on the wire"
done
for p in A B C; do pod_del $p; done
no_leftovers x "after the VLAN pods' DEL"

# Carrier late: the PF's link down during ADD, up after. Packets sent before
# carrier are dropped by real NICs (sriov-cni's PR #301 waits for it).
t_begin "igb: carrier only after ADD returned (the PF's link down during ADD): both announcements still reach the wire"
ip link set "${PF[1]}" down
pod_add D 1 2 ''
t_eq "$(ip -n "${POD[D]}" -o link show net1 | grep -c LOWER_UP)" 0 "ADD returned before the VF had carrier"
ip link set "${PF[1]}" up
wait_for 120 carrier "${PF[1]}"
wait_for 60 both_announced D
t_eq "$(announced D)" "arp na" "pod D (${IP4[D]}, ${IP6[D]}) announced on the wire after carrier"
pod_del D

# ---- f: the PF's VFs re-created while a pod holds one ----
t_begin "igb: sriov_numvfs 0 then $NVF while a pod holds a VF: DEL exits 0 and clears record and reservation"
pod_add F 1 3 '"mac": "02:aa:bb:cc:dd:0f", "vlan": 500' &&
	echo 0 >"/sys/bus/pci/devices/${PF_BDF[1]}/sriov_numvfs" &&
	t_eq "$(ip -n "${POD[F]}" -o link show | grep -vc ': lo:')" 0 "the VF's netdev went with its VF" &&
	make_vfs 1
t_not_contains "$(vf_line 1 3)" "vlan 500" "the re-created VF starts from the driver's defaults"
pod_del F
no_leftovers "$(vf_bdf 1 3)" "after DEL"
t_not_contains "$(vf_line 1 3)" "02:aa:bb:cc:dd:0f" "DEL did not pin the old attachment's MAC on the new VF"

# ---- k: multiRail on two PFs ----
# Two rails on the one wire, kept apart by VLAN: rail R is VLAN 10+R, and a
# pod's VF on rail R sits behind PF R. Pod X (node x) has 10.90.R.0/24 on
# rail R, pod Y (node y) 10.91.R.0/24; each rail's IPAM routes the other
# node's subnets via that rail's gateway, 10.9N.R.1: a router in a fabric
# namespace with one VF per rail, behind the other PF (so that every frame
# between a pod and the router crosses the wire and the capture), checking
# sources strictly (rp_filter=1) as a rail switch that knows its subnets
# does. Without source routing both rails of a pod route the other node by
# the main table, where one rail's route comes first (the kernel puts the
# later of two such routes first): the other rail's traffic leaves by that
# rail's VF, with its own rail's address, and the router drops it.
MR_VLAN=(10 11)
MR_RTR_PF=(1 0) # the router's port on rail R: VF 2 of PF MR_RTR_PF[R]
declare -A MR_VF=([x]=0 [y]=1) MR_NET=([x]=90 [y]=91) MR_FAR=([x]=91 [y]=90)
declare -A MR_POD MR_ADDR MR_MAC
MR_RTR=()
MR_RTR_LINE=()
MR_RTR_HOST=()
mr_fab=$(t_netns)
has_carrier() { ip -n "$1" link show "$2" 2>/dev/null | grep -q LOWER_UP; }
mr_router_up() {
	local r k n
	ip netns exec "$mr_fab" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=1 \
		net.ipv4.conf.all.send_redirects=0 || return 1
	for r in 0 1; do
		k=${MR_RTR_PF[r]}
		n=$(vf_netdev_of "$(vf_bdf "$k" 2)") || return 1
		MR_RTR[r]=$n
		MR_RTR_LINE[r]=$(vf_line "$k" 2)
		MR_RTR_HOST[r]=$(vf_host "$(vf_bdf "$k" 2)")
		ip link set "${PF[$k]}" vf 2 vlan "${MR_VLAN[r]}" &&
			ip link set "$n" netns "${mr_fab##*/}" &&
			ip -n "$mr_fab" addr add "10.90.$r.1/24" dev "$n" &&
			ip -n "$mr_fab" addr add "10.91.$r.1/24" dev "$n" &&
			ip netns exec "$mr_fab" sysctl -qw "net.ipv4.conf.$n.rp_filter=1" \
				"net.ipv4.conf.$n.send_redirects=0" &&
			ip -n "$mr_fab" link set "$n" up || return 1
	done
	for r in 0 1; do
		wait_for 60 has_carrier "$mr_fab" "${MR_RTR[r]}" || return 1
	done
}
mr_conf() { # FILE NODE RAIL MAC MULTIRAIL
	cat >"$1" <<EOJ
{
  "cniVersion": "1.0.0",
  "name": "rail$3",
  "plugins": [
    {
      "type": "sriov-rdma",
      "deviceID": "$(vf_bdf "$3" "${MR_VF[$2]}")",
      "stateDir": "$STATE",
      "vlan": ${MR_VLAN[$3]}, "mac": "$4", "multiRail": $5,
      "ipam": {"type": "pool-ipam", "dataDir": "$POOLDIR/node$2",
        "ranges": [[{"subnet": "10.${MR_NET[$2]}.$3.0/24", "gateway": "10.${MR_NET[$2]}.$3.1"}]],
        "routes": [{"dst": "10.${MR_FAR[$2]}.0.0/16", "gw": "10.${MR_NET[$2]}.$3.1"}]}
    }
  ]
}
EOJ
}
# Pods X and Y with one VF per rail (net1 on rail 0, net2 on rail 1), each
# VF with a MAC of this round (HALF: 1 with multiRail, 2 without), so that
# the capture tells the rounds and the VFs apart.
mr_pods_up() { # MULTIRAIL HALF
	local n r p=0
	MR_POD=()
	for n in x y; do
		MR_POD[$n]=$(t_netns)
		for r in 0 1; do
			MR_MAC[$n$r]=02:4d:0$2:00:0$p:0$r
			mr_conf "$T_TMP/mr$n$r.conflist" "$n" "$r" "${MR_MAC[$n$r]}" "$1"
			cni add "$T_TMP/mr$n$r.conflist" "${MR_POD[$n]}" "mr$n" "net$((r + 1))"
			t_eq "$T_RC" 0 "ADD of pod $n's rail $r (stdout: $T_OUT, stderr: $T_ERR)" || return 1
			MR_ADDR[$n$r]=$(t_jq '.ips[0].address' | cut -d/ -f1)
		done
		p=$((p + 1))
	done
	for n in x y; do
		for r in 0 1; do
			wait_for 60 has_carrier "${MR_POD[$n]}" "net$((r + 1))" ||
				t_fail "pod $n's net$((r + 1)) never got carrier"
		done
	done
}
mr_pods_down() {
	local n r
	for n in x y; do
		[ -n "${MR_POD[$n]:-}" ] || continue
		for r in 1 0; do
			cni del "$T_TMP/mr$n$r.conflist" "${MR_POD[$n]}" "mr$n" "net$((r + 1))"
			t_eq "$T_RC" 0 "DEL of pod $n's rail $r (stdout: $T_OUT, stderr: $T_ERR)"
		done
		ip netns del "${MR_POD[$n]##*/}"
	done
}
mr_ping() { # NETNS [ping options] DST: yes or no
	ip netns exec "$1" ping -q -c 4 -i 0.5 -W 3 "${@:2}" >/dev/null 2>&1 && echo yes || echo no
}
# The pod's interface for traffic from its address on RAIL to Y's on RAIL.
mr_route_dev() { # RAIL
	ip -n "${MR_POD[x]}" -j route get "${MR_ADDR[y$1]}" from "${MR_ADDR[x$1]}" 2>/dev/null |
		jq -r '.[0].dev'
}
# How many frames on the wire from MAC, tagged VLAN, hold TEXT.
frames() { # MAC VLAN TEXT
	wire "$1" | grep -F "vlan $2," | grep -cF -e "$3"
}
has_frames() { [ "$(frames "$@")" -gt 0 ]; }
# yes when such frames reach the capture (30 s: a hang guard only).
on_wire() { # MAC VLAN TEXT
	wait_for 30 has_frames "$@"
	has_frames "$@" && echo yes || echo no
}
# Packets the namespace's reverse-path filter dropped (the kernel's counter).
rpf_drops() { # NETNS
	ip netns exec "$1" awk '/^TcpExt:/ && !c { for (i = 2; i <= NF; i++) if ($i == "IPReversePathFilter") c = i; next }
		/^TcpExt:/ { print $c; exit }' /proc/net/netstat
}
# Each node's pod reaches its own gateway on each rail (on-link, right in
# both rounds), which leaves the gateways in the pods' neighbour tables: a
# packet that takes the wrong rail then leaves as itself, not as an ARP.
mr_gateways() {
	local n r
	for n in x y; do
		for r in 0 1; do
			t_eq "$(mr_ping "${MR_POD[$n]}" "10.${MR_NET[$n]}.$r.1")" yes \
				"pod $n reaches its rail $r gateway 10.${MR_NET[$n]}.$r.1"
		done
	done
}

t_begin "igb: multiRail on two PFs: two pods with a VF per rail; each rail's traffic leaves by its own VF with its own address, through a router with strict rp_filter"
if ! mr_router_up; then
	t_fail "the fabric's router: $(ip -n "$mr_fab" -br link 2>&1)"
elif mr_pods_up true 1; then
	mr_gateways
	drops=$(rpf_drops "$mr_fab")
	for r in 0 1; do
		src=${MR_ADDR[x$r]} dst=${MR_ADDR[y$r]} other=$((1 - r))
		t_eq "$(mr_route_dev "$r")" "net$((r + 1))" "X's rule sends rail $r's source by rail $r"
		t_eq "$(mr_ping "${MR_POD[x]}" -I "$src" "$dst")" yes \
			"X ($src, rail $r) reaches Y ($dst, rail $r) through the router"
		t_eq "$(on_wire "${MR_MAC[x$r]}" "${MR_VLAN[r]}" "$src > $dst: ICMP echo request")" yes \
			"the requests left by X's rail $r VF (${MR_MAC[x$r]}, VLAN ${MR_VLAN[r]}) from $src"
		wire "${MR_MAC[x$r]}" | grep -F "$src > $dst" | head -n 1 | sed 's/^/# on the wire: /'
		t_eq "$(on_wire "${MR_MAC[y$r]}" "${MR_VLAN[r]}" "$dst > $src: ICMP echo reply")" yes \
			"the replies left by Y's rail $r VF (${MR_MAC[y$r]}, VLAN ${MR_VLAN[r]}) from $dst"
		for n in x y; do
			a=${MR_ADDR[$n$r]}
			t_eq "$(wire "${MR_MAC[$n$other]}" | grep -cF -e "$a > " -e "tell $a," -e "Reply $a is-at")" 0 \
				"nothing of rail $r's $a left by pod $n's rail $other VF"
		done
	done
	t_eq "$(rpf_drops "$mr_fab")" "$drops" "packets the router's rp_filter dropped"
fi
mr_pods_down
no_leftovers x "after the multiRail pods' DEL"

t_begin "igb: the same two pods without multiRail: one rail's traffic leaves by the other rail's VF with its own address, and the router's strict rp_filter drops it"
if mr_pods_up false 2; then
	mr_gateways
	drops=$(rpf_drops "$mr_fab")
	wrong=0
	for r in 0 1; do
		src=${MR_ADDR[x$r]} dst=${MR_ADDR[y$r]} other=$((1 - r))
		if [ "$(mr_route_dev "$r")" = "net$((r + 1))" ]; then
			t_eq "$(mr_ping "${MR_POD[x]}" -I "$src" "$dst")" yes \
				"X ($src) reaches Y ($dst) on rail $r, whose route main holds"
			continue
		fi
		wrong=$((wrong + 1))
		t_eq "$(mr_ping "${MR_POD[x]}" -I "$src" "$dst")" no "X ($src, rail $r) gets no answer from Y ($dst)"
		t_eq "$(on_wire "${MR_MAC[x$other]}" "${MR_VLAN[other]}" "$src > $dst: ICMP echo request")" yes \
			"rail $r's requests from $src left by X's rail $other VF (${MR_MAC[x$other]}, VLAN ${MR_VLAN[other]})"
		wire "${MR_MAC[x$other]}" | grep -F "$src > $dst" | head -n 1 | sed 's/^/# on the wire: /'
		t_eq "$(frames "${MR_MAC[x$r]}" "${MR_VLAN[r]}" "$src > $dst: ICMP echo request")" 0 \
			"none left by X's rail $r VF"
		t_eq "$(wire "${MR_MAC[y$r]}" | grep -cF "$dst > $src: ICMP echo reply")" 0 \
			"Y never got them: no reply on the wire"
		t_eq "$([ "$(rpf_drops "$mr_fab")" -gt "$drops" ] && echo yes || echo no)" yes \
			"the router's rp_filter dropped them (IPReversePathFilter went up from $drops)"
	done
	t_eq "$wrong" 1 "rails whose traffic leaves by the other rail's VF"
fi
mr_pods_down
no_leftovers x "after the pods' DEL"
for r in 0 1; do
	[ -n "${MR_RTR[r]:-}" ] || continue
	k=${MR_RTR_PF[r]}
	ip -n "$mr_fab" link set "${MR_RTR[r]}" netns 1
	ip link set "${PF[$k]}" vf 2 vlan 0
	t_eq "$(vf_line "$k" 2)" "$(home_line "${MR_RTR_LINE[r]}" "${MR_RTR_HOST[r]}")" \
		"the router's rail $r VF: its PF line back"
	t_eq "$(vf_host "$(vf_bdf "$k" 2)")" "${MR_RTR_HOST[r]}" "the router's rail $r VF: its netdev home"
done
ip netns del "${mr_fab##*/}"

# ---- h: every VF of both PFs at once ----
t_begin "igb: 14 pods at once (every VF of both PFs), ADD then DEL all at once: each VF with its own settings, each home intact after"
declare -A LINE HOST
cnipath=$(t_cni_path)
many() { # add|del
	local k i id
	for k in 0 1; do
		for ((i = 0; i < NVF; i++)); do
			id=h$k$i
			{
				env CNI_PATH="$cnipath" NETCONFPATH="$T_TMP" CNI_CACHE_DIR="$T_TMP/cni-cache" \
					CNI_CONTAINERID=$id CNI_IFNAME=net1 "$VM_ARG_CNITOOL" "$1" "$T_TMP/$id.conflist" \
					"${POD[$id]}" >"$T_TMP/$id.$1.out" 2>"$T_TMP/$id.$1.err"
				echo $? >"$T_TMP/$id.$1.rc"
			} &
		done
	done
	wait
}
for k in 0 1; do
	for ((i = 0; i < NVF; i++)); do
		id=h$k$i
		LINE[$id]=$(vf_line $k $i)
		HOST[$id]=$(vf_host "$(vf_bdf $k $i)")
		POD[$id]=$(t_netns)
		conflist "$T_TMP/$id.conflist" "$(vf_bdf $k $i)" \
			"\"mac\": \"02:14:00:00:0$k:0$i\", \"vlan\": $((600 + 10 * k + i)), \"max_tx_rate\": $((10 + i))" \
			10.82.0.0/24
	done
done
many add
for k in 0 1; do
	for ((i = 0; i < NVF; i++)); do
		id=h$k$i
		t_eq "$(jq -r '.interfaces[] | select(.sandbox != null) | .mac' "$T_TMP/$id.add.out" 2>/dev/null)" \
			"02:14:00:00:0$k:0$i" "ADD $id ($(cat "$T_TMP/$id.add.err"))"
		line=$(vf_line $k $i)
		t_contains "$line" "link/ether 02:14:00:00:0$k:0$i" "PF $k VF $i: mac"
		t_contains "$line" "vlan $((600 + 10 * k + i))," "PF $k VF $i: vlan"
		t_contains "$line" "max_tx_rate $((10 + i))Mbps" "PF $k VF $i: max_tx_rate"
		t_eq "$(pod_link "${POD[$id]}" net1 | cut -d' ' -f1)" "02:14:00:00:0$k:0$i" "pod $id: net1"
	done
done
many del
for k in 0 1; do
	for ((i = 0; i < NVF; i++)); do
		id=h$k$i
		t_eq "$(cat "$T_TMP/$id.del.rc")" 0 "DEL $id ($(cat "$T_TMP/$id.del.out" "$T_TMP/$id.del.err"))"
		t_eq "$(vf_line $k $i)" "$(home_line "${LINE[$id]}" "${HOST[$id]}")" "PF $k VF $i: its PF line after DEL"
		t_eq "$(vf_host "$(vf_bdf $k $i)")" "${HOST[$id]}" "PF $k VF $i: its netdev home"
	done
done
no_leftovers x "after the 14 DELs"

# ---- g: ADD killed at points spread over its netlink requests ----
# One ADD under strace counts sriov-rdma's netlink sends (the pool-ipam it
# runs is not traced); then strace kills the plugin at the Nth send, for ten
# N spread from the first to the last: every phase of an ADD on the real PF
# and VF interrupted, each followed by the runtime's DEL.
t_begin "igb: ADD SIGKILLed at 10 points spread over its netlink requests, then DEL: the VF home intact every time"
if ! command -v strace >/dev/null; then
	t_fail "no strace (scripts/setup test installs it)"
else
	BDF=$(vf_bdf 0 5)
	before_line=$(vf_line 0 5)
	before_host=$(vf_host "$BDF")
	conflist "$T_TMP/g.conflist" "$BDF" "$SETTINGS"
	killdir=$T_TMP/cni-kill
	mkdir -p "$killdir"
	cp -a "$cnipath/." "$killdir/"
	strace_plugin() { # strace options...
		printf '#!/bin/sh\nexec strace -qq %s %q "$@"\n' "$*" \
			"$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" >"$killdir/sriov-rdma"
	}
	add_killed() { # ID
		env CNI_PATH="$killdir" NETCONFPATH="$T_TMP" CNI_CACHE_DIR="$T_TMP/cni-cache" \
			CNI_CONTAINERID="$1" CNI_IFNAME=net1 "$VM_ARG_CNITOOL" add "$T_TMP/g.conflist" "$pod" \
			>/dev/null 2>&1
	}
	pod=$(t_netns)
	strace_plugin -o "$T_TMP/g.trace" -e trace=sendto,sendmsg
	add_killed igbg0
	t_eq "$?" 0 "ADD under strace"
	sends=$(grep -c -e 'sendto(' -e 'sendmsg(' "$T_TMP/g.trace")
	cni del "$T_TMP/g.conflist" "$pod" igbg0
	ip netns del "${pod##*/}"
	echo "# an ADD makes $sends netlink sends"
	points=0
	for n in $(seq 0 9 | awk -v s="$sends" '{ print 1 + int($1 * (s - 1) / 9) }' | uniq); do
		strace_plugin -o /dev/null -e trace=sendto,sendmsg -e "inject=sendto,sendmsg:signal=KILL:when=$n"
		pod=$(t_netns)
		add_killed "igbg$n" && t_fail "ADD killed at send $n exited 0"
		cni del "$T_TMP/g.conflist" "$pod" "igbg$n"
		t_eq "$T_RC" 0 "DEL after ADD killed at send $n (stdout: $T_OUT, stderr: $T_ERR)"
		t_eq "$(vf_line 0 5)" "$before_line" "killed at send $n: the VF's PF line after DEL"
		t_eq "$(vf_host "$BDF")" "$before_host" "killed at send $n: the VF's netdev home"
		no_leftovers "$BDF" "killed at send $n"
		ip netns del "${pod##*/}"
		points=$((points + 1))
	done
	[ "$points" -ge 8 ] || t_fail "ADD was killed at $points points only, want 8 or more"
fi

# ---- j: a VF bound to a DPDK driver ----
# vfio-pci binds a device only behind an IOMMU, or in vfio's no-IOMMU mode,
# which Debian's kernel leaves out (CONFIG_VFIO_NOIOMMU is not set); the VM
# has no IOMMU. uio_pci_generic, the other driver DPDK uses, binds a VF as it
# is, and the plugin treats the two alike (docs/how-it-works.md, "Multi-rail pods": a DPDK VF).
t_begin "igb: a VF bound to uio_pci_generic (DPDK) gets its PF-side settings and an address, no netdev move; DEL restores its PF line"
BDF=$(vf_bdf 0 6)
before_line=$(vf_line 0 6)
DPDK_DRV=uio_pci_generic
bind() { # BDF DRIVER
	echo "$2" >"/sys/bus/pci/devices/$1/driver_override" &&
		{ [ ! -e "/sys/bus/pci/devices/$1/driver" ] || echo "$1" >"/sys/bus/pci/devices/$1/driver/unbind"; } &&
		echo "$1" >/sys/bus/pci/drivers_probe &&
		[ "$(basename "$(readlink "/sys/bus/pci/devices/$1/driver")")" = "$2" ]
}
if ! modprobe "$DPDK_DRV"; then
	t_fail "no $DPDK_DRV module"
elif ! bind "$BDF" "$DPDK_DRV"; then
	t_fail "cannot bind $BDF to $DPDK_DRV: $(dmesg | tail -n 5)"
else
	pod=$(t_netns)
	conflist "$T_TMP/j.conflist" "$BDF" '"mac": "02:aa:bb:cc:dd:06", "vlan": 700, "spoofchk": "off"'
	cni add "$T_TMP/j.conflist" "$pod" igbj
	t_eq "$T_RC" 0 "ADD (stdout: $T_OUT, stderr: $T_ERR)"
	t_eq "$(t_jq '.ips | length')" 2 "the result carries the addresses"
	line=$(vf_line 0 6)
	t_contains "$line" "link/ether 02:aa:bb:cc:dd:06" "PF line: mac"
	t_contains "$line" "vlan 700," "PF line: vlan"
	t_eq "$(ip -n "$pod" -o link show | grep -vc ': lo:')" 0 "no netdev in the pod"
	cni del "$T_TMP/j.conflist" "$pod" igbj
	t_eq "$T_RC" 0 "DEL (stdout: $T_OUT, stderr: $T_ERR)"
	t_eq "$(vf_line 0 6)" "$before_line" "the VF's PF line after DEL"
	no_leftovers "$BDF" "after DEL"
	t_eq "$(basename "$(readlink "/sys/bus/pci/devices/$BDF/driver")")" "$DPDK_DRV" "still bound to $DPDK_DRV"
	ip netns del "${pod##*/}"
fi
bind "$BDF" igbvf && wait_for 60 vf_netdev_of "$BDF" >/dev/null ||
	t_fail "cannot give $BDF back to igbvf"
echo "" >"/sys/bus/pci/devices/$BDF/driver_override"

# ---- i: rdma-doctor on an SR-IOV node without RDMA ----
t_begin "igb: rdma-doctor names the SR-IOV PFs and their VFs, says there is no RDMA and what to load"
out=$("$SOURCE_DIR/scripts/rdma-doctor" --cni-bin-dir "" 2>&1)
for k in 0 1; do
	line=$(grep "pf ${PF_BDF[$k]} (${PF[$k]})" <<<"$out")
	t_contains "$line" "SR-IOV PF without RDMA (driver igb, $NVF VFs: $(vf_bdf $k 0) " "PF $k"
	t_contains "$line" "$(vf_bdf $k 6)" "PF $k's last VF"
	t_contains "$line" "modprobe mlx5_core mlx5_ib" "what to load"
done
t_contains "$out" "FAIL sriov: no SR-IOV capable RDMA NIC" "no RDMA NIC"

t_done
