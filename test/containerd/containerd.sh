#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# containerd (Debian's, unpacked from the release SUITE names) calling the
# plugins, driven through the CRI as the kubelet drives it, by the suite's
# own client (cri_client.py): RunPodSandbox, PodSandboxStatus,
# StopPodSandbox, RemovePodSandbox.
#
#   test/containerd/containerd.sh bookworm|trixie
#
# One network in conf_dir: sriov-rdma with pool-ipam, PF-side settings the
# fake PF must get back after every DEL. A pod names its VF in an
# annotation, which containerd hands the plugins as the capability
# io.kubernetes.cri.pod-annotations; the recording wrapper in CNI_PATH turns
# it into the deviceID Multus or a DRA driver would inject, and logs every
# call (command, environment, what containerd sent, the answer, and how many
# processes were still in the pod's namespace).
#
# containerd, its shims and libcni's cache (/var/lib/cni, a fixed path) run
# in a private mount namespace over directories of the test's own, so two
# containerds, the other tests and the host's never meet. containerd is
# restarted for each change of the network's config: it reloads conf_dir on
# its own, but no answer says when.
#
# Environment: BUILD_DIR, SOURCE_DIR as the netns tests; PLUGIN_WRAPPER.

SUITE=${1:?usage: containerd.sh bookworm|trixie}

