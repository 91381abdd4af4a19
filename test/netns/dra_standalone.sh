#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The call shape of dra-driver-sriov's standalone mode, through libcni: one
# plugin config (no conflist, so no chain), deviceID at the top level, no
# runtimeConfig, CNI_ARGS with the K8S_POD_* keys, an interface name the
# driver picks, and DEL from StopPodSandbox after the runtime removed the
# pod's namespace.
. "$(dirname "$0")/sriov_lib.sh"

CONF=$T_TMP/dra.conf
ARGS="IgnoreUnknown=true;K8S_POD_NAMESPACE=ml;K8S_POD_NAME=trainer-0;K8S_POD_INFRA_CONTAINER_ID=0f3c9a;K8S_POD_UID=7d1e2b4c-1111-4222-8333-944455556666"

HOSTLOCAL="{\"type\": \"host-local\", \"dataDir\": \"$T_TMP/hl\",
    \"ranges\": [[{\"subnet\": \"10.71.0.0/24\", \"gateway\": \"10.71.0.1\"}]]}"
# Debian's host-local stops at 1.0.0; pool-ipam speaks 1.1.0.
POOL="{\"type\": \"pool-ipam\", \"dataDir\": \"$T_TMP/pool\",
    \"ranges\": [[{\"subnet\": \"10.71.0.0/24\", \"gateway\": \"10.71.0.1\"}]]}"

dra_conf() { # VERSION IPAM
	cat > "$CONF" <<EOJ
{
  "cniVersion": "$1",
  "name": "rail0",
  "type": "sriov-rdma",
  "deviceID": "$(sr_vf 0)",
  "multiRail": true,
  "mtu": 1400,
  "stateDir": "$SR_STATE",
  "ipam": $2
}
EOJ
}

t_begin "standalone: one config with a top-level deviceID does the whole rail"
sr_setup 1
pod=$(t_netns)
dra_conf 1.0.0 "$HOSTLOCAL"
t_cnitool add "$CONF" "$pod" CNI_IFNAME=vfnet0 CNI_CONTAINERID=0f3c9a CNI_ARGS="$ARGS"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(t_jq '[.interfaces[] | select(.sandbox != null and .sandbox != "")] | length')" 1 \
	"one interface with a sandbox (what the driver reports as networkData)"
t_eq "$(t_jq '.interfaces[0].name')" vfnet0 "interface name"
t_eq "$(t_jq '.interfaces[0].sandbox')" "$pod" "sandbox"
t_eq "$(t_jq '.interfaces[0].mac')" "$(sr_pod_link "$pod" vfnet0 | cut -d' ' -f2)" "mac"
t_eq "$(t_jq '.ips[0].address')" 10.71.0.2/24 "address in CIDR form"
t_eq "$(sr_pod_link "$pod" vfnet0 | cut -d' ' -f3)" 1400 "MTU in the pod"
t_eq "$(nsenter --net="$pod" sysctl -n net.ipv4.conf.vfnet0.arp_ignore)" 1 "multiRail's arp_ignore"
t_contains "$(ip -n "$(basename "$pod")" rule show)" "from 10.71.0.2 lookup 100" "source rule"
t_contains "$(sr_state_files)" "0f3c9a" "attachment recorded"

t_begin "standalone: DEL after the runtime deleted the namespace exits 0 and releases everything"
command ip netns del "$(basename "$pod")"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=vfnet0 CNI_CONTAINERID=0f3c9a CNI_ARGS="$ARGS"
t_eq "$T_RC" 0 "DEL with the namespace gone ($T_ERR)"
t_eq "$(sr_state_files)" "" "no record left"
t_eq "$(sr_markers)" "" "no in-use marker left"
t_eq "$(find "$T_TMP/hl" -type f -name '10.71.*' 2>/dev/null)" "" "address released"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=vfnet0 CNI_CONTAINERID=0f3c9a CNI_ARGS="$ARGS"
t_eq "$T_RC" 0 "a repeated DEL exits 0 too ($T_ERR)"

t_begin "standalone, cniVersion 1.1.0: the result carries mtu and the VF's pciID"
sr_setup 1
pod=$(t_netns)
dra_conf 1.1.0 "$POOL"
t_exec sriov-rdma ADD "$(cat "$CONF")" CNI_CONTAINERID=1a2b CNI_NETNS="$pod" CNI_IFNAME=vfnet0 \
	CNI_ARGS="$ARGS"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(t_jq '.interfaces[0].pciID')" "$(sr_vf 0)" "pciID"
t_eq "$(t_jq '.interfaces[0].mtu')" 1400 "mtu"
t_eq "$(t_jq '.interfaces[0].sandbox')" "$pod" "sandbox"
command ip netns del "$(basename "$pod")"
t_exec sriov-rdma DEL "$(cat "$CONF")" CNI_CONTAINERID=1a2b CNI_NETNS="$pod" CNI_IFNAME=vfnet0 \
	CNI_ARGS="$ARGS"
t_eq "$T_RC" 0 "DEL with the namespace gone ($T_ERR)"
t_eq "$(sr_state_files)" "" "no record left"

t_done
