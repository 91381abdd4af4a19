#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# test/multus/multus.sh thin|thick: sriov-rdma behind the suite's
# reproduction of Multus v4.2 (test/client/multus.go), called by the runtime's
# libcni (test/client/cnitool.go) as CRI-O calls Multus, on a faked node: the
# VFs of test/netns/sriov_lib.sh (veth ends, a sysfs tree, the recording PF
# and RDMA fakes), the device plugin's device-info files in
# /var/run/k8s.cni.cncf.io/devinfo/dp, and a directory standing in for the
# API server's pods and NADs and the kubelet's pod-resources.
#
# thin:  Multus runs as the CNI plugin, with the runtime's environment.
# thick: multus-shim and its daemon: the plugins run chrooted into a bind
#        mount of the node's / (in a mount namespace of the call's own) with
#        the daemon's environment; every DEL answers success.
MODE=${1:-}
case $MODE in thin|thick) ;; *) echo "usage: multus.sh thin|thick" >&2; exit 2 ;; esac

: "${SOURCE_DIR:?set SOURCE_DIR to the project root}"
. "$SOURCE_DIR/test/netns/sriov_lib.sh"
# A test killed on timeout (meson sends SIGTERM) still cleans up.
trap 'exit 143' TERM INT

t_begin "$MODE: the reproduced Multus is built"
for p in jq unshare; do
	command -v "$p" >/dev/null || { t_fail "needs $p"; t_done; }
done
if [ "$MODE" = thick ] && ! mountpoint -q /; then
	t_fail "thick's mount namespace needs / to be a mount point (bind-mount the root onto itself before chrooting)"
	t_done
fi
MULTUS=$(mt_bin) || { t_fail "cannot build test/client/multus.go"; t_done; }

NS=mt$$
RES0=sriovrdmatest$$.io/rail0
RES1=sriovrdmatest$$.io/rail1
DEVINFO=/var/run/k8s.cni.cncf.io/devinfo
API=$T_TMP/api
RF=$T_TMP/rdma-fake
CLUSTER_LOG=$T_TMP/cluster.log
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
mkdir -p "$API/pods/$NS" "$API/nads/$NS" "$API/podresources/$NS" "$RF"
mt_setup

# The device plugin's files and Multus's copies live on the node's /run.
printf '{"allowedStateDirs":["%s"],"allowedDataDirs":["%s"],"allowedLogDirs":["%s"],"allowedDeviceInfoDirs":["%s","%s"],"allowedResolvConfDirs":["%s"]}\n' \
	"$T_TMP" "$T_TMP" "$T_TMP" "$T_TMP" "$DEVINFO" "$T_TMP" > "$SRIOV_RDMA_CNI_NODE_CONFIG"
export SRIOV_RDMA_RDMA_FAKE_DIR=$RF
# Seen by the plugin only when the runtime's environment reaches it (thin).
export RUNTIME_ONLY=from-the-runtime

# mk_node_dir DIR: create DIR (and parents) the node lacks; each removed at
# exit (rmdir: never a directory something else filled meanwhile).
mk_node_dir() {
	local d=$1 top='' dirs=() i
	while [ ! -e "$d" ]; do top=$d; dirs+=("$d"); d=$(dirname "$d"); done
	[ -n "$top" ] || return 0
	mkdir -p "$1" || return 1
	for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do t_defer "rmdir '${dirs[$i]}'"; done
}
mk_node_dir "$DEVINFO/dp" && mk_node_dir "$DEVINFO/cni" || { t_fail "cannot make $DEVINFO/dp and cni"; t_done; }
t_defer "rm -f $DEVINFO/dp/sriovrdmatest$$.io-* $DEVINFO/cni/$NS-*"

# "cluster" stands in for the cluster network and logs what it is asked.
cat > "$MT_BIN/cluster" <<EOS
#!/bin/sh
conf=\$(cat)
[ "\$CNI_COMMAND" = VERSION ] || echo "\$CNI_COMMAND \$CNI_CONTAINERID \$CNI_IFNAME" >> "$CLUSTER_LOG"
case \$CNI_COMMAND in
VERSION) echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}' ;;
ADD) v=\$(printf '%s' "\$conf" | jq -r .cniVersion)
     echo "{\"cniVersion\":\"\$v\",\"interfaces\":[{\"name\":\"\$CNI_IFNAME\",\"sandbox\":\"\$CNI_NETNS\"}],\"ips\":[{\"address\":\"10.99.0.5/24\",\"interface\":0}]}" ;;