if [ "${CTRD_MNTNS:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
	for b in runc gcc jq unshare flock apt-get dpkg-deb; do
		command -v "$b" >/dev/null || { echo "FAIL: '$b' not found (scripts/setup clients)"; exit 1; }
	done
	# A fresh Debian has only /usr/bin/python3, where Debian's gRPC is.
	if ! /usr/bin/python3 -c 'import grpc, grpc_tools.protoc' 2>/dev/null; then
		echo "FAIL: /usr/bin/python3 lacks grpc or grpc_tools (scripts/setup clients)"
		exit 1
	fi
	if ! mountpoint -q /; then
		echo "FAIL: the test's mount namespace needs / to be a mount point (in a chroot, bind-mount its root onto itself first)"
		exit 1
	fi
	CTRD_DIR=$("$SOURCE_DIR/test/containerd/debs.sh" "$BUILD_DIR/containerd-debs" "$SUITE") || {
		echo "FAIL: cannot unpack $SUITE's containerd (scripts/setup clients adds its apt source)"
		exit 1
	}
	export CTRD_DIR
	made=
	for d in /var/lib/cni /run/containerd; do
		[ -d "$d" ] || { mkdir -p "$d" && made="$made $d"; }
	done
	CTRD_MNTNS=1 unshare -m --propagation private bash "$0" "$@"
	rc=$?
	for d in $made; do rmdir "$d" 2>/dev/null; done
	exit $rc
fi

. "$SOURCE_DIR/test/netns/sriov_lib.sh"

R=$T_TMP/ctrd
mkdir -p "$R/cache" "$R/net.d" "$R/bin" "$R/calls" "$R/netns" "$R/run" "$R/stubs"
mount --bind "$R/cache" /var/lib/cni || { echo "cannot bind over /var/lib/cni"; exit 1; }
mount --bind "$R/run" /run/containerd || { echo "cannot bind over /run/containerd"; exit 1; }
# containerd pins pod namespaces under /var/run/netns.
mount -t tmpfs tmpfs /run/netns || { echo "cannot mount over /run/netns"; exit 1; }
SOCK=$R/containerd.sock
CGPARENT=/sriov-rdma-ctrd-$$
CTRD_PID=
POOL=$T_TMP/pool
IMAGE=localhost/sriov-rdma-test/pause:1
VERSION=$(cat "$CTRD_DIR/.version")
export PATH=$CTRD_DIR/usr/bin:$PATH CRI_CGROUP_PARENT=$CGPARENT

# ---- cleanup, in reverse order of registration ----
ct_unmount_all() {
	local m
	findmnt -rn -o TARGET | grep -e "^$T_TMP/" -e '^/run/netns/' | sort -r | while read -r m; do
		umount -l "$m"
	done
	umount -l /run/netns
	umount -l /run/containerd
	umount -l /var/lib/cni
}
ct_kill_mine() { # the shims (their command lines name the socket) and every pod's processes
	local p c
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = $$ ] && continue
		if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -e "$R"; then
			kill -9 "${p#/proc/}" 2>/dev/null
		fi
	done
	for c in /sys/fs/cgroup/*/"${CGPARENT#/}"; do
		[ -d "$c" ] || continue
		find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r p; do kill -9 "$p"; done
	done
}
ct_rm_cgroups() {
	local c
	for c in /sys/fs/cgroup/*/"${CGPARENT#/}"; do
		[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
	done
}
t_defer ct_unmount_all
t_defer ct_rm_cgroups
t_defer ct_kill_mine
t_defer ct_cleanup_pods

# ---- the fake node: two VFs on the fake PF ----
sr_setup 2 || { echo "cannot set up the fake VFs"; exit 1; }
ORIG_VFS=$(grep "^vf=" "$SR_FAKE/$SR_PFNET.vfs")
cp "$SR_FAKE/$SR_PFNET.vfs" "$R/vfs.orig"

# ---- the CRI client's stubs, from Debian's api.proto ----
# gogoproto's options only shape Go code; Python's protoc does not know them.
sed '/gogoproto/d' "$BUILD_DIR/containerd-debs/cri-api/api.proto" >"$R/stubs/api.proto"
(cd "$R/stubs" && /usr/bin/python3 -m grpc_tools.protoc -I. --python_out=. --grpc_python_out=. api.proto) ||
	{ echo "cannot generate the CRI stubs"; exit 1; }
cri() { /usr/bin/python3 "$SOURCE_DIR/test/containerd/cri_client.py" "$R/stubs" "$SOCK" "$@"; }

# ---- the recording wrappers and CNI_PATH ----
for p in sriov-rdma pool-ipam; do
	cat >"$R/bin/$p" <<EOS
#!/bin/bash
# Records one call of $p, then runs it.
in=\$(cat)
conf=\$in
vf=\$(printf '%s' "\$in" | jq -r '.runtimeConfig["io.kubernetes.cri.pod-annotations"]["sriov-rdma.test/vf"] // empty' 2>/dev/null)
[ -z "\$vf" ] || conf=\$(printf '%s' "\$in" | jq -c --arg vf "\$vf" '. + {deviceID: \$vf}')
# Processes still in the pod's namespace: containerd kills the pause first.
procs=-
if [ -n "\${CNI_NETNS:-}" ] && [ -e "\$CNI_NETNS" ]; then
	procs=0
	for q in /proc/[0-9]*; do
		[[ \$q/ns/net -ef \$CNI_NETNS ]] && procs=\$((procs + 1))
	done
fi
n=\$(mktemp "$R/calls/\$(date +%s%N)-$p-\${CNI_COMMAND:-none}-XXXX")
{ echo "--- env"; env | sort; echo "--- stdin"; printf '%s\n' "\$in"; } >"\$n"
out=\$(printf '%s' "\$conf" | ${PLUGIN_WRAPPER:-} "$BUILD_DIR/plugins/$p/$p")
rc=\$?
{ echo "--- stdout"; printf '%s\n' "\$out"; echo "--- rc \$rc"; } >>"\$n"
echo "$p \${CNI_COMMAND:-none} \${CNI_CONTAINERID:--} \${CNI_IFNAME:--} netns=\${CNI_NETNS:-} procs=\$procs rc=\$rc" >>"$R/calls.log"
printf '%s' "\$out"
exit \$rc
EOS
	chmod +x "$R/bin/$p"
done
ln -s "$PEER_CNI_DIR/loopback" "$R/bin/loopback"
touch "$R/calls.log"

# ct_conflist VERSION [RANGE_END]: the one network, its pool ending at
# RANGE_END (10.91.0.254 unless given).
ct_conflist() {
	jq -n --arg v "$1" --arg last "${2:-10.91.0.254}" --arg state "$SR_STATE" --arg pool "$POOL" '{
		cniVersion: $v, name: "rdma-net",
		plugins: [{type: "sriov-rdma", stateDir: $state,
			capabilities: {"io.kubernetes.cri.pod-annotations": true},
			vlan: 100, spoofchk: "off", trust: "on",
			ipam: {type: "pool-ipam", dataDir: $pool,
				ranges: [[{subnet: "10.91.0.0/24", rangeStart: "10.91.0.10", rangeEnd: $last,
					gateway: "10.91.0.1"}]]}}]}' >"$R/net.d/10-rdma-net.conflist.tmp" &&
	mv "$R/net.d/10-rdma-net.conflist.tmp" "$R/net.d/10-rdma-net.conflist"
}

