#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sriov-rdma DEL when something is broken: the config, the prevResult, the
# record, the state directory, the netns, the VF or the PF. Each time DEL
# exits 0, pool-ipam's reservation is released, the VF is home under its
# host name (or the documented fallback name) with its MAC and MTU, its
# PF-side settings are restored (or back to the driver's defaults when
# unknown), its RDMA device is home, and neither claim nor record is left.
#
# Calls go through the libcni client with the NAD shaped as Multus sends
# it (cniVersion 0.3.1, deviceID and pciBusID injected at the top, Multus'
# CNI_ARGS), or as dra-driver-sriov sends it (one plugin config, deviceID
# at the top, no runtimeConfig, ifname vfnet0, DEL after the netns is gone).
. "$(dirname "$0")/sriov_lib.sh"

RF=$T_TMP/rdma-fake
POOL=$T_TMP/pool
CONF=$T_TMP/nad.conflist
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
export SRIOV_RDMA_RDMA_FAKE_DIR=$RF
# A VF as mlx5 creates it: what DEL puts back when the settings before are unknown.
MLX5_DEFAULT="mac=00:00:00:00:00:00 vlan=0 qos=0 proto=802.1Q spoofchk=off trust=off link_state=auto min_tx_rate=0 max_tx_rate=0"
CID=0123456789abcdef
ARGS="IgnoreUnknown=true;K8S_POD_NAMESPACE=tenant-a;K8S_POD_NAME=trainer-0;K8S_POD_INFRA_CONTAINER_ID=$CID;K8S_POD_UID=6f1c0f2e-5d1b-4b9f-9d4e-3c2f7a1b8e90"

# The NAD's config as Multus passes it: every PF-side setting, an RDMA
# device moved and renamed, pool-ipam. nad [jq filter on the plugin]
nad() {
	jq -n --arg d "$(sr_vf 0)" --arg s "$SR_STATE" --arg p "$POOL" '{
		cniVersion: "0.3.1", name: "rdma-a",
		plugins: [{type: "sriov-rdma", deviceID: $d, pciBusID: $d, stateDir: $s,
			vlan: 100, vlanQoS: 3, mac: "02:00:00:00:aa:01", spoofchk: "on", trust: "on",
			link_state: "enable", max_tx_rate: 1000, mtu: 9000,
			rdma: "exclusive", rdmaName: "rdma_net1",
			ipam: {type: "pool-ipam", subnet: "10.80.0.0/24", dataDir: $p}}]}' |
		jq "${1:-.}"
}
setup() {
	sr_setup 1
	sed -i "s/^vf=0 .*/vf=0 $MLX5_DEFAULT/" "$SR_FAKE/$SR_PFNET.vfs"
	ip link set "$(sr_net 0)" mtu 1500
	orig=$(sr_host_link "$(sr_net 0)")
	rm -rf "$RF" "$POOL"
	mkdir -p "$RF"
	echo exclusive > "$RF/rdma.mode"
	echo "3 mlx5_2 $(sr_net 0) $HOST_NS" > "$RF/rdma.devs"
	pod=$(t_netns)
	pod_ns=$(stat -L -c %i "$pod")
	nad > "$CONF"
}
add() { # [IFNAME]
	t_cnitool add "$CONF" "$pod" CNI_IFNAME="${1:-net1}" CNI_CONTAINERID=$CID CNI_ARGS="$ARGS"
	t_eq "$T_RC" 0 "ADD ($T_ERR)" || return 1
	t_eq "$(cat "$RF/rdma.devs")" "3 rdma_net1_p59s0f2 $(sr_net 0) $pod_ns" "ADD moved and renamed the RDMA device"
	t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=100 qos=3" "ADD set the PF"
}
del() { # [NETNS [IFNAME]]
	t_cnitool del "$CONF" "${1:-$pod}" CNI_IFNAME="${2:-net1}" CNI_CONTAINERID=$CID CNI_ARGS="$ARGS"
}
record() { echo "$SR_STATE/$CID:${1:-net1}.json"; }
marker() { echo "$SR_STATE/pci/$(sr_vf 0)"; }
# Rewrite the record with a jq filter, sealed again with its CRC32, as a
# writer with a bug (or a hand edit that kept the checksum right) would.
reseal() { # FILTER [IFNAME]
	local f
	f=$(record "${2:-}")
	head -n -1 "$f" | jq "$1" > "$f.new" &&
	python3 -c 'import sys, zlib; d = open(sys.argv[1], "rb").read(); sys.stdout.buffer.write(d + b"#crc32=%08x\n" % zlib.crc32(d))' "$f.new" > "$f"
	rm -f "$f.new"
}

