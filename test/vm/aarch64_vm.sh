#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The aarch64 build on an aarch64 kernel, inside scripts/vm (VM_ARCH=aarch64:
# Debian's arm64 kernel on QEMU's virt machine, the arm64 Debian 12 userland
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
#      the bin dir;
#   4. with VM_IGB=1, those release plugins on QEMU's igb: a real PF whose
#      driver parses, on this kernel, the VF settings sriov-rdma encodes, and
#      answers them back in its VF list.
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

t_begin "the stand-in VF: ADD, CHECK and DEL of the aarch64 plugins, PF settings, RDMA device, pool-ipam"
sr_setup 2
pod=$(t_netns)
sr_full_setup "$RF" "$HOST_NS" "$CONF" "$POOL" "$T_TMP/devinfo"
orig=$(sr_host_link "$(sr_net 1)")
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
sr_full_attached "$pod" "$(t_jq '.ips[0].address')" "$RF" "$T_TMP/devinfo/node-c1_net1" "$T_TMP/pool"
with_prev=$(jq -c --argjson r "$result" '. + {prevResult: $r}' <<< "$conf")
plugin CHECK "$with_prev"
t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
plugin DEL "$with_prev"
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
sr_full_released "$orig" "$RF" "$HOST_NS" "$T_TMP/devinfo" "$T_TMP/pool"
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

# 4. The release on a real PF. Nothing of the stand-in's: no injected sysfs
# root, no fake PF.
unset SRIOV_RDMA_SYSFS_ROOT SRIOV_RDMA_PF_FAKE_DIR
if [ "${VM_IGB:-0}" -ge 1 ]; then
	# shellcheck source=SCRIPTDIR/../../scripts/igb-guest.sh
	. "$SOURCE_DIR/scripts/igb-guest.sh"
	t_begin "the aarch64 release on QEMU's igb: ADD sets VF 1's mac, vlan and qos, spoofchk, trust and max_tx_rate on the PF; CHECK; DEL puts its PF line back"
	pf_bdf=$(basename "$(ls -d /sys/bus/pci/drivers/igb/0000:* | head -n 1)")
	pf=$(ls "/sys/bus/pci/devices/$pf_bdf/net")
	ip link set "$pf" up
	wait_for 300 carrier "$pf" || t_fail "$pf never got carrier"
	echo 2 > "/sys/bus/pci/devices/$pf_bdf/sriov_numvfs" || t_fail "$pf: no VFs"
	vf=$(basename "$(readlink "/sys/bus/pci/devices/$pf_bdf/virtfn1")")
	wait_for 300 has_netdev "$vf" || t_fail "VF $vf has no netdev"
	vf_line() { ip link show "$pf" | sed -n 's/^ *vf 1 //p'; }
	before=$(vf_line)
	igbpod=$(t_netns)
	iconf="{\"cniVersion\":\"1.0.0\",\"name\":\"igb\",\"type\":\"sriov-rdma\",\"deviceID\":\"$vf\",\"stateDir\":\"$T_TMP/igb-state\",\"mac\":\"02:aa:bb:cc:dd:01\",\"vlan\":100,\"vlanQoS\":3,\"spoofchk\":\"off\",\"trust\":\"on\",\"max_tx_rate\":100,\"ipam\":{\"type\":\"pool-ipam\",\"dataDir\":\"$T_TMP/igb-pool\",\"ranges\":[[{\"subnet\":\"10.80.0.0/24\"}]]}}"
	igb() { # COMMAND CONFIG
		T_OUT=$(printf '%s' "$2" | CNI_COMMAND=$1 CNI_CONTAINERID=i1 CNI_IFNAME=net1 CNI_NETNS="$igbpod" \
			CNI_PATH=$bin "$bin/sriov-rdma" 2>"$T_TMP/stderr")
		T_RC=$?
		T_ERR=$(cat "$T_TMP/stderr")
	}
	igb ADD "$iconf"
	t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
	iresult=$T_OUT
	iaddr=$(t_jq '.ips[0].address')
	line=$(vf_line)
	t_contains "$line" "link/ether 02:aa:bb:cc:dd:01" "PF line: mac ($line)"
	t_contains "$line" "vlan 100, qos 3" "PF line: vlan and qos"
	t_contains "$line" "spoof checking off" "PF line: spoofchk"
	t_contains "$line" "trust on" "PF line: trust"
	t_contains "$line" "max_tx_rate 100Mbps" "PF line: max_tx_rate"
	t_contains "$(ip -n "$(basename "$igbpod")" -br addr show net1)" "${iaddr:-none}" "the address on net1 in the pod"
	t_eq "$(vf_netdev_of "$vf")" "" "the VF's netdev left the host"
	igb CHECK "$(jq -c --argjson r "$iresult" '. + {prevResult: $r}' <<< "$iconf")"
	t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
	igb DEL "$iconf"
	t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
	# igb reports a new VF's MAC as zero until the VF's driver reports its
	# netdev's own (nothing pinned either way): either is the line before.
	line=$(vf_line)
	mac=$(cat "/sys/bus/pci/devices/$vf/net/"*/address 2>/dev/null)
	[ "$line" = "$before" ] ||
		t_eq "$line" "$(sed "s|link/ether 00:00:00:00:00:00 |link/ether $mac |" <<< "$before")" "VF 1's PF line after DEL"
	t_eq "$(vf_netdev_of "$vf" | wc -l)" 1 "the VF's netdev home"
	t_eq "$(find "$T_TMP/igb-pool" -name 'a-*' | wc -l)" 0 "the address released"
fi

t_done
