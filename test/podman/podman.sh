#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# podman 4.3.1 (Debian 12's, the last with the CNI backend) running
# containers on a conflist of sriov-rdma + pool-ipam: what it sends to the
# plugins (recorded by a wrapper in its plugin directory), and that every
# way a container ends gives the VF, its PF settings, its RDMA device and its
# address back.
#
# podman's libcni keeps its cache in the fixed /var/lib/cni, and podman and
# runc keep namespaces and state under /run: the test runs in a mount
# namespace of its own, with /run a fresh tmpfs and /var/lib an overlay
# whose writes land in the test's directory, so it touches nothing on the
# machine and nothing another runtime there keeps.
if [ "$(id -u)" = 0 ] && [ -z "${PODMAN_TEST_PRIVATE:-}" ]; then
	PODMAN_TEST_PRIVATE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../netns/sriov_lib.sh"

if ! command -v podman >/dev/null || ! command -v runc >/dev/null || [ ! -x /bin/busybox ]; then
	echo "SKIP: needs podman, runc and busybox-static (scripts/setup clients)"
	exit 77
fi
case $(podman --version) in
*" 4."*) ;;
*) echo "SKIP: needs podman 4 (5 has no CNI backend): $(podman --version)"; exit 77 ;;
esac

PM=$T_TMP/podman
NETD=$PM/net.d
REC=$PM/calls.jsonl
ROOTFS=$PM/rootfs
RF=$T_TMP/rdma-fake
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
mkdir -p "$PM/varlib" "$PM/varlib-work" "$NETD" "$PM/bin" "$ROOTFS/bin"
mount -t tmpfs -o mode=0755 tmpfs /run &&
	mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$PM/varlib,workdir=$PM/varlib-work" /var/lib ||
	{ echo "Bail out: cannot make the test's own /run and /var/lib" >&2; exit 1; }

# A root filesystem of one static busybox: no image, no registry.
cp /bin/busybox "$ROOTFS/bin/"
for a in sh ip cat sleep; do ln -s busybox "$ROOTFS/bin/$a"; done

# The recording wrapper podman finds in its plugin directory (and
# sriov-rdma finds pool-ipam through): one JSON line per call, with the
# environment podman set, stdin, the exit code and stdout, and the command
# line of the process that ran it.
for p in sriov-rdma pool-ipam; do
	cat > "$PM/bin/$p" <<EOF
#!/bin/sh
in=\$(mktemp "$PM/in.XXXXXX") out=\$(mktemp "$PM/out.XXXXXX")
cat > "\$in"
$(t_cni_path)/$p "\$@" < "\$in" > "\$out"
rc=\$?
cat "\$out"
{
	flock 9
	jq -cn --arg plugin $p --arg cmd "\${CNI_COMMAND-}" --arg id "\${CNI_CONTAINERID-}" \\
		--arg netns "\${CNI_NETNS-}" --arg ifname "\${CNI_IFNAME-}" --arg args "\${CNI_ARGS-}" \\
		--arg path "\${CNI_PATH-}" --arg sysfs "\${SRIOV_RDMA_SYSFS_ROOT-}" \\
		--arg caller "\$(tr '\\0' ' ' < /proc/\$PPID/cmdline)" \\
		--rawfile stdin "\$in" --rawfile stdout "\$out" --arg rc "\$rc" \\
		'{\$plugin, \$cmd, \$id, \$netns, \$ifname, \$args, \$path, \$sysfs, \$caller, \$stdin, \$stdout, rc: (\$rc | tonumber)}' >> "$REC"
} 9>> "$REC.lock"
rm -f "\$in" "\$out"
exit \$rc
EOF
	chmod +x "$PM/bin/$p"
done

