#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# test/multus/multus.sh thin|thick: sriov-rdma behind the real Multus v4.2.4
# (built by test/multus/build.sh into $CHAIN_DIR/multus/bin), on a faked
# node: the VFs of test/netns/sriov_lib.sh (veth ends, a sysfs tree, the
# recording PF and RDMA fakes), a fake API server and kubelet pod-resources
# endpoint (fakenode), and the SR-IOV device plugin's device-info files in
# /run/k8s.cni.cncf.io/devinfo/dp.
#
# thin:  the multus binary is the CNI plugin, called as CRI-O calls it, with a
#        kubeconfig; it runs in a mount namespace of its own where the
#        kubelet's pod-resources directory is the fake's.
# thick: multus-shim is the CNI plugin; multus-daemon runs as its DaemonSet
#        runs it: in a mount namespace of its own holding the node's root at
#        /hostroot (chrootDir), the service-account token and CA, the
#        pod-resources socket, in-cluster config (HTTPS) only. The delegates
#        run chrooted with the daemon's environment.
#
# A wrapper in CNI_PATH records every call of sriov-rdma with its own exit
# code (the shim answers every DEL with success whatever the plugin said).
# Everything made here (namespaces, mounts, processes, files under
# /run/k8s.cni.cncf.io, directories the node lacked) is removed on exit.
MODE=${1:-}
case $MODE in thin|thick) ;; *) echo "usage: multus.sh thin|thick" >&2; exit 2 ;; esac

: "${SOURCE_DIR:?set SOURCE_DIR to the project root}"
. "$SOURCE_DIR/test/netns/sriov_lib.sh"
# A test killed on timeout (meson sends SIGTERM) still cleans up: the
# clean-up is lib.sh's EXIT trap.
trap 'exit 143' TERM INT

MB=${CHAIN_DIR:+$CHAIN_DIR/multus/bin}
t_begin "$MODE: Multus and the fake node are built"
for b in multus multus-shim multus-daemon fakenode; do
	if [ -z "$MB" ] || [ ! -x "$MB/$b" ]; then
		t_fail "no ${MB:-\$CHAIN_DIR/multus/bin}/$b: run test/multus/build.sh CHAIN_DIR and set CHAIN_DIR (scripts/test stage 6 does both)"
		t_done
	fi
done
for p in unshare jq; do
	command -v "$p" >/dev/null || { t_fail "needs $p"; t_done; }
done
mountpoint -q / || { t_fail "the client's mount namespace needs / to be a mount point, and it is not here (a chroot's root is not: bind-mount the root onto itself before chrooting)"; t_done; }

NS=mt$$
NODE=node$$
RES0=sriovrdmatest$$.io/rail0
RES1=sriovrdmatest$$.io/rail1
DEVINFO=/run/k8s.cni.cncf.io/devinfo
KD=$T_TMP/kube
RF=$T_TMP/rdma-fake
CALLS=$T_TMP/calls.log
CLUSTER_LOG=$T_TMP/cluster.log
PR=$T_TMP/podres
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
mkdir -p "$KD/objects/pods/$NS" "$KD/objects/nads/$NS" "$PR" "$RF" "$T_TMP/bin" "$T_TMP/env"

# The device plugin's and Multus's device-info files live on the node's /run.
printf '{"allowedStateDirs":["%s"],"allowedDataDirs":["%s"],"allowedLogDirs":["%s"],"allowedDeviceInfoDirs":["%s","%s","/var/run/k8s.cni.cncf.io/devinfo"],"allowedResolvConfDirs":["%s"]}\n' \
	"$T_TMP" "$T_TMP" "$T_TMP" "$T_TMP" "$DEVINFO" "$T_TMP" > "$SRIOV_RDMA_CNI_NODE_CONFIG"
export SRIOV_RDMA_RDMA_FAKE_DIR=$RF

# mk_node_dir DIR: create DIR (and parents) the node lacks; each removed at exit
# (rmdir: never a directory something else filled meanwhile).
mk_node_dir() {
	local d=$1 top='' dirs=() i
	while [ ! -e "$d" ]; do top=$d; dirs+=("$d"); d=$(dirname "$d"); done
	[ -n "$top" ] || return 0
	mkdir -p "$1" || return 1
	for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do t_defer "rmdir '${dirs[$i]}'"; done
}
mk_node_dir "$DEVINFO/dp" && mk_node_dir "$DEVINFO/cni" || { t_fail "cannot make $DEVINFO/dp and cni"; t_done; }
t_defer "rm -f $DEVINFO/dp/sriovrdmatest$$.io-* $DEVINFO/cni/$NS-*"