esac
exit 0
EOS
chmod +x "$MT_BIN/cluster"

CLUSTER='{"cniVersion": "1.0.0", "name": "cluster", "plugins": [{"type": "cluster"}]}'
CHROOT=$T_TMP/hostroot
mkdir -p "$CHROOT"
if [ "$MODE" = thin ]; then
	printf '#!/bin/sh\nexec %q thin\n' "$MULTUS" > "$MT_BIN/multus"
	jq -n --arg bin "$MT_BIN" --arg cache "$T_TMP/multus-cache" --arg api "$API" --argjson cl "$CLUSTER" \
		'{cniVersion: "1.0.0", name: "multus-cni-network", type: "multus", binDir: $bin,
		  cniDir: $cache, apiDir: $api, delegates: [$cl]}' > "$T_TMP/multus.conf"
else
	# The daemon's DaemonSet mounts the node's / at chrootDir; the mark is
	# made in that mount only, so the plugins see it only chrooted.
	cat > "$MT_BIN/multus-shim" <<-EOS
	#!/bin/sh
	exec unshare -m --propagation slave /bin/sh -ec '
		mount --rbind / "\$1"
		mount -t tmpfs mark "\$1$T_TMP/chroot-mark"
		: > "\$1$MT_CHROOT_MARK"
		exec "\$2" thick "\$3"' sh "$CHROOT" "$MULTUS" "$T_TMP/daemon-config.json"
	EOS
	jq -n --arg bin "$MT_BIN" --arg cache "$T_TMP/multus-cache" --arg api "$API" --argjson cl "$CLUSTER" \
		--arg root "$CHROOT" \
		--arg env "$(env | grep -E '^(PATH|SRIOV_RDMA_[A-Z_]*)=')" \
		'{chrootDir: $root, binDir: $bin, cniDir: $cache, apiDir: $api, delegates: [$cl],
		  daemonEnvironment: (($env | split("\n")) + ["MULTUS_NODE_NAME=node-a"])}' > "$T_TMP/daemon-config.json"
	jq -n '{cniVersion: "1.0.0", name: "multus-cni-network", type: "multus-shim",
		daemonSocketDir: "/run/multus"}' > "$T_TMP/multus.conf"
fi
chmod +x "$MT_BIN/multus"* 2>/dev/null

uid_of() { printf '5e1f0000-0000-4000-8000-%012d' "$(printf '%s' "$1" | cksum | cut -d' ' -f1 | cut -c1-12)"; }
# mk_nad NAME RESOURCE CONFIG-JSON
mk_nad() {
	jq -n --arg n "$1" --arg ns "$NS" --arg r "$2" --arg c "$3" \
		'{apiVersion: "k8s.cni.cncf.io/v1", kind: "NetworkAttachmentDefinition",
		  metadata: {name: $n, namespace: $ns, annotations: {"k8s.v1.cni.cncf.io/resourceName": $r}},
		  spec: {config: $c}}' > "$API/nads/$NS/$1.json"
}
# mk_pod NAME NETWORKS DEVICES-JSON: the pod in the API, and what the
# kubelet's pod-resources says the device plugin gave it.
mk_pod() {
	jq -n --arg p "$1" --arg ns "$NS" --arg n "$2" --arg uid "$(uid_of "$1")" \
		'{apiVersion: "v1", kind: "Pod", metadata: {name: $p, namespace: $ns, uid: $uid,
		  annotations: {"k8s.v1.cni.cncf.io/networks": $n}}}' > "$API/pods/$NS/$1.json"
	printf '%s\n' "$3" > "$API/podresources/$NS/$1.json"
}
rm_pod() { rm -f "$API/pods/$NS/$1.json" "$API/podresources/$NS/$1.json"; }

