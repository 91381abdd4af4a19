#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The netns suite's stand-in VF on the node's OS: sriov-rdma and pool-ipam of
# a test build made as the release is (scripts/sysroot), run chrooted into
# a Debian 11 root that holds none of the project's libraries
# (test/nodeos/in-root.sh sets PLUGIN_ROOT), through the libcni client
# outside it, as Multus thick runs them in the host's root. The IPAM is
# pool-ipam: Debian 12's CNI peers (host-local, tuning) need glibc 2.34 and
# do not start there.
. "$(dirname "$0")/../netns/sriov_lib.sh"

if [ -z "${PLUGIN_ROOT:-}" ]; then
	echo "SKIP: runs inside a node root: test/nodeos/in-root.sh IMAGE bash $0"
	exit 77
fi

CONF=$T_TMP/net.conflist
RF=$T_TMP/rdma-fake
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
POOL="{\"type\": \"pool-ipam\", \"ranges\": [[{\"subnet\": \"10.66.0.0/24\"}]], \"dataDir\": \"$T_TMP/pool\"}"

t_begin "the plugins run in the node's root: its glibc, none of the project's libraries"
t_exec sriov-rdma VERSION '{"cniVersion": "1.0.0"}'
t_eq "$T_RC" 0 "VERSION ($T_OUT $T_ERR)"
t_contains "$(t_jq '.supportedVersions | join(" ")')" "1.1.0" "supported versions"
t_eq "$(chroot "$PLUGIN_ROOT" /usr/bin/ldd --version 2>&1 | head -n 1 | grep -o '[0-9.]*$')" 2.31 \
	"the root's glibc"
for lib in libcjson.so.1 libmnl.so.0 libnl-3.so.200; do
	t_eq "$(find "$PLUGIN_ROOT/lib" "$PLUGIN_ROOT/usr/lib" -name "$lib" 2>/dev/null)" "" "$lib in the root"
done

t_begin "ADD, CHECK and DEL through libcni: the VF with PF settings, its RDMA device, pool-ipam"
sr_setup 2
pod=$(t_netns)
sr_full_setup "$RF" "$HOST_NS" "$CONF" "$POOL" "$T_TMP/devinfo"
orig=$(sr_host_link "$(sr_net 1)")
cap="{\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/node-c1_net1\"}"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CAP_ARGS="$cap"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
sr_full_attached "$pod" "$(t_jq '.ips[0].address')" "$RF" "$T_TMP/devinfo/node-c1_net1" "$T_TMP/pool"
# libibverbs is loaded for the GID index only: absent, ADD goes on and says why.
t_contains "$T_ERR" "libibverbs.so.1: cannot open shared object file" "libibverbs absent: the warning"
t_contains "$T_ERR" "GID index unknown" "the summary leaves the GID index out"
t_cnitool check "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CAP_ARGS="$cap"
t_eq "$T_RC" 0 "CHECK ($T_ERR $T_OUT)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c1 CAP_ARGS="$cap"
t_eq "$T_RC" 0 "DEL ($T_ERR)"
sr_full_released "$orig" "$RF" "$HOST_NS" "$T_TMP/devinfo" "$T_TMP/pool"
unset SRIOV_RDMA_RDMA_FAKE_DIR

t_begin "a config that fails validation: code 7 naming the field, from inside the root"
sr_setup 1
pod=$(t_netns)
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"vlan\": 5000" "$POOL"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=c2
t_eq "$(t_jq .code)" 7 "code ($T_OUT $T_ERR)"
t_contains "$(t_jq .msg)" "vlan" "names the field"
t_eq "$(sr_state_files)$(sr_markers)$(sr_calls)" "" "nothing changed"

t_done