# CNI_PATH: sriov-rdma behind a recorder, pool-ipam, Debian's plugins, and
# "cluster", a stand-in for the cluster network that logs what it is asked.
cat > "$T_TMP/bin/sriov-rdma" <<EOS
#!/bin/sh
in=\$(cat)
if [ "\$CNI_COMMAND" = DEL ] && [ -e "$T_TMP/fail-del" ]; then
	echo "DEL \$CNI_CONTAINERID \$CNI_IFNAME rc=7" >> "$CALLS"
	echo '{"cniVersion":"1.0.0","code":7,"msg":"DEL failed (made to fail by the test)"}'
	exit 1
fi
out=\$(printf '%s' "\$in" | ${PLUGIN_WRAPPER:-} "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma")
rc=\$?
id="\$CNI_COMMAND-\$CNI_CONTAINERID-\$CNI_IFNAME"
printf '%s\n' "\$in" > "$T_TMP/env/\$id.stdin"
env | grep -E '^(CNI_[A-Z]*|SRIOV_RDMA_[A-Z_]*)=' | sort > "$T_TMP/env/\$id.env"
echo "\$CNI_COMMAND \$CNI_CONTAINERID \$CNI_IFNAME rc=\$rc" >> "$CALLS"
printf '%s' "\$out"
exit \$rc
EOS
printf '#!/bin/sh\nexec %s %q "$@"\n' "${PLUGIN_WRAPPER:-}" "$BUILD_DIR/plugins/pool-ipam/pool-ipam" > "$T_TMP/bin/pool-ipam"
cat > "$T_TMP/bin/cluster" <<EOS
#!/bin/sh
conf=\$(cat)
echo "\$CNI_COMMAND \$CNI_CONTAINERID \$CNI_IFNAME" >> "$CLUSTER_LOG"
case \$CNI_COMMAND in
VERSION) echo '{"cniVersion":"1.1.0","supportedVersions":["0.3.1","0.4.0","1.0.0","1.1.0"]}' ;;
ADD) v=\$(printf '%s' "\$conf" | sed -n 's/.*"cniVersion" *: *"\([^"]*\)".*/\1/p')
     echo "{\"cniVersion\":\"\$v\",\"interfaces\":[{\"name\":\"\$CNI_IFNAME\",\"sandbox\":\"\$CNI_NETNS\"}],\"ips\":[{\"address\":\"10.99.0.5/24\",\"interface\":0}]}" ;;
esac
exit 0
EOS
chmod +x "$T_TMP/bin/"*
ln -sf "$PEER_CNI_DIR/host-local" "$T_TMP/bin/host-local"
CNIPATH=$T_TMP/bin

# The fake API server and kubelet pod-resources endpoint.
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
"$MB/fakenode" -dir "$KD" -token "$TOKEN" -podres "$PR/kubelet.sock" 2>>"$KD/server.log" &
FAKENODE_PID=$!
t_defer "kill $FAKENODE_PID; wait $FAKENODE_PID"
for ((i = 0; i < 1200; i++)); do
	[ -s "$KD/addr" ] && break
	kill -0 "$FAKENODE_PID" 2>/dev/null || break
	sleep 0.05
done
[ -s "$KD/addr" ] || { t_fail "fakenode did not start: $(cat "$KD/server.log")"; t_done; }
ADDR=$(cat "$KD/addr")
cat > "$KD/kubeconfig" <<EOK
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://$ADDR
    certificate-authority-data: $(base64 -w0 < "$KD/ca.crt")
users:
- name: multus
  user:
    token: $TOKEN
contexts:
- name: test
  context: {cluster: test, user: multus}
current-context: test
EOK

# Fixed node paths Multus reads: made only where the node lacks them.
mk_node_dir /var/lib/kubelet/pod-resources || { t_fail "cannot make the pod-resources dir"; t_done; }

# The Multus config as the runtime reads it from its net.d (thick: the shim's).
multus_conf() { # VERSION
	local type=multus
	[ "$MODE" = thick ] && type=multus-shim
	jq -n --arg v "$1" --arg t "$type" --arg kc "$KD/kubeconfig" --arg cache "$T_TMP/multus-cache" \
		--arg log "$T_TMP/multus.log" --arg sock "$T_TMP/multus-sock" --arg bin "$CNIPATH" \
		'{cniVersion: $v, name: "multus-cni-network", type: $t, kubeconfig: $kc, cniDir: $cache,
		  binDir: $bin, logFile: $log, logLevel: "debug", logToStderr: false, daemonSocketDir: $sock,
		  delegates: [{cniVersion: $v, name: "cluster", plugins: [{type: "cluster"}]}]}'
}
multus_conf 1.0.0 > "$T_TMP/multus.conf"

