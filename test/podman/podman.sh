#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# podman 4.3.1 (Debian 12's, the last with the CNI backend) running
# containers on a conflist of sriov-rdma + pool-ipam: what it sends to the
# plugins (recorded by a wrapper in its plugin directory), and that every
# way a container ends gives the VF, its PF settings and its address back.
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

PM=$T_TMP/podman
NETD=$PM/net.d
REC=$PM/calls.jsonl
ROOTFS=$PM/rootfs
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
env = ["SRIOV_RDMA_SYSFS_ROOT=$SR_SYS", "SRIOV_RDMA_PF_FAKE_DIR=$SR_FAKE", "SRIOV_RDMA_CNI_NODE_CONFIG=$SRIOV_RDMA_CNI_NODE_CONFIG"]

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
unset SRIOV_RDMA_SYSFS_ROOT SRIOV_RDMA_PF_FAKE_DIR SRIOV_RDMA_CNI_NODE_CONFIG

# podman with the test's storage; a hang guard only. Output in T_OUT/T_ERR/T_RC.
# shellcheck disable=SC2034  # T_OUT, T_ERR and T_RC are read by the cases
pm() {
	T_OUT=$(timeout -k 10 600 podman --root "$PM/root" --runroot "$PM/runroot" --tmpdir "$PM/tmp" \
		--storage-driver vfs "$@" 2>"$PM/stderr")
	T_RC=$?
	T_ERR=$(cat "$PM/stderr")
	return 0
}
t_defer "podman --root $PM/root --runroot $PM/runroot --tmpdir $PM/tmp --storage-driver vfs rm -f -a -t 0"

# pm_net NAME VERSION VF SUBNET [EXTRA]: a network of one sriov-rdma
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
      "stateDir": "$SR_STATE"${5:+,
      $5},
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

# What VF N and the pool look like while nothing holds them.
pm_snapshot() { # N
	echo "$(sr_host_link "$(sr_net "$1")") | $(grep "^vf=$1 " "$SR_FAKE/$SR_PFNET.vfs")"
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

sr_setup 3
ip link set "$(sr_net 0)" mtu 1500
ip link set "$(sr_net 1)" mtu 1500
before0=$(pm_snapshot 0)
before1=$(pm_snapshot 1)

# The one recorded call of PLUGIN and COMMAND (fails the case unless exactly one).
pm_call() { # PLUGIN COMMAND
	local n
	n=$(pm_calls "[.[] | select(.plugin == \"$1\" and .cmd == \"$2\")] | length")
	t_eq "$n" 1 "$1 $2 calls" || return 1
	pm_calls ".[] | select(.plugin == \"$1\" and .cmd == \"$2\")"
}
# A field of a call's config (stdin), as JSON: pm_stdin CALL FILTER
pm_stdin() { printf '%s' "$1" | jq -c ".stdin | fromjson | $2"; }

t_begin "run --rm: the container sees the VF with its address; after exit all of it is back"
pm_net vfnet 1.0.0 0 10.77.0.0/24
pm_calls_reset
pm run --rm --network vfnet --name pm-once --rootfs "$ROOTFS" /bin/sh -c \
	'ip -o link show eth0; ip -o -4 addr show eth0'
t_eq "$T_RC" 0 "podman run ($T_ERR)"
t_contains "$T_OUT" "mtu 1400" "the VF's MTU in the container"
t_contains "$T_OUT" "link/ether $(echo "$before0" | cut -d' ' -f2) " "the VF's MAC in the container"
t_contains "$T_OUT" "inet 10.77.0.2/24" "the address in the container"
add=$(pm_call sriov-rdma ADD)
t_eq "$(printf '%s' "$add" | jq -r '.ifname + " " + .args')" "eth0 IgnoreUnknown=1;K8S_POD_NAME=pm-once" \
	"CNI_IFNAME and CNI_ARGS of ADD"
t_contains "$(printf '%s' "$add" | jq -r .netns)" /run/netns/netns- "CNI_NETNS: a namespace podman pinned"
t_eq "$(pm_stdin "$add" '[has("runtimeConfig"), has("prevResult"), .name, .cniVersion]')" \
	'[false,false,"vfnet","1.0.0"]' "ADD's config: no runtimeConfig, no prevResult"
del=$(pm_call sriov-rdma DEL)
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
pm_calls_reset
pm run -d --network vfnet --name pm-long --rootfs "$ROOTFS" /bin/sleep 100000
t_eq "$T_RC" 0 "podman run -d ($T_ERR)"
id=$T_OUT
add=$(pm_call sriov-rdma ADD)
t_eq "$(printf '%s' "$add" | jq -r .id)" "$id" "CNI_CONTAINERID is the container's ID"
addr=$(printf '%s' "$add" | jq -r '.stdout | fromjson | .ips[0].address')
pm inspect --format '{{.NetworkSettings.SandboxKey}} {{(index .NetworkSettings.Networks "vfnet").IPAddress}}' pm-long
t_eq "$T_OUT" "$(printf '%s' "$add" | jq -r .netns) ${addr%/*}" "podman inspect: the namespace and the plugin's address"
pm exec pm-long /bin/ip -o -4 addr show eth0
t_contains "$T_OUT" "inet $addr" "the address in the running container ($T_ERR)"
t_eq "$(sr_host_link "$(sr_net 0)")" "" "the VF is not on the host"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "vlan=100 qos=0 proto=802.1Q spoofchk=off trust=on" \
	"the PF holds the network's VF settings"
t_contains "$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs")" "max_tx_rate=1000" "and its rate limit"
t_eq "$(t_count "$T_TMP/pool/vfnet" 'a-*')" 1 "one address held"
pm stop -t 0 pm-long
t_eq "$T_RC" 0 "podman stop ($T_ERR)"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "DEL")] | length')" 1 "one DEL by stop"
pm_released 0 vfnet "$before0"
pm rm pm-long
t_eq "$T_RC" 0 "podman rm ($T_ERR)"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "DEL")] | length')" 1 "rm sends no DEL"
pm ps -a -q
t_eq "$T_OUT" "" "no container left"

