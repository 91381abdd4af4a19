#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sriov-rdma's RDMA step: the VF's RDMA device into the pod and back.
#
# This kernel has no RDMA, so RDMA netlink is the recording fake of
# common/rdma.h (SRIOV_RDMA_RDMA_FAKE_DIR): rdma.devs models mlx5_2, the RDMA
# device of VF 0, in a kernel whose netns mode is in rdma.mode; the fake
# applies the kernel's rules (exclusive mode hides other namespaces' devices,
# a move needs the caller in the device's namespace, names are node-wide)
# and appends every change asked for to rdma.calls. The code under test is
# the plugin's, unchanged: only the socket underneath differs. Tests without
# the fake run against this kernel's missing RDMA support.
. "$(dirname "$0")/sriov_lib.sh"

RF=$T_TMP/rdma-fake
HOST_NS=$(stat -L -c %i /proc/self/ns/net)

# A stand-in IPAM: logs each command, fails ADD when its config says so.
FAKE_IPAM_LOG=$T_TMP/fake-ipam.log
export FAKE_IPAM_LOG
cat > "$(t_cni_path)/fake-ipam" <<'EOS'
#!/bin/sh
conf=$(cat)
echo "$CNI_COMMAND $CNI_CONTAINERID" >> "$FAKE_IPAM_LOG"
ver=$(printf '%s' "$conf" | jq -r '.cniVersion')
case "$CNI_COMMAND:$(printf '%s' "$conf" | jq -r '.ipam.mode // "ok"')" in
ADD:fail)
	echo "{\"cniVersion\": \"$ver\", \"code\": 11, \"msg\": \"pool unavailable\"}"; exit 1 ;;
ADD:*)
	echo "{\"cniVersion\": \"$ver\", \"ips\": [{\"address\": \"10.70.0.5/24\"}]}" ;;
esac
exit 0
EOS
chmod +x "$(t_cni_path)/fake-ipam"

# rdma_setup MODE: VF 0 on the host with mlx5_2 (index 3) on its netdev, the fake in MODE.
rdma_setup() {
	sr_setup 1
	rm -rf "$RF"
	mkdir -p "$RF" "$T_TMP/devinfo"
	echo "$1" > "$RF/rdma.mode"
	echo "3 mlx5_2 $(sr_net 0) $HOST_NS" > "$RF/rdma.devs"
	orig=$(sr_host_link "$(sr_net 0)")
	pod=$(t_netns)
	pod_ns=$(stat -L -c %i "$pod")
	: > "$FAKE_IPAM_LOG"
	rm -rf "$T_TMP/hl"
}
# conf RDMA [extra jq object]: host-local gives 10.71.0.x, the runtime asks for a device-info file.
# (Debian's host-local reads configs up to 1.0.0.)
conf() {
	jq -nc --arg d "$(sr_vf 0)" --arg s "$SR_STATE" --arg r "$1" --arg hl "$T_TMP/hl" \
		--arg di "$T_TMP/devinfo/rf.json" \
		'{cniVersion: "1.0.0", name: "rdmanet", type: "sriov-rdma", deviceID: $d, stateDir: $s,
		  rdma: $r, runtimeConfig: {CNIDeviceInfoFile: $di},
		  ipam: {type: "host-local", subnet: "10.71.0.0/24", dataDir: $hl}} + '"${2:-{\}}"
}
# STATUS is CNI 1.1.0; without an IPAM to forward to, the answer is the plugin's alone.
sconf() { conf "$1" | jq -c '.cniVersion = "1.1.0" | del(.ipam)'; }
run() { # COMMAND CONFIG [VAR=VALUE...]
	local cmd=$1 c=$2
	shift 2
	t_exec sriov-rdma "$cmd" "$c" CNI_CONTAINERID=rf1 CNI_NETNS="$pod" CNI_IFNAME=net1 "$@"
}
fake() { run "$@" SRIOV_RDMA_RDMA_FAKE_DIR="$RF"; }
calls() { cat "$RF/rdma.calls" 2>/dev/null; }
leased() { find "$T_TMP/hl" -type f -name '10.71.*' 2>/dev/null | wc -l; }

