#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sriov-rdma on InfiniBand VFs, through libcni with Multus-shaped configs.
#
# No kernel here has an InfiniBand device: the sysfs fixture models a
# ConnectX-7 in IB mode (IPoIB netdevs of type 32, mlx5_N with an IB port and
# port GUIDs), the PF is the recording fake (GUIDs included), RDMA netlink is
# the recording fake in exclusive mode, and each VF netdev is a veth (its
# kernel type is Ethernet: the plugin reads the link layer from the sysfs
# root, which the fixture controls). The driver's bind and unbind files are
# one FIFO, read by act_kernel below, which acts out what the kernel and
# udev do on a rebind: the netdev and the RDMA device go away, come back a
# little later under new names (the RDMA device with a new index, its port
# GID carrying the GUID the PF now holds), the netdev first under the
# kernel's name, then renamed.
. "$(dirname "$0")/sriov_lib.sh"
# strace captures ip's request and kills ADD at an exact system call.
command -v strace >/dev/null || { echo "SKIP: strace not installed (scripts/setup test)"; exit 77; }

CONF=$T_TMP/net.conflist
RF=$T_TMP/rdma
EV=$T_TMP/ib.events
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
BRIDGE=devices/pci0000:00/0000:00:01.0
export SRIOV_RDMA_RDMA_FAKE_DIR=$RF
ZERO=00:00:00:00:00:00:00:00
G1=02:c9:03:00:00:ab:cd:01

ib_net() { echo "ib$$v$1"; }
vf_dir() { echo "$SR_SYS/$BRIDGE/$1"; }
vf_guids() { grep "^vf=$1 " "$SR_FAKE/$SR_PFNET.vfs" | grep -o 'node_guid=[^ ]* port_guid=[^ ]*'; }
vf_netdev() { ls "$(vf_dir "$(sr_vf "$1")")/net" 2>/dev/null; }
vf_rdma() { ls "$(vf_dir "$(sr_vf "$1")")/infiniband" 2>/dev/null; }
rec_jq() { sed '$d' "$SR_STATE/$2" | jq -r "$1"; }   # the record without its checksum line
vf_gid() { cat "$(vf_dir "$(sr_vf "$1")")/infiniband/$(vf_rdma "$1")/ports/1/gids/0"; }
# Every link this test makes is named ib<pid>...: gone at exit.
cleanup_links() {
	ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep "^ib$$" |
		while read -r l; do ip link del "$l" 2>/dev/null; done
}
t_defer cleanup_links

# --- the kernel and udev, for the fixture's VFs ---

act_unbind() { # BDF
	local dir net rdma
	dir=$(vf_dir "$1")
	net=$(ls "$dir/net" 2>/dev/null | head -1)
	rdma=$(ls "$dir/infiniband" 2>/dev/null | head -1)
	# Removing the driver destroys its netdev and RDMA device.
	if [ -n "$net" ]; then
		ip link del "$net" 2>/dev/null
		rm -rf "${dir:?}/net/$net" "$SR_SYS/class/net/$net"
	fi
	if [ -n "$rdma" ]; then
		rm -rf "${dir:?}/infiniband/$rdma" "$SR_SYS/class/infiniband/$rdma"
		grep -v " $rdma " "$RF/rdma.devs" > "$RF/devs.tmp"; mv "$RF/devs.tmp" "$RF/rdma.devs"
	fi
	rm -f "$dir/driver"
	echo "unbind $1 $net $rdma" >> "$EV"
}