t_begin "two containers at once on two VFs of one PF"
pm_net vfa 1.0.0 1 10.78.0.0/24
pm_net vfb 1.0.0 2 10.79.0.0/24
before2=$(pm_snapshot 2)
pm_calls_reset
for n in a b; do
	timeout -k 10 600 podman --root "$PM/root" --runroot "$PM/runroot" --tmpdir "$PM/tmp" --storage-driver vfs \
		run -d --network "vf$n" --name "pm-$n" --rootfs "$ROOTFS" /bin/sleep 100000 \
		>"$PM/run-$n.out" 2>&1 &
done
wait
for n in a b; do
	pm exec "pm-$n" /bin/ip -o -4 addr show eth0
	t_eq "$T_RC" 0 "pm-$n is running ($(cat "$PM/run-$n.out") $T_ERR)"
	t_contains "$T_OUT" "inet 10.7$([ $n = a ] && echo 8 || echo 9).0.2/24" "pm-$n has its own VF's address"
done
t_eq "$(sr_host_link "$(sr_net 1)")$(sr_host_link "$(sr_net 2)")" "" "both VFs are in containers"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "ADD") | .stdin | fromjson | .deviceID] | sort | join(" ")')" \
	"$(sr_vf 1) $(sr_vf 2)" "one ADD per VF"
pm rm -f -t 0 pm-a pm-b
t_eq "$T_RC" 0 "podman rm -f ($T_ERR)"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd == "DEL") | .stdin | fromjson | .deviceID] | sort | join(" ")')" \
	"$(sr_vf 1) $(sr_vf 2)" "one DEL per VF"
pm_released 1 vfa "$before1"
pm_released 2 vfb "$before2"

t_begin "a failing ADD (a VF the node lacks): podman reports the plugin's message, nothing is left"
pm_net vfmissing 1.0.0 5 10.80.0.0/24
vfs=$(cat "$SR_FAKE/$SR_PFNET.vfs")
pm_calls_reset
pm run --rm --network vfmissing --name pm-fail --rootfs "$ROOTFS" /bin/true
t_not_contains "$T_RC" 0 "podman run fails"
add=$(pm_call sriov-rdma ADD)
msg=$(printf '%s' "$add" | jq -r '.stdout | fromjson | .msg')
t_contains "$msg" "$(sr_vf 5)" "the plugin's message names the VF"
t_contains "$T_ERR" "$msg" "podman reports the plugin's message"
t_eq "$(pm_calls '[.[] | select(.plugin == "sriov-rdma" and .cmd != "VERSION") | .cmd] | join(" ")')" "ADD DEL" \
	"podman sends DEL after the failed ADD"