# Nothing changed: VF on the host as it was, no state, no address, mlx5_2 unmoved.
assert_untouched() {
	t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "VF netdev on the host with its name, MAC, MTU"
	t_eq "$(ip -n "$(basename "$pod")" -o link | grep -vc ' lo:')" 0 "nothing left in the pod"
	t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
	t_eq "$(leased)" 0 "no address held"
	t_eq "$(cat "$RF/rdma.devs")" "3 mlx5_2 $(sr_net 0) $HOST_NS" "mlx5_2 on the host under its name"
}

t_begin "exclusive mode: ADD moves mlx5_2 into the pod and renames it; devinfo and log name it"
rdma_setup exclusive
fake ADD "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
t_eq "$(calls | tr '\n' ';')" "dev-set 3 netns $pod_ns;dev-set 3 name rdma_net1_p59s0f2;" "set-netns to the pod, then the rename"
t_eq "$(cat "$RF/rdma.devs")" "3 rdma_net1_p59s0f2 $(sr_net 0) $pod_ns" "the fake holds it in the pod as rdma_net1_p59s0f2"
t_eq "$(jq -r '.pci["rdma-device"]' "$T_TMP/devinfo/rf.json")" rdma_net1_p59s0f2 "devinfo rdma-device: the name the pod sees"
t_eq "$(jq -r '.pci["pci-address"]' "$T_TMP/devinfo/rf.json")" "$(sr_vf 0)" "devinfo pci-address"
line=$(grep 'NCCL_IB_HCA=' <<< "$T_ERR")
t_contains "$line" "$(sr_net 0) -> net1" "the log line names the netdev"
t_contains "$line" "rdma rdma_net1_p59s0f2 (moved), NCCL_IB_HCA=rdma_net1_p59s0f2" "the log line names the RDMA device"
t_contains "$line" "GID index unknown" "the log line reports the GID index (none: no verbs device here)"
t_contains "$T_ERR" "WARN ADD rf1:net1: RDMA device rdma_net1_p59s0f2: libibverbs does not list it" "the failed lookup is a warning"
t_eq "$(jq -r '.rdmaMoved, .rdmaIndex, .rdmaDevice' "$SR_STATE/rf1:net1.json" 2>/dev/null | tr '\n' ' ')" \
	"true 3 mlx5_2 " "the record keeps index and host name"

t_begin "CHECK passes, then finds the device gone from the pod (code 107)"
fake CHECK "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "CHECK after ADD ($T_OUT)"
echo "3 rdma_net1_p59s0f2 $(sr_net 0) $HOST_NS" > "$RF/rdma.devs"
fake CHECK "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$(t_jq .code)" 107 "CHECK after the device left the pod"
t_contains "$(t_jq .msg)" "rdma_net1_p59s0f2" "names the device"
echo "3 other0 $(sr_net 0) $pod_ns" > "$RF/rdma.devs"
fake CHECK "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$(t_jq .code)" 107 "CHECK after a rename in the pod"
t_contains "$(t_jq .msg)" "other0" "names the new name"
echo "3 rdma_net1_p59s0f2 $(sr_net 0) $pod_ns" > "$RF/rdma.devs"

t_begin "DEL returns mlx5_2 to the host under its original name"
: > "$RF/rdma.calls"
fake DEL "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
t_eq "$(calls | tr '\n' ';')" "dev-set 3 netns $HOST_NS;dev-set 3 name mlx5_2;" "moved home from inside the pod, then renamed"
assert_untouched
t_eq "$(ls "$T_TMP/devinfo")" "" "devinfo file removed"
fake DEL "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "a second DEL succeeds ($T_OUT)"

t_begin "a VF a live pod holds (its RDMA device moved and renamed there): 101 naming the owner, not an RDMA error"
rdma_setup exclusive
fake ADD "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "ADD into the first pod ($T_OUT $T_ERR)"
pod1=$pod
pod=$(t_netns)
: > "$RF/rdma.calls"
for mode in exclusive auto; do
	t_exec sriov-rdma ADD "$(conf "$mode")" CNI_CONTAINERID=rf2 CNI_NETNS="$pod" CNI_IFNAME=net1 \
		SRIOV_RDMA_RDMA_FAKE_DIR="$RF"
	t_eq "$(t_jq .code)" 101 "rdma $mode: error code"
	t_contains "$(t_jq .msg)" "in use by $pod1 (container rf1, interface net1)" "rdma $mode: names the owner"
