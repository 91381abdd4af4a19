#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# test/multus/gc.sh: the GC round CRI-O makes at every start, as libcni
# 1.2+'s GCNetworkList makes it (test/client/multus.go gc; Debian's libcni
# 1.1.2 has no GC): for each network of net.d, first DEL of every attachment
# libcni cached for it that the runtime no longer has, then GC of every
# plugin of the list with "cni.dev/valid-attachments" (and the misnamed
# "cni.dev/attachments" it also sends) injected, null for a network without
# pods, and CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME and CNI_ARGS empty.
# test/netns/sriov_del.sh covers GC's scoping by direct calls; this is the
# call shape and the DEL-before-GC order of the real client.
: "${SOURCE_DIR:?set SOURCE_DIR to the project root}"
. "$SOURCE_DIR/test/netns/sriov_lib.sh"
trap 'exit 143' TERM INT

t_begin "gc: the reproduced client is built"
command -v jq >/dev/null || { t_fail "needs jq"; t_done; }
MULTUS=$(mt_bin) || { t_fail "cannot build test/client/multus.go"; t_done; }
mt_setup

# net_list FILE NAME VERSION SUBNET VF: a network of net.d, on one VF.
net_list() {
	jq -n --arg n "$2" --arg v "$3" --arg s "$SR_STATE" --arg pool "$T_TMP/pool-$2" --arg sub "$4" --arg vf "$5" \
		'{cniVersion: $v, name: $n, plugins: [{type: "sriov-rdma", stateDir: $s, deviceID: $vf,
		  ipam: {type: "pool-ipam", dataDir: $pool, ranges: [[{subnet: $sub}]]}}]}' > "$1"
}
leased() { find "$T_TMP/pool-$1" -type f -name "*$2*" 2>/dev/null | wc -l; }
rt() { # add|del LIST NETNS ID: the runtime's ADD and DEL (at 1.0.0: libcni 1.1.2's)
	t_cnitool "$1" "$2" "$3" CNI_PATH="$MT_BIN" CNI_CONTAINERID="$4" \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=gc;K8S_POD_NAME=$4;K8S_POD_INFRA_CONTAINER_ID=$4;K8S_POD_UID=$4"
}
gc() { # LIST VALID
	T_OUT=$(env CNI_PATH="$MT_BIN" CNI_CACHE_DIR="$T_TMP/cni-cache" VALID_ATTACHMENTS="$2" \
		"$MULTUS" gc "$1" 2>"$T_TMP/stderr")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/stderr")
}

t_begin "gc: a CRI-O start's GC round over two networks: null releases the network's attachments, a list keeps its own"
sr_setup 3
ORIG1=$(sr_host_link "$(sr_net 1)")
# Network A held two pods the runtime no longer has: a1, gone with its
# namespace, as libcni cached it; a2, whose namespace is still there, with
# its cache entry gone (a wiped /var/lib/cni). Network B holds b1, which
# still runs. libcni 1.1.2 caches no netns: the DEL of a1 goes out with
# CNI_NETNS empty, as libcni 1.2+ sends it for an entry an older one wrote.
net_list "$T_TMP/a0.conflist" gca 1.0.0 10.74.0.0/24 "$(sr_vf 0)"
net_list "$T_TMP/a1.conflist" gca 1.0.0 10.74.0.0/24 "$(sr_vf 1)"
net_list "$T_TMP/b.conflist" gcb 1.0.0 10.75.0.0/24 "$(sr_vf 2)"
podA1=$(t_netns)
podA2=$(t_netns)
podB1=$(t_netns)
rt add "$T_TMP/a0.conflist" "$podA1" a1
t_eq "$T_RC" 0 "ADD a1 ($T_OUT $T_ERR)"
rt add "$T_TMP/a1.conflist" "$podA2" a2
t_eq "$T_RC" 0 "ADD a2 ($T_OUT $T_ERR)"
rt add "$T_TMP/b.conflist" "$podB1" b1
t_eq "$T_RC" 0 "ADD b1 ($T_OUT $T_ERR)"
rm -f "$T_TMP/cni-cache/results/gca-a2-eth0"
command ip netns del "$(basename "$podA1")"
t_eq "$(leased gca 10.74.)$(leased gcb 10.75.)" 21 "three addresses held"
# The round, with the lists at 1.1.0 as CRI-O's net.d has them.
jq '.cniVersion = "1.1.0"' "$T_TMP/a0.conflist" > "$T_TMP/gca.conflist"
jq '.cniVersion = "1.1.0"' "$T_TMP/b.conflist" > "$T_TMP/gcb.conflist"
: > "$MT_CALLS"
gc "$T_TMP/gca.conflist" null
t_eq "$T_RC" 0 "GC of network A with null ($T_OUT $T_ERR)"
t_eq "$(cut -d' ' -f1-3 "$MT_CALLS" | tr '\n' ';')" "sriov-rdma DEL a1;sriov-rdma GC ;" \
	"DEL of the cached a1 first, then GC"
t_eq "$(mt_calls sriov-rdma DEL a1 eth0 0)" 1 "DEL a1 exit 0"
t_eq "$(jq -r '.prevResult.interfaces[0].name' <<< "$(mt_stdin DEL a1 eth0)")" eth0 "DEL a1 carried the cached result"
in=$(mt_stdin GC "" "")
t_eq "$(jq -c '[.name, .cniVersion, ."cni.dev/valid-attachments", ."cni.dev/attachments", has("cni.dev/valid-attachments")]' <<< "$in")" \
	'["gca","1.1.0",null,null,true]' "GC's stdin: the list's name and version, both keys null"
env_gc=$(mt_env GC "" "")
for v in CNI_CONTAINERID CNI_NETNS CNI_IFNAME CNI_ARGS; do
	t_contains "$env_gc" "
$v=
" "GC's $v is empty"
done
t_eq "$(mt_calls sriov-rdma GC "" "" 0)" 1 "GC exit 0"
t_eq "$(sr_state_files)" "$SR_STATE/b1:eth0.json " "a1's and a2's records released"
t_eq "$(sr_host_link "$(sr_net 1)")" "$ORIG1" "a2's VF home (GC)"
t_eq "$(leased gca 10.74.)" 0 "network A's addresses released"
: > "$MT_CALLS"
gc "$T_TMP/gcb.conflist" '[{"containerID": "b1", "ifname": "eth0"}]'
t_eq "$T_RC" 0 "GC of network B with b1 valid ($T_OUT $T_ERR)"
t_eq "$(cut -d' ' -f1-3 "$MT_CALLS" | tr '\n' ';')" "sriov-rdma GC ;" "no DEL: b1 is valid"
t_eq "$(jq -c '."cni.dev/valid-attachments"' <<< "$(mt_stdin GC "" "")")" '[{"containerID":"b1","ifname":"eth0"}]' \
	"GC's stdin lists b1"
t_eq "$(sr_pod_link "$podB1" eth0 | cut -d' ' -f1)" eth0 "b1 keeps its VF"
t_eq "$(sr_state_files)" "$SR_STATE/b1:eth0.json " "b1's record remains"
t_eq "$(leased gcb 10.75.)" 1 "b1 keeps its address"
rt del "$T_TMP/b.conflist" "$podB1" b1
t_eq "$T_RC" 0 "DEL b1 ($T_OUT $T_ERR)"
t_eq "$(sr_state_files)$(sr_markers)" "" "nothing left"

t_done