echo "# podman: $T_ERR"
t_eq "$(cat "$SR_FAKE/$SR_PFNET.vfs")" "$vfs" "the PF's VFs untouched"
pm ps -a -q
t_eq "$T_OUT" "" "no container left"
pm_released 0 vfmissing "$before0"
rm -f "$NETD/vfmissing.conflist"

t_begin "cniVersion 0.3.1: the same, and DEL without a prevResult (libcni keeps none before 0.4.0)"
pm_net v031 0.3.1 0 10.81.0.0/24
pm_calls_reset
pm run --rm --network v031 --name pm-031 --rootfs "$ROOTFS" /bin/ip -o -4 addr show eth0
t_eq "$T_RC" 0 "podman run ($T_ERR)"
t_contains "$T_OUT" "inet 10.81.0.2/24" "the address in the container"
add=$(pm_call sriov-rdma ADD)
t_eq "$(printf '%s' "$add" | jq -r '.stdout | fromjson | .cniVersion')" 0.3.1 "the result's version"
del=$(pm_call sriov-rdma DEL)
t_eq "$(pm_stdin "$del" 'has("prevResult")')" false "no prevResult on DEL"
pm_released 0 v031 "$before0"

t_begin "cniVersion 1.1.0: podman's libcni cannot read the result; it sends DEL and nothing is left"
pm_net v110 1.1.0 0 10.82.0.0/24
pm_calls_reset
pm run --rm --network v110 --name pm-110 --rootfs "$ROOTFS" /bin/true
t_not_contains "$T_RC" 0 "podman run fails"
add=$(pm_call sriov-rdma ADD)
t_eq "$(printf '%s' "$add" | jq -r '"\(.rc) \(.stdout | fromjson | .cniVersion)"')" "0 1.1.0" "the plugin's ADD succeeded"
t_contains "$T_ERR" 'failed (add): unsupported CNI result version "1.1.0"' "podman's error"
del=$(pm_call sriov-rdma DEL)
t_eq "$(printf '%s' "$del" | jq -r '"\(.rc) \(.stdin | fromjson | has("prevResult"))"')" "0 false" \
	"DEL from the config on disk (libcni cached nothing), no prevResult"
pm ps -a -q
t_eq "$T_OUT" "" "no container left"
pm_released 0 v110 "$before0"

t_begin "--mac-address: podman passes MAC= in CNI_ARGS, the VF gets it, DEL gives the old one back"
pm_calls_reset
pm run --rm --network vfnet --mac-address 02:00:00:a1:b2:c3 --name pm-mac --rootfs "$ROOTFS" \
	/bin/ip -o link show eth0
t_eq "$T_RC" 0 "podman run ($T_ERR)"
t_contains "$T_OUT" "link/ether 02:00:00:a1:b2:c3 " "the MAC in the container"
add=$(pm_call sriov-rdma ADD)
t_eq "$(printf '%s' "$add" | jq -r .args)" "IgnoreUnknown=1;K8S_POD_NAME=pm-mac;MAC=02:00:00:a1:b2:c3" "CNI_ARGS"
t_eq "$(pm_stdin "$add" 'has("runtimeConfig")')" false "no runtimeConfig: podman has no mac capability arg"
t_contains "$(sr_calls)" "mac=02:00:00:a1:b2:c3" "the PF was asked for the MAC"
pm_released 0 vfnet "$before0"

t_begin "network ls and inspect show our networks; listing them runs no plugin but VERSION"
pm_calls_reset
pm network ls --format '{{.Name}} {{.Driver}}'
t_eq "$T_RC" 0 "network ls ($T_ERR)"
t_contains "$T_OUT" "vfnet sriov-rdma" "network ls"
t_contains "$T_OUT" "v110 sriov-rdma" "network ls: the 1.1.0 network too"
pm network inspect vfnet
t_eq "$T_RC" 0 "network inspect ($T_ERR)"
t_eq "$(t_jq '.[0] | [.name, .driver, .id, (.subnets // [] | length)] | join(" ")')" \
	"vfnet sriov-rdma $(printf vfnet | sha256sum | cut -d' ' -f1) 0" "network inspect"
t_eq "$(pm_calls '[.[] | .cmd] | unique | join(" ")')" "VERSION" "only VERSION calls"

t_begin "podman sends no CHECK, STATUS or GC"
pm_calls_reset
t_eq "$(jq -rs '[.[] | select(.cmd == "CHECK" or .cmd == "STATUS" or .cmd == "GC")] | length' "$PM/all.jsonl")" 0 \
	"CHECK, STATUS or GC calls over the whole test"

t_done
