#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The release on the node's OS: the tarball of scripts/package (NODE_TARBALL)
# installed in a Debian 11 root that holds none of the project's libraries
# (test/nodeos/in-root.sh sets PLUGIN_ROOT) by the README's steps, run
# inside it; then the installed plugins run there as a runtime runs them,
# chrooted, with the machine's /sys and network namespaces.
. "$(dirname "$0")/lib.sh"

if [ -z "${PLUGIN_ROOT:-}" ] || [ -z "${NODE_TARBALL:-}" ]; then
	echo "SKIP: needs NODE_TARBALL (scripts/package) and a node root: test/nodeos/in-root.sh bash $0"
	exit 77
fi
[ -f "$NODE_TARBALL" ] || { echo "Bail out: NODE_TARBALL $NODE_TARBALL is missing" >&2; exit 1; }

ROOT=$PLUGIN_ROOT
DATA=$T_TMP/pool
NS=$(t_netns)

# node PLUGIN COMMAND CONFIG [VAR=VALUE...]: /opt/cni/bin/PLUGIN in the root,
# as a runtime there runs it. Output in T_OUT, T_ERR, T_RC.
node() {
	local plugin=$1 cmd=$2 conf=$3
	shift 3
	T_OUT=$(printf '%s' "$conf" | env CNI_COMMAND="$cmd" CNI_PATH=/opt/cni/bin "$@" \
		chroot "$ROOT" "/opt/cni/bin/$plugin" 2>"$T_TMP/stderr")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/stderr")
	return 0
}
pool() { # COMMAND CONFIG CONTAINER_ID [VAR=VALUE...]
	local cmd=$1 conf=$2 id=$3
	shift 3
	node pool-ipam "$cmd" "$conf" CNI_CONTAINERID="$id" CNI_IFNAME=net1 CNI_NETNS="$NS" "$@"
}
conf() { # NAME [TOP-LEVEL MEMBERS]
	printf '{"cniVersion":"1.1.0","name":"%s","type":"pool-ipam"%s,"ipam":{"type":"pool-ipam","dataDir":"%s","ranges":[[{"subnet":"10.20.0.0/29"}]]}}' \
		"$1" "${2:+,$2}" "$DATA"
}
held() { find "$DATA/$1" -name 'c-*' -printf '%f\n' 2>/dev/null | sort | tr '\n' ' '; }

t_begin "the README's release steps in the node's root: unpack the tarball, run its scripts/install"
top=$(basename "$NODE_TARBALL" .tar.gz)
cp "$NODE_TARBALL" "$ROOT/root/"
out=$(chroot "$ROOT" /bin/sh -c "cd /root && tar -xzf '$top.tar.gz' && '$top/scripts/install'" 2>&1)
t_eq "$?" 0 "scripts/install inside the root ($out)"
for p in pool-ipam sriov-rdma; do
	t_contains "$out" "installed /opt/cni/bin/$p" "$p installed"
	t_eq "$(stat -c %a "$ROOT/opt/cni/bin/$p" 2>/dev/null)" 755 "$p mode"
	cmp -s "$ROOT/opt/cni/bin/$p" "$ROOT/root/$top/bin/$p" || t_fail "$p differs from the tarball's"
done
t_eq "$(stat -c %a "$ROOT/usr/local/sbin/rdma-doctor" 2>/dev/null)" 755 "rdma-doctor installed"
t_eq "$(find "$ROOT/opt/cni/bin" -name '.*' | wc -l)" 0 "no temporary file left"
[ ! -e "$ROOT/root/$top/build-install" ] || t_fail "it built instead of installing bin/"

t_begin "VERSION of both plugins, run from the node's CNI bin dir"
for p in pool-ipam sriov-rdma; do
	node "$p" VERSION '{"cniVersion":"1.1.0"}'
	t_eq "$T_RC" 0 "$p VERSION ($T_OUT $T_ERR)"
	t_eq "$(t_jq '.supportedVersions | join(" ")')" "0.3.0 0.3.1 0.4.0 1.0.0 1.1.0" "$p versions"
done

t_begin "pool-ipam ADD, CHECK, DEL and GC"
pool ADD "$(conf nadd)" c1
t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address')" 10.20.0.1/29 "address"
prev=$T_OUT
pool CHECK "$(conf nadd "\"prevResult\":$prev")" c1
t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
pool ADD "$(conf nadd)" c2
t_eq "$(held nadd)" "c-c1:net1.0 c-c2:net1.0 " "two reservations"
pool DEL "$(conf nadd)" c1
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
t_eq "$(held nadd)" "c-c2:net1.0 " "c1's released"
pool GC "$(conf nadd '"cni.dev/valid-attachments":[]')" x
t_eq "$T_RC" 0 "GC ($T_OUT $T_ERR)"
t_eq "$(held nadd)" "" "GC released what no attachment owns"
pool STATUS "$(conf nadd)" x
t_eq "$T_RC" 0 "STATUS ($T_OUT)"

t_begin "sriov-rdma: a deviceID the node does not have is a clear error, nothing changed"
c=$(jq -nc --arg s "$T_TMP/state" \
	'{cniVersion: "1.0.0", name: "rail", type: "sriov-rdma", deviceID: "0000:ff:1f.7", stateDir: $s}')
node sriov-rdma ADD "$c" CNI_CONTAINERID=r1 CNI_NETNS="$NS" CNI_IFNAME=net1
t_eq "$T_RC" 1 "exit status"
t_contains "$(t_jq .msg)" "deviceID 0000:ff:1f.7: no such PCI device in /sys/bus/pci/devices" "message"
t_eq "$(t_count "$T_TMP/state" '*')" 0 "no state written"

t_begin "pool-ipam reading a cluster pool without libyaml: the error names the package"
printf 'apiVersion: v1\nkind: Config\n' > "$T_TMP/kubeconfig"
c=$(printf '{"cniVersion":"1.1.0","name":"ncl","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s","ippool":{"name":"p1","kubeconfig":"%s"}}}' \
	"$DATA" "$T_TMP/kubeconfig")
pool ADD "$c" k1 NODE_NAME=node-a
t_eq "$T_RC" 1 "exit status ($T_OUT)"
t_contains "$(t_jq .msg)" "cannot load libyaml (libyaml-0.so.2: cannot open shared object file" "what is missing"
t_contains "$(t_jq .msg)" "install libyaml-0-2" "the fix"

t_done