done
t_eq "$(calls)" "" "nothing asked of RDMA netlink"
t_eq "$(cat "$RF/rdma.devs")" "3 rdma_net1_p59s0f2 $(sr_net 0) $(stat -L -c %i "$pod1")" "the device stays in the first pod"
t_contains "$(sr_markers)" "$(sr_vf 0)" "the first pod's claim stays"
pod=$pod1
fake DEL "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "the first pod's DEL ($T_OUT)"
assert_untouched

t_begin "DEL after the pod's namespace is gone: the kernel returned the device, only the name is restored"
rdma_setup exclusive
fake ADD "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
ip netns del "$(basename "$pod")"
# What the kernel does for a dying namespace: devices back to init_net, names kept.
echo "3 rdma_net1_p59s0f2 $(sr_net 0) $HOST_NS" > "$RF/rdma.devs"
: > "$RF/rdma.calls"
fake DEL "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
t_eq "$(calls | tr '\n' ';')" "dev-set 3 name mlx5_2;" "no move, one rename"
t_eq "$(cat "$RF/rdma.devs")" "3 mlx5_2 $(sr_net 0) $HOST_NS" "mlx5_2 on the host under its name"
t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"

t_begin "DEL after RDMA support went away (ib_core unloaded): the netdev comes home, DEL succeeds"
rdma_setup exclusive
fake ADD "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
run DEL "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
t_contains "$T_ERR" "no RDMA support in this kernel any more" "says why the device is not returned"
t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "VF netdev on the host as it was"
t_eq "$(sr_state_files)$(sr_markers)$(leased)" "0" "no record, no marker, no address"

t_begin "rdma exclusive, kernel in shared mode: code 105 naming netns_mode=0, nothing changed"
rdma_setup shared
fake ADD "$(conf exclusive)"
t_eq "$(t_jq .code)" 105 "error code"
t_contains "$(t_jq .msg)" "shared" "says the mode"
t_contains "$(t_jq .details)" "netns_mode=0" "says how to switch"
t_eq "$(calls)" "" "nothing asked of RDMA netlink"
t_eq "$(sr_calls)" "" "nothing asked of the PF"
assert_untouched

t_begin "rdma auto, kernel in shared mode: ADD leaves mlx5_2 shared, says so, reports it"
fake ADD "$(conf auto '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
t_contains "$T_ERR" "shared netns mode" "the log says why it stays"
t_contains "$T_ERR" "rdmaName applies in exclusive mode only" "the log says rdmaName is not applied"
t_eq "$(calls)" "" "no move, no rename"
t_eq "$(jq -r '.pci["rdma-device"]' "$T_TMP/devinfo/rf.json")" mlx5_2 "devinfo rdma-device"
t_contains "$(grep 'NCCL_IB_HCA=' <<< "$T_ERR")" "rdma mlx5_2 (shared), NCCL_IB_HCA=mlx5_2" "log line"
fake DEL "$(conf auto '{rdmaName: "rdma_net1"}')"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(calls)" "" "DEL leaves the shared device alone"
assert_untouched

t_begin "STATUS: 50 for rdma exclusive in shared mode, 0 in exclusive mode or with rdma auto"
fake STATUS "$(sconf exclusive)"
t_eq "$(t_jq .code)" 50 "exclusive config, shared kernel"
t_contains "$(t_jq .msg)" "shared" "says why"
t_contains "$(t_jq .details)" "netns_mode=0" "says how to fix it"
fake STATUS "$(sconf auto)"
t_eq "$T_RC" 0 "auto config, shared kernel ($T_OUT)"
echo exclusive > "$RF/rdma.mode"
fake STATUS "$(sconf exclusive)"
t_eq "$T_RC" 0 "exclusive config, exclusive kernel ($T_OUT)"
run STATUS "$(sconf exclusive)"
t_eq "$(t_jq .code)" 50 "exclusive config, this kernel (no RDMA)"
t_contains "$(t_jq .msg)" "no RDMA support in this kernel" "says why"