DAEMON_PID=
start_daemon() {
	local port=${ADDR##*:} i
	mkdir -p "$T_TMP/sa" "$T_TMP/net.d" "$T_TMP/multus-sock"
	printf '%s' "$TOKEN" > "$T_TMP/sa/token"
	cp "$KD/ca.crt" "$T_TMP/sa/ca.crt"
	echo "$NS" > "$T_TMP/sa/namespace"
	jq -n --arg d "$T_TMP" --arg conf "$T_TMP/multus.conf" \
		'{chrootDir: "/hostroot", cniVersion: "1.0.0", logLevel: "debug", logFile: ($d + "/daemon.log"),
		  cniConfigDir: ($d + "/net.d"), multusAutoconfigDir: ($d + "/net.d"), multusConfigFile: "auto",
		  socketDir: ($d + "/multus-sock"),
		  cniDir: ($d + "/multus-cache"), binDir: ($d + "/bin")}' > "$T_TMP/daemon-config.json"
	# "auto" as in the DaemonSet: v4.2.4's daemon exits at once without its
	# config manager, which watches the cluster network's config in net.d.
	jq '.delegates[0]' "$T_TMP/multus.conf" > "$T_TMP/net.d/10-cluster.conflist"
	rm -f "$T_TMP/multus-sock/multus.sock"
	# A mount namespace whose mounts never reach the node: slave, so the
	# pods' namespaces the node mounts later (/run/netns) still show inside,
	# as with the DaemonSet's HostToContainer propagation.
	KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$port MULTUS_NODE_NAME=$NODE \
	unshare -m --propagation slave /bin/sh -ec '
		mount --bind "$1/sa" /var/run/secrets/kubernetes.io/serviceaccount
		mount --bind "$1/podres" /var/lib/kubelet/pod-resources
		mount --rbind / /hostroot
		exec "$2" -config "$1/daemon-config.json"' sh "$T_TMP" "$MB/multus-daemon" \
		>>"$T_TMP/daemon.out" 2>&1 &
	DAEMON_PID=$!
	for ((i = 0; i < 1200; i++)); do
		[ -S "$T_TMP/multus-sock/multus.sock" ] && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "multus-daemon did not start: $(tail -20 "$T_TMP/daemon.out" "$T_TMP/daemon.log" 2>/dev/null)" >&2
	return 1
}
stop_daemon() {
	[ -n "$DAEMON_PID" ] || return 0
	kill "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}
if [ "$MODE" = thick ]; then
	mk_node_dir /hostroot && mk_node_dir /var/run/secrets/kubernetes.io/serviceaccount ||
		{ t_fail "cannot make /hostroot or the service-account dir"; t_done; }
	t_defer 'stop_daemon'
	start_daemon || { t_fail "multus-daemon did not start"; t_done; }
fi

# mk_nad NAME RESOURCE CONFIG-JSON
mk_nad() {
	jq -n --arg r "$2" --arg c "$3" \
		'{apiVersion: "k8s.cni.cncf.io/v1", kind: "NetworkAttachmentDefinition",
		  metadata: {annotations: {"k8s.v1.cni.cncf.io/resourceName": $r}}, spec: {config: $c}}' \
		> "$KD/objects/nads/$NS/$1.json.tmp" && mv "$KD/objects/nads/$NS/$1.json.tmp" "$KD/objects/nads/$NS/$1.json"
}
# rail_conf VERSION NAME IPAM [extra jq]: the sriov-rdma config of a NAD, as
# sriov-network-operator renders it (capabilities CNIDeviceInfoFile).
rail_conf() {
	jq -nc --arg v "$1" --arg n "$2" --argjson ipam "$3" --arg s "$SR_STATE" --arg log "$T_TMP/plugin.log" \
		'{cniVersion: $v, name: $n, type: "sriov-rdma", capabilities: {CNIDeviceInfoFile: true},
		  stateDir: $s, logFile: $log, logLevel: "info", rdma: "exclusive", rdmaName: ("rdma_" + $n),
		  multiRail: true, ipam: $ipam} + '"${4:-{\}}"
}
POOL0="{\"type\": \"pool-ipam\", \"dataDir\": \"$T_TMP/pool\", \"ranges\": [[{\"subnet\": \"10.71.0.0/24\", \"gateway\": \"10.71.0.1\"}]]}"
HL1="{\"type\": \"host-local\", \"dataDir\": \"$T_TMP/hl\", \"ranges\": [[{\"subnet\": \"10.72.0.0/24\", \"gateway\": \"10.72.0.1\"}]]}"
mk_nad rail0 "$RES0" "$(rail_conf 0.3.1 rail0 "$POOL0")"
mk_nad rail1 "$RES1" "$(rail_conf 1.0.0 rail1 "$HL1")"
mk_nad badrail "$RES0" "$(rail_conf 1.0.0 badrail "$POOL0" '{vlan: 5000}')"