cat >"$R/config.toml" <<EOC
version = 2
root = "$R/root"
state = "$R/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$R/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$IMAGE"
  stream_server_port = "0"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
        Root = "$R/runc-root"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$R/bin"
    conf_dir = "$R/net.d"
    max_conf_num = 1
EOC

# ---- containerd ----
CT_RUN=0
ct_start() {
	local i
	CT_RUN=$((CT_RUN + 1))
	CT_MARK=$(wc -l <"$R/calls.log")
	containerd --config "$R/config.toml" --log-level debug >"$R/containerd-$CT_RUN.log" 2>&1 &
	CTRD_PID=$!
	# A hang guard: the first start on a busy machine takes seconds.
	for ((i = 0; i < 1200; i++)); do
		[ -S "$SOCK" ] && cri version >/dev/null 2>&1 && return 0
		kill -0 "$CTRD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "containerd did not start:"
	tail -n 30 "$R/containerd-$CT_RUN.log"
	return 1
}
ct_kill() { # SIGKILL: a crash with pods running
	[ -n "$CTRD_PID" ] || return 0
	kill -9 "$CTRD_PID" 2>/dev/null
	wait "$CTRD_PID" 2>/dev/null
	CTRD_PID=
}
ct_stop() {
	local i
	[ -n "$CTRD_PID" ] || return 0
	kill -TERM "$CTRD_PID" 2>/dev/null
	for ((i = 0; i < 600; i++)); do kill -0 "$CTRD_PID" 2>/dev/null || break; sleep 0.1; done
	ct_kill
}
ct_restart() { ct_stop; ct_start; }
ct_cleanup_pods() {
	local id
	if [ -n "$CTRD_PID" ]; then
		for id in $(cri pods 2>/dev/null | jq -r '.[].id'); do
			cri stopp "$id"; cri rmp "$id"
		done
	fi
	ct_stop
}
ct_calls_since() { tail -n +"$((CT_MARK + 1))" "$R/calls.log"; }
ct_mark() { CT_MARK=$(wc -l <"$R/calls.log"); }

# ---- the pause image, ours: a docker archive imported with ctr ----
ct_image() {
	local d=$R/image rootfs=$R/image/rootfs cd
	mkdir -p "$d/out" "$rootfs"
	gcc -static -Os -o "$rootfs/pause" "$SOURCE_DIR/test/containerd/pause.c" || return 1
	tar -C "$rootfs" --numeric-owner --owner=0 --group=0 -cf "$d/out/layer.tar" . || return 1
	jq -nc --arg l "sha256:$(sha256sum <"$d/out/layer.tar" | cut -d' ' -f1)" '{
		architecture: "amd64", os: "linux", config: {Entrypoint: ["/pause"]},
		rootfs: {type: "layers", diff_ids: [$l]}}' >"$d/config.json"
	cd=$(sha256sum <"$d/config.json" | cut -d' ' -f1)
	mv "$d/config.json" "$d/out/$cd.json"
	jq -nc --arg c "$cd.json" --arg t "$IMAGE" '[{Config: $c, RepoTags: [$t], Layers: ["layer.tar"]}]' \
		>"$d/out/manifest.json"
	tar -C "$d/out" -cf "$d/pause.tar" manifest.json "$cd.json" layer.tar || return 1
	ctr --address "$SOCK" -n k8s.io images import --snapshotter native "$d/pause.tar"
}

