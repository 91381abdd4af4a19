#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# scripts/rdma-doctor on fake nodes: a sysfs tree modelled on a ConnectX-7
# PF with two VFs (PCI functions, virtfn/physfn links, drivers, netdevs,
# RDMA devices with port state and RoCE GID tables, module parameters) and
# a proc root with a kernel command line and a module list. Each test
# breaks one thing an operator could get wrong and checks the doctor names
# it, says the fix, and sets the exit status.
. "$(dirname "$0")/lib.sh"

DOCTOR=$SOURCE_DIR/scripts/rdma-doctor
PF=0000:3b:00.0
VF0=0000:3b:00.2
VF1=0000:3b:00.3
# The attachments check reads the node's stateDir unless told another:
# each run gets an empty one of its own, so no record the host holds
# reaches a test.
STATE=$T_TMP/doctor-state
mkdir -p "$STATE"

# write FILE CONTENT: create parent directories and the file.
write() {
	[ -d "${1%/*}" ] || mkdir -p "${1%/*}"
	printf '%s\n' "$2" > "$1"
}

# rdma_dev DEVDIR STATE [GID3 TYPE3]: port 1 with link-local GIDs 0 (v1)
# and 1 (v2) and, when given, an IPv4-mapped GID at 2 (v1) and 3 (TYPE3).
rdma_dev() {
	local d=$1/ports/1
	write "$d/state" "$2"
	write "$d/link_layer" Ethernet
	write "$d/gids/0" fe80:0000:0000:0000:0a88:66ff:fe01:0203
	write "$d/gid_attrs/types/0" "IB/RoCE v1"
	write "$d/gids/1" fe80:0000:0000:0000:0a88:66ff:fe01:0203
	write "$d/gid_attrs/types/1" "RoCE v2"
	if [ $# -ge 3 ]; then
		write "$d/gids/2" "$3"
		write "$d/gid_attrs/types/2" "IB/RoCE v1"
		write "$d/gids/3" "$3"
		write "$d/gid_attrs/types/3" "${4:-RoCE v2}"
	fi
}

# node NAME [MKSYSFS-OPTION...]: a healthy node in $T_TMP/NAME/{sys,proc}
# (test/fixtures/mksysfs lays out the PCI functions, drivers, netdevs and
# RDMA devices; this adds ports, GIDs, modules and the proc files). Tests
# then break one thing.
node() {
	local n=$T_TMP/$1 ib
	shift
	rm -rf "$n"
	mkdir -p "$n/proc"
	SYS=$n/sys
	PROCR=$n/proc
	"$SOURCE_DIR/test/fixtures/mksysfs" "$SYS" --pf $PF ens1f0np0 \
		--vf 0 $VF0 ens1f0v0 --vf 1 $VF1 ens1f0v1 "$@" || return 1
	ib=$SYS/bus/pci/devices
	rdma_dev "$ib/$PF/infiniband/mlx5_0" "4: ACTIVE"
	[ ! -d "$ib/$VF0/infiniband/mlx5_2" ] ||
		rdma_dev "$ib/$VF0/infiniband/mlx5_2" "4: ACTIVE" 0000:0000:0000:0000:0000:ffff:c0a8:0a02
	[ ! -d "$ib/$VF1/infiniband/mlx5_3" ] ||
		rdma_dev "$ib/$VF1/infiniband/mlx5_3" "4: ACTIVE" 0000:0000:0000:0000:0000:ffff:c0a8:0a03
	write "$SYS/module/ib_core/parameters/netns_mode" N
	write "$PROCR/cmdline" "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on iommu=pt"
	printf '%s\n' "nvidia_peermem 16384 0 - Live 0x0000000000000000" \
		"nvidia 56823808 1 nvidia_peermem, Live 0x0000000000000000" \
		"mlx5_ib 450560 0 - Live 0x0000000000000000" > "$PROCR/modules"
	write "$PROCR/self/limits" "Max locked memory         unlimited            unlimited            bytes"
}

# on_node ARGS...: the doctor on the current node's roots and the test's stateDir.
on_node() { "$DOCTOR" --state-dir "$STATE" --sysfs-root "$SYS" --proc-root "$PROCR" "$@"; }

# doctor [ARGS...]: run it on the current node; output in OUT, status in RC.
doctor() {
	OUT=$(on_node --cni-bin-dir "" "$@" 2>&1)
	RC=$?
}

t_begin "healthy node: exit 0, every check OK, NCCL values right"
node healthy
doctor
t_eq "$RC" 0 "exit status"
t_contains "$OUT" "OK iommu: passthrough" "iommu"
t_contains "$OUT" "OK memlock: max locked memory is unlimited" "memlock"
t_contains "$OUT" "OK peermem: nvidia_peermem is loaded" "peermem"
t_contains "$OUT" "OK rdma-netns: exclusive" "netns mode"
t_contains "$OUT" "OK attachments: 0 attachments in $STATE" "attachments"
t_contains "$OUT" "OK pf $PF (ens1f0np0): 2 of 16 VFs enabled" "pf"
t_contains "$OUT" "OK vf $VF0: netdev ens1f0v0, RDMA mlx5_2, port ACTIVE, Ethernet, RoCE v2 IPv4 GID index 3" "vf0"
t_contains "$OUT" "OK vf $VF1: netdev ens1f0v1, RDMA mlx5_3, port ACTIVE, Ethernet, RoCE v2 IPv4 GID index 3" "vf1"
t_contains "$OUT" "INFO nccl: NCCL_IB_HCA=mlx5_2,mlx5_3" "hca"
t_contains "$OUT" "INFO nccl: NCCL_IB_GID_INDEX=3" "gid index"
t_eq "$(grep -c '^WARN' <<< "$OUT")" 0 "warnings"
t_eq "$(grep -c '^FAIL' <<< "$OUT")" 0 "failures"
t_contains "$OUT" "0 FAIL, 0 WARN, 8 OK" "summary"

t_begin "--json: the same checks as a JSON array"
doctor --json
t_eq "$RC" 0 "exit status"
t_eq "$(printf '%s' "$OUT" | jq -r 'length')" 10 "entries (8 checks, 2 NCCL lines)"
t_eq "$(printf '%s' "$OUT" | jq -r '[.[] | select(.level == "OK")] | length')" 8 "OK entries"
t_eq "$(printf '%s' "$OUT" | jq -r '.[] | select(.check == "vf '$VF0'") | .what')" \
	"netdev ens1f0v0, RDMA mlx5_2, port ACTIVE, Ethernet, RoCE v2 IPv4 GID index 3" "vf0 entry"
t_eq "$(printf '%s' "$OUT" | jq -r '[.[] | select(.check == "nccl") | .what] | join(" ")')" \
	"NCCL_IB_HCA=mlx5_2,mlx5_3 NCCL_IB_GID_INDEX=3" "nccl entries"

t_begin "--json: quotes and backslashes in a path stay valid JSON"
weird=$T_TMP/'we"ird\dir'
mkdir -p "$weird"
OUT=$(on_node --cni-bin-dir "$weird" --json 2>&1)
t_eq "$(printf '%s' "$OUT" | jq -r '.[] | select(.check == "plugin pool-ipam") | .what')" \
	"$weird/pool-ipam is not installed" "escaped path"

t_begin "PF with 0 VFs: FAIL with how to enable them, exit 1"
node novfs
write "$SYS/bus/pci/devices/$PF/sriov_numvfs" 0
rm "$SYS/bus/pci/devices/$PF/virtfn0" "$SYS/bus/pci/devices/$PF/virtfn1"
doctor
t_eq "$RC" 1 "exit status"
t_contains "$OUT" "FAIL pf $PF (ens1f0np0): 0 of 16 VFs enabled — fix: echo 8 > /sys/bus/pci/devices/$PF/sriov_numvfs" "pf line"
t_not_contains "$OUT" "vf $VF0" "no VF lines"
t_contains "$OUT" "NCCL_IB_HCA" "nccl line"
t_not_contains "$OUT" "NCCL_IB_HCA=" "no HCA suggested"

t_begin "SR-IOV disabled in firmware: FAIL naming mlxconfig"
node nofw
write "$SYS/bus/pci/devices/$PF/sriov_totalvfs" 0
write "$SYS/bus/pci/devices/$PF/sriov_numvfs" 0
doctor
t_eq "$RC" 1 "exit status"
t_contains "$OUT" "FAIL pf $PF (ens1f0np0): SR-IOV is disabled in the NIC firmware" "pf line"
t_contains "$OUT" "mlxconfig -d $PF set SRIOV_EN=1" "fix"

t_begin "shared RDMA netns mode: WARN with both ways to switch, exit 0"
node shared
write "$SYS/module/ib_core/parameters/netns_mode" Y
doctor
t_eq "$RC" 0 "exit status"
t_contains "$OUT" "WARN rdma-netns: shared:" "netns line"
t_contains "$OUT" 'rdma "exclusive" fails ADD (CNI error 105)' "what exclusive does"
t_contains "$OUT" "options ib_core netns_mode=0" "module option"
t_contains "$OUT" "rdma system set netns exclusive" "rdma tool"

t_begin "no RDMA core: FAIL; RDMA devices but no mode to read: WARN"
node noib
rm -r "$SYS/module/ib_core"
doctor
t_eq "$RC" 0 "exit status (devices present)"
t_contains "$OUT" "WARN rdma-netns: cannot tell the RDMA netns mode" "unknown mode"
rm -r "$SYS/class/infiniband"/* "$SYS/bus/pci/devices/"*/infiniband
doctor
t_eq "$RC" 1 "exit status"
t_contains "$OUT" "FAIL rdma-netns: no RDMA core in this kernel" "netns line"

t_begin "NVIDIA driver without nvidia_peermem: FAIL with modprobe, exit 1"
node nopeer
grep -v '^nvidia_peermem ' "$PROCR/modules" > "$PROCR/m" && mv "$PROCR/m" "$PROCR/modules"
doctor
t_eq "$RC" 1 "exit status"
t_contains "$OUT" "FAIL peermem: the NVIDIA driver is loaded but nvidia_peermem is not" "peermem line"
t_contains "$OUT" "modprobe nvidia-peermem" "fix"

t_begin "nvidia_peermem seen through sysfs /module when /proc/modules lacks it"
node peersys
: > "$PROCR/modules"
mkdir -p "$SYS/module/nvidia" "$SYS/module/nvidia_peermem"
doctor
t_eq "$RC" 0 "exit status"
t_contains "$OUT" "OK peermem" "peermem line"

t_begin "no NVIDIA driver at all: WARN only"
node nogpu
: > "$PROCR/modules"
doctor
t_eq "$RC" 0 "exit status"
t_contains "$OUT" "WARN peermem: no NVIDIA driver loaded" "peermem line"

t_begin "IOMMU in translation mode (intel_iommu=on without iommu=pt): WARN naming IBV_WC_LOC_PROT_ERR"
node iommu
write "$PROCR/cmdline" "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on"
doctor
t_eq "$RC" 0 "exit status"
t_contains "$OUT" "WARN iommu: the kernel command line enables the IOMMU without iommu=pt" "iommu line"
t_contains "$OUT" "IBV_WC_LOC_PROT_ERR" "the symptom"
t_contains "$OUT" "fix: add iommu=pt" "fix"

t_begin "IOMMU group type DMA overrides a command line that says iommu=pt"
node iommugrp
for b in $PF $VF0 $VF1; do
	write "$SYS/kernel/iommu_groups/$b/type" DMA-FQ
	ln -s "$SYS/kernel/iommu_groups/$b" "$SYS/bus/pci/devices/$b/iommu_group"
done
doctor
t_contains "$OUT" "WARN iommu: IOMMU groups of the RDMA devices are in DMA translation mode" "iommu line"
for b in $PF $VF0 $VF1; do write "$SYS/kernel/iommu_groups/$b/type" identity; done
doctor
t_contains "$OUT" "OK iommu: passthrough" "identity groups"

t_begin "memlock below unlimited: WARN explaining IPC_LOCK"
node memlock
write "$PROCR/self/limits" "Max locked memory         8388608              8388608              bytes"
doctor
t_eq "$RC" 0 "exit status"
t_contains "$OUT" "WARN memlock: max locked memory is 8192 KiB" "memlock line"
t_contains "$OUT" "IPC_LOCK" "capability"
t_contains "$OUT" "/etc/security/limits.conf" "limits.conf"
# Without a limits file it asks the shell, as on a node.
rm "$PROCR/self/limits"
OUT=$(ulimit -l 64 && on_node --cni-bin-dir "" 2>&1)
t_contains "$OUT" "WARN memlock: max locked memory is 64 KiB" "ulimit -l"

t_begin "VF port down: WARN with the VF and how to bring it up"
node portdown
write "$SYS/bus/pci/devices/$VF1/infiniband/mlx5_3/ports/1/state" "1: DOWN"
doctor
t_eq "$RC" 0 "exit status"
t_contains "$OUT" "WARN vf $VF1: netdev ens1f0v1, RDMA mlx5_3, port DOWN" "vf line"
t_contains "$OUT" "ip link set ens1f0v1 up" "fix"
t_contains "$OUT" "ip link set ens1f0np0 vf 1 state auto" "VF link state on the PF"

t_begin "GID indexes that differ: said per device, no single value"
node gids
d=$SYS/bus/pci/devices/$VF1/infiniband/mlx5_3/ports/1
write "$d/gid_attrs/types/3" "IB/RoCE v1"
write "$d/gids/5" 0000:0000:0000:0000:0000:ffff:c0a8:0a03
write "$d/gid_attrs/types/5" "RoCE v2"
doctor
t_contains "$OUT" "RDMA mlx5_3, port ACTIVE, Ethernet, RoCE v2 IPv4 GID index 5" "vf1 index"
t_contains "$OUT" "NCCL_IB_GID_INDEX differs per device (mlx5_2:3 mlx5_3:5)" "per device"
t_not_contains "$OUT" "NCCL_IB_GID_INDEX=" "no single value"

t_begin "VFs without an IPv4 address yet: no GID index, a hint instead"
node noip
for v in $VF0 $VF1; do
	rm "$SYS/bus/pci/devices/$v/infiniband/"*/ports/1/gids/[23]
done
doctor
t_eq "$RC" 0 "exit status"
t_contains "$OUT" "no RoCE v2 IPv4 GID yet" "vf line"
t_contains "$OUT" "NCCL_IB_GID_INDEX: no VF has an IPv4 RoCE v2 GID on the host" "nccl hint"
t_contains "$OUT" "NCCL_IB_HCA=mlx5_2,mlx5_3" "hca still listed"

t_begin "VF in a pod, VF on vfio-pci, VF without driver, VF without RDMA device"
node vfstates
# A VF's netdev and RDMA device in a pod's namespace are not listed in the host's.
rm -r "$SYS/bus/pci/devices/$VF0/net" "$SYS/bus/pci/devices/$VF0/infiniband"
doctor
t_contains "$OUT" "OK vf $VF0: no netdev or RDMA device in this namespace: in use by a pod" "in a pod"
t_contains "$OUT" "NCCL_IB_HCA=mlx5_3" "only the free VF"
node unbound --driver $VF1 -
doctor
t_eq "$RC" 1 "exit status (unbound VF)"
t_contains "$OUT" "FAIL vf $VF1: bound to no driver" "unbound"
node dpdk --driver $VF1 vfio-pci
rm -r "$SYS/bus/pci/devices/$VF1/net" "$SYS/bus/pci/devices/$VF1/infiniband"
doctor
t_eq "$RC" 0 "exit status (DPDK VF)"
t_contains "$OUT" "OK vf $VF1: bound to vfio-pci (DPDK)" "dpdk"
node nordma --vf 2 0000:3b:00.4 ens1f0v2 -
doctor
t_contains "$OUT" "OK pf $PF (ens1f0np0): 3 of 16 VFs enabled" "third VF"
t_contains "$OUT" "WARN vf 0000:3b:00.4: netdev ens1f0v2, no RDMA device — fix: modprobe mlx5_ib" "no rdma dev"
node rdmaonly
rm -r "$SYS/bus/pci/devices/$VF1/net"
doctor
t_contains "$OUT" "WARN vf $VF1: RDMA device mlx5_3 but no netdev in this namespace" "split VF"

t_begin "no RDMA SR-IOV NIC at all: FAIL"
node empty
rm -rf "$SYS/devices" "$SYS/bus"
doctor
t_eq "$RC" 1 "exit status"
t_contains "$OUT" "FAIL sriov: no SR-IOV capable RDMA NIC" "sriov line"

t_begin "plugins: installed, missing, missing a shared library, needing a newer glibc"
node plugins
bin=$T_TMP/cni-bin-doctor
mkdir -p "$bin"
cp "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" "$bin/"
OUT=$(on_node --cni-bin-dir "$bin" 2>&1)
t_contains "$OUT" "OK plugin sriov-rdma: $bin/sriov-rdma is installed" "installed"
t_contains "$OUT" "WARN plugin pool-ipam: $bin/pool-ipam is not installed" "missing"
# The same binary asking for a library no host has (same length, so the
# ELF layout is unchanged).
LC_ALL=C sed 's/libc\.so\.6/libq.so.6/' "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" > "$bin/sriov-rdma"
OUT=$(on_node --cni-bin-dir "$bin" 2>&1)
RC=$?
t_eq "$RC" 1 "exit status"
t_contains "$OUT" "FAIL plugin sriov-rdma: $bin/sriov-rdma cannot start: $bin/sriov-rdma: error while loading shared libraries: libq.so.6: cannot open shared object file" \
	"the loader's reason"
t_contains "$OUT" "need glibc 2.28 or later and no other library" "the fix"
# The same binary asking for a glibc version no node has yet: what a build
# against a newer glibc meets on an older node.
want=$(readelf -V "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" | sed -n 's/.*Name: GLIBC_2\.\([0-9]*\) .*/\1/p' |
	sort -n | tail -n 1)
LC_ALL=C sed "s/GLIBC_2\.$want/GLIBC_9.$want/" "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" > "$bin/sriov-rdma"
OUT=$(on_node --cni-bin-dir "$bin" 2>&1)
t_eq "$?" 1 "exit status"
t_contains "$OUT" "FAIL plugin sriov-rdma: $bin/sriov-rdma cannot start: $bin/sriov-rdma: " "names the binary"
t_contains "$OUT" "version \`GLIBC_9.$want' not found" "the loader's reason"

t_begin "cluster pool: a kubeconfig whose identity RBAC does not allow is named as HTTP 403, with the ClusterRole to apply"
node ippool
t_kubeapi_start "$T_TMP/api" || exit 1
mkdir -p "$KUBEAPI_DIR/objects/nvidia-network-operator/ippools"
printf '%s' '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"rdma-pool","namespace":"nvidia-network-operator","resourceVersion":"7"},"spec":{"subnet":"10.230.0.0/16","perNodeBlockSize":250,"gateway":"10.230.0.1"},"status":{"allocations":[{"nodeName":"gpu-node-1","startIP":"10.230.0.1","endIP":"10.230.0.250"}]}}' \
	> "$KUBEAPI_DIR/objects/nvidia-network-operator/ippools/rdma-pool.json"
bin=$T_TMP/cni-bin-ippool
mkdir -p "$bin" "$T_TMP/doctor-store"
cp "$BUILD_DIR/plugins/pool-ipam/pool-ipam" "$bin/"
ippool_doctor() {
	OUT=$(on_node --cni-bin-dir "$bin" \
		--ippool nvidia-network-operator/rdma-pool --kubeconfig "$KUBEAPI_DIR/kubeconfig" \
		--node gpu-node-1 --store-dir "$T_TMP/doctor-store" 2>&1)
	RC=$?
}
echo 403 > "$KUBEAPI_DIR/objects/.status"
ippool_doctor
t_eq "$RC" 1 "exit status"
t_contains "$OUT" "FAIL ippool nvidia-network-operator/rdma-pool: forbidden by RBAC (HTTP 403): the identity in $KUBEAPI_DIR/kubeconfig may not get IPPool objects of nv-ipam.nvidia.com in namespace nvidia-network-operator" "names the 403 for what it is"
t_contains "$OUT" 'User "system:serviceaccount:kube-system:multus" cannot get resource "ippools"' "the API server's words"
t_contains "$OUT" "fix: kubectl apply -f conf/deploy/rbac.yaml" "the fix"
rm -f "$KUBEAPI_DIR/objects/.status"
ippool_doctor
t_eq "$RC" 0 "exit status once allowed ($OUT)"
t_contains "$OUT" "OK ippool nvidia-network-operator/rdma-pool: node gpu-node-1 reads its block of IPPool nvidia-network-operator/rdma-pool" "OK"
t_eq "$(find "$T_TMP/doctor-store" -mindepth 1 | wc -l)" 0 "the throwaway store is gone"

t_begin "attachments: each named with the release that wrote it; one the installed sriov-rdma refuses is a FAIL saying what to install"
node versions
bin=$T_TMP/cni-bin-versions
st=$T_TMP/versions-state
mkdir -p "$bin" "$st/pci"
cp "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" "$BUILD_DIR/plugins/pool-ipam/pool-ipam" "$bin/"
ver=$("$bin/sriov-rdma" --version | head -n 1)
# record FILE VERSION WRITER: an attachment record as a release wrote it (writer "" writes none).
record() {
	jq -nc --argjson v "$2" --arg w "$3" --arg c "${1%%:*}" '{version: $v, containerID: $c,
		ifname: "net1", netns: "", deviceID: "'$VF0'", pod: {namespace: "ns", name: "p"}}
		+ (if $w == "" then {} else {writtenBy: $w} end)' > "$st/$1"
}
record old1:net1.json 1 ""
record new1:net1.json 1 "sriov-rdma-cni 0.2.0"
record fut1:net1.json 2 "sriov-rdma-cni 9.0.0"
printf '{"version": 3, "writtenBy": "sriov-rdma-cni 9.1.0", "containerID": "fut1"}\n' > "$st/pci/$VF1"
: > "$st/pci/$VF1.lock"
OUT=$("$DOCTOR" --state-dir "$st" --sysfs-root "$SYS" --proc-root "$PROCR" --cni-bin-dir "$bin" 2>&1)
RC=$?
t_eq "$RC" 1 "exit status"
t_contains "$OUT" "OK plugin sriov-rdma: $bin/sriov-rdma is installed: $ver, reads attachment record 1, in-use marker 1, node config 1" \
	"the installed release and what it reads"