# mk_pod NAME NETWORKS DEVICES-JSON: a pod on this node.
mk_pod() {
	jq -n --arg n "$2" --arg d "$3" --arg node "$NODE" --arg uid "$(uid_of "$1")" \
		'{apiVersion: "v1", kind: "Pod", metadata: {uid: $uid,
		  annotations: {"k8s.v1.cni.cncf.io/networks": $n, "fake.test/devices": $d}},
		  spec: {nodeName: $node, containers: [{name: "c", image: "none"}]}}' \
		> "$KD/objects/pods/$NS/$1.json.tmp" && mv "$KD/objects/pods/$NS/$1.json.tmp" "$KD/objects/pods/$NS/$1.json"
	# The server has it once it shows its current state; the daemon's
	# informer a moment later (Multus waits for it on a miss).
	for ((i = 0; i < 600; i++)); do [ -f "$KD/current/pods/$NS/$1.json" ] && return 0; sleep 0.05; done
	return 1
}
rm_pod() {
	rm -f "$KD/objects/pods/$NS/$1.json"
	for ((i = 0; i < 600; i++)); do [ -f "$KD/current/pods/$NS/$1.json" ] || return 0; sleep 0.05; done
	return 1
}
uid_of() { printf '5e1f0000-0000-4000-8000-%012d' "$(printf '%s' "$1" | cksum | cut -d' ' -f1 | cut -c1-12)"; }
# mk_dp RESOURCE PCI RDMA: the device plugin's device-info file for the VF.
mk_dp() {
	local f="$DEVINFO/dp/${1//\//-}-$2-device.json"
	printf '{"type":"pci","version":"1.1.0","pci":{"pci-address":"%s","rdma-device":"%s"}}' "$2" "$3" > "$f"
	chmod 0444 "$f"
}
dp_file() { echo "$DEVINFO/dp/${1//\//-}-$2-device.json"; }

# cni COMMAND POD CTR NETNS [CONF-FILE]: the runtime's call of the Multus
# CNI binary (thin: multus in its mount namespace; thick: multus-shim).
cni() {
	local cmd=$1 pod=$2 ctr=$3 netns=$4 conf=${5:-$T_TMP/multus.conf}
	local args uid
	uid=$(uid_of "$pod")
	args="IgnoreUnknown=1;K8S_POD_NAMESPACE=$NS;K8S_POD_NAME=$pod;K8S_POD_INFRA_CONTAINER_ID=$ctr;K8S_POD_UID=$uid"
	local err=$T_TMP/stderr.$BASHPID
	if [ "$MODE" = thin ]; then
		T_OUT=$(env CNI_COMMAND="$cmd" CNI_CONTAINERID="$ctr" CNI_NETNS="$netns" CNI_IFNAME=eth0 \
			CNI_PATH="$CNIPATH" CNI_ARGS="$args" \
			unshare -m --propagation slave /bin/sh -ec \
			'mount --bind "$1" /var/lib/kubelet/pod-resources; exec "$2"' sh "$PR" "$MB/multus" \
			< "$conf" 2>"$err")
	else
		T_OUT=$(env -i PATH="$PATH" CNI_COMMAND="$cmd" CNI_CONTAINERID="$ctr" CNI_NETNS="$netns" \
			CNI_IFNAME=eth0 CNI_PATH="$CNIPATH" CNI_ARGS="$args" "$MB/multus-shim" < "$conf" 2>"$err")
	fi
	T_RC=$?
	T_ERR=$(cat "$err")
	rm -f "$err"
}

status_of() { jq -r '.metadata.annotations["k8s.v1.cni.cncf.io/network-status"] // ""' "$KD/current/pods/$NS/$1.json" 2>/dev/null; }
# rail_status POD NET: the network-status entry of NET.
rail_status() { status_of "$1" | jq -c --arg n "$NS/$2" '.[] | select(.name == $n)'; }
pod_rdma() { awk -v ns="$2" '$1 == '"$1"' && $4 == ns {print $2}' "$RF/rdma.devs"; }
rec() { echo "$SR_STATE/$1:$2.json"; }
calls_of() { grep -c "^$1 $2 $3 rc=$4\$" "$CALLS" 2>/dev/null; }
leased() { { find "$T_TMP/pool" -type f -name '*10.71.*' 2>/dev/null; find "$T_TMP/hl" -type f -name '10.72.*' 2>/dev/null; } | wc -l; }