# rail_conf VERSION NAME IPAM [extra jq]: a NAD's sriov-rdma config, with
# the capabilities the README asks for.
CAPS='{CNIDeviceInfoFile: true, deviceID: true, mac: true, ips: true}'
rail_conf() {
	jq -nc --arg v "$1" --arg n "$2" --argjson ipam "$3" --arg s "$SR_STATE" --arg log "$T_TMP/plugin.log" \
		'{cniVersion: $v, name: $n, type: "sriov-rdma", capabilities: '"$CAPS"',
		  stateDir: $s, logFile: $log, logLevel: "info", rdma: "exclusive", rdmaName: ("rdma_" + $n),
		  multiRail: true, ipam: $ipam} + '"${4:-{\}}"
}
POOL0="{\"type\": \"pool-ipam\", \"dataDir\": \"$T_TMP/pool\", \"ranges\": [[{\"subnet\": \"10.71.0.0/24\", \"gateway\": \"10.71.0.1\"}]]}"
HL1="{\"type\": \"host-local\", \"dataDir\": \"$T_TMP/hl\", \"ranges\": [[{\"subnet\": \"10.72.0.0/24\", \"gateway\": \"10.72.0.1\"}]]}"
mk_nad rail0 "$RES0" "$(rail_conf 0.3.1 rail0 "$POOL0")"
# A conflist: Multus sets deviceID and pciBusID in every plugin of it.
mk_nad rail1 "$RES1" "$(jq -nc --argjson p "$(rail_conf 1.0.0 rail1 "$HL1" '{cniVersion: null, name: null} | del(.cniVersion, .name)')" \
	'{cniVersion: "1.0.0", name: "rail1", plugins: [$p, {type: "tuning", sysctl: {"net.ipv4.conf.IFNAME.arp_announce": "2"}}]}' |
	sed 's/IFNAME/net2/')"
mk_nad badrail "$RES0" "$(rail_conf 1.0.0 badrail "$POOL0" '{vlan: 5000}')"

# mk_dp RESOURCE PCI RDMA: the device plugin's device-info file for the VF.
mk_dp() {
	local f="$DEVINFO/dp/${1//\//-}-$2-device.json"
	rm -f "$f"
	printf '{"type":"pci","version":"1.1.0","pci":{"pci-address":"%s","rdma-device":"%s"}}' "$2" "$3" > "$f"
	chmod 0444 "$f"
}
dp_file() { echo "$DEVINFO/dp/${1//\//-}-$2-device.json"; }
devinfo_of() { echo "$DEVINFO/cni/$NS-$1-$2_$3"; } # NET CTR IF

# cni COMMAND POD CTR NETNS: the runtime's call of Multus, through libcni.
cni() {
	local cmd=$1 pod=$2 ctr=$3 netns=$4
	t_cnitool "$(tr '[:upper:]' '[:lower:]' <<< "$cmd")" "$T_TMP/multus.conf" "$netns" \
		CNI_PATH="$MT_BIN" CNI_CONTAINERID="$ctr" CNI_IFNAME=eth0 \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=$NS;K8S_POD_NAME=$pod;K8S_POD_INFRA_CONTAINER_ID=$ctr;K8S_POD_UID=$(uid_of "$pod")"
}
status_of() { jq -r '.metadata.annotations["k8s.v1.cni.cncf.io/network-status"] // ""' "$API/pods/$NS/$1.json" 2>/dev/null; }
rail_status() { status_of "$1" | jq -c --arg n "$NS/$2" '.[] | select(.name == $n)'; }
pod_rdma() { awk -v ns="$2" '$1 == '"$1"' && $4 == ns {print $2}' "$RF/rdma.devs"; }
rec() { echo "$SR_STATE/$1:$2.json"; }
leased() { { find "$T_TMP/pool" -type f -name '*10.71.*' 2>/dev/null; find "$T_TMP/hl" -type f -name '10.72.*' 2>/dev/null; } | wc -l; }

# Two VFs: 0000:3b:00.2 (mlx5_2, RDMA index 3) and 0000:3b:00.3 (mlx5_3, index 4).
fresh_node() {
	sr_setup 2 || return 1
	rm -rf "$T_TMP/pool" "$T_TMP/hl"
	echo exclusive > "$RF/rdma.mode"
	printf '3 mlx5_2 %s %s\n4 mlx5_3 %s %s\n' "$(sr_net 0)" "$HOST_NS" "$(sr_net 1)" "$HOST_NS" > "$RF/rdma.devs"
	: > "$RF/rdma.calls"
	mk_dp "$RES0" "$(sr_vf 0)" mlx5_2
	mk_dp "$RES1" "$(sr_vf 1)" mlx5_3
	mk_dp "$RES0" "$(sr_vf 1)" mlx5_3
	ORIG0=$(sr_host_link "$(sr_net 0)")
	ORIG1=$(sr_host_link "$(sr_net 1)")
	: > "$MT_CALLS"
}
assert_released() { # N WHAT
	local orig
	orig=$([ "$1" = 0 ] && echo "$ORIG0" || echo "$ORIG1")
	t_eq "$(sr_host_link "$(sr_net "$1")")" "$orig" "$2: VF $1 netdev back on the node as it was"
	t_eq "$(awk '$1 == '"$(($1 + 3))"' {print $2, $4}' "$RF/rdma.devs")" "mlx5_$(($1 + 2)) $HOST_NS" \
		"$2: RDMA device of VF $1 home under its name"
}
assert_clean() { # WHAT
	t_eq "$(sr_state_files)$(sr_markers)" "" "$1: no record, no in-use marker"
	t_eq "$(leased)" 0 "$1: no address held"
}
K8S_ARGS() { # POD CTR: the CNI_ARGS Multus builds for a delegate
	echo "IgnoreUnknown=true;K8S_POD_NAMESPACE=$NS;K8S_POD_NAME=$1;K8S_POD_INFRA_CONTAINER_ID=$2;K8S_POD_UID=$(uid_of "$1")"
}

