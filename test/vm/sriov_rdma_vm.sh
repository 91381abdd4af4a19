#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The sriov-rdma plugin's RDMA step against a real kernel, inside scripts/vm.
#
# A veth end (rv0) with an rxe device (rxe0) on top plays the VF: a sysfs
# tree under SRIOV_RDMA_SYSFS_ROOT models a ConnectX VF 0000:3b:02.1 whose
# net/ is rv0 and whose infiniband/ is rxe0, the PF's VF settings go to the
# recording fake (SRIOV_RDMA_PF_FAKE_DIR), and everything RDMA is the real
# kernel: RDMA netlink, the netns mode, libibverbs.
#
# rxe shows what mlx5 cannot show on a CI host, and the reverse: rxe refuses
# to change namespace (EOPNOTSUPP), so the exclusive-mode path ends in the
# rollback; and the kernel unregisters an rxe device whose netdev leaves the
# namespace, so after a shared-mode ADD rxe0 is gone by rxe's own doing.
# The shared-mode test therefore asserts what the plugin decided while rxe0
# still existed (its log names rxe0 with the index the kernel gives it), that
# it asked nothing of rxe0 (the devinfo and log report it as shared), and that
# rv0 comes back able to carry an RDMA device again. A successful move is
# mlx5-only: test/netns/sriov_rdma_fake.sh runs the same code over the fake.
if [ -z "${VM_GUEST:-}" ]; then
	echo "SKIP: runs inside the VM (scripts/vm run $0)"
	exit 77
fi
. "$SOURCE_DIR/test/netns/lib.sh"
PROBE=${VM_ARG_RDMA_PROBE:-$BUILD_DIR/test/vm/rdma_probe}
BDF=0000:3b:02.1
PF_BDF=0000:3b:00.0

modprobe rdma_rxe || { echo "SKIP: no rdma_rxe module"; exit 77; }

# The VF's sysfs tree; infiniband/ names the rxe device.
sys=$T_TMP/sys
mkdir -p "$sys/bus/pci/devices/$BDF/net/rv0" "$sys/bus/pci/devices/$BDF/infiniband/rxe0" \
	"$sys/bus/pci/devices/$PF_BDF/net/pf0" "$sys/bus/pci/drivers/mlx5_core" "$sys/class/net"
printf '0x15b3\n' >"$sys/bus/pci/devices/$BDF/vendor"
printf '0x101e\n' >"$sys/bus/pci/devices/$BDF/device"
printf '0x15b3\n' >"$sys/bus/pci/devices/$PF_BDF/vendor"
printf '0x101d\n' >"$sys/bus/pci/devices/$PF_BDF/device"
printf '1\n' >"$sys/bus/pci/devices/$PF_BDF/sriov_numvfs"
ln -s "../$PF_BDF" "$sys/bus/pci/devices/$BDF/physfn"
ln -s "../$BDF" "$sys/bus/pci/devices/$PF_BDF/virtfn0"
ln -s ../../../bus/pci/drivers/mlx5_core "$sys/bus/pci/devices/$BDF/driver"
ln -s ../../../bus/pci/drivers/mlx5_core "$sys/bus/pci/devices/$PF_BDF/driver"
pf_fake=$T_TMP/pf-fake
mkdir -p "$pf_fake"

setup_vf() {
	ip link add rv0 type veth peer name rv1 || return 1
	# The PCI device under the stand-in, as a VF's driver names it (test/fakes/standin_fake.c).
	ip link set dev rv0 alias "standin-pci:$BDF"
	ip link set rv1 up
	rdma link add rxe0 type rxe netdev rv0
}
teardown_vf() {
	rdma link delete rxe0 2>/dev/null
	ip link del rv0 2>/dev/null
	for ns in "${T_NETNS[@]}"; do ip -n "$ns" link del net1 2>/dev/null; done
	return 0
}
t_defer teardown_vf

conf() { # rdma-mode [extra JSON members]
	printf '{"cniVersion":"1.1.0","name":"rdmanet","type":"sriov-rdma","deviceID":"%s","rdma":"%s"%s}' \
		"$BDF" "$1" "${2:-}"
}
# An address for the pod, so ADD looks up its GID, and a device-info file.
POOL=',"ipam":{"type":"pool-ipam","ranges":[[{"subnet":"10.72.0.0/24"}]],"dataDir":"'$T_TMP/pool'"}'
DEVINFO=',"runtimeConfig":{"CNIDeviceInfoFile":"'$T_TMP/devinfo.json'"}'
rdma_index() { rdma dev show "$1" 2>/dev/null | sed -n 's/^\([0-9]*\): .*/\1/p'; }
plugin() { # COMMAND CONFIG NETNS
	t_exec sriov-rdma "$1" "$2" CNI_CONTAINERID=vmtest1 CNI_IFNAME=net1 CNI_NETNS="$3" \
		SRIOV_RDMA_SYSFS_ROOT="$sys" SRIOV_RDMA_PF_FAKE_DIR="$pf_fake"
}

