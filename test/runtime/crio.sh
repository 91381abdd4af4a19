#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# CRI-O (a real container runtime) calling the plugins, driven with crictl:
# two sriov-rdma networks in one net.d (rail-a on VF0, rail-b on VF1, one
# state directory, a pool-ipam pool each), pods up and down, CHECK after
# ADD and on restart, the runtime killed and restarted with a pod running,
# GC at start-up for every network (a null valid-attachments list for a
# network without pods), and a GC of one network that must leave the other
# network's live pod alone.
#
# CRI-O attaches every pod to its default network (cni_default_network) and
# GCs every network in net.d, each with the pods it believes attached to it:
# a pod made with default rail-a counts as rail-b's once CRI-O restarts
# with default rail-b. So rail-a's pods live under a CRI-O whose default is
# rail-a, rail-b's under one whose default is rail-b, and each restart GCs
# the other network with a null list.
#
# Everything runs in a private mount namespace (pinned namespaces, overlay
# mounts and libcni's cache /var/lib/cni, bound from the test's directory),
# which ends with the test. Every call of the plugins goes through a
# recording shim ($T_TMP/shim, first in plugin_dirs), which logs the
# command, its environment and its stdin; the test prints what CRI-O sent.
#
# Environment: BUILD_DIR, SOURCE_DIR as the netns tests; CHAIN_DIR holding
# runtime/bin/{crio,pinns,copyimg,crictl} (test/runtime/build.sh).