# ---------------------------------------------------------------- one rail
t_begin "$MODE: ADD of a pod with one RDMA network (NAD cniVersion 0.3.1, pool-ipam)"
fresh_node
POD_A=$(t_netns)
CTR=ctra$$
mk_pod a rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}"
cni ADD a $CTR "$POD_A"
t_eq "$T_RC" 0 "Multus ADD ($T_OUT $T_ERR)"
t_eq "$(mt_calls sriov-rdma ADD $CTR net1 0)" 1 "sriov-rdma ran ADD once, as net1, and exited 0"
t_eq "$(sr_pod_link "$POD_A" net1 | cut -d' ' -f1)" net1 "the VF is net1 in the pod"
MAC_A=$(sr_pod_link "$POD_A" net1 | cut -d' ' -f2)
t_contains "$(ip -n "$(basename "$POD_A")" -o -4 addr show net1)" "10.71.0.2/24" "net1's address from pool-ipam"
t_eq "$(jq -r '.deviceID // empty' "$(rec $CTR net1)" 2>/dev/null)" "$(sr_vf 0)" "the attachment is recorded with the VF the kubelet gave"
RDMA_A=$(pod_rdma 3 "$(stat -L -c %i "$POD_A")")
t_eq "${RDMA_A:+moved}" moved "mlx5_2 moved into the pod"
t_not_contains "$RDMA_A" mlx5_2 "renamed in the pod (rdmaName)"
in=$(mt_stdin ADD $CTR net1)
t_eq "$(jq -r '.deviceID, .pciBusID' <<< "$in" | tr '\n' ' ')" "$(sr_vf 0) $(sr_vf 0) " "deviceID and pciBusID at the top level"
t_eq "$(jq -r '.runtimeConfig | keys | join(",")' <<< "$in")" "CNIDeviceInfoFile,deviceID" \
	"runtimeConfig: the declared capabilities Multus has values for (no mac, no ips asked)"
t_eq "$(jq -r '.runtimeConfig.deviceID' <<< "$in")" "$(sr_vf 0)" "runtimeConfig.deviceID"
CNIDI=$(jq -r '.runtimeConfig.CNIDeviceInfoFile' <<< "$in")
t_eq "$CNIDI" "$(devinfo_of rail0 $CTR net1)" "CNIDeviceInfoFile: <ns>-<net>-<ctr>_<ifname>"
t_eq "$(mt_seen ADD $CTR net1 | grep devinfo-mode)" "devinfo-mode 444" "the device plugin's file was there before ADD, mode 0444"
t_eq "$(jq -r '.pci."rdma-device", .pci."pci-address"' "$CNIDI" 2>/dev/null | tr '\n' ' ')" "$RDMA_A $(sr_vf 0) " \
	"the copy now names the pod's RDMA device"
