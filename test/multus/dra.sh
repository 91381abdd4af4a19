#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# test/multus/dra.sh: sriov-rdma as dra-driver-sriov's standalone mode calls
# it, through the suite's reproduction (test/client/multus.go dra) on
# Debian's libcni: the NAD's config as one plugin (no conflist, so no
# chain), the VF's PCI address set at its top level as deviceID, the
# driver's name when the config has none, no runtimeConfig, CNI_IFNAME
# vfnetN, and the result turned into KEP-4817 networkData. One pod with 8
# rails, attached in sequence (one RunPodSandbox hook), detached with
# libcni's cached result, then with the pod's netns already gone.
: "${SOURCE_DIR:?set SOURCE_DIR to the project root}"
. "$SOURCE_DIR/test/netns/sriov_lib.sh"
trap 'exit 143' TERM INT

t_begin "dra: the reproduced driver is built"
command -v jq >/dev/null || { t_fail "needs jq"; t_done; }
MULTUS=$(mt_bin) || { t_fail "cannot build test/client/multus.go"; t_done; }
mt_setup

RAILS=8
# Eight VFs: functions 2-7 of device 00, then 0-1 of device 01.
sr_vf() { local f=$(($1 + 2)); printf "0000:3b:%02x.%d" $((f / 8)) $((f % 8)); }
RF=$T_TMP/rdma-fake
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
mkdir -p "$RF"
export SRIOV_RDMA_RDMA_FAKE_DIR=$RF
CONF=$T_TMP/nad-config.json
CTR=0f3c9a$$
UID_=7d1e2b4c-1111-4222-8333-9444555$$
# The NAD's spec.config as the driver reads it: no name (the driver's
# applies), and no deviceID (the driver's allocation sets it).
jq -n --arg s "$SR_STATE" --arg pool "$T_TMP/pool" \
	'{cniVersion: "1.0.0", type: "sriov-rdma", stateDir: $s, mtu: 1400, rdma: "exclusive", multiRail: true,
	  ipam: {type: "pool-ipam", dataDir: $pool, ranges: [[{subnet: "10.73.0.0/24", gateway: "10.73.0.1"}]]}}' > "$CONF"

fresh_node() {
	local i
	sr_setup $RAILS || return 1
	rm -rf "$T_TMP/pool"
	echo exclusive > "$RF/rdma.mode"
	: > "$RF/rdma.devs"
	for ((i = 0; i < RAILS; i++)); do
		echo "$((i + 3)) mlx5_$((i + 2)) $(sr_net $i) $HOST_NS" >> "$RF/rdma.devs"
		ORIG[i]=$(sr_host_link "$(sr_net $i)")
	done
	: > "$MT_CALLS"
}
# dra add|del RAIL NETNS: the driver's call for one rail of the pod.
dra() {
	T_OUT=$(env CNI_PATH="$MT_BIN" CNI_CACHE_DIR="$T_TMP/cni-cache" CNI_IFNAME="vfnet$2" \
		DEVICE_ID="$(sr_vf "$2")" CONTAINER_ID="$CTR" POD_NAMESPACE=ml POD_NAME=trainer-0 POD_UID="$UID_" \
		"$MULTUS" dra "$1" "$CONF" "$3" 2>"$T_TMP/stderr")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/stderr")
}
leased() { find "$T_TMP/pool" -type f -name '*10.73.*' 2>/dev/null | wc -l; }
assert_home() { # WHAT
	local i
	for ((i = 0; i < RAILS; i++)); do
		t_eq "$(sr_host_link "$(sr_net $i)")" "${ORIG[i]}" "$1: VF $i back on the node as it was"
		t_eq "$(awk '$1 == '"$((i + 3))"' {print $2, $4}' "$RF/rdma.devs")" "mlx5_$((i + 2)) $HOST_NS" \
			"$1: RDMA device of VF $i home under its name"
	done
	t_eq "$(sr_state_files)$(sr_markers)" "" "$1: no record, no in-use marker"
	t_eq "$(leased)" 0 "$1: no address held"
}