t_contains "$OUT" "INFO attachment old1:net1: VF $VF0 in (no netns), written by a release before 0.2.0 (attachment record version 1)" \
	"a record without writtenBy"
t_contains "$OUT" "INFO attachment new1:net1: VF $VF0 in (no netns), written by sriov-rdma-cni 0.2.0 (attachment record version 1)" \
	"a record of this release"
t_contains "$OUT" "FAIL attachment fut1:net1: VF $VF0's record $st/fut1:net1.json was written by sriov-rdma-cni 9.0.0 as attachment record version 2, which the installed $ver (reading up to version 1) refuses" \
	"a newer record"
t_contains "$OUT" 'fix: install sriov-rdma-cni 9.0.0 or later again (docs/upgrading.md, "Rolling back")' "what to install"
t_contains "$OUT" "FAIL in-use marker $VF1: VF $VF1's marker $st/pci/$VF1 was written by sriov-rdma-cni 9.1.0 as in-use marker version 3" \
	"a newer marker"
t_not_contains "$OUT" "in-use marker $VF1.lock" "its lock is no marker"

t_begin "bad usage: exit 2"
"$DOCTOR" --state-dir "$STATE" --sysfs-root "$T_TMP/does-not-exist" >/dev/null 2>&1
t_eq "$?" 2 "missing root"
"$DOCTOR" --frobnicate >/dev/null 2>&1
t_eq "$?" 2 "unknown option"