# Two VFs: 0000:3b:00.2 (mlx5_2, RDMA index 3) and 0000:3b:00.3 (mlx5_3, index 4).
fresh_node() {
	sr_setup 2 || return 1
	echo exclusive > "$RF/rdma.mode"
	printf '3 mlx5_2 %s %s\n4 mlx5_3 %s %s\n' "$(sr_net 0)" "$HOST_NS" "$(sr_net 1)" "$HOST_NS" > "$RF/rdma.devs"
	: > "$RF/rdma.calls"
	mk_dp "$RES0" "$(sr_vf 0)" mlx5_2
	mk_dp "$RES1" "$(sr_vf 1)" mlx5_3
	mk_dp "$RES0" "$(sr_vf 1)" mlx5_3
	ORIG0=$(sr_host_link "$(sr_net 0)")
	ORIG1=$(sr_host_link "$(sr_net 1)")
}
# Everything a released VF N has: back on the node as it was, RDMA device home.
assert_released() { # N WHAT
	local orig
	orig=$([ "$1" = 0 ] && echo "$ORIG0" || echo "$ORIG1")
	t_eq "$(sr_host_link "$(sr_net "$1")")" "$orig" "$2: VF $1 netdev back on the node as it was"
	t_eq "$(awk '$1 == '"$(($1 + 3))"' {print $2, $4}' "$RF/rdma.devs")" "mlx5_$(($1 + 2)) $HOST_NS" \
		"$2: RDMA device of VF $1 home under its name"
}

# ---------------------------------------------------------------- one rail
t_begin "$MODE: ADD of a pod with one RDMA network (NAD cniVersion 0.3.1, pool-ipam)"
fresh_node
POD_A=$(t_netns)
mk_pod a rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}" || t_fail "the fake API server did not load pod a"
cni ADD a ctra$$ "$POD_A"
t_eq "$T_RC" 0 "Multus ADD ($T_OUT $T_ERR)"
t_eq "$(calls_of ADD ctra$$ net1 0)" 1 "sriov-rdma ran ADD once, as net1, and exited 0"
t_eq "$(sr_pod_link "$POD_A" net1 | cut -d' ' -f1)" net1 "the VF is net1 in the pod"
MAC_A=$(sr_pod_link "$POD_A" net1 | cut -d' ' -f2)
t_contains "$(ip -n "$(basename "$POD_A")" -o -4 addr show net1)" "10.71.0.2/24" "net1's address from pool-ipam"
t_eq "$(jq -r '.deviceID // empty' "$(rec ctra$$ net1)" 2>/dev/null; [ -f "$(rec ctra$$ net1)" ] && echo recorded)" \
	"$(printf '%s\nrecorded' "$(sr_vf 0)")" "the attachment is recorded with the VF Multus gave (deviceID from pod-resources)"
RDMA_A=$(pod_rdma 3 "$(stat -L -c %i "$POD_A")")
t_eq "${RDMA_A:+moved}" moved "mlx5_2 moved into the pod (the RDMA fake holds it there)"
t_not_contains "$RDMA_A" mlx5_2 "renamed in the pod (rdmaName)"
st=$(rail_status a rail0)
t_eq "$(jq -r '.interface' <<< "$st")" net1 "network-status: interface"
t_eq "$(jq -r '.ips | join(",")' <<< "$st")" 10.71.0.2 "network-status: ips"
t_eq "$(jq -r '.mac' <<< "$st")" "$MAC_A" "network-status: mac"
t_eq "$(jq -r '."device-info".pci."pci-address"' <<< "$st")" "$(sr_vf 0)" "network-status: device-info pci-address"
t_eq "$(jq -r '."device-info".pci."rdma-device"' <<< "$st")" "$RDMA_A" "network-status: device-info rdma-device is the name in the pod"
t_eq "$(status_of a | jq -r '.[0].name, .[0].default' | tr '\n' ' ')" "cluster true " "network-status: the cluster network first, default"
CNIDI=$(jq -r '.runtimeConfig.CNIDeviceInfoFile // empty' "$T_TMP/env/ADD-ctra$$-net1.stdin" 2>/dev/null)
t_contains "$CNIDI" "/var/run/k8s.cni.cncf.io/devinfo/cni/$NS-" "Multus gave runtimeConfig.CNIDeviceInfoFile"
t_eq "$(jq -r '.pci."rdma-device", .pci."pci-address"' "$CNIDI" 2>/dev/null | tr '\n' ' ')" "$RDMA_A $(sr_vf 0) " \
	"the device-info file Multus copied now names the pod's RDMA device"