# What every DEL here must leave: exit 0, no address, no claim, no record, the PF settings.
assert_released() {
	t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT $T_ERR)"
	t_eq "$(find "$POOL" -name 'c-*' -o -name 'a-*' 2>/dev/null | wc -l)" 0 "pool-ipam's reservation released"
	t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
	[ -z "${PF_GONE:-}" ] &&
		t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vf=0 $MLX5_DEFAULT" "PF-side settings back"
}
# ... and the VF home as it was, with its RDMA device.
assert_home() {
	assert_released
	t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "VF home with its name, MAC, MTU"
	t_eq "$(cat "$RF/rdma.devs")" "3 mlx5_2 $(sr_net 0) $HOST_NS" "RDMA device home under its name"
	[ ! -e "$pod" ] || t_eq "$(ip -n "$(basename "$pod")" -o link | grep -vc ' lo:')" 0 "nothing left in the pod"
}

# ---- the config on DEL ----

for brk in '.plugins[0].vlna = 5|typo in a key' '.plugins[0].vlan = 5000|vlan out of range' \
	   'del(.plugins[0].deviceID, .plugins[0].pciBusID)|no deviceID' \
	   '.plugins[0].logLevel = "verbose"|bad logLevel' '.plugins[0].mtu = "jumbo"|mtu not a number' \
	   '.plugins[0].rdma = "sometimes"|bad rdma' '.plugins[0].logFile = "relative.log"|relative logFile'; do
	t_begin "config broken on DEL ($(echo "${brk#*|}")): DEL finishes from the record"
	setup
	add || continue
	nad "${brk%|*}" > "$CONF"
	del
	assert_home
done

t_begin "stateDir broken on DEL (relative): the VF comes home from the pod by deviceID and CNI_IFNAME"
setup
add
nad '.plugins[0].stateDir = "relative/state"' > "$CONF"
del
t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT)"
t_contains "$T_ERR" "stateDir: \"relative/state\" must be an absolute path" "the log names stateDir"
t_contains "$T_ERR" "falling back on deviceID $(sr_vf 0) and CNI_IFNAME net1" "the log says what it falls back on"
t_eq "$(find "$POOL" -name 'c-*' -o -name 'a-*' | wc -l)" 0 "pool-ipam's reservation released"
t_eq "$(sr_host_link "${SR_PFNET}v0" | cut -d' ' -f1)" "${SR_PFNET}v0" "VF home under the fallback name <PF>v0"
t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vf=0 $MLX5_DEFAULT" "PF-side settings back to the driver's defaults"
t_begin "... and once the pod is gone, the next ADD of the VF restores it from the record left in stateDir"
# The RDMA device left the pod with its namespace, as the kernel does.
ip netns del "$(basename "$pod")"
echo "3 rdma_net1_p59s0f2 $(sr_net 0) $HOST_NS" > "$RF/rdma.devs"
dev=$(readlink -f "$SR_SYS/bus/pci/devices/$(sr_vf 0)")
mv "$dev/net/$(sr_net 0)" "$dev/net/${SR_PFNET}v0"
nad > "$CONF"
pod=$(t_netns)
pod_ns=$(stat -L -c %i "$pod")
CID=fedcba9876543210
add
t_contains "$T_ERR" "taking over the stale claim" "ADD takes the stale claim over"
mv "$dev/net/${SR_PFNET}v0" "$dev/net/$(sr_net 0)"
del
assert_home
CID=0123456789abcdef