act_bind() { # BDF GEN
	local dir i guid h rdma idx kname final
	dir=$(vf_dir "$1")
	if [ -e "$T_TMP/ib.drop-bind" ]; then
		rm -f "$T_TMP/ib.drop-bind"
		echo "bind-dropped $1" >> "$EV"
		return
	fi
	ln -sfn ../../../../bus/pci/drivers/mlx5_core "$dir/driver"
	i=$(( ${1##*.} - 2 ))
	guid=$(vf_guids "$i" | sed 's/ .*//; s/node_guid=//')
	h=${guid//:/}
	rdma=mlx5_$((60 + $2)) idx=$((200 + $2)) kname=ib$$k$2
	# The GUID the PF holds takes effect at probe.
	mkdir -p "$dir/infiniband/$rdma/ports/1/gids"
	echo InfiniBand > "$dir/infiniband/$rdma/ports/1/link_layer"
	echo "fe80:0000:0000:0000:${h:0:4}:${h:4:4}:${h:8:4}:${h:12:4}" > "$dir/infiniband/$rdma/ports/1/gids/0"
	ln -sfn "../../$BRIDGE/$1/infiniband/$rdma" "$SR_SYS/class/infiniband/$rdma"
	# The kernel's name first (NET_NAME_ENUM), udev's a little later.
	if [ $(($2 % 2)) = 1 ]; then final=ib$$w$i; else final=ib$$v$i; fi
	# Whole when it appears, as the kernel's: built aside, then moved in.
	mkdir -p "$T_TMP/stage/$kname"
	echo 32 > "$T_TMP/stage/$kname/type"
	echo datagram > "$T_TMP/stage/$kname/mode"
	echo 1 > "$T_TMP/stage/$kname/name_assign_type"
	mkdir -p "$dir/net"
	mv "$T_TMP/stage/$kname" "$dir/net/$kname"
	echo "$idx $rdma $final $HOST_NS" >> "$RF/rdma.devs"
	read -r -t 0.3 _ <> "$T_TMP/never"
	ip link add "$final" type veth peer name "ib$$p$2"
	# The new netdev sits on the same PCI device (see test/fixtures/mksysfs).
	ip link set dev "$final" alias "standin-pci:$1"
	ip link set "ib$$p$2" up
	mv "$dir/net/$kname" "$dir/net/$final"
	echo 4 > "$dir/net/$final/name_assign_type"
	ln -sfn "../../$BRIDGE/$1/net/$final" "$SR_SYS/class/net/$final"
	echo "bind $1 $final $rdma" >> "$EV"
}

# unbind and bind are one FIFO: a VF with a driver is being unbound, one without bound.
act_kernel() {
	local bdf gen=0
	exec 3<> "$SR_SYS/bus/pci/drivers/mlx5_core/kernel"
	# The kernel takes the address without a newline: 12 characters.
	while read -r -N 12 bdf <&3; do
		if [ -L "$(vf_dir "$bdf")/driver" ]; then
			act_unbind "$bdf"
		else
			gen=$((gen + 1))
			act_bind "$bdf" "$gen"
		fi
	done
}

# ib_setup NVFS [mksysfs options...]: fresh fixture, fakes and kernel stand-in.
ib_setup() {
	local n=$1 i args=()
	shift
	[ -n "${ACTOR:-}" ] && { kill "$ACTOR" 2>/dev/null; wait "$ACTOR" 2>/dev/null; }
	cleanup_links
	rm -rf "$SR_SYS" "$SR_FAKE" "$SR_STATE" "$RF" "$EV" "$T_TMP/ib.drop-bind"
	mkdir -p "$RF"
	echo exclusive > "$RF/rdma.mode"
	: > "$RF/rdma.devs"
	for ((i = 0; i < n; i++)); do
		ip link add "$(ib_net $i)" type veth peer name "ib$$q$i" || return 1
		ip link set "ib$$q$i" up
		args+=(--vf "$i" "$(sr_vf $i)" "$(ib_net $i)")
		echo "$((i + 3)) mlx5_$((i + 2)) $(ib_net $i) $HOST_NS" >> "$RF/rdma.devs"
	done
	"$SOURCE_DIR/test/fixtures/mksysfs" "$SR_SYS" --ib --pf "$SR_PF" "$SR_PFNET" "${args[@]}" \
		--fake-pf "$SR_FAKE" "$@" || return 1
	mkfifo "$SR_SYS/bus/pci/drivers/mlx5_core/kernel"
	ln -s kernel "$SR_SYS/bus/pci/drivers/mlx5_core/bind"
	ln -s kernel "$SR_SYS/bus/pci/drivers/mlx5_core/unbind"
	act_kernel &
	ACTOR=$!
}
mkfifo "$T_TMP/never"
t_defer 'kill $ACTOR 2>/dev/null'

# A Multus conflist: the capability ib-kubernetes fills, pool-ipam.
POOL="{\"type\": \"pool-ipam\", \"ranges\": [[{\"subnet\": \"10.77.0.0/24\"}]], \"dataDir\": \"$T_TMP/pool\"}"
ib_conflist() { # VERSION 'extra keys'
	sr_conflist "$CONF" "$1" "\"deviceID\": \"$(sr_vf 0)\", \"rdma\": \"exclusive\", \"capabilities\": {\"infinibandGUID\": true, \"deviceID\": true}${2:+, $2}" "$POOL"
}
ARGS="IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=c1"
cap_guid() { echo "{\"infinibandGUID\": \"$1\", \"deviceID\": \"$(sr_vf 0)\"}"; }

t_begin "ib-kubernetes' GUID: set on the PF, the VF rebound and found again by PCI address, RDMA device then netdev into the pod; CHECK; DEL puts the zero GUIDs back"
ib_setup 2
pod=$(t_netns)
ib_conflist 1.0.0 '"ibKubernetesEnabled": true, "pkey": "0x8001", "link_state": "enable", "mtu": 4092'
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CNI_ARGS="$ARGS" CAP_ARGS="$(cap_guid $G1)"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_contains "$(sr_calls)" "setlink pf=$SR_PFNET vf=0 node_guid=$G1 port_guid=$G1" "both GUIDs in one request"
t_contains "$(sr_calls)" "vf=0 link_state=enable" "link_state on the PF"
t_eq "$(vf_guids 0)" "node_guid=$G1 port_guid=$G1" "the PF holds the GUID"
t_eq "$(cut -d' ' -f1,2 "$EV" | tr '\n' ' ')" "unbind $(sr_vf 0) bind $(sr_vf 0) " "one rebind"
new_rdma=$(awk '$1 == "bind" {print $4}' "$EV")
t_eq "$(grep " $new_rdma " "$RF/rdma.devs" | cut -d' ' -f4)" "$(stat -L -c %i "$pod")" "the rebound RDMA device ($new_rdma) is in the pod"
t_eq "$(vf_gid 0)" "fe80:0000:0000:0000:02c9:0300:00ab:cd01" "the VF's port carries the new GUID"
t_eq "$(sr_pod_link "$pod" net1 | cut -d' ' -f1,3)" "net1 4092" "the rebound netdev in the pod, MTU 4092"
t_eq "$(t_jq '.interfaces[0].mac // ""')" "" "no MAC in the result (IPoIB has a 20-byte address)"
t_contains "$(t_jq '.ips[0].address')" 10.77.0. "address"
t_eq "$(rec_jq .infiniband.pkey c1:net1.json)" 32769 "pkey recorded"
t_eq "$(rec_jq .infiniband.origPortGuid c1:net1.json)" "$ZERO" "original GUID recorded"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CNI_ARGS="$ARGS" CAP_ARGS="$(cap_guid $G1)"
t_eq "$T_RC" 0 "CHECK ($T_ERR $T_OUT)"
sed -i "/^vf=0 /s/port_guid=[^ ]*/port_guid=02:c9:03:00:00:ab:cd:02/" "$SR_FAKE/$SR_PFNET.vfs"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CNI_ARGS="$ARGS" CAP_ARGS="$(cap_guid $G1)"
t_contains "$T_OUT" '"code":107' "CHECK: GUID drift"
t_contains "$T_OUT" "port GUID on PF $SR_PFNET is 02:c9:03:00:00:ab:cd:02, ADD set $G1" "CHECK names the GUID"
sed -i "/^vf=0 /s/port_guid=[^ ]*/port_guid=$G1/" "$SR_FAKE/$SR_PFNET.vfs"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CNI_ARGS="$ARGS" CAP_ARGS="$(cap_guid $G1)"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(vf_guids 0)" "node_guid=$ZERO port_guid=$ZERO" "DEL: the original GUIDs on the PF"
t_eq "$(grep -c '^bind ' "$EV")" 2 "DEL rebound the VF"
t_eq "$(vf_gid 0)" "fe80:0000:0000:0000:0000:0000:0000:0000" "the VF's port back on its own GUID"
t_eq "$(sr_host_link "$(vf_netdev 0)" | cut -d' ' -f1)" "$(vf_netdev 0)" "the VF's netdev on the host"
t_eq "$(grep -c " $HOST_NS\$" "$RF/rdma.devs")" 2 "both RDMA devices on the host"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no marker"
t_eq "$(grep -c 'vf=1 ' "$SR_FAKE/$SR_PFNET.calls")" 0 "VF 1 never touched"
n=$(wc -l < "$SR_FAKE/$SR_PFNET.calls")
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CNI_ARGS="$ARGS" CAP_ARGS="$(cap_guid $G1)"
t_eq "$T_RC" 0 "a repeated DEL ($T_ERR)"
t_eq "$(wc -l < "$SR_FAKE/$SR_PFNET.calls")" "$n" "a repeated DEL asks the PF nothing"
t_eq "$(grep -c '^bind ' "$EV")" 2 "a repeated DEL rebinds nothing"

t_begin "the GUID request is byte for byte what ip link set PF vf N node_guid G port_guid G sends"
ip link add "ib$$wire" type veth peer name "ib$$wirp"
strace -qq -e trace=sendmsg -e write=3,4,5 -o "$T_TMP/ip.trace" \
	ip link set "ib$$wire" vf 0 node_guid "$G1" port_guid "$G1" 2>/dev/null
t_contains "$(cat "$T_TMP/ip.trace")" "IFLA_VF_IB_NODE_GUID" "strace saw ip's request (the kernel refuses it on a veth)"
# The RTM_NEWLINK's bytes past its nlmsghdr and ifinfomsg (32): the IFLA_VFINFO_LIST.
ip_wire=$(awk '/RTM_NEWLINK/ {on = 1; next} /^sendmsg/ {on = 0} on && /^ \| / {print substr($0, 10, 49)}' \
	"$T_TMP/ip.trace" | tr -s ' ' '\n' | grep -v '^$' | tail -n +33 | tr -d '\n')
ib_setup 1
ib_conflist 1.0.0 "\"guid\": \"$G1\""
pod=$(t_netns)
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_eq "$T_RC" 0 "ADD ($T_ERR)"
wire=$(head -1 "$SR_FAKE/$SR_PFNET.wire")
t_eq "${#ip_wire}" 96 "ip's IFLA_VFINFO_LIST is 48 bytes"
t_eq "$wire" "$ip_wire" "our IFLA_VFINFO_LIST, byte for byte"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_eq "$T_RC" 0 "DEL ($T_ERR)"
ip link del "ib$$wire" 2>/dev/null

t_begin "guid \"auto\": the PF's port GUID and the VF index; the same GUID again is no change and no rebind"
ib_setup 2
pod=$(t_netns)
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 1)\", \"guid\": \"auto\"" "$POOL"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(vf_guids 1)" "node_guid=10:70:fd:80:02:a1:b2:c0 port_guid=10:70:fd:80:02:a1:b2:c0" "derived from 10:70:fd:03:00:a1:b2:c0, VF 1"
t_eq "$(rec_jq .infiniband.portGuid c3:net1.json)" 10:70:fd:80:02:a1:b2:c0 "recorded"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c3
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(vf_guids 1)" "node_guid=$ZERO port_guid=$ZERO" "given back on DEL"
ib_setup 1 --guid 0 "$G1"
pod=$(t_netns)
ib_conflist 1.0.0 "\"guid\": \"$G1\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c4
t_eq "$T_RC" 0 "ADD with the VF's own GUID ($T_ERR)"
t_not_contains "$(sr_calls)" "node_guid" "no GUID request"
t_eq "$(cat "$EV" 2>/dev/null)" "" "no rebind"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c4
t_eq "$T_RC" 0 "CHECK ($T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c4
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(cat "$EV" 2>/dev/null)" "" "no rebind on DEL either"

t_begin "refused before any change: zero GUIDs without one from the config, ibKubernetesEnabled without a GUID, Ethernet settings, an MTU IPoIB cannot carry"
ib_setup 1
pod=$(t_netns)
ib_conflist 1.0.0 ""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5
t_eq "$(t_jq .code)" 7 "zero GUIDs: code"
t_contains "$(t_jq .msg)" "all-zero" "zero GUIDs: says so"
t_contains "$(t_jq .details)" '"guid": "auto"' "zero GUIDs: how to give one"
t_contains "$(t_jq .details)" "ib-kubernetes" "zero GUIDs: names ib-kubernetes"
ib_conflist 1.0.0 '"ibKubernetesEnabled": true'
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5
t_eq "$(t_jq .code)" 7 "ibKubernetesEnabled without a GUID: code"
t_contains "$(t_jq .msg)" "ibKubernetesEnabled" "names ibKubernetesEnabled"
for bad in '"vlan": 10|vlan' '"mac": "02:00:00:00:00:01"|mac' '"spoofchk": "off"|spoofchk' \
	   '"trust": "on"|trust' '"max_tx_rate": 100|max_tx_rate' '"mtu": 9000|mtu' \
	   '"pkey": "0x0000"|pkey' '"pkey": "8001"|pkey' '"ibKubernetesEnabled": "yes"|ibKubernetesEnabled'; do
	ib_conflist 1.0.0 "\"guid\": \"$G1\", ${bad%|*}"
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5
	t_eq "$(t_jq .code)" 7 "${bad%|*} on IB: code"
	t_contains "$(t_jq .msg)" "${bad#*|}" "${bad%|*} on IB: names it"
done
for bad in '"guid": "02:c9:03:00:00:ab:cd"|not a GUID' '"guid": "00:00:00:00:00:00:00:00"|all-zero' \
	   '"guid": "ff:ff:ff:ff:ff:ff:ff:ff"|all-ones'; do
	ib_conflist 1.0.0 "${bad%|*}"
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5
	t_eq "$(t_jq .code)" 7 "${bad%|*}: code"
	t_contains "$(t_jq .msg)" 'guid "' "${bad%|*}: names guid"
	t_contains "$(t_jq .msg)" "${bad#*|}" "${bad%|*}: says why"
done
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5 CAP_ARGS='{"infinibandGUID": "auto"}'
t_eq "$(t_jq .code)" 7 "infinibandGUID \"auto\": code (ib-kubernetes gives a GUID, not auto)"
t_contains "$(t_jq .msg)" "runtimeConfig.infinibandGUID" "names runtimeConfig.infinibandGUID"
ib_conflist 1.0.0 "\"guid\": \"$G1\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c5 CNI_ARGS="IgnoreUnknown=true;MAC=02:00:00:00:00:09"
t_contains "$(t_jq .msg)" "CNI_ARGS MAC" "a MAC from CNI_ARGS on IB: names it"
t_eq "$(grep -c setlink "$SR_FAKE/$SR_PFNET.calls" 2>/dev/null)" 0 "the PF was asked to change nothing"
t_eq "$(cat "$EV" 2>/dev/null)" "" "no rebind"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state written"
t_eq "$(vf_netdev 0)" "$(ib_net 0)" "the VF netdev stays"
# IB-only settings on an Ethernet VF.
sr_setup 1
for bad in "\"guid\": \"$G1\"|guid" '"guid": "auto"|guid' '"pkey": "0x8001"|pkey'; do
	sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", ${bad%|*}" "$POOL"
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c6
	t_eq "$(t_jq .code)" 7 "${bad%|*} on Ethernet: code"
	t_contains "$(t_jq .msg)" "${bad#*|}: VF $(sr_vf 0) is Ethernet" "${bad%|*} on Ethernet: names it"
done
t_eq "$(sr_calls)" "" "PF untouched"

t_begin "the rebind does not settle (udev never brings the VF back): ADD fails, the GUID goes back"
ib_setup 1
pod=$(t_netns)
touch "$T_TMP/ib.drop-bind"
ib_conflist 1.0.0 "\"guid\": \"$G1\""
SRIOV_RDMA_REBIND_WAIT_MS=1500 t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c7
t_eq "$T_RC" 1 "ADD fails"
t_contains "$(t_jq .msg)" "did not come back" "says the VF did not come back"
# The undo's own rebind may give up waiting on a loaded machine (it logs, and
# goes on): the VF comes back all the same. A hang guard, not a timing.
for _ in $(seq 300); do grep -q '^bind ' "$EV" 2>/dev/null && break; read -r -t 0.1 _ <> "$T_TMP/never"; done
t_eq "$(vf_guids 0)" "node_guid=$ZERO port_guid=$ZERO" "the original GUID back on the PF"
t_eq "$(cut -d' ' -f1 "$EV" | tr '\n' ' ')" "unbind bind-dropped bind " "the undo bound the VF again"
t_eq "$(sr_host_link "$(vf_netdev 0)" | cut -d' ' -f1)" "$(vf_netdev 0)" "the VF's netdev on the host"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"
t_eq "$(ip -n "$(basename "$pod")" -o link | grep -vc ' lo:')" 0 "nothing in the pod"

# ADD under strace, SIGKILLed at the open of the unbind file (the GUID set,
# the VF not yet rebound); or, with the bind dropped, SIGKILLed while it
# waits for the VF to come back (and the pod's namespace deleted too).
t_begin "SIGKILL between the GUID change and the rebind, and during the rebind: DEL undoes it (then the netns goes, DEL again)"
for when in unbind rebind; do
	ib_setup 1
	pod=$(t_netns)
	ib_conflist 1.0.0 "\"guid\": \"$G1\""
	conf=$(sr_plugin_conf "$CONF")
	if [ $when = unbind ]; then
		printf '%s' "$conf" | CNI_COMMAND=ADD CNI_CONTAINERID=c8 CNI_NETNS="$pod" CNI_IFNAME=net1 \
			CNI_PATH="$(t_cni_path)" strace -qq -f -o /dev/null \
			-P "$SR_SYS/bus/pci/devices/$(sr_vf 0)/driver/unbind" -e inject=openat:signal=KILL \
			"$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" > /dev/null 2>&1
		t_eq "$(cat "$EV" 2>/dev/null)" "" "$when: killed before the unbind"
	else
		touch "$T_TMP/ib.drop-bind"
		printf '%s' "$conf" | CNI_COMMAND=ADD CNI_CONTAINERID=c8 CNI_NETNS="$pod" CNI_IFNAME=net1 \
			CNI_PATH="$(t_cni_path)" "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" > /dev/null 2>&1 &
		adder=$!
		for _ in $(seq 300); do grep -q bind-dropped "$EV" 2>/dev/null && break; read -r -t 0.1 _ <> "$T_TMP/never"; done
		kill -9 "$adder"; wait "$adder" 2>/dev/null
		t_eq "$(cut -d' ' -f1 "$EV" | tr '\n' ' ')" "unbind bind-dropped " "$when: killed with the VF unbound"
	fi
	t_eq "$(vf_guids 0)" "node_guid=$G1 port_guid=$G1" "$when: the PF holds the new GUID"
	t_eq "$(rec_jq .inProgress c8:net1.json)" true "$when: the record says ADD did not finish"
	[ $when = rebind ] && ip netns del "$(basename "$pod")"
	t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c8
	t_eq "$T_RC" 0 "$when: DEL ($T_ERR)"
	t_eq "$(vf_guids 0)" "node_guid=$ZERO port_guid=$ZERO" "$when: the original GUID back"
	t_eq "$(tail -1 "$EV" | cut -d' ' -f1)" bind "$when: DEL rebound the VF"
	t_eq "$(vf_gid 0)" "fe80:0000:0000:0000:0000:0000:0000:0000" "$when: in effect"
	t_eq "$(sr_host_link "$(vf_netdev 0)" | cut -d' ' -f1)" "$(vf_netdev 0)" "$when: netdev on the host"
	t_eq "$(cut -d' ' -f4 "$RF/rdma.devs")" "$HOST_NS" "$when: RDMA device on the host"
	t_eq "$(sr_state_files)$(sr_markers)" "" "$when: no state left"
	t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c8
	t_eq "$T_RC" 0 "$when: DEL again"
done

# A node restart, or a runtime that lost its cache: no DEL comes between.
t_begin "SIGKILL with the VF unbound, then the next ADD (no DEL between): the VF is still InfiniBand, the stale attachment undone, the ADD done"
ib_setup 1
pod=$(t_netns)
ib_conflist 1.0.0 "\"guid\": \"$G1\""
conf=$(sr_plugin_conf "$CONF")
touch "$T_TMP/ib.drop-bind"
printf '%s' "$conf" | CNI_COMMAND=ADD CNI_CONTAINERID=cu CNI_NETNS="$pod" CNI_IFNAME=net1 \
	CNI_PATH="$(t_cni_path)" "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" > /dev/null 2>&1 &
adder=$!
for _ in $(seq 300); do grep -q bind-dropped "$EV" 2>/dev/null && break; read -r -t 0.1 _ <> "$T_TMP/never"; done
kill -9 "$adder"; wait "$adder" 2>/dev/null
t_eq "$(vf_netdev 0)$(vf_rdma 0)" "" "the VF left without a netdev or an RDMA device"
ip netns del "$(basename "$pod")"
pod=$(t_netns)
ib_conflist 1.0.0 '"guid": "02:c9:03:00:00:ab:cd:02"'
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cv
t_eq "$T_RC" 0 "the next ADD ($T_ERR)"
t_eq "$(vf_guids 0)" "node_guid=02:c9:03:00:00:ab:cd:02 port_guid=02:c9:03:00:00:ab:cd:02" "the PF holds its GUID"
t_eq "$(sr_pod_link "$pod" net1 | cut -d' ' -f1)" net1 "the VF in the pod"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cv
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(vf_guids 0)" "node_guid=$ZERO port_guid=$ZERO" "the VF's own GUIDs back"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"

t_begin "DEL after the pod's namespace is gone: the GUID back, the VF rebound"
ib_setup 1
pod=$(t_netns)
ib_conflist 1.0.0 "\"guid\": \"$G1\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c9
t_eq "$T_RC" 0 "ADD ($T_ERR)"
ip netns del "$(basename "$pod")"
# The kernel returns an exclusive-mode RDMA device of a dying namespace to the host.
sed -i "s/ [0-9]*\$/ $HOST_NS/" "$RF/rdma.devs"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c9
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(vf_guids 0)" "node_guid=$ZERO port_guid=$ZERO" "the original GUID back"
t_eq "$(grep -c '^bind ' "$EV")" 2 "rebound"
t_eq "$(sr_host_link "$(vf_netdev 0)" | cut -d' ' -f1)" "$(vf_netdev 0)" "a netdev on the host again"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"

t_begin "a stale claim on an IB VF (its pod gone without a DEL) is taken over: the last tenant's GUID undone first"
ib_setup 1
podA=$(t_netns)
ib_conflist 1.0.0 "\"guid\": \"$G1\""
t_cnitool add "$CONF" "$podA" CNI_IFNAME=net1 CNI_CONTAINERID=ca
t_eq "$T_RC" 0 "ADD A ($T_ERR)"
ip netns del "$(basename "$podA")"
sed -i "s/ [0-9]*\$/ $HOST_NS/" "$RF/rdma.devs"
podB=$(t_netns)
ib_conflist 1.0.0 '"guid": "02:c9:03:00:00:ab:cd:02"'
t_cnitool add "$CONF" "$podB" CNI_IFNAME=net1 CNI_CONTAINERID=cb
t_eq "$T_RC" 0 "ADD B takes over ($T_ERR)"
t_eq "$(grep -o 'node_guid=[^ ]*' "$SR_FAKE/$SR_PFNET.calls" | tr '\n' ' ')" \
	"node_guid=$G1 node_guid=$ZERO node_guid=02:c9:03:00:00:ab:cd:02 " "A's GUID set, undone, B's set"
t_eq "$(sr_pod_link "$podB" net1 | cut -d' ' -f1)" net1 "the VF in B"
t_eq "$(rec_jq .infiniband.origPortGuid cb:net1.json)" "$ZERO" "B's record holds the VF's own GUID, not A's"
t_cnitool del "$CONF" "$podB" CNI_IFNAME=net1 CNI_CONTAINERID=cb
t_eq "$T_RC" 0 "DEL B ($T_ERR)"
t_eq "$(vf_guids 0)" "node_guid=$ZERO port_guid=$ZERO" "the VF's own GUID back"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"

t_begin "DEL with the record unreadable: the fallback resets only what an IB VF has on its PF (link state)"
ib_setup 1
pod=$(t_netns)
ib_conflist 1.0.0 "\"guid\": \"$G1\", \"link_state\": \"enable\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cf
t_eq "$T_RC" 0 "ADD ($T_ERR)"
n=$(wc -l < "$SR_FAKE/$SR_PFNET.calls")
echo garbage > "$SR_STATE/cf:net1.json"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cf
t_eq "$T_RC" 0 "DEL finishes ($T_ERR)"
t_eq "$(tail -n +$((n + 1)) "$SR_FAKE/$SR_PFNET.calls" | grep setlink | sed 's/.*vf=0 //' | tr '\n' ' ')" \
	"link_state=auto " "only the link state is reset"
t_eq "$(sr_pod_link "$pod" net1)" "" "the netdev left the pod"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"

t_begin "the device-info file of an IB VF carries pkey and the GUIDs beside the spec's pci members; an Ethernet VF's carries none; DEL removes it"
ib_setup 1
pod=$(t_netns)
DI=$T_TMP/devinfo/ib-net1.json
mkdir -p "$T_TMP/devinfo"
# As Multus passes them: deviceID, the GUID from ib-kubernetes, the device-info path.
di_caps='"capabilities": {"infinibandGUID": true, "deviceID": true, "CNIDeviceInfoFile": true}'
sr_conflist "$CONF" 1.0.0 "\"rdma\": \"exclusive\", \"pkey\": \"0x8001\", $di_caps" "$POOL"
cap="{\"infinibandGUID\": \"$G1\", \"deviceID\": \"$(sr_vf 0)\", \"CNIDeviceInfoFile\": \"$DI\"}"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cd CNI_ARGS="$ARGS" CAP_ARGS="$cap"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
new_rdma=$(awk '$1 == "bind" {print $4}' "$EV")
t_eq "$(jq -c .infiniband "$DI" 2>/dev/null)" "{\"pkey\":\"0x8001\",\"port-guid\":\"$G1\",\"node-guid\":\"$G1\"}" \
	"pkey and the GUIDs ADD gave the VF"
t_eq "$(jq -c '[.type, .version, .pci["pci-address"], .pci["pf-pci-address"], .pci["rdma-device"]]' "$DI" 2>/dev/null)" \
	"[\"pci\",\"1.1.0\",\"$(sr_vf 0)\",\"$SR_PF\",\"$new_rdma\"]" "the spec's members, the rebound RDMA device's name"
t_eq "$(t_jq '[.. | objects | keys[] | select(test("pkey|guid|infiniband"; "i"))] | length')" 0 \
	"the result holds the spec's keys only (libcni's types would drop others)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cd CNI_ARGS="$ARGS" CAP_ARGS="$cap"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
[ ! -e "$DI" ] || t_fail "DEL left the device-info file"
t_eq "$(vf_guids 0)" "node_guid=$ZERO port_guid=$ZERO" "the VF's own GUIDs back"
# The VF keeps its own GUID (no request, no rebind): those are the ones named, no pkey without one.
ib_setup 1 --guid 0 "$G1"
sr_conflist "$CONF" 1.0.0 "\"rdma\": \"exclusive\", $di_caps" "$POOL"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=ce CNI_ARGS="$ARGS" CAP_ARGS="$cap"
t_eq "$T_RC" 0 "ADD, the VF's own GUID ($T_ERR)"
t_eq "$(jq -c .infiniband "$DI" 2>/dev/null)" "{\"port-guid\":\"$G1\",\"node-guid\":\"$G1\"}" "no pkey configured: none named"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=ce CNI_ARGS="$ARGS" CAP_ARGS="$cap"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
[ ! -e "$DI" ] || t_fail "DEL left the device-info file"
sr_setup 1
sr_conflist "$CONF" 1.0.0 "\"capabilities\": {\"deviceID\": true, \"CNIDeviceInfoFile\": true}" "$POOL"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cg CNI_ARGS="$ARGS" \
	CAP_ARGS="{\"deviceID\": \"$(sr_vf 0)\", \"CNIDeviceInfoFile\": \"$DI\"}"
t_eq "$T_RC" 0 "ADD, Ethernet ($T_ERR)"
t_eq "$(jq -c '[has("infiniband"), .pci["pci-address"]]' "$DI" 2>/dev/null)" "[false,\"$(sr_vf 0)\"]" \
	"an Ethernet VF's device-info file has no infiniband object"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cg CNI_ARGS="$ARGS" \
	CAP_ARGS="{\"deviceID\": \"$(sr_vf 0)\", \"CNIDeviceInfoFile\": \"$DI\"}"
t_eq "$T_RC" 0 "DEL, Ethernet ($T_ERR)"
[ ! -e "$DI" ] || t_fail "DEL left the Ethernet VF's device-info file"

# mlx5 IPoIB: moving the RDMA device unregisters and registers it again,
# and ipoib makes its netdev anew on the host (new ifindex; here a new name
# too, as on a node without a udev rule for it). The RDMA fake acts it out.
t_begin "the RDMA device's move makes the IPoIB netdev anew under another name: ADD moves the new one into the pod as net1, CHECK, DEL brings it home"
ib_setup 1 --guid 0 "$G1"
pod=$(t_netns)
echo "$(ib_net 0) ib$$r0 ib$$s0" > "$RF/rdma.ipoib"
ib_conflist 1.0.0 "\"guid\": \"$G1\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=ch
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_contains "$(cat "$RF/rdma.calls")" "ipoib $(ib_net 0) ib$$r0" "moving the RDMA device made the netdev anew"
t_eq "$(vf_netdev 0)" "ib$$r0" "sysfs names the new netdev"
t_eq "$(ip -o link show "$(ib_net 0)" 2>/dev/null)" "" "the old netdev is gone"
peer_of_new=$(ip -j link show "ib$$s0" | jq -r '.[0].link_index')
t_eq "$(ip -n "$(basename "$pod")" -j link show net1 2>/dev/null | jq -r '.[0].ifindex')" "$peer_of_new" \
	"net1 in the pod is the new netdev"
t_eq "$(grep -c " $(stat -L -c %i "$pod")\$" "$RF/rdma.devs")" 1 "the RDMA device in the pod"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=ch
t_eq "$T_RC" 0 "CHECK ($T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=ch
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(sr_pod_link "$pod" net1)" "" "net1 left the pod"
# Home under the name the record holds, the VF's before ADD.
t_eq "$(ip -j link show "$(ib_net 0)" 2>/dev/null | jq -r '.[0].ifindex')" "$peer_of_new" \
	"the new netdev on the host, under the VF netdev's name before ADD"
t_eq "$(grep -c " $HOST_NS\$" "$RF/rdma.devs")" 1 "the RDMA device home"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"

t_begin "a PF renamed between ADD and CHECK: CHECK reads the GUIDs from it by its PCI address, DEL puts them back there"
ib_setup 1
pod=$(t_netns)
ib_conflist 1.0.0 "\"guid\": \"$G1\""
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cr
t_eq "$T_RC" 0 "ADD ($T_ERR)"
NEWPF=${SR_PFNET}r
sr_rename_pf "$NEWPF"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cr
t_eq "$T_RC" 0 "CHECK reads the GUIDs from the renamed PF ($T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=cr
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(grep "^vf=0 " "$SR_FAKE/$NEWPF.vfs" | grep -o 'node_guid=[^ ]* port_guid=[^ ]*')" \
	"node_guid=$ZERO port_guid=$ZERO" "the original GUIDs back on the renamed PF"
t_eq "$(sr_state_files)$(sr_markers)" "" "no state left"

t_done