t_eq "$(cat "$(dp_file "$RES0" "$(sr_vf 0)")")" \
	"{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":{\"pci-address\":\"$(sr_vf 0)\",\"rdma-device\":\"mlx5_2\"}}" \
	"the device plugin's own file is untouched"
env_a=$(cat "$T_TMP/env/ADD-ctra$$-net1.env" 2>/dev/null)
t_contains "$env_a" "CNI_ARGS=IgnoreUnknown=true;K8S_POD_NAMESPACE=$NS;K8S_POD_NAME=a;K8S_POD_INFRA_CONTAINER_ID=ctra$$;K8S_POD_UID=" "CNI_ARGS Multus passes the plugin"
t_contains "$env_a" "SRIOV_RDMA_SYSFS_ROOT=$SR_SYS" "the plugin got the fakes' environment (thin: the runtime's; thick: the daemon's)"
t_eq "$(jq -r '.deviceID' "$T_TMP/env/ADD-ctra$$-net1.stdin" 2>/dev/null)" "$(sr_vf 0)" "Multus injected deviceID"

t_begin "$MODE: CHECK through Multus reaches the cluster network only"
: > "$CLUSTER_LOG"
cni CHECK a ctra$$ "$POD_A"
t_eq "$T_RC" 0 "Multus CHECK ($T_OUT $T_ERR)"
t_eq "$(grep -c "^CHECK ctra$$ " "$CALLS")" 0 "sriov-rdma was not asked (Multus v4.2.4 sends CHECK to its delegates list only)"
t_eq "$(grep -c "^CHECK ctra$$ eth0" "$CLUSTER_LOG")" 1 "the cluster network got CHECK"

t_begin "$MODE: DEL releases the VF, the RDMA device, the address and the records"
: > "$CLUSTER_LOG"
: > "$CALLS"
cni DEL a ctra$$ "$POD_A"
t_eq "$T_RC" 0 "Multus DEL ($T_OUT $T_ERR)"
t_eq "$(calls_of DEL ctra$$ net1 0)" 1 "sriov-rdma ran DEL as net1 and exited 0"
assert_released 0 "after DEL"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
t_eq "$(leased)" 0 "no address held"
t_eq "$(ls "$CNIDI" 2>/dev/null)" "" "Multus removed its device-info file"
t_eq "$(grep -c "^DEL ctra$$ eth0" "$CLUSTER_LOG")" 1 "the cluster network got DEL"
rm_pod a

# ---------------------------------------------------------------- two rails
t_begin "$MODE: ADD of a pod with two rails (multiRail, 0.3.1 pool-ipam and 1.0.0 host-local)"
fresh_node
POD_B=$(t_netns)
mk_pod b '[{"name": "rail0"}, {"name": "rail1"}]' "{\"$RES0\": [\"$(sr_vf 0)\"], \"$RES1\": [\"$(sr_vf 1)\"]}" ||
	t_fail "the fake API server did not load pod b"
cni ADD b ctrb$$ "$POD_B"
t_eq "$T_RC" 0 "Multus ADD ($T_OUT $T_ERR)"
t_eq "$(calls_of ADD ctrb$$ net1 0)$(calls_of ADD ctrb$$ net2 0)" 11 "sriov-rdma ADD net1 and net2, both exit 0"
pns=$(stat -L -c %i "$POD_B")
for n in 0 1; do
	ifn=net$((n + 1))
	st=$(rail_status b rail$n)
	t_eq "$(jq -r '.interface' <<< "$st")" "$ifn" "rail$n: network-status interface"
	t_eq "$(jq -r '.mac' <<< "$st")" "$(sr_pod_link "$POD_B" "$ifn" | cut -d' ' -f2)" "rail$n: mac is $ifn's in the pod"
	t_eq "$(jq -r '."device-info".pci."pci-address"' <<< "$st")" "$(sr_vf $n)" "rail$n: pci-address"
	t_eq "$(jq -r '."device-info".pci."rdma-device"' <<< "$st")" "$(pod_rdma $((n + 3)) "$pns")" "rail$n: rdma-device is the pod's name"
	t_eq "$([ -f "$(rec ctrb$$ "$ifn")" ] && echo yes)" yes "rail$n: recorded"
done
t_contains "$(rail_status b rail0 | jq -r '.ips[0]')" 10.71.0. "rail0's address from its pool"
t_eq "$(rail_status b rail1 | jq -r '.ips[0]')" 10.72.0.2 "rail1's address from host-local"
t_contains "$(ip -n "$(basename "$POD_B")" rule show)" "from 10.72.0.2 lookup" "multiRail: a source rule for the second rail"

t_begin "$MODE: DEL of the two-rail pod releases both rails"
: > "$CALLS"
cni DEL b ctrb$$ "$POD_B"
t_eq "$T_RC" 0 "Multus DEL ($T_OUT $T_ERR)"
t_eq "$(calls_of DEL ctrb$$ net1 0)$(calls_of DEL ctrb$$ net2 0)" 11 "sriov-rdma DEL net1 and net2, both exit 0"
assert_released 0 "rail0"
assert_released 1 "rail1"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
t_eq "$(leased)" 0 "no address held"
t_eq "$(ls "$DEVINFO/cni/$NS-"* 2>/dev/null)" "" "no device-info file of the pod left"
rm_pod b

# ------------------------------------------------- DEL after the pod is gone
t_begin "$MODE: DEL after the pod was deleted from the API (Multus's cache)"
fresh_node
POD_C=$(t_netns)
mk_pod c rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}" || t_fail "the fake API server did not load pod c"
cni ADD c ctrc$$ "$POD_C"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
rm_pod c || t_fail "pod c still served"
sleep 1 # the daemon's informer sees the deletion (no assertion on when)
: > "$CALLS"
cni DEL c ctrc$$ "$POD_C"
t_eq "$T_RC" 0 "Multus DEL ($T_OUT $T_ERR)"
t_eq "$(calls_of DEL ctrc$$ net1 0)" 1 "sriov-rdma ran DEL (from Multus's cache) and exited 0"
assert_released 0 "pod gone"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
t_eq "$(leased)" 0 "no address held"