if [ "${RT_MNTNS:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
	bin=${CHAIN_DIR:-}/runtime/bin
	for b in crio pinns copyimg crictl; do
		if [ ! -x "$bin/$b" ]; then
			echo "SKIP: $bin/$b missing: run test/runtime/build.sh CHAIN_DIR first (scripts/test stage 6 does)"
			exit 77
		fi
	done
	for b in conmon runc gcc jq unshare busybox; do
		command -v "$b" >/dev/null || { echo "FAIL: '$b' not found (scripts/setup chain)"; exit 1; }
	done
	if ! mountpoint -q /; then
		echo "FAIL: the client's mount namespace needs / to be a mount point, and it is not here (a chroot's root is not: bind-mount the root onto itself before chrooting)"
		exit 1
	fi
	# libcni's cache has a fixed path: a directory of the test's own is
	# bound over it inside the private mount namespace.
	made=
	if [ ! -d /var/lib/cni ]; then mkdir -p /var/lib/cni && made=1; fi
	RT_MNTNS=1 unshare -m --propagation private bash "$0" "$@"
	rc=$?
	[ -z "$made" ] || rmdir /var/lib/cni 2>/dev/null
	exit $rc
fi

. "$SOURCE_DIR/test/netns/sriov_lib.sh"

BIN=$CHAIN_DIR/runtime/bin
R=$T_TMP/rt
mkdir -p "$R/cache" "$R/net.d" "$R/shim" "$R/calls" "$R/logs" "$R/conf.d" "$R/podlogs"
mount --bind "$R/cache" /var/lib/cni || { echo "cannot bind over /var/lib/cni"; exit 1; }
SOCK=$R/crio.sock
CGPARENT=/sriov-rdma-rt-$$
CRIO_PID=
POOL_A=$T_TMP/pool-a POOL_B=$T_TMP/pool-b
SR_LOG=$T_TMP/sriov-rdma.log

# ---- cleanup, in reverse order of registration ----
rt_unmount_all() {
	local m
	findmnt -rn -o TARGET | grep "^$T_TMP/" | sort -r | while read -r m; do
		umount -l "$m"
	done
	umount -l /var/lib/cni
}
rt_kill_mine() { # every process started from the test's directory
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = $$ ] && continue
		if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -e "$T_TMP" -e "$R"; then
			kill -9 "${p#/proc/}" 2>/dev/null
		fi
	done
}
rt_rm_cgroups() {
	local c
	for c in /sys/fs/cgroup/*/"${CGPARENT#/}"; do
		[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
	done
}
t_defer rt_unmount_all
t_defer rt_rm_cgroups
t_defer rt_kill_mine
t_defer rt_cleanup_pods

# ---- the fake node: two VFs on the fake PF ----
sr_setup 2 || { echo "cannot set up the fake VFs"; exit 1; }
VF0_NET=$(sr_net 0) VF1_NET=$(sr_net 1)

# ---- the recording shim and the plugin dirs ----
for p in sriov-rdma pool-ipam; do
	cat >"$R/shim/$p" <<EOS
#!/bin/bash
# Records one call of $p, then runs it.
in=\$(cat)
n=\$(mktemp "$R/calls/\$(date +%s%N)-$p-\${CNI_COMMAND:-none}-XXXX")
{ echo "argv: \$0 \$*"; echo "--- env"; env | sort; echo "--- stdin"; printf '%s\n' "\$in"; } >"\$n"
out=\$(printf '%s' "\$in" | "$BUILD_DIR/plugins/$p/$p")
rc=\$?
{ echo "--- stdout"; printf '%s\n' "\$out"; echo "--- rc \$rc"; } >>"\$n"
net=\$(printf '%s' "\$in" | jq -r '.name // "-"' 2>/dev/null)
va=\$(printf '%s' "\$in" | jq -r '."cni.dev/valid-attachments" | if . == null then "null" else ([.[] | .containerID] | tojson) end' 2>/dev/null)
[ "\${CNI_COMMAND:-}" = GC ] || va=-
echo "$p \${CNI_COMMAND:-none} \$net \${CNI_CONTAINERID:--} \${CNI_IFNAME:--} rc=\$rc va=\$va" >>"$R/calls.log"
printf '%s' "\$out"
exit \$rc
EOS
	chmod +x "$R/shim/$p"
done
touch "$R/calls.log"

# ---- two networks in one net.d, one state directory ----
rt_conflist() { # FILE NAME VF SUBNET POOLDIR
	jq -n --arg name "$2" --arg dev "$(sr_vf "$3")" --arg sub "$4" --arg pool "$5" \
		--arg state "$SR_STATE" --arg log "$SR_LOG" '{
		cniVersion: "1.1.0", name: $name,
		plugins: [{type: "sriov-rdma", deviceID: $dev, stateDir: $state,
			logFile: $log, logLevel: "debug",
			ipam: {type: "pool-ipam", ranges: [[{subnet: ($sub + ".0/24"), gateway: ($sub + ".1")}]],
				dataDir: $pool}}]}' >"$1"
}
rt_conflist "$R/net.d/10-rail-a.conflist" rail-a 0 10.81.0 "$POOL_A"
rt_conflist "$R/net.d/20-rail-b.conflist" rail-b 1 10.82.0 "$POOL_B"

# ---- the runtime wrapper: runc without the pause container's oomScoreAdj
# where root lacks CAP_SYS_RESOURCE ----
cat >"$R/runc" <<'EOS'
#!/bin/bash
cap=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
if [ $(( 0x$cap >> 24 & 1 )) = 0 ]; then
	prev= create=0 bundle=
	for a in "$@"; do
		[ "$a" = create ] && create=1
		[ "$prev" = --bundle ] || [ "$prev" = -b ] && bundle=$a
		case $a in --bundle=*) bundle=${a#--bundle=} ;; esac
		prev=$a
	done
	if [ "$create" = 1 ] && [ -f "$bundle/config.json" ]; then
		jq 'del(.process.oomScoreAdj)' "$bundle/config.json" >"$bundle/config.json.new" &&
			mv "$bundle/config.json.new" "$bundle/config.json"
	fi
fi
exec runc "$@"
EOS
chmod +x "$R/runc"

# ---- a hand-made image: the static pause binary and busybox ----
rt_image() {
	local d=$R/image rootfs=$R/image-rootfs ld cd md ls cs ms
	mkdir -p "$d/blobs/sha256" "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/etc"
	gcc -static -Os -o "$rootfs/pause" "$SOURCE_DIR/test/runtime/pause.c" || return 1
	cp "$(command -v busybox)" "$rootfs/bin/busybox" || return 1
	for a in sh sleep ip cat ls; do ln -s busybox "$rootfs/bin/$a"; done
	tar -C "$rootfs" --numeric-owner --owner=0 --group=0 -cf "$R/layer.tar" . || return 1
	ld=$(sha256sum <"$R/layer.tar" | cut -d' ' -f1)
	ls=$(stat -c %s "$R/layer.tar")
	mv "$R/layer.tar" "$d/blobs/sha256/$ld"
	jq -nc --arg l "sha256:$ld" '{architecture: "amd64", os: "linux",
		config: {Entrypoint: ["/pause"], Env: ["PATH=/bin"]},
		rootfs: {type: "layers", diff_ids: [$l]}}' >"$R/config.json"
	cd=$(sha256sum <"$R/config.json" | cut -d' ' -f1)
	cs=$(stat -c %s "$R/config.json")
	mv "$R/config.json" "$d/blobs/sha256/$cd"
	jq -nc --arg c "sha256:$cd" --argjson cs "$cs" --arg l "sha256:$ld" --argjson ls "$ls" '{
		schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
		config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
		layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' \
		>"$R/manifest.json"
	md=$(sha256sum <"$R/manifest.json" | cut -d' ' -f1)
	ms=$(stat -c %s "$R/manifest.json")
	mv "$R/manifest.json" "$d/blobs/sha256/$md"
	jq -nc --arg m "sha256:$md" --argjson ms "$ms" '{schemaVersion: 2, manifests: [{
		mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms}]}' \
		>"$d/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$d/oci-layout"
	echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$R/policy.json"
	"$BIN/copyimg" --root "$R/root" --runroot "$R/runroot" --storage-driver overlay \
		--signature-policy "$R/policy.json" --image-name localhost/sriov-rdma-test/pause:1 \
		--import-from "oci:$d"
}

# ---- CRI-O ----
rt_config() { # DEFAULT_NETWORK
	cat >"$R/crio.conf" <<EOC
[crio]
root = "$R/root"
runroot = "$R/runroot"
storage_driver = "overlay"
log_dir = "$R/logs"
version_file = "$R/version"
version_file_persist = "$R/version-persist"
clean_shutdown_file = "$R/clean.shutdown"
internal_wipe = true
[crio.api]
listen = "$SOCK"
stream_address = "127.0.0.1"
stream_port = "0"
[crio.runtime]
default_runtime = "runc"
conmon = "$(command -v conmon)"
conmon_cgroup = "pod"
cgroup_manager = "cgroupfs"
namespaces_dir = "$R/ns"
pinns_path = "$BIN/pinns"
container_exits_dir = "$R/exits"
container_attach_socket_dir = "$R/attach"
hooks_dir = []
irqbalance_config_file = "$R/irqbalance"
irqbalance_config_restore_file = "disable"
seccomp_profile = ""
apparmor_profile = ""
[crio.runtime.runtimes.runc]
runtime_path = "$R/runc"
runtime_type = "oci"
runtime_root = "$R/runc-root"
monitor_path = "$(command -v conmon)"
[crio.image]
pause_image = "localhost/sriov-rdma-test/pause:1"
pause_command = "/pause"
signature_policy = "$R/policy.json"
[crio.network]
cni_default_network = "$1"
network_dir = "$R/net.d"
plugin_dirs = ["$R/shim", "$BUILD_DIR/plugins/sriov-rdma", "$BUILD_DIR/plugins/pool-ipam", "/usr/lib/cni"]
[crio.metrics]
enable_metrics = false
[crio.nri]
enable_nri = false
EOC
}

crictl() { timeout 300 "$BIN/crictl" --runtime-endpoint "unix://$SOCK" --image-endpoint "unix://$SOCK" --timeout 240s "$@"; }

# rt_start DEFAULT_NETWORK: start CRI-O and wait for its socket and for the
# start-up GC of both networks (counted in calls.log from this start on).
RT_RUN=0
rt_start() {
	RT_RUN=$((RT_RUN + 1))
	rt_config "$1"
	RT_MARK=$(wc -l <"$R/calls.log")
	"$BIN/crio" --config "$R/crio.conf" --config-dir "$R/conf.d" --log-level debug \
		>"$R/crio-$RT_RUN.log" 2>&1 &
	CRIO_PID=$!
	for _ in $(seq 600); do
		[ -S "$SOCK" ] && crictl version >/dev/null 2>&1 && break
		kill -0 "$CRIO_PID" 2>/dev/null || break
		sleep 0.2
	done
	crictl version >/dev/null 2>&1 || { echo "CRI-O did not start:"; tail -n 30 "$R/crio-$RT_RUN.log"; return 1; }
	# The start-up GC runs once the CNI plugin is ready: both networks.
	for _ in $(seq 600); do
		[ "$(rt_calls_since | grep -c '^sriov-rdma GC ')" -ge 2 ] && return 0
		sleep 0.2
	done
	echo "no start-up GC of both networks seen"
	return 1
}
rt_calls_since() { tail -n +"$((RT_MARK + 1))" "$R/calls.log"; }
rt_kill() { # SIGKILL: a crash with pods running
	[ -n "$CRIO_PID" ] || return 0
	kill -9 "$CRIO_PID" 2>/dev/null
	wait "$CRIO_PID" 2>/dev/null
	CRIO_PID=
	rm -f "$SOCK"
}
rt_stop() {
	[ -n "$CRIO_PID" ] || return 0
	kill -TERM "$CRIO_PID" 2>/dev/null
	for _ in $(seq 600); do kill -0 "$CRIO_PID" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$CRIO_PID" 2>/dev/null
	wait "$CRIO_PID" 2>/dev/null
	CRIO_PID=
}
rt_cleanup_pods() {
	local id
	if [ -n "$CRIO_PID" ]; then
		for id in $(crictl pods -q 2>/dev/null); do
			crictl stopp "$id"; crictl rmp -f "$id"
		done
	fi
	rt_stop
}

rt_pod_json() { # NAME
	jq -n --arg n "$1" --arg logs "$R/podlogs" --arg cg "$CGPARENT" '{
		metadata: {name: $n, namespace: "rt", uid: ("uid-" + $n), attempt: 0},
		hostname: $n, log_directory: $logs,
		linux: {cgroup_parent: $cg}}' >"$R/pod-$1.json"
	echo "$R/pod-$1.json"
}
rt_netns() { # POD_ID: the pod's network namespace path
	crictl inspectp -o json "$1" |
		jq -r '.info.runtimeSpec.linux.namespaces[] | select(.type == "network") | .path'
}
rt_pod_link() { # NETNS IFNAME: "name mac mtu" in the pod
	nsenter --net="$1" ip -j link show "$2" 2>/dev/null | jq -r '.[0] | "\(.ifname) \(.address) \(.mtu)"'
}
rt_pod_addr() { # NETNS IFNAME
	nsenter --net="$1" ip -j addr show "$2" 2>/dev/null |
		jq -r '.[0].addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"'
}
rt_record() { # POD_ID: the record file of the pod's eth0, or ""
	find "$SR_STATE" -maxdepth 1 -type f -name "$1*.json" 2>/dev/null
}
rt_crio_errors() { grep -E 'level=(error|fatal)|Error while GCing|Error checking network' "$R/crio-$RT_RUN.log"; }

# ---- the tests ----
t_begin "the pause image is made by hand and loaded into CRI-O's storage"
rt_image >"$R/image.log" 2>&1 || t_fail "image: $(tail -n 5 "$R/image.log")"

t_begin "empty node: CRI-O starts; VERSION, STATUS and a null-list GC for both networks succeed"
rt_start rail-a || t_fail "start"
calls=$(rt_calls_since)
t_contains "$calls" "sriov-rdma VERSION" "VERSION"
t_contains "$calls" "sriov-rdma STATUS rail-a - - rc=0" "STATUS of the default network"
t_contains "$calls" "sriov-rdma GC rail-a - - rc=0 va=null" "GC of rail-a with a null list, exit 0"
t_contains "$calls" "sriov-rdma GC rail-b - - rc=0 va=null" "GC of rail-b with a null list, exit 0"
t_contains "$calls" "pool-ipam GC rail-a" "rail-a's GC forwarded to pool-ipam"
t_contains "$calls" "pool-ipam GC rail-b" "rail-b's GC forwarded to pool-ipam"
t_eq "$(grep -v " rc=0 " <<<"$calls")" "" "failed calls"
t_eq "$(rt_crio_errors)" "" "errors in CRI-O's log"

t_begin "rail-a: runp moves VF0 into the pod as eth0 with pool-ipam's address; CHECK after ADD"
crictl images >"$R/images.txt" 2>&1
P0=$(crictl runp "$(rt_pod_json p0)" 2>"$R/err") || t_fail "runp: $(cat "$R/err")"
ns0=$(rt_netns "$P0")
t_eq "$(rt_pod_link "$ns0" eth0 | cut -d' ' -f1)" eth0 "eth0 in the pod"
t_eq "$(sr_host_link "$VF0_NET")" "" "VF0's netdev gone from the host"
t_eq "$(rt_pod_addr "$ns0" eth0)" 10.81.0.2/24 "eth0's address from rail-a's pool"
t_contains "$(rt_calls_since)" "sriov-rdma ADD rail-a $P0 eth0 rc=0" "ADD"
t_contains "$(rt_calls_since)" "sriov-rdma CHECK rail-a $P0 eth0 rc=0" "CHECK after ADD"
t_contains "$(rt_calls_since)" "pool-ipam ADD rail-a $P0 eth0 rc=0" "pool-ipam ADD"
t_eq "$(rt_record "$P0" | wc -l)" 1 "the attachment's record"
t_eq "$(crictl inspectp -o json "$P0" | jq -r .status.network.ip)" 10.81.0.2 "the pod's IP as CRI-O reports it"

t_begin "rail-a: a container runs in the pod and sees the VF as eth0"
C0=$(crictl create "$P0" <(jq -n --arg logs "c0.log" '{metadata: {name: "c0"},
	image: {image: "localhost/sriov-rdma-test/pause:1"}, command: ["/bin/sleep", "600"],
	log_path: $logs}') "$R/pod-p0.json" 2>"$R/err") || t_fail "create: $(cat "$R/err")"
crictl start "$C0" >/dev/null 2>"$R/err" || t_fail "start: $(cat "$R/err")"
cpid=$(crictl inspect -o json "$C0" | jq -r .info.pid)
t_eq "$(readlink "/proc/$cpid/ns/net")" "$(nsenter --net="$ns0" readlink /proc/self/ns/net)" \
	"the container is in the pod's network namespace"
t_contains "$(nsenter -t "$cpid" -n -m /bin/ip addr show eth0 2>&1)" "10.81.0.2/24" \
	"busybox ip in the container"

t_begin "rail-a: stopp brings VF0 home and releases everything; rmp"
crictl stopp "$P0" >/dev/null 2>"$R/err" || t_fail "stopp: $(cat "$R/err")"
t_eq "$(sr_host_link "$VF0_NET" | cut -d' ' -f1)" "$VF0_NET" "VF0 back on the host"
t_contains "$(rt_calls_since)" "sriov-rdma DEL rail-a $P0 eth0 rc=0" "DEL"
crictl rmp "$P0" >/dev/null 2>"$R/err" || t_fail "rmp: $(cat "$R/err")"
t_eq "$(rt_record "$P0")" "" "record gone"
t_eq "$(sr_markers)" "" "no in-use marker"
t_eq "$(find /var/lib/cni/results -name "*$P0*" 2>/dev/null)" "" "CRI-O's cache entry gone"

t_begin "rail-a: a pod running while CRI-O is killed"
P1=$(crictl runp "$(rt_pod_json p1)" 2>"$R/err") || t_fail "runp: $(cat "$R/err")"
ns1=$(rt_netns "$P1")
addr1=$(rt_pod_addr "$ns1" eth0)
t_contains "$addr1" 10.81.0. "eth0's address from rail-a's pool"
t_eq "$(find "$POOL_A" -type f -name "a-${addr1%/*}" | wc -l)" 1 "pool-ipam's allocation record"
mac1=$(rt_pod_link "$ns1" eth0 | cut -d' ' -f2)
calls_before=$(sr_calls)
echo "# libcni cache while p1 runs: $(cd /var/lib/cni && find . -type f | sort | tr '\n' ' ')"
rt_kill
t_eq "$(rt_pod_addr "$ns1" eth0)" "$addr1" "eth0 still in the pod after the kill"

t_begin "restart (default rail-a): GC of rail-b with a null list and of rail-a keeps p1's VF; CHECK on restart"
rt_start rail-a || t_fail "restart"
# CRI-O CHECKs a restored pod once its network is ready, after the GC.
for _ in $(seq 600); do
	rt_calls_since | grep -q "^sriov-rdma CHECK rail-a $P1 " && break
	sleep 0.2
done
calls=$(rt_calls_since)
t_contains "$calls" "sriov-rdma GC rail-b - - rc=0 va=null" "GC of rail-b, null list"
t_contains "$calls" "sriov-rdma GC rail-a - - rc=0 va=[\"$P1\"]" "GC of rail-a with p1 valid"
t_eq "$(rt_pod_link "$ns1" eth0)" "eth0 $mac1 1500" "VF still in p1 as eth0"
t_eq "$(rt_pod_addr "$ns1" eth0)" "$addr1" "its address"
t_eq "$(rt_record "$P1" | wc -l)" 1 "p1's record"
t_eq "$(find "$POOL_A" -type f -name "a-${addr1%/*}" | wc -l)" 1 "pool-ipam's allocation kept"
t_eq "$(sr_calls)" "$calls_before" "fake PF calls unchanged"
t_not_contains "$(cat "$SR_LOG" 2>/dev/null)" "no longer attached" "a VF released by GC"
t_eq "$(rt_crio_errors)" "" "errors in CRI-O's log"
crictl inspectp "$P1" >/dev/null 2>&1 || t_fail "p1 unknown to the restarted CRI-O"
t_contains "$calls" "sriov-rdma CHECK rail-a $P1 eth0 rc=0" "CHECK of the restored pod"

t_begin "after the restart: stopp and rmp of p1 release everything"
crictl stopp "$P1" >/dev/null 2>"$R/err" || t_fail "stopp: $(cat "$R/err")"
crictl rmp "$P1" >/dev/null 2>"$R/err" || t_fail "rmp: $(cat "$R/err")"
t_eq "$(sr_host_link "$VF0_NET" | cut -d' ' -f1)" "$VF0_NET" "VF0 back on the host"
t_contains "$(rt_calls_since)" "sriov-rdma DEL rail-a $P1 eth0 rc=0" "DEL"
t_eq "$(sr_state_files)" "" "no record left"
t_eq "$(sr_markers)" "" "no in-use marker"
t_eq "$(find "$POOL_A" -type f -name 'a-10.81.*' 2>/dev/null)" "" "rail-a's address released"

t_begin "default rail-b: start-up GC of both (null lists); a pod on VF1"
rt_stop
rt_start rail-b || t_fail "start"
calls=$(rt_calls_since)
t_contains "$calls" "sriov-rdma GC rail-a - - rc=0 va=null" "GC of rail-a, null list"
t_contains "$calls" "sriov-rdma GC rail-b - - rc=0 va=null" "GC of rail-b, null list"
P2=$(crictl runp "$(rt_pod_json p2)" 2>"$R/err") || t_fail "runp: $(cat "$R/err")"
ns2=$(rt_netns "$P2")
t_eq "$(sr_host_link "$VF1_NET")" "" "VF1's netdev gone from the host"
t_eq "$(rt_pod_addr "$ns2" eth0)" 10.82.0.2/24 "eth0's address from rail-b's pool"
t_contains "$(rt_calls_since)" "sriov-rdma CHECK rail-b $P2 eth0 rc=0" "CHECK after ADD"
mac2=$(rt_pod_link "$ns2" eth0 | cut -d' ' -f2)
calls_before=$(sr_calls)

t_begin "killed and restarted (default rail-b): GC of rail-a (null) keeps rail-b's pod"
rt_kill
rt_start rail-b || t_fail "restart"
for _ in $(seq 600); do
	rt_calls_since | grep -q "^sriov-rdma CHECK rail-b $P2 " && break
	sleep 0.2
done
calls=$(rt_calls_since)
t_contains "$calls" "sriov-rdma GC rail-a - - rc=0 va=null" "GC of rail-a, null list"
t_contains "$calls" "sriov-rdma GC rail-b - - rc=0 va=[\"$P2\"]" "GC of rail-b with p2 valid"
t_eq "$(rt_pod_link "$ns2" eth0)" "eth0 $mac2 1500" "VF1 still in p2 as eth0"
t_eq "$(rt_record "$P2" | wc -l)" 1 "p2's record"
t_contains "$calls" "sriov-rdma CHECK rail-b $P2 eth0 rc=0" "CHECK of the restored pod"
t_eq "$(sr_calls)" "$calls_before" "fake PF calls unchanged"
t_not_contains "$(cat "$SR_LOG" 2>/dev/null)" "no longer attached" "a VF released by GC"
t_eq "$(rt_crio_errors)" "" "errors in CRI-O's log"
crictl stopp "$P2" >/dev/null 2>"$R/err" || t_fail "stopp: $(cat "$R/err")"
crictl rmp "$P2" >/dev/null 2>"$R/err" || t_fail "rmp: $(cat "$R/err")"
t_eq "$(sr_host_link "$VF1_NET" | cut -d' ' -f1)" "$VF1_NET" "VF1 back on the host"
t_eq "$(sr_state_files)" "" "no record left"
t_eq "$(find "$POOL_B" -type f -name 'a-10.82.*' 2>/dev/null)" "" "rail-b's address released"
rt_stop

# ---- what CRI-O sent: printed for the log ----
echo "# --- calls (plugin command network container ifname rc valid-attachments):"
sed 's/^/#   /' "$R/calls.log"
first_add=$(find "$R/calls" -name '*-sriov-rdma-ADD-*' | sort | head -n 1)
if [ -n "$first_add" ]; then
	echo "# --- environment of an ADD (CNI_* and anything not inherited from the test):"
	sed -n '/^--- env/,/^--- stdin/p' "$first_add" | grep -E '^(CNI_|SRIOV_RDMA_|PATH=|HOME=|XDG_|CONTAINER|NOTIFY)' | sed 's/^/#   /'
	echo "# --- stdin of an ADD:"
	sed -n '/^--- stdin/,/^--- stdout/p' "$first_add" | sed '1d;$d' | jq -c . | sed 's/^/#   /'
fi
for c in DEL GC STATUS VERSION; do
	f=$(find "$R/calls" -name "*-sriov-rdma-$c-*" | sort | tail -n 1)
	[ -n "$f" ] || continue
	echo "# --- $c: CNI_* environment and stdin (the last one):"
	sed -n '/^--- env/,/^--- stdin/p' "$f" | grep '^CNI_' | sed 's/^/#   /'
	sed -n '/^--- stdin/,/^--- stdout/p' "$f" | sed '1d;$d' | jq -c . | sed 's/^/#   /'
done

t_done
