#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The aarch64 build on an aarch64 kernel, inside scripts/vm (VM_ARCH=aarch64:
# Debian's arm64 kernel on QEMU's virt machine, the arm64 Debian 11 userland
# of test/vm/aarch64-root.sh as its root), one boot:
#
#   1. the unit programs QEMU's user mode cannot carry (VM_ARG_UNIT, colon-
#      separated; test/unit/meson.build says which and why), on the kernel
#      they need;
#   2. the netns suite's stand-in VF: sriov-rdma and pool-ipam of the aarch64
#      test build, ADD, CHECK and DEL with PF settings, an RDMA device, a
#      device-info file and pool-ipam's address, as a runtime runs them;
#   3. the aarch64 release tarball (VM_ARG_TARBALL, scripts/package --arch
#      aarch64) installed by its own scripts/install, its plugins run from
#      the bin dir.
if [ -z "${VM_GUEST:-}" ]; then
	echo "SKIP: runs inside the aarch64 VM (VM_ARCH=aarch64 scripts/vm run $0)"
	exit 77
fi
if [ -z "${VM_ARG_TARBALL:-}" ]; then
	echo "SKIP: needs VM_ARG_TARBALL, the aarch64 release tarball (scripts/package --arch aarch64)"
	exit 77
fi
. "$(dirname "$0")/../netns/sriov_lib.sh"

echo "# $(uname -srm)"

t_begin "the guest is an aarch64 kernel"
t_eq "$(uname -m)" aarch64 "uname -m"

# 1. The unit programs, each whole: it prints its cases and exits non-zero on a failure.
IFS=: read -r -a programs <<< "${VM_ARG_UNIT:-}"
for prog in "${programs[@]}"; do
	t_begin "unit $(basename "$prog") on the aarch64 kernel"
	out=$("$prog" 2>&1)
	rc=$?
	sed 's/^/    /' <<< "$out"
	t_eq "$rc" 0 "$(basename "$prog") exit status"
	t_not_contains "$out" "not ok" "$(basename "$prog") cases"
done

# 2. The stand-in VF.
CONF=$T_TMP/net.conflist
RF=$T_TMP/rdma-fake
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
POOL="{\"type\": \"pool-ipam\", \"ranges\": [[{\"subnet\": \"10.66.0.0/24\"}]], \"dataDir\": \"$T_TMP/pool\"}"
leased() { find "$T_TMP/pool" -name 'a-10.66.*' 2>/dev/null | wc -l; }

t_begin "the stand-in VF: ADD, CHECK and DEL of the aarch64 plugins, PF settings, RDMA device, pool-ipam"
sr_setup 2
pod=$(t_netns)
pod_ns=$(stat -L -c %i "$pod")
mkdir -p "$RF" "$T_TMP/devinfo"
echo exclusive > "$RF/rdma.mode"
echo "3 mlx5_3 $(sr_net 1) $HOST_NS" > "$RF/rdma.devs"
export SRIOV_RDMA_RDMA_FAKE_DIR=$RF
orig=$(sr_host_link "$(sr_net 1)")
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 1)\", \"vlan\": 100, \"spoofchk\": \"off\", \"trust\": \"on\", \"mac\": \"02:11:22:33:44:55\", \"mtu\": 1400, \"rdma\": \"exclusive\", \"capabilities\": {\"CNIDeviceInfoFile\": true}" "$POOL"
# The plugin's config as libcni sends it: the capability's runtimeConfig,
# and from CHECK on the cached result.
conf=$(sr_plugin_conf "$CONF" | jq -c --arg f "$T_TMP/devinfo/node-c1_net1" \
	'. + {runtimeConfig: {CNIDeviceInfoFile: $f}}')