t_begin "$MODE: DEL after the pod's network namespace is gone"
fresh_node
POD_D=$(t_netns)
mk_pod d rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}" || t_fail "the fake API server did not load pod d"
cni ADD d ctrd$$ "$POD_D"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
command ip netns del "$(basename "$POD_D")"
: > "$CALLS"
cni DEL d ctrd$$ "$POD_D"
t_eq "$T_RC" 0 "Multus DEL ($T_OUT $T_ERR)"
t_eq "$(calls_of DEL ctrd$$ net1 0)" 1 "sriov-rdma ran DEL and exited 0"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
t_eq "$(leased)" 0 "no address held"
rm_pod d

# ------------------------------------------------------------- concurrency
t_begin "$MODE: two pods started and stopped concurrently"
fresh_node
POD_E=$(t_netns)
POD_F=$(t_netns)
mk_pod e rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}" || t_fail "pod e not loaded"
mk_pod f rail0 "{\"$RES0\": [\"$(sr_vf 1)\"]}" || t_fail "pod f not loaded"
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
t_eq "$(calls_of DEL ctre$$ net1 0)$(calls_of DEL ctrf$$ net1 0)" 11 "sriov-rdma DEL exit 0 for both"
assert_released 0 "pod e"
assert_released 1 "pod f"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
t_eq "$(leased)" 0 "no address held"
rm_pod e
rm_pod f

# --------------------------------------------------------------- bad NAD
t_begin "$MODE: a NAD whose sriov-rdma config is invalid: the error Multus returns names the field"
fresh_node
POD_G=$(t_netns)
mk_pod g badrail "{\"$RES0\": [\"$(sr_vf 0)\"]}" || t_fail "pod g not loaded"
cni ADD g ctrg$$ "$POD_G"
t_eq "$([ "$T_RC" != 0 ] && echo failed)" failed "Multus ADD fails"
t_contains "$T_OUT$T_ERR" "vlan" "the error Multus returns names vlan"
t_eq "$(grep -c "^ADD ctrg$$ net1 rc=[1-9]" "$CALLS")" 1 "sriov-rdma refused the ADD"
# Multus v4.2.4 posts no event of its own for a delegate's error (only
# AddedInterface, and NoNetworkFound for a missing NAD): the kubelet's
# FailedCreatePodSandBox event carries the message returned here.
t_eq "$(grep -c vlan "$KD/events.log")" 0 "no event from Multus for the error"
t_contains "$(cat "$KD/events.log")" '"reason":"AddedInterface"' "Multus's own events reach the API"
assert_released 0 "after the refused ADD"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
: > "$CALLS"
cni DEL g ctrg$$ "$POD_G"
t_eq "$T_RC" 0 "the runtime's DEL after the failed ADD ($T_OUT $T_ERR)"
t_eq "$(leased)" 0 "no address held"
rm_pod g