# ---- what the pods and the node look like ----
ct_runp() { # NAME [VF_INDEX|BDF]: runs the pod; its id in $POD, the error in $ERR
	local vf=${2:-}
	case $vf in [0-9]) vf=$(sr_vf "$vf") ;; esac
	POD=$(cri runp "$1" ${vf:+"sriov-rdma.test/vf=$vf"} 2>"$R/err")
	CT_RC=$?
	ERR=$(cat "$R/err")
}
ct_status() { cri status "$1" 2>/dev/null; }
ct_pod_addr() { # NETNS IFNAME
	nsenter --net="$1" ip -j addr show "$2" 2>/dev/null |
		jq -r '.[0].addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"'
}
ct_addrs() { find "$POOL" -type f -name 'a-*' 2>/dev/null | sort | tr '\n' ' '; }
ct_vf_line() { grep "^vf=$1 " "$SR_FAKE/$SR_PFNET.vfs"; }
# Calls of sriov-rdma for one sandbox, "CMD netns=... procs=N rc=N" a line.
ct_calls_of() { grep "^sriov-rdma [A-Z]* $1 " "$R/calls.log" | cut -d' ' -f2,5-; }
ct_cmds_of() { ct_calls_of "$1" | cut -d' ' -f1 | tr '\n' ' '; }
# The last recorded call of CMD for a sandbox: its file.
ct_call_file() { # ID CMD
	grep -l "^CNI_CONTAINERID=$1\$" "$R/calls/"*"-sriov-rdma-$2-"* 2>/dev/null | sort | tail -n 1
}
ct_sent() { sed -n '/^--- stdin/,/^--- stdout/p' "$1" | sed '1d;$d'; }
ct_env() { sed -n "s/^$2=//p" "$1"; }

# The PF as it was, once its state is checked with no pod on it: a plugin
# that leaves it changed fails that case, not every case after it.
ct_pf_reset() {
	cp "$R/vfs.orig" "$SR_FAKE/$SR_PFNET.vfs.tmp" && mv "$SR_FAKE/$SR_PFNET.vfs.tmp" "$SR_FAKE/$SR_PFNET.vfs"
}

# Nothing of the plugins left on the node: both VFs home with the PF as it
# was, no record, no in-use marker, no address, no cached result of IDS.
ct_nothing_left() { # IDS...
	local i id
	for i in 0 1; do
		t_eq "$(sr_host_link "$(sr_net $i)" | cut -d' ' -f1)" "$(sr_net $i)" "VF$i's netdev on the host"
	done
	t_eq "$(grep "^vf=" "$SR_FAKE/$SR_PFNET.vfs")" "$ORIG_VFS" "the fake PF's VF settings as before"
	ct_pf_reset
	t_eq "$(sr_state_files)" "" "records left"
	t_eq "$(sr_markers)" "" "in-use markers left"
	t_eq "$(ct_addrs)" "" "addresses held"
	for id in "$@"; do
		t_eq "$(find /var/lib/cni -name "*$id*" 2>/dev/null)" "" "libcni's cache of $id"
	done
}

# A DEL's CNI_ARGS, as a set: containerd builds them from a Go map.
ct_args_set() { tr ';' '\n' | sort | tr '\n' ';'; }
ct_want_args() { # NAME ID
	printf '%s\n' IgnoreUnknown=1 K8S_POD_NAMESPACE=ctrd "K8S_POD_NAME=$1" \
		"K8S_POD_INFRA_CONTAINER_ID=$2" "K8S_POD_UID=uid-$1" | sort | tr '\n' ';'
}

# ---- the cases ----
ct_begin() { echo "# t=$SECONDS s"; t_begin "$@"; }
ct_begin "containerd $VERSION ($SUITE) starts and answers the CRI; our pause image is imported"
ct_conflist 0.3.1
ct_start || t_fail "start"
t_eq "$(cri version | jq -r .runtime)" containerd "runtime name"
t_eq "$(cri version | jq -r .version)" "${VERSION%%-*}" "runtime version"
ct_image >"$R/image.log" 2>&1 || t_fail "image: $(tail -n 5 "$R/image.log")"