t_eq "$(cat "$(dp_file "$RES0" "$(sr_vf 0)")")" \
	"{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":{\"pci-address\":\"$(sr_vf 0)\",\"rdma-device\":\"mlx5_2\"}}" \
	"the device plugin's own file is untouched"
st=$(rail_status a rail0)
t_eq "$(jq -r '.interface' <<< "$st")" net1 "network-status: interface"
t_eq "$(jq -r '.ips | join(",")' <<< "$st")" 10.71.0.2 "network-status: ips"
t_eq "$(jq -r '.mac' <<< "$st")" "$MAC_A" "network-status: mac"
t_eq "$(jq -r '."device-info".pci."pci-address"' <<< "$st")" "$(sr_vf 0)" "network-status: device-info pci-address"
t_eq "$(jq -r '."device-info".pci."rdma-device"' <<< "$st")" "$RDMA_A" "network-status: device-info rdma-device is the pod's name"
t_eq "$(status_of a | jq -r '.[0].name, .[0].default' | tr '\n' ' ')" "cluster true " "network-status: the cluster network first, default"
t_contains "$T_ERR" "network-status: [" "Multus printed the network-status it set"
env_a=$(mt_env ADD $CTR net1)
if [ "$MODE" = thin ]; then
	t_contains "$env_a" "CNI_ARGS=$(K8S_ARGS a $CTR);IgnoreUnknown=1;K8S_POD_NAMESPACE=$NS;" \
		"CNI_ARGS: Multus's own, then the runtime's"
	t_contains "$env_a" "RUNTIME_ONLY=from-the-runtime" "thin: the runtime's environment reaches the plugin"
	t_eq "$(mt_seen ADD $CTR net1 | grep -c chroot)" 0 "thin: not chrooted"
else
	t_contains "$env_a" "CNI_ARGS=$(K8S_ARGS a $CTR)
" "CNI_ARGS: Multus's own only (the daemon's environment has none)"
	t_not_contains "$env_a" "RUNTIME_ONLY" "thick: the runtime's environment does not reach the plugin"
	t_contains "$env_a" "MULTUS_NODE_NAME=node-a" "thick: the daemon's environment does"
	t_eq "$(mt_seen ADD $CTR net1 | grep -c chroot)" 1 "thick: the plugin ran chrooted into chrootDir"
fi

t_begin "$MODE: CHECK through Multus reaches the cluster network only"
: > "$CLUSTER_LOG"
cni CHECK a $CTR "$POD_A"
t_eq "$T_RC" 0 "Multus CHECK ($T_OUT $T_ERR)"
t_eq "$(grep -c "^sriov-rdma CHECK" "$MT_CALLS")" 0 "sriov-rdma was not asked"
t_eq "$(grep -c "^CHECK $CTR eth0" "$CLUSTER_LOG")" 1 "the cluster network got CHECK"

t_begin "$MODE: DEL releases the VF, the RDMA device, the address, the records and Multus's device-info file"
: > "$MT_CALLS"
cni DEL a $CTR "$POD_A"
t_eq "$T_RC" 0 "Multus DEL ($T_OUT $T_ERR)"
t_eq "$(mt_calls sriov-rdma DEL $CTR net1 0)" 1 "sriov-rdma ran DEL as net1 and exited 0"
t_eq "$(jq -r '.deviceID, .runtimeConfig.CNIDeviceInfoFile' <<< "$(mt_stdin DEL $CTR net1)" | tr '\n' ' ')" \
	"$(sr_vf 0) $CNIDI " "DEL carries what ADD did"
assert_released 0 "after DEL"
assert_clean "after DEL"
t_eq "$(ls "$CNIDI" 2>/dev/null)" "" "Multus removed its device-info file"
rm_pod a

# ---------------------------------------------------------------- two rails
t_begin "$MODE: ADD of a pod with two rails (multiRail; 0.3.1 pool-ipam, and a 1.0.0 conflist with tuning)"
fresh_node
POD_B=$(t_netns)
CTR=ctrb$$
mk_pod b '[{"name": "rail0", "mac": "02:00:00:aa:bb:01", "ips": ["10.71.0.9/24"]}, {"name": "rail1"}]' "{\"$RES0\": [\"$(sr_vf 0)\"], \"$RES1\": [\"$(sr_vf 1)\"]}"
cni ADD b $CTR "$POD_B"
t_eq "$T_RC" 0 "Multus ADD ($T_OUT $T_ERR)"
t_eq "$(mt_calls sriov-rdma ADD $CTR net1 0)$(mt_calls sriov-rdma ADD $CTR net2 0)" 11 "sriov-rdma ADD net1 and net2, both exit 0"
t_eq "$(mt_calls tuning ADD $CTR net2 0)" 1 "tuning ran after sriov-rdma in rail1's chain"
t_eq "$(jq -r '.deviceID, .pciBusID' <<< "$(mt_stdin ADD $CTR net2 tuning)" | tr '\n' ' ')" "$(sr_vf 1) $(sr_vf 1) " \
	"deviceID and pciBusID in every plugin of the conflist"