t_begin "dra: 8 rails of one pod attached in sequence; networkData from each result"
fresh_node
POD=$(t_netns)
pns=$(stat -L -c %i "$POD")
for ((i = 0; i < RAILS; i++)); do
	dra add $i "$POD"
	t_eq "$T_RC" 0 "rail $i: ADD ($T_OUT $T_ERR)" || continue
	pod_addr=$(ip -n "$(basename "$POD")" -o -4 addr show "vfnet$i" | awk '{print $4}')
	t_eq "$T_OUT" "{\"interfaceName\":\"vfnet$i\",\"ips\":[\"$pod_addr\"],\"hardwareAddress\":\"$(sr_pod_link "$POD" "vfnet$i" | cut -d' ' -f2)\"}" \
		"rail $i: networkData names the pod's interface, its address in CIDR form and its MAC"
	in=$(mt_stdin ADD "$CTR" "vfnet$i")
	t_eq "$(jq -r '.name, .deviceID, has("pciBusID"), has("runtimeConfig")' <<< "$in" | tr '\n' ' ')" \
		"sriovnetwork.k8snetworkplumbingwg.io $(sr_vf $i) false false " \
		"rail $i: the driver's name, deviceID at the top level, no pciBusID, no runtimeConfig"
	t_contains "$(mt_env ADD "$CTR" "vfnet$i")" \
		"CNI_ARGS=IgnoreUnknown=true;K8S_POD_NAMESPACE=ml;K8S_POD_NAME=trainer-0;K8S_POD_INFRA_CONTAINER_ID=$CTR;K8S_POD_UID=$UID_
" "rail $i: CNI_ARGS"
	t_eq "$(awk '$1 == '"$((i + 3))"' {print $4}' "$RF/rdma.devs")" "$pns" "rail $i: its RDMA device in the pod"
done
t_eq "$(ip -n "$(basename "$POD")" -o -4 addr show | grep -c 'vfnet')" $RAILS "8 VFs with an address each in the pod"
t_eq "$(ip -n "$(basename "$POD")" rule show | grep -c 'from 10.73.0.')" $RAILS "multiRail: a source rule per rail"
t_eq "$(leased)" $RAILS "8 addresses held"

t_begin "dra: DEL of each rail with libcni's cached result releases everything"
: > "$MT_CALLS"
for ((i = 0; i < RAILS; i++)); do
	dra del $i "$POD"
	t_eq "$T_RC" 0 "rail $i: DEL ($T_OUT $T_ERR)"
	t_eq "$(jq -r '.prevResult.interfaces[0].name, .prevResult.interfaces[0].sandbox, .deviceID' <<< "$(mt_stdin DEL "$CTR" "vfnet$i")" | tr '\n' ' ')" \
		"vfnet$i $POD $(sr_vf $i) " "rail $i: prevResult is ADD's result"
done
t_eq "$(grep -c ' rc=0$' "$MT_CALLS")" $RAILS "8 DELs, each exit 0"
assert_home "after DEL"

t_begin "dra: DEL after the runtime removed the pod's netns releases everything"
fresh_node
POD=$(t_netns)
for i in 0 1; do
	dra add $i "$POD"
	t_eq "$T_RC" 0 "rail $i: ADD ($T_OUT $T_ERR)"
done
command ip netns del "$(basename "$POD")"
for i in 0 1; do
	dra del $i "$POD"
	t_eq "$T_RC" 0 "rail $i: DEL with the netns gone ($T_OUT $T_ERR)"
done
# A VF netdev goes home with its namespace (a veth standing in for it does
# not, nor does the RDMA fake follow): what DEL owns is the rest.
t_eq "$(sr_state_files)$(sr_markers)" "" "netns gone: no record, no in-use marker"
t_eq "$(leased)" 0 "netns gone: no address held"
dra del 0 "$POD"
t_eq "$T_RC" 0 "a repeated DEL exits 0 too ($T_OUT $T_ERR)"

t_done