ct_begin "a pod: ADD moves VF0 in as eth0 with the pool's address; what containerd sent"
ct_runp p0 0
P0=$POD
t_eq "$CT_RC" 0 "RunPodSandbox ($ERR)"
st=$(ct_status "$P0")
t_eq "$(jq -r .state <<<"$st")" SANDBOX_READY "state"
ip0=$(jq -r .ip <<<"$st")
t_contains "$ip0" 10.91.0. "the pod's IP as containerd reports it"
ns0=$(jq -r .netns <<<"$st")
t_eq "$(ct_pod_addr "$ns0" eth0)" "$ip0/24" "eth0's address in the pod"
t_eq "$(ct_addrs)" "$POOL/rdma-net/a-$ip0 " "the pool holds it"
t_eq "$(sr_host_link "$(sr_net 0)")" "" "VF0's netdev gone from the host"
t_contains "$(ct_vf_line 0)" "vlan=100" "the PF holds VF0's vlan"
t_eq "$(ct_cmds_of "$P0")" "ADD " "sriov-rdma calls: ADD only (no CHECK)"
f=$(ct_call_file "$P0" ADD)
t_eq "$(ct_env "$f" CNI_IFNAME)" eth0 "CNI_IFNAME"
t_eq "$(ct_env "$f" CNI_NETNS)" "$ns0" "CNI_NETNS, the pinned namespace"
t_eq "$(ct_env "$f" CNI_ARGS | ct_args_set)" "$(ct_want_args p0 "$P0")" "CNI_ARGS, as a set"
t_eq "$(ct_sent "$f" | jq -r '.runtimeConfig["io.kubernetes.cri.pod-annotations"]["sriov-rdma.test/vf"]')" \
	"$(sr_vf 0)" "the pod's annotations as runtimeConfig"
t_eq "$(ct_sent "$f" | jq -r .cniVersion)" 0.3.1 "cniVersion"
echo "# processes in the pod's namespace at ADD: $(ct_calls_of "$P0" | sed -n 's/^ADD .*procs=\([0-9]*\).*/\1/p')"

ct_begin "StopPodSandbox: the pause killed first, then DEL brings VF0 home; again: DEL with no netns; RemovePodSandbox"
ct_mark
cri stopp "$P0" 2>"$R/err" || t_fail "StopPodSandbox: $(cat "$R/err")"
t_eq "$(ct_cmds_of "$P0")" "ADD DEL " "one DEL"
t_contains "$(ct_calls_since)" "sriov-rdma DEL $P0 eth0 netns=$ns0 procs=0 rc=0" \
	"DEL with the pinned namespace, no process left in it"
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "VF0 back on the host"
cri stopp "$P0" 2>"$R/err" || t_fail "StopPodSandbox again: $(cat "$R/err")"
t_contains "$(ct_calls_since)" "sriov-rdma DEL $P0 eth0 netns= procs=- rc=0" "the second DEL, CNI_NETNS empty"
cri rmp "$P0" 2>"$R/err" || t_fail "RemovePodSandbox: $(cat "$R/err")"
t_eq "$(ct_calls_since | grep -v ' rc=0$')" "" "failed calls"
t_eq "$(ct_call_file "$P0" DEL | xargs -r grep -c '^CNI_NETNS=$')" 1 "the last DEL's CNI_NETNS is empty"
t_eq "$(ct_call_file "$P0" DEL | xargs -r -I{} sh -c 'sed -n "s/^CNI_ARGS=//p" {}' | ct_args_set)" \
	"$(ct_want_args p0 "$P0")" "DEL's CNI_ARGS, as a set"
t_eq "$(ct_cmds_of "$P0")" "ADD DEL DEL DEL " "RemovePodSandbox sends DEL once more"
cri status "$P0" >/dev/null 2>&1 && t_fail "the pod is still known after RemovePodSandbox"
ct_nothing_left "$P0"
t_eq "$(find /run/netns -name 'cni-*' | wc -l)" 0 "pinned namespaces left"

