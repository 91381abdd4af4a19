#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The kernel floor: the plugins run on Oracle Linux 8's 4.18 kernel, so every
# system call Linux added after 4.18 fails here with ENOSYS, as it would
# there (strace's fault injection, on every process of every run: the
# plugin, the IPAM it delegates to, what they fork), and ADD, CHECK, DEL, GC
# and STATUS still do their whole work. A call with a fallback takes it
# (glibc's faccessat falls back from faccessat2 to fstatat, logFile's open
# from openat2 to a component walk); one without fails the case.
# docs/deploying.md lists what the plugins need of the kernel.
. "$(dirname "$0")/sriov_lib.sh"

command -v strace >/dev/null || { echo "SKIP: strace not installed (scripts/setup test)"; exit 77; }
# LeakSanitizer ptraces the process at exit, which it cannot do under
# strace: it aborts. Leaks are the other suites' business.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# Added after 4.18 (x86_64), up to the newest this strace can name.
NEWER="pidfd_send_signal io_uring_setup io_uring_enter io_uring_register open_tree move_mount
	fsopen fsconfig fsmount fspick pidfd_open clone3 openat2 pidfd_getfd faccessat2 close_range
	process_madvise epoll_pwait2 mount_setattr landlock_create_ruleset landlock_add_rule
	landlock_restrict_self memfd_secret quotactl_fd process_mrelease futex_waitv
	set_mempolicy_home_node cachestat fchmodat2 map_shadow_stack futex_wake futex_wait
	futex_requeue statmount listmount lsm_get_self_attr lsm_set_self_attr lsm_list_modules mseal"
set=
for call in $NEWER; do
	strace -qq -o /dev/null -e trace="$call" true 2>/dev/null && set=$set${set:+,}$call
done
echo "# failing with ENOSYS: $set"

# Every run of our plugins under strace, but one: a plugin that delegates to
# the other runs it through the same wrapper, and strace's -f already
# follows it (a second strace cannot attach).
LOG=$T_TMP/enosys.log
cat > "$T_TMP/enosys" <<EOF
#!/bin/sh
if grep -q '^TracerPid:[[:space:]]*0\$' /proc/self/status; then
	exec strace -f -qq -A -o '$LOG' -e trace='$set' -e inject='$set':error=ENOSYS "\$@"
fi
exec "\$@"
EOF
chmod +x "$T_TMP/enosys"
export PLUGIN_WRAPPER=$T_TMP/enosys

CONF=$T_TMP/net.conflist
RF=$T_TMP/rdma-fake
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
POOL="{\"type\": \"pool-ipam\", \"ranges\": [[{\"subnet\": \"10.68.0.0/24\"}]], \"dataDir\": \"$T_TMP/pool\", \"logFile\": \"$T_TMP/log/pool.log\"}"
mkdir -p "$T_TMP/log" "$T_TMP/devinfo"