t_begin "an environment path that fails validation on DEL (SRIOV_RDMA_SYSFS_ROOT): ignored, DEL finishes"
setup
add
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=$CID CNI_ARGS="$ARGS" \
	SRIOV_RDMA_SYSFS_ROOT=relative/sys
t_contains "$T_ERR" "SRIOV_RDMA_SYSFS_ROOT: \"relative/sys\" must be an absolute path" "the log names the variable"
# The host's own /sys has no PCI device $SR_PF: to this DEL the PF is gone, and no PF is asked.
t_contains "$T_ERR" "its PF $SR_PFNET is gone (PCI device $SR_PF)" "the PF is looked for by its PCI address"
PF_GONE=1 assert_home

# ---- the prevResult on DEL ----

for prev in '"junk"' '{"ips": "10.80.0.2/24"}' '{"interfaces": 5, "ips": [{"address": 7}]}'; do
	t_begin "prevResult $prev on DEL: ignored"
	setup
	add || continue
	t_exec sriov-rdma DEL "$(sr_plugin_conf "$CONF" | jq -c --argjson p "$prev" '. + {prevResult: $p}')" \
		CNI_CONTAINERID=$CID CNI_NETNS="$pod" CNI_IFNAME=net1 CNI_ARGS="$ARGS"
	assert_home
done

# ---- the record ----

for brk in 'rm|missing' 'corrupt|not JSON' 'truncate|truncated' 'crc|bad checksum' \
	   'vfIndex|vfIndex 1e300' 'vlan|vlan -1' 'mtu|hostMtu 0.5' 'state|linkState 7' \
	   'rate|maxTxRate 2^40' 'rdma|rdmaIndex -3' 'dir|a directory in its place'; do
	t_begin "record unreadable ($(echo "${brk#*|}")): DEL falls back on the config and the marker"
	setup
	add || continue
	f=$(record)
	case ${brk%|*} in
	rm) rm "$f" ;;
	corrupt) echo '{"version": 1, "contai' > "$f" ;;
	truncate) truncate -s 200 "$f" ;;
	crc) sed -i 's/"net1"/"net2"/' "$f" ;;
	vfIndex) reseal '.vfIndex = 1e300' ;;
	vlan) reseal '.vfOriginal.vlan = -1' ;;
	mtu) reseal '.hostMtu = 0.5' ;;
	state) reseal '.vfOriginal.linkState = 7' ;;
	rate) reseal '.vfApplied.maxTxRate = 1099511627776' ;;
	rdma) reseal '.rdmaIndex = -3' ;;
	dir) rm "$f" && mkdir "$f" ;;
	esac
	del
	t_contains "$T_ERR" "falling back on deviceID $(sr_vf 0) and CNI_IFNAME net1" "the log says so"
	assert_home
done

t_begin "record and marker both unreadable: the VF comes home as <PF>v0, PF-side settings to the defaults"
setup
add
echo garbage > "$(record)"
echo garbage > "$(marker)"
del
t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT)"
t_contains "$T_ERR" "(its host name, MAC and MTU are not known)" "the log says what is not known"
t_eq "$(find "$POOL" -name 'c-*' -o -name 'a-*' | wc -l)" 0 "pool-ipam's reservation released"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no marker"
t_eq "$(sr_host_link "${SR_PFNET}v0" | cut -d' ' -f1)" "${SR_PFNET}v0" "VF home under the fallback name"
t_eq "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vf=0 $MLX5_DEFAULT" "PF-side settings back to the driver's defaults"
ip link set "${SR_PFNET}v0" name "$(sr_net 0)"

# ---- the state directory ----

t_begin "the state directory's pci/ replaced by a file: DEL restores from the record without the lock"
setup
add
rm -rf "$SR_STATE/pci"
touch "$SR_STATE/pci"
del
rm -f "$SR_STATE/pci"
assert_home