ct_begin "pods one after another: three in turn on VF0, each gets the VF and gives it back"
for n in 1 2 3; do
	ct_runp "seq$n" 0
	t_eq "$CT_RC" 0 "RunPodSandbox seq$n ($ERR)" || continue
	t_eq "$(ct_addrs)" "$POOL/rdma-net/a-$(ct_status "$POD" | jq -r .ip) " "seq$n's address, the only one held"
	cri stopp "$POD" 2>"$R/err" || t_fail "StopPodSandbox seq$n: $(cat "$R/err")"
	cri rmp "$POD" 2>"$R/err" || t_fail "RemovePodSandbox seq$n: $(cat "$R/err")"
	ct_nothing_left "$POD"
done

ct_begin "pods at once: two RunPodSandbox side by side, each on its own VF, then both stopped at once"
cri runp pa "sriov-rdma.test/vf=$(sr_vf 0)" >"$R/pa.id" 2>"$R/pa.err" &
w1=$!
cri runp pb "sriov-rdma.test/vf=$(sr_vf 1)" >"$R/pb.id" 2>"$R/pb.err" &
wait $w1 $!
PA=$(cat "$R/pa.id") PB=$(cat "$R/pb.id")
t_eq "$(ct_status "$PA" | jq -r .state)" SANDBOX_READY "pa ($(cat "$R/pa.err"))"
t_eq "$(ct_status "$PB" | jq -r .state)" SANDBOX_READY "pb ($(cat "$R/pb.err"))"
t_eq "$(printf '%s\n' "$(ct_status "$PA" | jq -r .ip)" "$(ct_status "$PB" | jq -r .ip)" | sort -u | wc -l)" 2 \
	"two addresses"
for v in 0 1; do t_eq "$(sr_host_link "$(sr_net $v)")" "" "VF$v in a pod"; done
(cri stopp "$PA" && cri rmp "$PA") 2>"$R/pa.err" &
w1=$!
(cri stopp "$PB" && cri rmp "$PB") 2>"$R/pb.err" &
wait $w1 $!
t_eq "$(cat "$R/pa.err" "$R/pb.err")" "" "stop and remove"
ct_nothing_left "$PA" "$PB"

ct_begin "two pods racing for one VF: one wins, the other gets the plugin's error through the CRI"
ct_mark
cri runp ra "sriov-rdma.test/vf=$(sr_vf 0)" >"$R/ra.id" 2>"$R/ra.err" &
w1=$!
cri runp rb "sriov-rdma.test/vf=$(sr_vf 0)" >"$R/rb.id" 2>"$R/rb.err" &
wait $w1 $!
won=$(cat "$R/ra.id" "$R/rb.id")
t_eq "$(printf '%s\n' "$won" | grep -c .)" 1 "exactly one sandbox made"
lost=$(cat "$R/ra.err" "$R/rb.err")
echo "# the loser's error: $lost"
t_contains "$lost" "$(sr_vf 0)" "the plugin's message, naming the VF"
t_eq "$(ct_status "$won" | jq -r .state)" SANDBOX_READY "the winner is ready"
wns=$(ct_status "$won" | jq -r .netns)
wip=$(ct_status "$won" | jq -r .ip)
t_eq "$(ct_pod_addr "$wns" eth0)" "$wip/24" "the winner keeps VF0 and its address"
loser=$(ct_calls_since | awk -v w="$won" '$1 == "sriov-rdma" && $2 == "ADD" && $3 != w { print $3 }' | head -n 1)
t_eq "$(ct_cmds_of "$loser")" "ADD DEL " "the loser: a failed ADD, then containerd's cleanup DEL"
t_contains "$(ct_calls_of "$loser" | head -n 1)" "rc=1" "the loser's ADD failed"
t_contains "$(ct_calls_of "$loser" | tail -n 1)" "rc=0" "its DEL succeeded"
t_eq "$(cri pods | jq length)" 1 "containerd knows one sandbox"
t_eq "$(ct_addrs)" "$POOL/rdma-net/a-$wip " "one address held, the winner's"
cri stopp "$won" 2>"$R/err" && cri rmp "$won" 2>"$R/err" || t_fail "stop the winner: $(cat "$R/err")"
ct_nothing_left "$won" "$loser"