# podman sets the [engine] env for itself and passes CONTAINERS_CONF on to
# conmon, so the cleanup process conmon starts when a container exits (and
# which may be the one that sends DEL) has the plugins' variables too.
# podman asks runc for its own nofile and nproc limits, which runc cannot
# set where this process's hard limits are lower.
cat > "$PM/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$PM/events.log"
runtime = "runc"
env = ["SRIOV_RDMA_SYSFS_ROOT=$SR_SYS", "SRIOV_RDMA_PF_FAKE_DIR=$SR_FAKE", "SRIOV_RDMA_RDMA_FAKE_DIR=$RF",
       "SRIOV_RDMA_CNI_NODE_CONFIG=$SRIOV_RDMA_CNI_NODE_CONFIG"]

[network]
network_backend = "cni"
cni_plugin_dirs = ["$PM/bin"]
network_config_dir = "$NETD"
EOF
cat > "$PM/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$PM/root"
runroot = "$PM/runroot"
EOF
export CONTAINERS_CONF=$PM/containers.conf CONTAINERS_STORAGE_CONF=$PM/storage.conf
# Only containers.conf hands the plugins their variables, as on a real host.
unset SRIOV_RDMA_SYSFS_ROOT SRIOV_RDMA_PF_FAKE_DIR SRIOV_RDMA_CNI_NODE_CONFIG

t_podman_storage "$PM"

# pm_net NAME VERSION VF SUBNET: a network of one sriov-rdma
# attachment of VF, with pool-ipam, as a conflist in podman's directory.
pm_net() {
	cat > "$NETD/$1.conflist" <<EOJ
{
  "cniVersion": "$2",
  "name": "$1",
  "plugins": [
    {
      "type": "sriov-rdma",
      "capabilities": { "mac": true },
      "deviceID": "$(sr_vf "$3")",
      "vlan": 100,
      "spoofchk": "off",
      "trust": "on",
      "max_tx_rate": 1000,
      "mtu": 1400,
      "stateDir": "$SR_STATE",
      "ipam": {
        "type": "pool-ipam",
        "ranges": [[{ "subnet": "$4", "gateway": "${4%.0/24}.1" }]],
        "dataDir": "$T_TMP/pool"
      }
    }
  ]
}
EOJ
}

# The recorded calls: pm_calls JQ-FILTER (over the array of all calls).
pm_calls() { jq -rs "$1" "$REC" 2>/dev/null; }
pm_calls_reset() { cat "$REC" >> "$PM/all.jsonl" 2>/dev/null; : > "$REC"; }

# VF N's netdev, PF settings and RDMA device (mlx5_<N+2>, as an mlx5 VF's).
pm_snapshot() { # N
	echo "$(sr_host_link "$(sr_net "$1")") | $(grep "^vf=$1 " "$SR_FAKE/$SR_PFNET.vfs")" \
		"| $(grep " mlx5_$(($1 + 2)) " "$RF/rdma.devs")"
}

# pm_released N NET BEFORE: everything an attachment of VF N on NET held is back.
pm_released() {
	t_eq "$(pm_snapshot "$1")" "$3" "VF $1 on the host as before, its PF settings restored"
	t_eq "$(t_count "$T_TMP/pool/$2" 'a-*')" 0 "no address of $2 held"
	t_eq "$(sr_state_files)" "" "no attachment record left"
	t_eq "$(sr_markers)" "" "no in-use marker left"
	t_eq "$(find /var/lib/cni/results -name "$2-*" 2>/dev/null)" "" "no libcni cache entry left"
	t_eq "$(find /run/netns -name 'netns-*' 2>/dev/null)" "" "no podman namespace left"
}