t_begin "InfiniBand VFs: a zero port GUID, a port the subnet manager left in INIT, the IPoIB mode"
node ib --ib --guid 1 02:c9:03:00:00:ab:cd:01
for d in "$SYS/bus/pci/devices/$VF0/infiniband/mlx5_2" "$SYS/bus/pci/devices/$VF1/infiniband/mlx5_3"; do
	write "$d/ports/1/link_layer" InfiniBand
done
write "$SYS/bus/pci/devices/$VF0/infiniband/mlx5_2/ports/1/gids/0" fe80:0000:0000:0000:0000:0000:0000:0000
write "$SYS/bus/pci/devices/$VF1/infiniband/mlx5_3/ports/1/gids/0" fe80:0000:0000:0000:02c9:0300:00ab:cd01
write "$SYS/bus/pci/devices/$VF1/infiniband/mlx5_3/ports/1/state" "2: INIT"
write "$SYS/bus/pci/devices/$VF1/net/ens1f0v1/mode" connected
doctor
t_contains "$OUT" "WARN vf $VF0: netdev ens1f0v0, RDMA mlx5_2, port ACTIVE, InfiniBand, IPoIB datagram mode (MTU up to 4092), port GUID all zeros" "zero GUID"
t_contains "$OUT" '"guid": "auto"' "says how to give one"
t_contains "$OUT" "ip link set ens1f0np0 vf 0 node_guid <GUID> port_guid <GUID>" "or by hand"
t_contains "$OUT" "WARN vf $VF1: netdev ens1f0v1, RDMA mlx5_3, port INIT, InfiniBand, IPoIB connected mode (MTU up to 65520)" "INIT port, connected mode"
t_contains "$OUT" "no subnet manager has configured the port" "names the subnet manager"
t_not_contains "$(grep "vf $VF1" <<<"$OUT")" "all zeros" "a VF with a GUID is not called zero"

t_done