ct_begin "containerd SIGKILLed under a live pod and restarted: the pod is kept, then stopped and removed cleanly"
ct_runp k0 1
K0=$POD
t_eq "$CT_RC" 0 "RunPodSandbox ($ERR)"
kns=$(ct_status "$K0" | jq -r .netns)
kmac=$(sr_pod_link "$kns" eth0)
ct_kill
t_eq "$(sr_pod_link "$kns" eth0)" "$kmac" "eth0 still in the pod after the kill"
ct_start || t_fail "restart"
t_eq "$(ct_status "$K0" | jq -r .state)" SANDBOX_READY "the pod is ready after the restart"
t_eq "$(ct_calls_since)" "" "no plugin call on restart"
t_eq "$(sr_pod_link "$kns" eth0)" "$kmac" "VF1 still in the pod"
ct_mark
cri stopp "$K0" 2>"$R/err" || t_fail "StopPodSandbox: $(cat "$R/err")"
cri rmp "$K0" 2>"$R/err" || t_fail "RemovePodSandbox: $(cat "$R/err")"
t_contains "$(ct_calls_since)" "sriov-rdma DEL $K0 eth0 netns=$kns procs=0 rc=0" "DEL"
ct_nothing_left "$K0"

ct_begin "a node reboot's DEL: the pause and the pinned namespace gone (the VF's netdev with it), then StopPodSandbox"
ct_runp b0 0
B0=$POD
t_eq "$CT_RC" 0 "RunPodSandbox ($ERR)"
st=$(ct_status "$B0")
bns=$(jq -r .netns <<<"$st")
kill -9 "$(jq -r .pid <<<"$st")"
umount "$bns" && rm -f "$bns"
# The veth standing in for the VF goes with its namespace, asynchronously.
for _ in $(seq 600); do
	ip link show "sr$$p0" >/dev/null 2>&1 || break
	sleep 0.1
done
ct_mark
cri stopp "$B0" 2>"$R/err" || t_fail "StopPodSandbox: $(cat "$R/err")"
cri rmp "$B0" 2>"$R/err" || t_fail "RemovePodSandbox: $(cat "$R/err")"
t_contains "$(ct_calls_since)" "sriov-rdma DEL $B0 eth0 netns= procs=- rc=0" "DEL with CNI_NETNS empty"
t_eq "$(ct_calls_since | grep -v ' rc=0$')" "" "failed calls"
t_eq "$(ct_vf_line 0)" "$(grep '^vf=0 ' <<<"$ORIG_VFS")" "VF0's PF settings restored"
ct_pf_reset
t_eq "$(sr_state_files)$(sr_markers)" "" "record and marker gone"
t_eq "$(ct_addrs)" "" "address released"
{ sr_make_veth "$(sr_net 0)" "sr$$p0" && sr_standin "" "$(sr_net 0)" 0; } ||
	t_fail "the stand-in VF made anew"

ct_begin "failing ADD, a VF the node lacks: the plugin's message reaches the CRI caller, nothing is left"
ct_mark
ct_runp nv 0000:3b:00.7
t_eq "$CT_RC" 1 "RunPodSandbox fails"
echo "# the error: $ERR"
t_contains "$ERR" "0000:3b:00.7" "the plugin's message, naming the VF"
nv=$(ct_calls_since | awk '$1 == "sriov-rdma" && $2 == "ADD" { print $3 }' | head -n 1)
t_eq "$(ct_cmds_of "$nv")" "ADD DEL " "ADD, then the cleanup DEL"
t_eq "$(cri pods | jq length)" 0 "no sandbox"
ct_nothing_left "$nv"