t_begin "rdma exclusive, VF without an RDMA device: code 105, nothing changed"
rdma_setup exclusive
rm -rf "$SR_SYS/bus/pci/devices/$(sr_vf 0)/infiniband"
fake ADD "$(conf exclusive)"
t_eq "$(t_jq .code)" 105 "error code"
t_contains "$(t_jq .msg)" "no RDMA device" "says what is missing"
t_contains "$(t_jq .msg)" "infiniband" "names where it looked"
t_eq "$(calls)" "" "nothing asked of RDMA netlink"
assert_untouched
fake ADD "$(conf auto)"
t_eq "$T_RC" 0 "rdma auto skips it ($T_OUT)"
t_contains "$T_ERR" "no RDMA device" "and logs why"
fake DEL "$(conf auto)"

t_begin "this kernel has no RDMA: rdma auto succeeds with an info line, rdma exclusive is 105"
rdma_setup exclusive
run ADD "$(conf auto)"
t_eq "$T_RC" 0 "ADD with rdma auto ($T_OUT $T_ERR)"
t_contains "$T_ERR" "INFO" "an info line"
t_contains "$T_ERR" "no RDMA support in this kernel" "says why nothing moved"
t_eq "$(jq -r '.pci["rdma-device"]' "$T_TMP/devinfo/rf.json")" null "devinfo claims no RDMA device"
run DEL "$(conf auto)"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
run ADD "$(conf exclusive)"
t_eq "$(t_jq .code)" 105 "ADD with rdma exclusive"
t_contains "$(t_jq .msg)" "no RDMA support in this kernel" "says why"
assert_untouched
run ADD "$(conf off)"
t_eq "$T_RC" 0 "rdma off never asks ($T_OUT)"
t_contains "$T_ERR" "rdma off" "log line"
run DEL "$(conf off)"

t_begin "a later step fails (IPAM) after the move: mlx5_2 returned and renamed back"
rdma_setup exclusive
fake ADD "$(conf exclusive '{rdmaName: "rdma_net1", ipam: {type: "fake-ipam", mode: "fail"}}')"
t_eq "$(t_jq .code)" 11 "the IPAM's error"
t_eq "$(calls | tr '\n' ';')" \
	"dev-set 3 netns $pod_ns;dev-set 3 name rdma_net1_p59s0f2;dev-set 3 netns $HOST_NS;dev-set 3 name mlx5_2;" \
	"moved and renamed, then moved home and renamed back"
assert_untouched

t_begin "the move fails (rdma.fail-netns): code 105 naming the device, nothing changed"
rdma_setup exclusive
echo 16 > "$RF/rdma.fail-netns"
fake ADD "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$(t_jq .code)" 105 "error code"
t_contains "$(t_jq .msg)" "mlx5_2" "names the device"
t_contains "$(t_jq .msg)" "busy" "passes the kernel's reason"
t_eq "$(calls | tr '\n' ';')" "dev-set 3 netns $pod_ns;" "one move asked, no rename"
assert_untouched
rm -f "$RF/rdma.fail-netns"

t_begin "the rename fails in the pod: the device comes home, nothing changed"
rdma_setup exclusive
echo 1 > "$RF/rdma.fail-rename"
fake ADD "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$(t_jq .code)" 105 "error code"
t_contains "$(t_jq .msg)" "rdmaName" "names the field"
t_eq "$(calls | tr '\n' ';')" \
	"dev-set 3 netns $pod_ns;dev-set 3 name rdma_net1_p59s0f2;dev-set 3 netns $HOST_NS;" \
	"moved, rename refused, moved home"
assert_untouched
rm -f "$RF/rdma.fail-rename"