plugin() { # COMMAND CONFIG
	t_exec sriov-rdma "$1" "$2" CNI_CONTAINERID=c1 CNI_IFNAME=net1 CNI_NETNS="$pod"
}
plugin ADD "$conf"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
result=$T_OUT
addr=$(t_jq '.ips[0].address')
t_contains "$addr" "10.66.0." "pool-ipam's address in the result"
t_contains "$(ip -n "$(basename "$pod")" -br addr show net1)" "$addr" "the address in the pod"
t_eq "$(sr_pod_link "$pod" net1)" "net1 02:11:22:33:44:55 1400" "the VF in the pod: name, MAC, MTU"
calls=$(sr_calls)
t_contains "$calls" "vf=1 vlan=100" "vlan asked of the PF"
t_contains "$calls" "vf=1 mac=02:11:22:33:44:55" "admin MAC asked of the PF"
t_contains "$calls" "vf=1 spoofchk=off" "spoof checking asked of the PF"
t_eq "$(cut -d' ' -f4 "$RF/rdma.devs")" "$pod_ns" "the RDMA device in the pod"
t_eq "$(jq -r '.pci["rdma-device"]' "$T_TMP/devinfo/node-c1_net1")" mlx5_3 "device-info names it"
t_eq "$(leased)" 1 "one address held"
with_prev=$(jq -c --argjson r "$result" '. + {prevResult: $r}' <<< "$conf")
plugin CHECK "$with_prev"
t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
plugin DEL "$with_prev"
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
t_eq "$(sr_host_link "$(sr_net 1)")" "$orig" "the VF back on the host: name, MAC, MTU"
t_eq "$(grep '^vf=1 ' "$SR_FAKE/$SR_PFNET.vfs")" \
	"$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs" | sed 's/^vf=0/vf=1/')" "VF 1's PF settings as before"
t_eq "$(cat "$RF/rdma.devs")" "3 mlx5_3 $(sr_net 1) $HOST_NS" "the RDMA device home under its name"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
t_eq "$(leased)" 0 "the address released"
t_eq "$(ls "$T_TMP/devinfo")" "" "the device-info file removed"
unset SRIOV_RDMA_RDMA_FAKE_DIR

# 3. The release.
t_begin "the aarch64 release: the tarball's scripts/install, then VERSION and pool-ipam from its bin dir"
top=$(basename "$VM_ARG_TARBALL" .tar.gz)
tar -xzf "$VM_ARG_TARBALL" -C "$T_TMP"
bin=$T_TMP/opt/cni/bin
out=$("$T_TMP/$top/scripts/install" --bin-dir "$bin" --prefix "" 2>&1)
t_eq "$?" 0 "scripts/install ($out)"
for p in pool-ipam sriov-rdma; do
	cmp -s "$bin/$p" "$T_TMP/$top/bin/$p" || t_fail "$p is not the tarball's"
	T_OUT=$(printf '{"cniVersion":"1.1.0"}' | CNI_COMMAND=VERSION "$bin/$p" 2>&1)
	t_eq "$(t_jq '.supportedVersions | join(" ")')" "0.3.0 0.3.1 0.4.0 1.0.0 1.1.0" "$p VERSION ($T_OUT)"
done
rel() { # COMMAND CONFIG
	T_OUT=$(printf '%s' "$2" | CNI_COMMAND=$1 CNI_CONTAINERID=r1 CNI_IFNAME=net1 CNI_NETNS="$pod" \
		CNI_PATH=$bin "$bin/pool-ipam" 2>"$T_TMP/stderr")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/stderr")
}
rconf="{\"cniVersion\":\"1.1.0\",\"name\":\"rel\",\"type\":\"pool-ipam\",\"ipam\":{\"type\":\"pool-ipam\",\"dataDir\":\"$T_TMP/rel\",\"ranges\":[[{\"subnet\":\"10.20.0.0/29\"}]]}}"
rel ADD "$rconf"
t_eq "$T_RC" 0 "pool-ipam ADD ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address')" 10.20.0.1/29 "address"
rel CHECK "$(jq -c --argjson r "$T_OUT" '. + {prevResult: $r}' <<< "$rconf")"
t_eq "$T_RC" 0 "pool-ipam CHECK ($T_OUT $T_ERR)"
rel DEL "$rconf"
t_eq "$T_RC" 0 "pool-ipam DEL ($T_OUT $T_ERR)"
t_eq "$(find "$T_TMP/rel" -name 'c-*' | wc -l)" 0 "the address released"

t_done