ct_begin "failing ADD, a pool with no free address after the VF moved: VF1 back, its PF settings restored"
ct_conflist 0.3.1 10.91.0.10
ct_restart || t_fail "restart"
ct_runp full0 0
F0=$POD
t_eq "$CT_RC" 0 "the first pod takes the pool's one address ($ERR)"
ct_mark
ct_runp full1 1
t_eq "$CT_RC" 1 "the second RunPodSandbox fails"
echo "# the error: $ERR"
t_contains "$ERR" "pool-ipam: network rdma-net: range set 0 (10.91.0.0/24) is exhausted" "pool-ipam's message"
f1=$(ct_calls_since | awk '$1 == "sriov-rdma" && $2 == "ADD" { print $3 }' | head -n 1)
t_eq "$(ct_cmds_of "$f1")" "ADD DEL " "ADD, then the cleanup DEL"
t_contains "$(sr_calls)" "vf=1 vlan=100" "VF1 was configured before the pool refused"
t_eq "$(sr_host_link "$(sr_net 1)" | cut -d' ' -f1)" "$(sr_net 1)" "VF1 back on the host"
t_eq "$(ct_vf_line 1)" "$(grep '^vf=1 ' <<<"$ORIG_VFS")" "VF1's PF settings restored"
t_eq "$(ct_status "$F0" | jq -r .ip)" 10.91.0.10 "the first pod keeps its address"
cri stopp "$F0" 2>"$R/err" && cri rmp "$F0" 2>"$R/err" || t_fail "stop the first pod: $(cat "$R/err")"
ct_nothing_left "$F0" "$f1"

ct_begin "cniVersion 1.0.0: a pod up and down; the first DEL carries libcni's cached result"
ct_conflist 1.0.0
ct_restart || t_fail "restart"
ct_runp v100 0
t_eq "$CT_RC" 0 "RunPodSandbox ($ERR)"
ip=$(ct_status "$POD" | jq -r .ip)
t_eq "$(ct_addrs)" "$POOL/rdma-net/a-$ip " "the pod's address, held"
t_eq "$(ct_sent "$(ct_call_file "$POD" ADD)" | jq -r .cniVersion)" 1.0.0 "cniVersion sent"
cri stopp "$POD" 2>"$R/err" && cri rmp "$POD" 2>"$R/err" || t_fail "stop: $(cat "$R/err")"
t_eq "$(ct_cmds_of "$POD")" "ADD DEL DEL " "ADD, DEL, DEL"
dels=$(grep -l "^CNI_CONTAINERID=$POD\$" "$R/calls/"*"-sriov-rdma-DEL-"* | sort)
t_eq "$(ct_sent "$(head -n 1 <<<"$dels")" | jq -r '.prevResult.ips[0].address')" "$ip/24" \
	"the first DEL's prevResult"
t_eq "$(ct_sent "$(tail -n 1 <<<"$dels")" | jq -r '.prevResult')" null \
	"none on the DEL after it (libcni dropped its cache)"
ct_nothing_left "$POD"

ct_begin "cniVersion 1.1.0: the plugin's ADD succeeds, containerd cannot read the result, sends DEL, nothing is left"
ct_conflist 1.1.0
ct_restart || t_fail "restart"
ct_mark
ct_runp v110 0
t_eq "$CT_RC" 1 "RunPodSandbox fails"
echo "# containerd $VERSION with a 1.1.0 config: $ERR"
t_contains "$ERR" "1.1.0" "the error names the version"
v110=$(ct_calls_since | awk '$1 == "sriov-rdma" && $2 == "ADD" { print $3 }' | head -n 1)
t_eq "$(ct_calls_of "$v110" | cut -d' ' -f1,4)" "ADD rc=0
DEL rc=0" "ADD succeeded, then the cleanup DEL"
t_eq "$(cri pods | jq length)" 0 "no sandbox"
ct_nothing_left "$v110"

ct_stop

# ---- what containerd sent: printed for the log ----
echo "# --- calls (plugin command container ifname netns processes-in-it rc):"
sed 's/^/#   /' "$R/calls.log"
for c in ADD DEL; do
	f=$(find "$R/calls" -name "*-sriov-rdma-$c-*" | sort | head -n 1)
	[ -n "$f" ] || continue
	echo "# --- the first $c: CNI_* and stdin"
	grep '^CNI_' "$f" | sed 's/^/#   /'
	ct_sent "$f" | jq -c . | sed 's/^/#   /'
done

t_done