pns=$(stat -L -c %i "$POD_B")
for n in 0 1; do
	ifn=net$((n + 1))
	st=$(rail_status b rail$n)
	t_eq "$(jq -r '.interface' <<< "$st")" "$ifn" "rail$n: network-status interface"
	t_eq "$(jq -r '.mac' <<< "$st")" "$(sr_pod_link "$POD_B" "$ifn" | cut -d' ' -f2)" "rail$n: mac is $ifn's in the pod"
	t_eq "$(jq -r '."device-info".pci."pci-address"' <<< "$st")" "$(sr_vf $n)" "rail$n: pci-address"
	t_eq "$(jq -r '."device-info".pci."rdma-device"' <<< "$st")" "$(pod_rdma $((n + 3)) "$pns")" "rail$n: rdma-device is the pod's name"
	t_eq "$([ -f "$(rec $CTR "$ifn")" ] && echo yes)" yes "rail$n: recorded"
done
in=$(mt_stdin ADD $CTR net1)
t_eq "$(jq -c '.runtimeConfig | [.mac, .ips]' <<< "$in")" '["02:00:00:aa:bb:01",["10.71.0.9/24"]]' \
	"rail0: the annotation's mac and ips in runtimeConfig (declared capabilities)"
t_contains "$(mt_env ADD $CTR net1)" ";MAC=02:00:00:aa:bb:01;IP=10.71.0.9/24" "rail0: and in CNI_ARGS, as Multus still sends them"
t_eq "$(jq -r '.runtimeConfig | keys | join(",")' <<< "$(mt_stdin ADD $CTR net2)")" "CNIDeviceInfoFile,deviceID" \
	"rail1: no mac, no ips asked"
t_eq "$(rail_status b rail0 | jq -r '(.ips | join(",")), .mac' | tr '\n' ' ')" "10.71.0.9 02:00:00:aa:bb:01 " \
	"rail0: the requested address and MAC"
t_eq "$(rail_status b rail1 | jq -r '.ips | join(",")')" 10.72.0.2 "rail1's address from host-local"
t_contains "$(ip -n "$(basename "$POD_B")" rule show)" "from 10.72.0.2 lookup" "multiRail: a source rule for the second rail"
t_eq "$(nsenter --net="$POD_B" sysctl -n net.ipv4.conf.net2.arp_announce)" 2 "tuning's sysctl on net2"

t_begin "$MODE: DEL of the two-rail pod releases both rails"
: > "$MT_CALLS"
cni DEL b $CTR "$POD_B"
t_eq "$T_RC" 0 "Multus DEL ($T_OUT $T_ERR)"
t_eq "$(mt_calls sriov-rdma DEL $CTR net1 0)$(mt_calls sriov-rdma DEL $CTR net2 0)" 11 "sriov-rdma DEL net1 and net2, both exit 0"
t_eq "$(head -1 "$MT_CALLS" | cut -d' ' -f1,2,4)" "tuning DEL net2" "reverse order: net2's chain first, its last plugin first"
assert_released 0 "rail0"
assert_released 1 "rail1"
assert_clean "two rails"
t_eq "$(ls "$DEVINFO/cni/$NS-"* 2>/dev/null)" "" "no device-info file of the pod left"
rm_pod b

# ------------------------------------------------- DEL after the pod is gone
t_begin "$MODE: DEL after the pod left the API (Multus's cache; the plugins ask no API)"
fresh_node
POD_C=$(t_netns)
CTR=ctrc$$
mk_pod c rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}"
cni ADD c $CTR "$POD_C"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
rm_pod c
: > "$MT_CALLS"
cni DEL c $CTR "$POD_C"
t_eq "$T_RC" 0 "Multus DEL ($T_OUT $T_ERR)"
t_eq "$(mt_calls sriov-rdma DEL $CTR net1 0)" 1 "sriov-rdma ran DEL (from Multus's cache) and exited 0"
assert_released 0 "pod gone"
assert_clean "pod gone"

t_begin "$MODE: DEL after the pod's network namespace is gone"
fresh_node
POD_D=$(t_netns)
CTR=ctrd$$
mk_pod d rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}"
cni ADD d $CTR "$POD_D"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
command ip netns del "$(basename "$POD_D")"
: > "$MT_CALLS"
cni DEL d $CTR "$POD_D"
t_eq "$T_RC" 0 "Multus DEL ($T_OUT $T_ERR)"
t_eq "$(mt_calls sriov-rdma DEL $CTR net1 0)" 1 "sriov-rdma ran DEL and exited 0"
assert_clean "netns gone"
rm_pod d