t_begin "sriov-rdma ADD, CHECK and DEL through libcni: PF settings, RDMA device, device-info, logFile, pool-ipam"
sr_setup 2
pod=$(t_netns)
pod_ns=$(stat -L -c %i "$pod")
mkdir -p "$RF"
echo exclusive > "$RF/rdma.mode"
echo "3 mlx5_3 $(sr_net 1) $HOST_NS" > "$RF/rdma.devs"
export SRIOV_RDMA_RDMA_FAKE_DIR=$RF
orig=$(sr_host_link "$(sr_net 1)")
ip link property add dev "$(sr_net 1)" altname "sr$$-alt1"
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 1)\", \"vlan\": 100, \"spoofchk\": \"off\", \"trust\": \"on\", \"mac\": \"02:11:22:33:44:56\", \"mtu\": 1400, \"rdma\": \"exclusive\", \"multiRail\": true, \"logFile\": \"$T_TMP/log/sriov.log\", \"logLevel\": \"debug\", \"capabilities\": {\"CNIDeviceInfoFile\": true}" "$POOL"
# A device-info file the device plugin put there first, which ADD takes over.
di=$T_TMP/devinfo/floor-c1_net1
printf '{"type":"pci","version":"1.1.0","pci":{"pci-address":"%s"}}' "$(sr_vf 1)" > "$di"
chmod 0444 "$di"
cap="{\"CNIDeviceInfoFile\": \"$di\"}"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CAP_ARGS="$cap"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
addr=$(t_jq '.ips[0].address')
t_contains "$(ip -n "$(basename "$pod")" -br addr show net1)" "$addr" "the address in the pod"
t_eq "$(sr_pod_link "$pod" net1)" "net1 02:11:22:33:44:56 1400" "the VF in the pod"
t_contains "$(sr_calls)" "vf=1 vlan=100" "vlan asked of the PF"
t_eq "$(cut -d' ' -f4 "$RF/rdma.devs")" "$pod_ns" "the RDMA device in the pod"
t_eq "$(jq -r '.pci["rdma-device"]' "$di")" mlx5_3 "device-info file"
t_contains "$(cat "$T_TMP/log/sriov.log" 2>/dev/null)" "ADD c1:net1" "sriov-rdma's logFile"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CAP_ARGS="$cap"
t_eq "$T_RC" 0 "CHECK ($T_ERR $T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CAP_ARGS="$cap"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(sr_host_link "$(sr_net 1)")" "$orig" "the VF back on the host"
t_eq "$(grep '^vf=1 ' "$SR_FAKE/$SR_PFNET.vfs")" \
	"$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs" | sed 's/^vf=0/vf=1/')" "VF 1's PF settings as before"
t_eq "$(cat "$RF/rdma.devs")" "3 mlx5_3 $(sr_net 1) $HOST_NS" "the RDMA device home"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no marker"
t_eq "$(find "$T_TMP/pool" -name 'a-*' | wc -l)" 0 "the address released"
unset SRIOV_RDMA_RDMA_FAKE_DIR

t_begin "pool-ipam ADD, CHECK, DEL, GC and STATUS"
c() { printf '{"cniVersion":"1.1.0","name":"fl","type":"pool-ipam"%s,"ipam":{"type":"pool-ipam","dataDir":"%s","ranges":[[{"subnet":"10.69.0.0/29"}]]}}' "${1:+,$1}" "$T_TMP/pool"; }
ns=$(t_netns)
t_exec pool-ipam ADD "$(c)" CNI_CONTAINERID=p1 CNI_IFNAME=net1 CNI_NETNS="$ns"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
prev=$T_OUT
t_exec pool-ipam CHECK "$(c "\"prevResult\":$prev")" CNI_CONTAINERID=p1 CNI_IFNAME=net1 CNI_NETNS="$ns"
t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
t_exec pool-ipam ADD "$(c)" CNI_CONTAINERID=p2 CNI_IFNAME=net1 CNI_NETNS="$ns"
t_exec pool-ipam DEL "$(c)" CNI_CONTAINERID=p1 CNI_IFNAME=net1 CNI_NETNS="$ns"
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
t_exec pool-ipam GC "$(c '"cni.dev/valid-attachments":[]')" CNI_CONTAINERID=x CNI_IFNAME=net1
t_eq "$T_RC" 0 "GC ($T_OUT $T_ERR)"
t_eq "$(find "$T_TMP/pool/fl" -name 'c-*' | wc -l)" 0 "GC released p2"
t_exec pool-ipam STATUS "$(c)" CNI_CONTAINERID=x CNI_IFNAME=net1
t_eq "$T_RC" 0 "STATUS ($T_OUT $T_ERR)"

t_begin "the runs met ENOSYS: strace injected it"
injected=$(grep -o '^[0-9]* *[a-z_0-9]*(.*(INJECTED)$' "$LOG" 2>/dev/null |
	sed 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/' | sort | uniq -c | awk '{ printf "%s%s (%d)", s, $2, $1; s = ", " }')
echo "# ENOSYS met: ${injected:-nothing}"
# Every run was traced: the test build's fake PF asks glibc's faccessat
# with a flag, which tries faccessat2 first on this glibc.
t_contains "$injected" "faccessat2" "faccessat2 failed with ENOSYS, and glibc fell back"

t_done