t_begin "rdmaName taken by another RDMA device of the node: 105 that says names are node-wide"
rdma_setup exclusive
echo "4 rdma_net1_p59s0f2 other0 4026531000" >> "$RF/rdma.devs"
fake ADD "$(conf exclusive '{rdmaName: "rdma_net1"}')"
t_eq "$(t_jq .code)" 105 "error code"
t_contains "$(t_jq .details)" "node-wide" "says why"
t_eq "$(head -1 "$RF/rdma.devs")" "3 mlx5_2 $(sr_net 0) $HOST_NS" "mlx5_2 home"
t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "VF netdev on the host"
t_eq "$(sr_state_files)$(sr_markers)$(leased)" "0" "no state, no address"

t_begin "invalid rdma settings: code 7 naming the field, nothing asked"
rdma_setup exclusive
fake ADD "$(conf sometimes)"
t_eq "$(t_jq .code)" 7 "rdma: bad value"
t_contains "$(t_jq .msg)" "rdma" "names rdma"
t_contains "$(t_jq .msg)" '"exclusive"' "lists the choices"
fake ADD "$(conf exclusive '{rdmaName: "../mlx5_0"}')"
t_eq "$(t_jq .code)" 7 "rdmaName: bad name"
t_contains "$(t_jq .msg)" "rdmaName" "names rdmaName"
fake ADD "$(conf off '{rdmaName: "rdma_net1"}')"
t_eq "$(t_jq .code)" 7 "rdmaName with rdma off"
t_contains "$(t_jq .msg)" "off" "says the conflict"
fake ADD "$(conf exclusive '{rdmaNmae: "rdma_net1"}')"
t_eq "$(t_jq .code)" 7 "typo in rdmaName"
t_eq "$(calls)" "" "RDMA netlink never asked"
assert_untouched

t_begin "one NAD with rdmaName on two VFs of a node: each pod gets its own name, NCCL_IB_HCA matches both"
sr_setup 2
rm -rf "$RF"
mkdir -p "$RF"
echo exclusive > "$RF/rdma.mode"
printf '3 mlx5_2 %s %s\n4 mlx5_3 %s %s\n' "$(sr_net 0)" "$HOST_NS" "$(sr_net 1)" "$HOST_NS" > "$RF/rdma.devs"
podA=$(t_netns)
podB=$(t_netns)
rm -rf "$T_TMP/hl"
for v in 0 1; do
	p=$podA; [ $v = 1 ] && p=$podB
	t_exec sriov-rdma ADD "$(conf exclusive '{rdmaName: "rdma_net1", runtimeConfig: {}}' | jq -c --arg d "$(sr_vf $v)" '.deviceID = $d')" \
		CNI_CONTAINERID="two$v" CNI_NETNS="$p" CNI_IFNAME=net1 SRIOV_RDMA_RDMA_FAKE_DIR="$RF"
	t_eq "$T_RC" 0 "ADD of VF $v ($T_OUT)"
done
t_eq "$(cut -d' ' -f2 "$RF/rdma.devs" | tr '\n' ' ')" "rdma_net1_p59s0f2 rdma_net1_p59s0f3 " "names made unique by the VF's PCI address"
for v in 0 1; do
	p=$podA; [ $v = 1 ] && p=$podB
	t_exec sriov-rdma DEL "$(conf exclusive '{rdmaName: "rdma_net1", runtimeConfig: {}}' | jq -c --arg d "$(sr_vf $v)" '.deviceID = $d')" \
		CNI_CONTAINERID="two$v" CNI_NETNS="$p" CNI_IFNAME=net1 SRIOV_RDMA_RDMA_FAKE_DIR="$RF"
	t_eq "$T_RC" 0 "DEL of VF $v ($T_OUT)"
done
t_eq "$(cut -d' ' -f2 "$RF/rdma.devs" | tr '\n' ' ')" "mlx5_2 mlx5_3 " "both home under their names"
t_exec sriov-rdma ADD "$(conf exclusive "{rdmaName: \"$(printf 'r%.0s' $(seq 47))\"}")" \
	CNI_CONTAINERID=long CNI_NETNS="$podA" CNI_IFNAME=net1 SRIOV_RDMA_RDMA_FAKE_DIR="$RF"
t_eq "$(t_jq .code)" 7 "an rdmaName over 46 characters is code 7 ($T_OUT)"
t_contains "$(t_jq .msg)" "a suffix naming the VF follows" "says why"

t_done