# ------------------------------------------------------------- concurrency
t_begin "$MODE: two pods started and stopped concurrently"
fresh_node
POD_E=$(t_netns)
POD_F=$(t_netns)
mk_pod e rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}"
mk_pod f rail0 "{\"$RES0\": [\"$(sr_vf 1)\"]}"
( cni ADD e ctre$$ "$POD_E"; echo "$T_RC" > "$T_TMP/conc.e"; echo "$T_OUT $T_ERR" > "$T_TMP/conc.e.out" ) & pe=$!
( cni ADD f ctrf$$ "$POD_F"; echo "$T_RC" > "$T_TMP/conc.f"; echo "$T_OUT $T_ERR" > "$T_TMP/conc.f.out" ) & pf=$!
wait "$pe" "$pf"
t_eq "$(cat "$T_TMP/conc.e")$(cat "$T_TMP/conc.f")" 00 "both ADDs ($(cat "$T_TMP/conc.e.out" "$T_TMP/conc.f.out"))"
t_eq "$(sr_pod_link "$POD_E" net1 | cut -d' ' -f1)$(sr_pod_link "$POD_F" net1 | cut -d' ' -f1)" net1net1 "each pod holds its VF as net1"
t_eq "$(rail_status e rail0 | jq -r '."device-info".pci."pci-address"') $(rail_status f rail0 | jq -r '."device-info".pci."pci-address"')" \
	"$(sr_vf 0) $(sr_vf 1)" "each pod's network-status names its VF"
t_eq "$( (rail_status e rail0; rail_status f rail0) | jq -r '.ips[0]' | sort -u | wc -l)" 2 "two different addresses"
( cni DEL e ctre$$ "$POD_E"; echo "$T_RC" > "$T_TMP/conc.e" ) & pe=$!
( cni DEL f ctrf$$ "$POD_F"; echo "$T_RC" > "$T_TMP/conc.f" ) & pf=$!
wait "$pe" "$pf"
t_eq "$(cat "$T_TMP/conc.e")$(cat "$T_TMP/conc.f")" 00 "both DELs"
t_eq "$(mt_calls sriov-rdma DEL ctre$$ net1 0)$(mt_calls sriov-rdma DEL ctrf$$ net1 0)" 11 "sriov-rdma DEL exit 0 for both"
assert_released 0 "pod e"
assert_released 1 "pod f"
assert_clean "two pods"
rm_pod e
rm_pod f

# --------------------------------------------------------------- bad NAD
t_begin "$MODE: an invalid NAD: Multus's error is code 999 with the plugin's message, naming the field"
fresh_node
POD_G=$(t_netns)
CTR=ctrg$$
mk_pod g badrail "{\"$RES0\": [\"$(sr_vf 0)\"]}"
cni ADD g $CTR "$POD_G"
t_eq "$T_RC" 1 "Multus ADD fails"
t_eq "$(t_jq .code)" 999 "code 999 (Multus's own)"
t_contains "$(t_jq .msg)" "error adding container to network \"$NS/badrail\"" "Multus says which network"
t_contains "$(t_jq .msg)" "vlan" "the plugin's message inside names vlan"
t_eq "$(grep -c "^sriov-rdma ADD $CTR net1 rc=[1-9]" "$MT_CALLS")" 1 "sriov-rdma refused the ADD"
t_eq "$(mt_calls sriov-rdma DEL $CTR net1 0)" 1 "Multus's own DEL of what it had added, exit 0"
assert_released 0 "after the refused ADD"
assert_clean "after the refused ADD"
t_eq "$(ls "$(devinfo_of badrail $CTR net1)" 2>/dev/null)" "" "Multus removed its device-info file"
cni DEL g $CTR "$POD_G"
t_eq "$T_RC" 0 "the runtime's DEL after the failed ADD ($T_OUT $T_ERR)"
rm_pod g

# ------------------------------------------------------- a DEL that fails
t_begin "$MODE: a DEL that failed: $([ "$MODE" = thin ] && echo "code 999" || echo "the shim says success"); the next DEL reads the edited NAD and releases"
fresh_node
POD_H=$(t_netns)
CTR=ctrh$$
mk_pod h rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}"
cni ADD h $CTR "$POD_H"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
touch "$MT_FAIL_DEL"
: > "$MT_CALLS"
cni DEL h $CTR "$POD_H"
if [ "$MODE" = thin ]; then
	t_eq "$T_RC $(t_jq .code)" "1 999" "Multus DEL fails with code 999"
	t_contains "$(t_jq .msg)" "made to fail by the test" "the plugin's message inside"
else
	t_eq "$T_RC" 0 "the shim says DEL succeeded"