# ------------------------------------------------------ daemon restarted
if [ "$MODE" = thick ]; then
	t_begin "thick: multus-daemon restarted between ADD and DEL"
	fresh_node
	POD_H=$(t_netns)
	mk_pod h rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}" || t_fail "pod h not loaded"
	cni ADD h ctrh$$ "$POD_H"
	t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
	stop_daemon
	start_daemon || t_fail "the daemon did not start again"
	: > "$CALLS"
	cni DEL h ctrh$$ "$POD_H"
	t_eq "$T_RC" 0 "Multus DEL through the new daemon ($T_OUT $T_ERR)"
	t_eq "$(calls_of DEL ctrh$$ net1 0)" 1 "sriov-rdma ran DEL and exited 0"
	assert_released 0 "after the restart"
	t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
	t_eq "$(leased)" 0 "no address held"
	rm_pod h

	t_begin "thick: the shim answers DEL with success when the delegate's DEL failed"
	fresh_node
	POD_I=$(t_netns)
	mk_pod i rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}" || t_fail "pod i not loaded"
	cni ADD i ctri$$ "$POD_I"
	t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
	# The recorder in CNI_PATH fails sriov-rdma's DEL (exit 1, CNI error 7).
	touch "$T_TMP/fail-del"
	: > "$CALLS"
	cni DEL i ctri$$ "$POD_I"
	t_eq "$T_RC" 0 "the shim says DEL succeeded"
	t_eq "$(grep -c "^DEL ctri$$ net1 rc=7" "$CALLS")" 1 "the delegate's DEL failed"
	t_eq "$([ -f "$(rec ctri$$ net1)" ] && echo kept)" kept "the attachment is still recorded: the shim's 0 proves nothing"
	rm -f "$T_TMP/fail-del"
	: > "$CALLS"
	cni DEL i ctri$$ "$POD_I"
	t_eq "$(calls_of DEL ctri$$ net1 0)" 1 "a later DEL releases it (sriov-rdma exit 0)"
	assert_released 0 "after the second DEL"
	t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
	rm_pod i
fi

# ----------------------------------------------------------- STATUS and GC
# As libcni (CRI-O) sends them: CNI_COMMAND and CNI_PATH only, no pod.
cni_runtime() { # COMMAND CONF-FILE
	local bin=$MB/multus
	[ "$MODE" = thick ] && bin=$MB/multus-shim
	T_OUT=$(env -i PATH="$PATH" CNI_COMMAND="$1" CNI_PATH="$CNIPATH" "$bin" < "$2" 2>"$T_TMP/stderr")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/stderr")
}
t_begin "$MODE: STATUS and GC through Multus (cniVersion 1.1.0): never reach sriov-rdma"
fresh_node
multus_conf 1.1.0 > "$T_TMP/multus11.conf"
# GC with an empty list of valid attachments: for a plugin that heard it,
# pod j's attachment would be garbage.
jq -c '. + {"cni.dev/valid-attachments": []}' "$T_TMP/multus11.conf" > "$T_TMP/multus11-gc.conf"
POD_J=$(t_netns)
mk_pod j rail0 "{\"$RES0\": [\"$(sr_vf 0)\"]}" || t_fail "pod j not loaded"
cni ADD j ctrj$$ "$POD_J"
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
: > "$CLUSTER_LOG"
: > "$CALLS"
cni_runtime STATUS "$T_TMP/multus11.conf"
STATUS_RC=$T_RC STATUS_ERR="$T_OUT $T_ERR"
cni_runtime GC "$T_TMP/multus11-gc.conf"
GC_RC=$T_RC GC_ERR="$T_OUT $T_ERR"
if [ "$MODE" = thin ]; then
	t_eq "$STATUS_RC" 0 "Multus STATUS ($STATUS_ERR)"
	t_eq "$(grep -c '^STATUS' "$CLUSTER_LOG")" 1 "the cluster network got STATUS"
	t_eq "$GC_RC" 0 "Multus GC ($GC_ERR)"
	t_eq "$(grep -c '^GC' "$CLUSTER_LOG")" 1 "the cluster network got GC"
else
	# The daemon asks every request for a container ID and a pod, which
	# STATUS and GC never carry: both fail before any plugin runs.
	t_eq "$([ "$STATUS_RC" != 0 ] && echo failed)" failed "multus-shim STATUS fails ($STATUS_ERR)"
	t_eq "$([ "$GC_RC" != 0 ] && echo failed)" failed "multus-shim GC fails ($GC_ERR)"
	t_contains "$STATUS_ERR" "CNI_CONTAINERID" "the daemon's reason"
	t_eq "$(grep -c '^STATUS\|^GC' "$CLUSTER_LOG")" 0 "not even the cluster network heard them"
fi
t_eq "$(grep -c '^STATUS\|^GC' "$CALLS")" 0 "sriov-rdma heard neither STATUS nor GC"
t_eq "$([ -f "$(rec ctrj$$ net1)" ] && echo kept)" kept "pod j's record is still there (nothing collected it)"
: > "$CALLS"
cni DEL j ctrj$$ "$POD_J"
t_eq "$(calls_of DEL ctrj$$ net1 0)" 1 "DEL (sriov-rdma exit 0)"
assert_released 0 "after DEL"
rm_pod j

t_done