t_begin "leftover temporary files in the state directory: ignored"
setup
add
touch "$SR_STATE/.tmp.99999.0" "$SR_STATE/pci/.tmp.99999.1"
del
rm -f "$SR_STATE/.tmp.99999.0" "$SR_STATE/pci/.tmp.99999.1"
assert_home

t_begin "stateDir replaced by a symlink: refused, the VF comes home from the pod"
setup
add
mv "$SR_STATE" "$T_TMP/state.real"
ln -s "$T_TMP/state.real" "$SR_STATE"
del
t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT)"
t_eq "$(find "$POOL" -name 'c-*' -o -name 'a-*' | wc -l)" 0 "pool-ipam's reservation released"
t_eq "$(sr_host_link "${SR_PFNET}v0" | cut -d' ' -f1)" "${SR_PFNET}v0" "VF home under the fallback name"
rm "$SR_STATE"
mv "$T_TMP/state.real" "$SR_STATE"
ip link set "${SR_PFNET}v0" name "$(sr_net 0)"

# ---- the netns, the VF, the PF ----

t_begin "DRA shape: one plugin config, ifname vfnetN, netns deleted before DEL"
# (N: unique on this host, since the interface comes out on the host)
DRA_IF=vfnet$$
setup
jq '.plugins[0] + {cniVersion: "1.0.0", name: "vfnet"} | del(.pciBusID)' "$CONF" > "$T_TMP/dra.conf"
CONF=$T_TMP/dra.conf
add $DRA_IF
# What the kernel does when the pod's namespace goes: the VF and its RDMA
# device back in the host's namespace, under the names they had in the pod.
ip -n "$(basename "$pod")" link set $DRA_IF netns 1
dev=$(readlink -f "$SR_SYS/bus/pci/devices/$(sr_vf 0)")
mv "$dev/net/$(sr_net 0)" "$dev/net/$DRA_IF"
ip netns del "$(basename "$pod")"
echo "3 rdma_net1_p59s0f2 $DRA_IF $HOST_NS" > "$RF/rdma.devs"
del "$pod" $DRA_IF
mv "$dev/net/$DRA_IF" "$dev/net/$(sr_net 0)"
sed -i "s/ $DRA_IF / $(sr_net 0) /" "$RF/rdma.devs"
t_eq "$(sr_host_link $DRA_IF)" "" "no $DRA_IF left on the host"
assert_home
CONF=$T_TMP/nad.conflist

t_begin "the VF's netdev gone: DEL finishes"
setup
add
ip -n "$(basename "$pod")" link del net1
del
assert_released
t_contains "$T_ERR" "neither in the pod nor on the host" "the log says so"

t_begin "the VF removed (sriov_numvfs lowered): DEL finishes"
setup
add
ip -n "$(basename "$pod")" link del net1
dev=$(readlink -f "$SR_SYS/bus/pci/devices/$(sr_vf 0)")
rm -rf "$dev" "$SR_SYS/bus/pci/devices/$(sr_vf 0)" "$(dirname "$dev")/$SR_PF/virtfn0"
sed -i '/^vf=0 /d' "$SR_FAKE/$SR_PFNET.vfs"
del
t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT $T_ERR)"
t_contains "$T_ERR" "has no VF 0 any more" "the log says the VF is gone"
t_eq "$(find "$POOL" -name 'c-*' -o -name 'a-*' | wc -l)" 0 "pool-ipam's reservation released"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"

t_begin "the PF gone: DEL finishes and brings the VF home"
setup
add
mv "$SR_FAKE/$SR_PFNET.vfs" "$T_TMP/pf.vfs"
rm -rf "$(readlink -f "$SR_SYS/bus/pci/devices/$SR_PF")/net/$SR_PFNET" "$SR_SYS/class/net/$SR_PFNET"
del
t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT $T_ERR)"
t_contains "$T_ERR" "its PF $SR_PFNET is gone" "the log says the PF is gone"
PF_GONE=1 assert_home

t_done