fi
t_eq "$(mt_calls sriov-rdma DEL $CTR net1 7)" 1 "the delegate's DEL failed"
t_eq "$([ -f "$(rec $CTR net1)" ] && echo kept)" kept "the attachment is still recorded"
t_eq "$(sr_pod_link "$POD_H" net1 | cut -d' ' -f1)" net1 "the VF is still in the pod"
rm -f "$MT_FAIL_DEL"
# Multus dropped its cache with the failed DEL: the next one reads the NAD
# again, as edited since ADD.
mk_nad rail0 "$RES0" "$(rail_conf 0.3.1 rail0 "$POOL0" '{mtu: 1400, logLevel: "debug"}')"
: > "$MT_CALLS"
cni DEL h $CTR "$POD_H"
t_eq "$T_RC" 0 "the next DEL ($T_OUT $T_ERR)"
t_eq "$(mt_calls sriov-rdma DEL $CTR net1 0)" 1 "sriov-rdma ran DEL and exited 0"
t_eq "$(jq -r '.mtu, .deviceID' <<< "$(mt_stdin DEL $CTR net1)" | tr '\n' ' ')" "1400 $(sr_vf 0) " \
	"it read the edited NAD, with the VF from pod-resources"
assert_released 0 "after the second DEL"
assert_clean "after the second DEL"
mk_nad rail0 "$RES0" "$(rail_conf 0.3.1 rail0 "$POOL0")"
rm_pod h

# ------------------------------------------------ a NAD naming another VF
# Pod i holds VF 1; pod j, given VF 0 by the kubelet, comes through NAD $1
# whose own runtimeConfig.deviceID names VF 1 ($2: more jq on the config).
pick_vf1() { # NAD JQ
	fresh_node
	POD_I=$(t_netns)
	POD_J=$(t_netns)
	mk_pod i rail0 "{\"$RES0\": [\"$(sr_vf 1)\"]}"
	cni ADD i ctri$$ "$POD_I"
	t_eq "$T_RC" 0 "pod i holds VF 1 ($T_OUT $T_ERR)"
	mk_nad "$1" "$RES0" "$(rail_conf 1.0.0 "$1" "$POOL0" "{runtimeConfig: {deviceID: \"$(sr_vf 1)\"}}$2")"
	mk_pod j "$1" "{\"$RES0\": [\"$(sr_vf 0)\"]}"
	cni ADD j ctrj$$ "$POD_J"
}
# Both pods' DELs, pod j's first: pod i's VF untouched by it, then nothing held.
pick_vf1_end() {
	cni DEL j ctrj$$ "$POD_J"
	t_eq "$T_RC" 0 "DEL j ($T_OUT $T_ERR)"
	t_eq "$(jq -r '.deviceID // empty' "$(rec ctri$$ net1)" 2>/dev/null)" "$(sr_vf 1)" "pod i keeps its VF"
	cni DEL i ctri$$ "$POD_I"
	t_eq "$T_RC" 0 "DEL i ($T_OUT $T_ERR)"
	assert_released 0 "pod j"
	assert_released 1 "pod i"
	assert_clean "both pods"
	rm_pod i
	rm_pod j
}

t_begin "$MODE: a NAD that declares deviceID and carries runtimeConfig.deviceID naming another pod's VF gets its own VF"
pick_vf1 pick ""
t_eq "$T_RC" 0 "pod j's ADD ($T_OUT $T_ERR)"
t_eq "$(jq -r '.runtimeConfig.deviceID' <<< "$(mt_stdin ADD ctrj$$ net1)")" "$(sr_vf 0)" \
	"libcni replaced the NAD's runtimeConfig with Multus's"
t_eq "$(jq -r '.deviceID // empty' "$(rec ctrj$$ net1)" 2>/dev/null)" "$(sr_vf 0)" "pod j got the VF the kubelet gave it"
pick_vf1_end

t_begin "$MODE: a NAD that declares no capabilities and carries runtimeConfig.deviceID naming another pod's VF: code 999 wrapping the plugin's code 7, both VFs untouched"
pick_vf1 nocap " | del(.capabilities)"
t_eq "$T_RC" 1 "pod j's ADD fails"
t_eq "$(t_jq .code)" 999 "code 999 (Multus's own)"
t_eq "$(jq -r '.runtimeConfig.deviceID' <<< "$(mt_stdin ADD ctrj$$ net1)")" "$(sr_vf 1)" \
	"libcni passed the NAD's own runtimeConfig through"
t_contains "$(t_jq .msg)" "$(sr_vf 0)" "the message names the VF Multus gave"
t_contains "$(t_jq .msg)" "$(sr_vf 1)" "and the one the NAD asked for"
assert_released 0 "pod j's refused ADD"
pick_vf1_end

t_done