t_begin "shared mode, rdma auto: ADD moves the netdev and leaves the RDMA device alone; DEL returns it"
setup_vf
idx=$(rdma_index rxe0)
ns=$(t_netns)
plugin ADD "$(conf auto ',"rdmaName":"rdma_net1"'"$POOL$DEVINFO")" "$ns"
t_eq "$T_RC" 0 "ADD exit code (stdout: $T_OUT, stderr: $T_ERR)"
t_eq "$(ip -n "${ns##*/}" -o link show net1 | wc -l)" 1 "net1 in the pod"
t_contains "$T_ERR" "RDMA device rxe0 (index $idx) stays on the host" "found by RDMA netlink, left in place"
t_contains "$T_ERR" "shared" "the log says the RDMA device stays shared"
t_contains "$T_ERR" "rdmaName applies in exclusive mode only" "rdmaName is not applied in shared mode"
t_eq "$(jq -r '.pci["rdma-device"]' "$T_TMP/devinfo.json")" rxe0 "devinfo rdma-device"
line=$(grep 'NCCL_IB_HCA=' <<< "$T_ERR")
t_contains "$line" "rv0 -> net1" "the log line names the netdev"
t_contains "$line" "rdma rxe0 (shared), NCCL_IB_HCA=rxe0" "the log line names the RDMA device"
# rxe0 went with rv0's move (rxe's own doing): no GID, and only a warning.
t_contains "$line" "GID index unknown" "the log line reports the GID lookup"
t_contains "$T_ERR" "WARN ADD vmtest1:net1: RDMA device rxe0: libibverbs does not list it" "a failed lookup is a warning"
plugin DEL "$(conf auto ',"rdmaName":"rdma_net1"'"$POOL$DEVINFO")" "$ns"
t_eq "$T_RC" 0 "DEL exit code (stdout: $T_OUT, stderr: $T_ERR)"
t_eq "$(ip -o link show rv0 | wc -l)" 1 "rv0 back in the host"
t_eq "$(ip -n "${ns##*/}" -o link show net1 2>/dev/null | wc -l)" 0 "net1 gone from the pod"
rdma link delete rxe0 2>/dev/null
t_eq "$(rdma link add rxe0 type rxe netdev rv0 && rdma_index rxe0 | wc -l)" 1 "rv0 carries an RDMA device again"
teardown_vf
ip netns del "${ns##*/}"

t_begin "shared mode, rdma exclusive: ADD fails, says how to switch the mode, changes nothing"
setup_vf
ns=$(t_netns)
plugin ADD "$(conf exclusive)" "$ns"
t_eq "$T_RC" 1 "ADD exit code"
t_eq "$(t_jq .code)" 105 "error code (CNI_ERR_RDMA)"
t_contains "$(t_jq .msg)$(t_jq .details)" "netns_mode=0" "the fix is named"
t_eq "$(ip -o link show rv0 | wc -l)" 1 "rv0 still in the host"
t_eq "$(rdma dev show rxe0 | grep -c rxe0)" 1 "rxe0 still in the host"
t_eq "$(ip -n "${ns##*/}" -o link show | grep -vc ': lo:')" 0 "nothing in the pod"

t_begin "shared mode, rdma exclusive: STATUS reports 50"
plugin STATUS "$(conf exclusive)" ""
t_eq "$(t_jq .code)" 50 "STATUS code"
t_contains "$(t_jq .msg)$(t_jq .details)" "shared" "STATUS says why"
teardown_vf
ip netns del "${ns##*/}"

t_begin "exclusive mode: rxe refuses the move, ADD rolls back completely"
# The kernel refuses while any namespace but the initial one exists (deleted
# ones die asynchronously); t_netns runs in a subshell, so each test deletes its own.
for _ in $(seq 50); do
	out=$("$PROBE" set-mode exclusive) && break
	sleep 0.2
done
t_eq "$out" "" "set-mode exclusive"
t_defer "$PROBE" set-mode shared
setup_vf
idx=$(rdma_index rxe0)
ns=$(t_netns)
plugin ADD "$(conf exclusive ',"rdmaName":"rdma_net1"')" "$ns"
t_eq "$T_RC" 1 "ADD exit code"
t_eq "$(t_jq .code)" 105 "error code (CNI_ERR_RDMA)"
t_contains "$(t_jq .msg)$(t_jq .details)" "rxe0" "the error names the RDMA device"
t_contains "$(t_jq .msg)$(t_jq .details)" "not supported" "the error says the driver cannot move it"
t_eq "$(ip -o link show rv0 | wc -l)" 1 "rv0 back in the host under its name"
t_eq "$(ip -n "${ns##*/}" -o link show | grep -vc ': lo:')" 0 "nothing left in the pod"
t_eq "$(rdma_index rxe0)" "$idx" "rxe0 in the host, same index, same name"
plugin CHECK "$(conf exclusive)" "$ns"
t_eq "$T_RC" 1 "CHECK after the failed ADD finds nothing"
teardown_vf
ip netns del "${ns##*/}"

t_done