# Each case starts from a fresh node (the RDMA fake in exclusive mode, so
# each VF's RDMA device moves with it), so that what one case leaves behind
# fails that case only.
pm_fresh() {
	local i
	t_pm rm -f -a -t 0
	# podman runs VERSION of every network in its directory on each command.
	rm -f "$NETD"/*.conflist
	sr_setup 3 || return 1
	for i in 0 1 2; do ip link set "$(sr_net $i)" mtu 1500; done
	rm -rf "$T_TMP/pool" "$RF"
	mkdir -p "$RF"
	echo exclusive > "$RF/rdma.mode"
	for i in 0 1 2; do echo "$((i + 3)) mlx5_$((i + 2)) $(sr_net $i) $HOST_NS"; done > "$RF/rdma.devs"
	before0=$(pm_snapshot 0)
	before1=$(pm_snapshot 1)
	before2=$(pm_snapshot 2)
	pm_calls_reset
}

# pm_call PLUGIN COMMAND: the one recorded call of PLUGIN and COMMAND in
# PM_CALL (the case fails unless there is exactly one).
pm_call() {
	PM_CALL=$(pm_calls "[.[] | select(.plugin == \"$1\" and .cmd == \"$2\")]")
	t_eq "$(printf '%s' "$PM_CALL" | jq length)" 1 "$1 $2 calls"
	PM_CALL=$(printf '%s' "$PM_CALL" | jq -c '.[0] // empty')
}
# A field of a call's config (stdin), as JSON: pm_stdin CALL FILTER
pm_stdin() { printf '%s' "$1" | jq -c ".stdin | fromjson | $2"; }

t_begin "run --rm: the container sees the VF with its address; after exit all of it is back"
pm_fresh
pm_net vfnet 1.0.0 0 10.77.0.0/24
t_pm run --rm --network vfnet --name pm-once --rootfs "$ROOTFS" /bin/sh -c \
	'ip -o link show eth0; ip -o -4 addr show eth0'
t_eq "$T_RC" 0 "podman run ($T_ERR)"
t_contains "$T_OUT" "mtu 1400" "the VF's MTU in the container"
t_contains "$T_OUT" "link/ether $(echo "$before0" | cut -d' ' -f2) " "the VF's MAC in the container"
t_contains "$T_OUT" "inet 10.77.0.2/24" "the address in the container"
pm_call sriov-rdma ADD
add=$PM_CALL
t_eq "$(printf '%s' "$add" | jq -r '.ifname + " " + .args')" "eth0 IgnoreUnknown=1;K8S_POD_NAME=pm-once" \
	"CNI_IFNAME and CNI_ARGS of ADD"
t_contains "$(printf '%s' "$add" | jq -r .netns)" /run/netns/netns- "CNI_NETNS: a namespace podman pinned"
t_eq "$(pm_stdin "$add" '[has("runtimeConfig"), has("prevResult"), .name, .cniVersion]')" \
	'[false,false,"vfnet","1.0.0"]' "ADD's config: no runtimeConfig, no prevResult"
pm_call sriov-rdma DEL
del=$PM_CALL
t_eq "$(printf '%s' "$del" | jq -r '[.id, .netns, .ifname, .args] | join(" ")')" \
	"$(printf '%s' "$add" | jq -r '[.id, .netns, .ifname, .args] | join(" ")')" "DEL names what ADD named"
t_eq "$(pm_stdin "$del" '[has("runtimeConfig"), .prevResult.ips[0].address]')" '[false,"10.77.0.2/24"]' \
	"DEL's config: libcni's cached result as prevResult"
t_contains "$(sr_calls)" "vlan=100" "the PF was asked for the network's VLAN"
pm_released 0 vfnet "$before0"
t_eq "$(pm_calls '[.[] | select(.sysfs != "'"$SR_SYS"'")] | length')" 0 \
	"every call, the cleanup process's too, has containers.conf's [engine] env"
echo "# DEL sent by: $(printf '%s' "$del" | jq -r .caller | sed 's/ --.* container / ... container /')"

t_begin "run -d, stop, rm: the VF is in the container while it runs; stop sends DEL, rm nothing more"
pm_fresh
pm_net vfnet 1.0.0 0 10.77.0.0/24
t_pm run -d --network vfnet --name pm-long --rootfs "$ROOTFS" /bin/sleep 100000
t_eq "$T_RC" 0 "podman run -d ($T_ERR)"
id=$T_OUT
pm_call sriov-rdma ADD
add=$PM_CALL
t_eq "$(printf '%s' "$add" | jq -r .id)" "$id" "CNI_CONTAINERID is the container's ID"
addr=$(printf '%s' "$add" | jq -r '.stdout | fromjson | .ips[0].address')
t_pm inspect --format '{{.NetworkSettings.SandboxKey}} {{(index .NetworkSettings.Networks "vfnet").IPAddress}}' pm-long
t_eq "$T_OUT" "$(printf '%s' "$add" | jq -r .netns) ${addr%/*}" "podman inspect: the namespace and the plugin's address"
netns=${T_OUT% *}
t_pm exec pm-long /bin/ip -o -4 addr show eth0
t_contains "$T_OUT" "inet $addr" "the address in the running container ($T_ERR)"
t_eq "$(sr_host_link "$(sr_net 0)")" "" "the VF is not on the host"
t_eq "$(grep -c "^3 .* $(stat -L -c %i "$netns")$" "$RF/rdma.devs")" 1 \
	"the VF's RDMA device is in the container's namespace"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=100 qos=0 proto=802.1Q spoofchk=off trust=on" \
	"the PF holds the network's VF settings"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "max_tx_rate=1000" "and its rate limit"
t_eq "$(t_count "$T_TMP/pool/vfnet" 'a-*')" 1 "one address held"
t_pm stop -t 0 pm-long
t_eq "$T_RC" 0 "podman stop ($T_ERR)"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "DEL")] | length')" 1 "one DEL by stop"
pm_released 0 vfnet "$before0"
t_pm rm pm-long
t_eq "$T_RC" 0 "podman rm ($T_ERR)"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "DEL")] | length')" 1 "rm sends no DEL"
t_pm ps -a -q
t_eq "$T_OUT" "" "no container left"

t_begin "two containers at once on two VFs of one PF"
pm_fresh
pm_net vfa 1.0.0 1 10.78.0.0/24
pm_net vfb 1.0.0 2 10.79.0.0/24
for n in a b; do
	timeout -k 10 600 podman --root "$PM/root" --runroot "$PM/runroot" --tmpdir "$PM/tmp" --storage-driver vfs \
		run -d --network "vf$n" --name "pm-$n" --rootfs "$ROOTFS" /bin/sleep 100000 \
		>"$PM/run-$n.out" 2>&1 &
done
wait
for n in a b; do
	t_pm exec "pm-$n" /bin/ip -o -4 addr show eth0
	t_eq "$T_RC" 0 "pm-$n is running ($(cat "$PM/run-$n.out") $T_ERR)"
	t_contains "$T_OUT" "inet 10.7$([ $n = a ] && echo 8 || echo 9).0.2/24" "pm-$n has its own VF's address"
done
t_eq "$(sr_host_link "$(sr_net 1)")$(sr_host_link "$(sr_net 2)")" "" "both VFs are in containers"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "ADD") | .stdin | fromjson | .deviceID] | sort | join(" ")')" \
	"$(sr_vf 1) $(sr_vf 2)" "one ADD per VF"
t_pm rm -f -t 0 pm-a pm-b
t_eq "$T_RC" 0 "podman rm -f ($T_ERR)"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "DEL") | .stdin | fromjson | .deviceID] | sort | join(" ")')" \
	"$(sr_vf 1) $(sr_vf 2)" "one DEL per VF"
pm_released 1 vfa "$before1"
pm_released 2 vfb "$before2"

t_begin "a failing ADD (a VF the node lacks): podman reports the plugin's message, nothing is left"
pm_fresh
pm_net vfmissing 1.0.0 5 10.80.0.0/24
vfs=$(cat "$SR_FAKE/$SR_PFNET.vfs")
t_pm run --rm --network vfmissing --name pm-fail --rootfs "$ROOTFS" /bin/true
[ "$T_RC" != 0 ] || t_fail "podman run succeeded"
pm_call sriov-rdma ADD
add=$PM_CALL
msg=$(printf '%s' "$add" | jq -r '.stdout | fromjson | .msg')
t_contains "$msg" "$(sr_vf 5)" "the plugin's message names the VF"
t_contains "$T_ERR" "$msg" "podman reports the plugin's message"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd != "VERSION") | .cmd] | join(" ")')" "ADD DEL" \
	"podman sends DEL after the failed ADD"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "DEL") | .rc] | join(" ")')" 0 \
	"that DEL, of a VF the node lacks, succeeds"
echo "# podman: $T_ERR"
t_eq "$(cat "$SR_FAKE/$SR_PFNET.vfs")" "$vfs" "the PF's VFs untouched"
t_pm ps -a -q
t_eq "$T_OUT" "" "no container left"
pm_released 0 vfmissing "$before0"

t_begin "cniVersion 0.3.1: the same, and DEL without a prevResult (libcni keeps none before 0.4.0)"
pm_fresh
pm_net v031 0.3.1 0 10.81.0.0/24
t_pm run --rm --network v031 --name pm-031 --rootfs "$ROOTFS" /bin/ip -o -4 addr show eth0
t_eq "$T_RC" 0 "podman run ($T_ERR)"
t_contains "$T_OUT" "inet 10.81.0.2/24" "the address in the container"
pm_call sriov-rdma ADD
add=$PM_CALL
t_eq "$(printf '%s' "$add" | jq -r '.stdout | fromjson | .cniVersion')" 0.3.1 "the result's version"
pm_call sriov-rdma DEL
del=$PM_CALL
t_eq "$(pm_stdin "$del" 'has("prevResult")')" false "no prevResult on DEL"
pm_released 0 v031 "$before0"

t_begin "cniVersion 1.1.0: podman's libcni cannot read the result; it sends DEL and nothing is left"
pm_fresh
pm_net v110 1.1.0 0 10.82.0.0/24
t_pm run --rm --network v110 --name pm-110 --rootfs "$ROOTFS" /bin/true
[ "$T_RC" != 0 ] || t_fail "podman run succeeded"
pm_call sriov-rdma ADD
add=$PM_CALL
t_eq "$(printf '%s' "$add" | jq -r '"\(.rc) \(.stdout | fromjson | .cniVersion)"')" "0 1.1.0" "the plugin's ADD succeeded"
t_contains "$T_ERR" 'failed (add): unsupported CNI result version "1.1.0"' "podman's error"
pm_call sriov-rdma DEL
del=$PM_CALL
t_eq "$(printf '%s' "$del" | jq -r '"\(.rc) \(.stdin | fromjson | has("prevResult"))"')" "0 false" \
	"DEL from the config on disk (libcni cached nothing), no prevResult"
t_pm ps -a -q
t_eq "$T_OUT" "" "no container left"
pm_released 0 v110 "$before0"

t_begin "--mac-address: podman passes MAC= in CNI_ARGS, the VF gets it, DEL gives the old one back"
pm_fresh
pm_net vfnet 1.0.0 0 10.77.0.0/24
t_pm run --rm --network vfnet --mac-address 02:00:00:a1:b2:c3 --name pm-mac --rootfs "$ROOTFS" \
	/bin/ip -o link show eth0
t_eq "$T_RC" 0 "podman run ($T_ERR)"
t_contains "$T_OUT" "link/ether 02:00:00:a1:b2:c3 " "the MAC in the container"
pm_call sriov-rdma ADD
add=$PM_CALL
t_eq "$(printf '%s' "$add" | jq -r .args)" "IgnoreUnknown=1;K8S_POD_NAME=pm-mac;MAC=02:00:00:a1:b2:c3" "CNI_ARGS"
t_eq "$(pm_stdin "$add" 'has("runtimeConfig")')" false "no runtimeConfig: podman has no mac capability arg"
t_contains "$(sr_calls)" "mac=02:00:00:a1:b2:c3" "the PF was asked for the MAC"
pm_released 0 vfnet "$before0"

t_begin "restart: DEL, then ADD of the same VF under the interface name --network asked for"
pm_fresh
pm_net vfnet 1.0.0 0 10.77.0.0/24
t_pm run -d --network vfnet:interface_name=vf0 --name pm-re --rootfs "$ROOTFS" /bin/sleep 100000
t_eq "$T_RC" 0 "podman run -d ($T_ERR)"
t_pm restart -t 0 pm-re
t_eq "$T_RC" 0 "podman restart ($T_ERR)"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd != "VERSION") | "\(.cmd) \(.ifname)"] | join(", ")')" \
	"ADD vf0, DEL vf0, ADD vf0" "the calls, with CNI_IFNAME"
t_pm exec pm-re /bin/ip -o -4 addr show vf0
t_contains "$T_OUT" "inet 10.77.0." "the restarted container has the VF with an address ($T_ERR)"
t_eq "$(t_count "$T_TMP/pool/vfnet" 'a-*')" 1 "one address held"
t_pm rm -f -t 0 pm-re
t_eq "$T_RC" 0 "podman rm -f ($T_ERR)"
pm_released 0 vfnet "$before0"

t_begin "conf/rdma-host.conflist, the example for a host without Kubernetes, starts a container"
pm_fresh
jq --arg s "$SR_STATE" --arg d "$T_TMP/pool" '.plugins[0] |= (.stateDir = $s | del(.logFile)
	| .ipam.dataDir = $d | del(.ipam.logFile))' "$SOURCE_DIR/conf/rdma-host.conflist" > "$NETD/rdma-host.conflist"
t_eq "$(jq -r '.plugins[0].deviceID' "$NETD/rdma-host.conflist")" "$(sr_vf 0)" "the example names VF 0 of this node"
t_pm run --rm --network rdma-host --name pm-example --rootfs "$ROOTFS" /bin/ip -o -4 addr show eth0
t_eq "$T_RC" 0 "podman run ($T_ERR)"
t_contains "$T_OUT" "inet 10.56.0.10/24" "the example's first address in the container"
t_contains "$(cat "$RF/rdma.calls" 2>/dev/null)" "dev-set 3 netns" "its RDMA device was moved (\"rdma\": \"exclusive\")"
pm_released 0 rdma-host "$before0"

t_begin "network ls and inspect show our networks; listing them runs no plugin but VERSION"
pm_fresh
pm_net vfnet 1.0.0 0 10.77.0.0/24
pm_net v110 1.1.0 0 10.82.0.0/24
t_pm network ls --format '{{.Name}} {{.Driver}}'
t_eq "$T_RC" 0 "network ls ($T_ERR)"
t_contains "$T_OUT" "vfnet sriov-rdma" "network ls"
t_contains "$T_OUT" "v110 sriov-rdma" "network ls: the 1.1.0 network too"
t_pm network inspect vfnet
t_eq "$T_RC" 0 "network inspect ($T_ERR)"
t_eq "$(t_jq '.[0] | [.name, .driver, .id, (.subnets // [] | length)] | join(" ")')" \
	"vfnet sriov-rdma $(printf vfnet | sha256sum | cut -d' ' -f1) 0" "network inspect"
t_eq "$(pm_calls '[.[] | .cmd] | unique | join(" ")')" "VERSION" "only VERSION calls"

t_begin "podman sends no CHECK, STATUS or GC"
pm_calls_reset
t_eq "$(jq -rs '[.[] | select(.cmd == "CHECK" or .cmd == "STATUS" or .cmd == "GC")] | length' "$PM/all.jsonl")" 0 \
	"CHECK, STATUS or GC calls over the whole test"

t_done
