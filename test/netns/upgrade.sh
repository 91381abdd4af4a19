#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A new release rolled onto a node whose pods hold VFs, and rolled back
# (docs/upgrading.md): the previous release (OLD_REV, built from this
# project's own history into the build directory, once) and this tree's
# build, each installed with scripts/install into the node's CNI bin dir.
#
# Upgrade: pods attach with the old release (a single rail with PF-side
# settings, MAC, MTU, a moved and renamed RDMA device and a device-info
# file; two rails of one pod with multiRail; an InfiniBand VF; a static
# address; an address from a cluster pool on the test API server; a pod the
# runtime will forget; a sandbox whose pause process dies). The new release
# is installed while another pod is added and deleted over and over, then
# its CHECK passes on each, its takeover of the forgotten sandbox, its GC
# and its DELs release them exactly: every VF's PF settings, netdev name,
# MAC and MTU, RDMA device, device-info file and address as before the
# first ADD, rdma-doctor clean. Then what a newer release leaves: a record,
# an in-use marker and a pool record of a version this one does not read
# are refused by name, with nothing changed (DEL, CHECK, GC, a takeover),
# and released once put back as this version wrote them (standing in for
# that release's own DEL); a record of version 1 with a member this
# version does not know is released. Rollback: pods attached by the new
# release, the old one installed back under the same running pod, its
# CHECK, takeover, GC and DELs release them exactly.
. "$(dirname "$0")/sriov_lib.sh"

# The previous release, 0.1.0 (docs/testing.md, "upgrade", says why this one).
OLD_REV=a2d240d05f7012de4c308eea133e503d8a3b7106
OLD=$BUILD_DIR/upgrade-old
BIN=$T_TMP/node/opt/cni/bin
RF=$T_TMP/rdma
IB_SYS=$T_TMP/ib-sys
IB_FAKE=$T_TMP/ib-fake
IB_RF=$T_TMP/ib-rdma
IB_PF=0000:5e:00.0
IB_PFNET=ub$$pf
POOL=$T_TMP/pool
DI=$T_TMP/devinfo
HOST_NS=$(stat -L -c %i /proc/self/ns/net)
NVF=8
export SRIOV_RDMA_RDMA_FAKE_DIR=$RF
# More VFs than one PCI device has functions: VF 6 on is 0000:3b:01.0 on.
sr_vf() { printf '0000:3b:%02x.%d' $((($1 + 2) / 8)) $((($1 + 2) % 8)); }

# ---- the two releases ----

# The old release's plugins, from its commit, configured as this build is
# (its sanitizers): built once into $OLD, kept for the next run.
build_old() {
	local san lundef stamp
	if ! git -C "$SOURCE_DIR" cat-file -e "$OLD_REV^{commit}" 2>/dev/null; then
		# A shallow clone cannot have it: nothing to build the old release from.
		if [ "$(git -C "$SOURCE_DIR" rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
			echo "SKIP: $SOURCE_DIR is a shallow clone without $OLD_REV (the previous release): run it in a full clone (git fetch --unshallow)"
			exit 77
		fi
		echo "upgrade: commit $OLD_REV (the previous release) is not in the history of $SOURCE_DIR: a full clone has it (git fetch --unshallow)" >&2
		return 1
	fi
	read -r san lundef < <(meson introspect --buildoptions "$BUILD_DIR" |
		jq -r 'map({(.name): .value}) | add | "\(.b_sanitize) \(.b_lundef)"')
	stamp="$OLD_REV b_sanitize=$san b_lundef=$lundef"
	(
		flock 9
		if [ "$(cat "$OLD/stamp" 2>/dev/null)" != "$stamp" ] ||
			[ ! -x "$OLD/build/plugins/sriov-rdma/sriov-rdma" ]; then
			rm -rf "$OLD/src" "$OLD/build" "$OLD/stamp"
			mkdir -p "$OLD/src"
			set -o pipefail
			if ! { git -C "$SOURCE_DIR" archive "$OLD_REV" | tar -x -C "$OLD/src" &&
				meson setup "$OLD/build" "$OLD/src" -Dtest_fakes=true -Dwerror=false \
					-Db_sanitize="$san" -Db_lundef="$lundef" >"$OLD/setup.log" 2>&1 &&
				nice ninja -C "$OLD/build" plugins/sriov-rdma/sriov-rdma \
					plugins/pool-ipam/pool-ipam >"$OLD/ninja.log" 2>&1; }; then
				echo "upgrade: building $OLD_REV failed:" >&2
				tail -n 20 "$OLD/setup.log" "$OLD/ninja.log" >&2
				exit 1
			fi
			echo "$stamp" > "$OLD/stamp"
		fi
	) 9>"$BUILD_DIR/.upgrade-old.lock"
}
mkdir -p "$OLD"
build_old || exit 1
OLD_VERSION=$("$OLD/build/plugins/sriov-rdma/sriov-rdma" --version | head -n 1)
NEW_VERSION=$("$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" --version | head -n 1)
CNITOOL=$(t_cnitool_bin) || { echo "cannot build the libcni client"; exit 1; }

# install old|new: scripts/install into the node's bin dir, as an operator upgrades.
install() {
	local dir=$OLD/build
	[ "$1" = new ] && dir=$BUILD_DIR
	"$SOURCE_DIR/scripts/install" --build-dir "$dir" --bin-dir "$BIN" --prefix "" --test-build \
		>"$T_TMP/install.log" 2>&1
}
installed() { "$BIN/sriov-rdma" --version | head -n 1; }

# ---- the node ----

# Ethernet: NVF VFs on one ConnectX-7 PF, each with its RDMA device mlx5_(N+2).
sr_setup "$NVF" || exit 1
mkdir -p "$RF" "$DI" "$BIN"
echo exclusive > "$RF/rdma.mode"
for ((i = 0; i < NVF; i++)); do
	echo "$((i + 3)) mlx5_$((i + 2)) $(sr_net "$i") $HOST_NS"
done > "$RF/rdma.devs"
# InfiniBand: two VFs of a ConnectX-7 in IB mode, each with a GUID of its own.
for i in 0 1; do
	sr_make_veth "ub$$v$i" "ub$$p$i" || exit 1
done
"$SOURCE_DIR/test/fixtures/mksysfs" "$IB_SYS" --ib --pf "$IB_PF" "$IB_PFNET" \
	--vf 0 0000:5e:00.2 "ub$$v0" --vf 1 0000:5e:00.3 "ub$$v1" \
	--guid 0 02:c9:03:00:00:0b:00:01 --guid 1 02:c9:03:00:00:0b:00:02 --fake-pf "$IB_FAKE" || exit 1
mkdir -p "$IB_RF"
echo exclusive > "$IB_RF/rdma.mode"
printf '3 mlx5_2 ub%sv0 %s\n4 mlx5_3 ub%sv1 %s\n' $$ "$HOST_NS" $$ "$HOST_NS" > "$IB_RF/rdma.devs"
IB_ENV=(SRIOV_RDMA_SYSFS_ROOT="$IB_SYS" SRIOV_RDMA_PF_FAKE_DIR="$IB_FAKE" SRIOV_RDMA_RDMA_FAKE_DIR="$IB_RF")
# The node config says its version: both releases read it.
jq '. + {version: 1}' "$SRIOV_RDMA_CNI_NODE_CONFIG" > "$T_TMP/nc.json" &&
	mv "$T_TMP/nc.json" "$SRIOV_RDMA_CNI_NODE_CONFIG"

# The cluster pool: node-a's block of IPPool kube-system/upg on the test API server.
t_kubeapi_start "$T_TMP/api" || { echo "cannot start the test API server"; exit 1; }
mkdir -p "$KUBEAPI_DIR/objects/kube-system/ippools"
printf '%s' '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"upg",
"namespace":"kube-system","resourceVersion":"5"},"spec":{"subnet":"10.91.0.0/16","perNodeBlockSize":64,
"gateway":"10.91.0.1"},"status":{"allocations":[{"nodeName":"node-a","startIP":"10.91.0.1","endIP":"10.91.0.64"}]}}' \
	> "$KUBEAPI_DIR/objects/kube-system/ippools/upg.json"

# The networks, as Multus hands them to the plugin: deviceID and the rest by capability.
pool() { printf '{"type": "pool-ipam", "dataDir": "%s", %s}' "$POOL" "$1"; }
ETH=$T_TMP/eth.conflist RAIL=$T_TMP/rail.conflist IB=$T_TMP/ib.conflist CLUSTER=$T_TMP/cluster.conflist
CAPS='"capabilities": {"deviceID": true, "CNIDeviceInfoFile": true, "mac": true, "ips": true}'
netconf() { # FILE NAME 'plugin keys' IPAM
	jq -n --arg n "$2" --arg s "$SR_STATE" --argjson k "{$3}" --argjson i "$4" \
		'{cniVersion: "1.0.0", name: $n, plugins: [{type: "sriov-rdma", stateDir: $s, ipam: $i} + $k]}' > "$1"
}
netconf "$ETH" upg-eth "$CAPS, \"vlan\": 100, \"spoofchk\": \"off\", \"trust\": \"on\", \"max_tx_rate\": 1000,
	\"mtu\": 1400, \"rdma\": \"exclusive\", \"rdmaName\": \"rdma_upg\"" \
	"$(pool '"ranges": [[{"subnet": "10.88.0.0/24", "gateway": "10.88.0.1"}]]')"
netconf "$RAIL" upg-rail "$CAPS, \"multiRail\": true, \"rdma\": \"exclusive\"" \
	"$(pool '"ranges": [[{"subnet": "10.89.0.0/24", "gateway": "10.89.0.1"}]]')"
netconf "$IB" upg-ib "$CAPS, \"pkey\": \"0x8001\", \"rdma\": \"exclusive\"" \
	"$(pool '"ranges": [[{"subnet": "10.90.0.0/24"}]]')"
netconf "$CLUSTER" upg-cluster "$CAPS" \
	"$(pool "\"ippool\": {\"name\": \"upg\", \"kubeconfig\": \"$KUBEAPI_DIR/kubeconfig\", \"apiTimeout\": 30, \"cacheMaxAge\": 604800}")"

# What every VF is before the first ADD: what each release must leave after its DEL.
snap_vf() { grep "^vf=$1 " "$SR_FAKE/$SR_PFNET.vfs"; }
snap_rdma() { awk -v i="$(($1 + 3))" '$1 == i' "$RF/rdma.devs"; }
declare -A HOME_LINK HOME_VF HOME_RDMA
for ((i = 0; i < NVF; i++)); do
	HOME_LINK[$i]=$(sr_host_link "$(sr_net "$i")")
	HOME_VF[$i]=$(snap_vf "$i")
	HOME_RDMA[$i]=$(snap_rdma "$i")
done
HOME_VFS=$(grep '^vf=' "$SR_FAKE/$SR_PFNET.vfs")
HOME_RDMAS=$(cat "$RF/rdma.devs")
HOME_IB=$(grep '^vf=' "$IB_FAKE/$IB_PFNET.vfs")
HOME_IB_RDMAS=$(cat "$IB_RF/rdma.devs")
HOME_IB_LINKS=$(sr_host_link "ub$$v0")$(sr_host_link "ub$$v1")

# ---- the runtime ----

# A pod sandbox: a pinned namespace with a pause process in it; $SB its path, $PAUSE the process.
sandbox() {
	SB=$(t_netns) || return 1
	nsenter --net="$SB" sleep 100000 &
	PAUSE=$!
	t_defer "kill $PAUSE"
}
args() { # CID [UID]
	printf 'IgnoreUnknown=true;K8S_POD_NAMESPACE=upg;K8S_POD_NAME=pod-%s;K8S_POD_INFRA_CONTAINER_ID=%s;K8S_POD_UID=%s' \
		"$1" "$1" "${2:-uid-$1}"
}
caps() { # VF_BDF CID IFNAME ['more keys']
	printf '{"deviceID": "%s", "CNIDeviceInfoFile": "%s/%s-%s"%s}' "$1" "$DI" "$2" "$3" "${4:+, $4}"
}
# cni add|check|del CONFLIST NETNS CID IFNAME VF_BDF [VAR=VALUE...]: libcni, as the
# runtime calls the node's bin dir; T_OUT, T_ERR, T_RC. Each caller its own stderr file.
cni() {
	local cmd=$1 conf=$2 ns=$3 cid=$4 ifname=$5 bdf=$6 err=$T_TMP/stderr.$BASHPID
	shift 6
	T_OUT=$(env CNI_PATH="$BIN" CNI_CACHE_DIR="$T_TMP/cni-cache" CNI_IFNAME="$ifname" \
		CNI_CONTAINERID="$cid" CNI_ARGS="$(args "$cid")" CAP_ARGS="$(caps "$bdf" "$cid" "$ifname")" \
		NODE_NAME=node-a "$@" "$CNITOOL" "$cmd" "$conf" "$ns" 2>"$err")
	T_RC=$?
	T_ERR=$(cat "$err")
}
# Which release answered: the version its log lines carry (0.1.0's carry none).
answered() {
	case $T_ERR in
	*"sriov-rdma/${NEW_VERSION#* }["*) echo new ;;
	*"sriov-rdma["*) echo old ;;
	*) echo unknown ;;
	esac
}
# gc CONFLIST VALID_JSON: the runtime's GC of one network, as CRI-O sends it.
gc() {
	T_OUT=$(jq -c --argjson v "$2" '.plugins[0] + {cniVersion: "1.1.0", name: .name,
		"cni.dev/valid-attachments": $v}' "$1" |
		env CNI_COMMAND=GC CNI_PATH="$BIN" "$BIN/sriov-rdma" 2>"$T_TMP/gc.err")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/gc.err")
}
valid() { # CID:IFNAME...: the runtime's list
	local a out=
	for a in "$@"; do out+="${out:+,}{\"containerID\":\"${a%%:*}\",\"ifname\":\"${a#*:}\"}"; done
	echo "[$out]"
}
doctor() {
	OUT=$("$SOURCE_DIR/scripts/rdma-doctor" --sysfs-root "$SR_SYS" --cni-bin-dir "$BIN" \
		--state-dir "$SR_STATE" 2>&1)
}
record() { sed '/^#crc32=/d' "$SR_STATE/$1.json" 2>/dev/null; }
# as_newer FILE JQ: a state file rewritten in place (a pool record's two
# links stay one file) as another release would have written it: JQ applied
# to its JSON, its checksum line made again.
as_newer() {
	local json crc
	# The checksum line is the last 16 bytes ("#crc32=xxxxxxxx\n"), after a newline or not.
	json=$(head -c -16 "$1" | jq -c "$2") || { t_fail "cannot rewrite $1"; return 1; }
	# gzip's trailer starts with the CRC-32 of what it packed, little-endian, as od reads it here.
	crc=$(printf '%s\n' "$json" | gzip -1 -c | tail -c 8 | od -An -N4 -tx4 | tr -d ' ')
	printf '%s\n#crc32=%s\n' "$json" "$crc" > "$1"
}
reservations() { find "$POOL" \( -name 'a-*' -o -name 'c-*' \) 2>/dev/null | sort | tr '\n' ' '; }
held_by() { find "$POOL" -name "c-$1:*" 2>/dev/null | wc -l; }

# ---- what "released exactly" means ----

# vf_home N CID IFNAME: VF N as before the first ADD, nothing of CID:IFNAME left.
vf_home() {
	t_eq "$(sr_host_link "$(sr_net "$1")")" "${HOME_LINK[$1]}" "$2: VF $1's netdev home under its name, MAC, MTU"
	t_eq "$(snap_vf "$1")" "${HOME_VF[$1]}" "$2: VF $1's PF settings as before"
	t_eq "$(snap_rdma "$1")" "${HOME_RDMA[$1]}" "$2: VF $1's RDMA device home under its name"
	[ ! -e "$SR_STATE/$2:$3.json" ] || t_fail "$2: its record is left"
	[ ! -e "$SR_STATE/pci/$(sr_vf "$1")" ] || t_fail "$2: VF $1's in-use marker is left"
	[ ! -e "$DI/$2-$3" ] || t_fail "$2: its device-info file is left"
	t_eq "$(held_by "$2")" 0 "$2: no address held"
}
# attached N CID IFNAME NETNS: the pod holds VF N, its record names CID.
attached() {
	t_eq "$(sr_pod_link "$4" "$3" | cut -d' ' -f1)" "$3" "$2: $3 in the pod"
	[ -e "$SR_STATE/$2:$3.json" ] || t_fail "$2: no record"
	[ -e "$DI/$2-$3" ] || t_fail "$2: no device-info file"
	t_eq "$(held_by "$2")" 1 "$2: an address held"
}
# Everything as before the first ADD, and (unless told "no doctor") rdma-doctor clean.
node_home() {
	t_eq "$(grep '^vf=' "$SR_FAKE/$SR_PFNET.vfs")" "$HOME_VFS" "$1: every VF's PF settings as before"
	t_eq "$(cat "$RF/rdma.devs")" "$HOME_RDMAS" "$1: every RDMA device home under its name"
	t_eq "$(grep '^vf=' "$IB_FAKE/$IB_PFNET.vfs")" "$HOME_IB" "$1: the InfiniBand PF's VFs as before"
	t_eq "$(cat "$IB_RF/rdma.devs")" "$HOME_IB_RDMAS" "$1: the InfiniBand RDMA devices home"
	t_eq "$(sr_host_link "ub$$v0")$(sr_host_link "ub$$v1")" "$HOME_IB_LINKS" "$1: the IPoIB netdevs home"
	for ((i = 0; i < NVF; i++)); do
		t_eq "$(sr_host_link "$(sr_net "$i")")" "${HOME_LINK[$i]}" "$1: VF $i's netdev home"
	done
	t_eq "$(sr_state_files)$(sr_markers)" "" "$1: no record, no in-use marker"
	t_eq "$(reservations)" "" "$1: every address released"
	t_eq "$(ls -A "$DI")" "" "$1: no device-info file"
	[ "${2:-}" = "no doctor" ] && return
	doctor
	t_contains "$OUT" "OK attachments: 0 attachments in $SR_STATE" "$1: rdma-doctor finds no attachment"
	t_eq "$(grep -E '^[A-Z]+ (attachment|in-use marker) ' <<<"$OUT")" "" "$1: rdma-doctor names no attachment, no marker"
}

# ---- the pods ----

declare -A NS
# attach_all TAG: the pods, added by whichever release is installed; NS[TAG-x] their sandboxes.
attach_all() {
	local t=$1
	sandbox; NS[$t-single]=$SB
	cni add "$ETH" "$SB" "$t-single" net1 "$(sr_vf 0)" \
		CAP_ARGS="$(caps "$(sr_vf 0)" "$t-single" net1 '"mac": "02:00:00:00:aa:01"')"
	t_eq "$T_RC" 0 "single rail ($T_ERR)"
	attached 0 "$t-single" net1 "$SB"
	t_eq "$(jq -r '.pci["rdma-device"]' "$DI/$t-single-net1")" rdma_upg_p59s0f2 "single rail: the renamed RDMA device"
	sandbox; NS[$t-rail]=$SB
	cni add "$RAIL" "$SB" "$t-rail" net1 "$(sr_vf 1)"
	t_eq "$T_RC" 0 "rail 1 ($T_ERR)"
	cni add "$RAIL" "$SB" "$t-rail" net2 "$(sr_vf 2)"
	t_eq "$T_RC" 0 "rail 2 ($T_ERR)"
	t_eq "$(ip -n "$(basename "$SB")" rule | grep -c 'lookup 10[01]')" 2 "multiRail's rules in the pod"
	sandbox; NS[$t-ib]=$SB
	cni add "$IB" "$SB" "$t-ib" net1 0000:5e:00.2 "${IB_ENV[@]}"
	t_eq "$T_RC" 0 "InfiniBand ($T_ERR)"
	t_eq "$(jq -r .infiniband.pkey "$DI/$t-ib-net1" 2>/dev/null)" 0x8001 "InfiniBand: pkey in the device-info file"
	sandbox; NS[$t-static]=$SB
	cni add "$ETH" "$SB" "$t-static" net1 "$(sr_vf 3)" \
		CAP_ARGS="$(caps "$(sr_vf 3)" "$t-static" net1 '"ips": ["10.88.0.200/24"]')"
	t_eq "$T_RC" 0 "static address ($T_ERR)"
	t_eq "$(t_jq '.ips[0].address')" 10.88.0.200/24 "the static address"
	sandbox; NS[$t-cluster]=$SB
	cni add "$CLUSTER" "$SB" "$t-cluster" net1 "$(sr_vf 4)"
	t_eq "$T_RC" 0 "cluster pool ($T_ERR)"
	t_contains "$(t_jq '.ips[0].address')" 10.91.0. "an address of node-a's block"
	sandbox; NS[$t-gc]=$SB
	cni add "$ETH" "$SB" "$t-gc" net1 "$(sr_vf 5)"
	t_eq "$T_RC" 0 "the pod its runtime will forget ($T_ERR)"
	sandbox; NS[$t-orph]=$SB
	cni add "$ETH" "$SB" "$t-orph" net1 "$(sr_vf 6)" CNI_ARGS="$(args "$t-orph" "uid-$t-pod")"
	t_eq "$T_RC" 0 "the sandbox that will be forgotten ($T_ERR)"
	# Its pause process gone, its runtime killed: no DEL will come for it.
	kill "$PAUSE"
	wait "$PAUSE" 2>/dev/null
}

# release_all TAG WHO: CHECK, takeover, GC and DEL by the release installed now.
release_all() {
	local t=$1 who=$2 sb
	t_begin "$who: CHECK passes on every attachment"
	cni check "$ETH" "${NS[$t-single]}" "$t-single" net1 "$(sr_vf 0)" \
		CAP_ARGS="$(caps "$(sr_vf 0)" "$t-single" net1 '"mac": "02:00:00:00:aa:01"')"
	t_eq "$T_RC" 0 "single rail ($T_OUT $T_ERR)"
	cni check "$RAIL" "${NS[$t-rail]}" "$t-rail" net1 "$(sr_vf 1)"
	t_eq "$T_RC" 0 "rail 1 ($T_OUT $T_ERR)"
	cni check "$RAIL" "${NS[$t-rail]}" "$t-rail" net2 "$(sr_vf 2)"
	t_eq "$T_RC" 0 "rail 2 ($T_OUT $T_ERR)"
	cni check "$IB" "${NS[$t-ib]}" "$t-ib" net1 0000:5e:00.2 "${IB_ENV[@]}"
	t_eq "$T_RC" 0 "InfiniBand ($T_OUT $T_ERR)"
	cni check "$ETH" "${NS[$t-static]}" "$t-static" net1 "$(sr_vf 3)" \
		CAP_ARGS="$(caps "$(sr_vf 3)" "$t-static" net1 '"ips": ["10.88.0.200/24"]')"
	t_eq "$T_RC" 0 "static address ($T_OUT $T_ERR)"
	cni check "$CLUSTER" "${NS[$t-cluster]}" "$t-cluster" net1 "$(sr_vf 4)"
	t_eq "$T_RC" 0 "cluster pool ($T_OUT $T_ERR)"

	t_begin "$who: the same pod's next sandbox takes the forgotten one's VF over, address included"
	sandbox; NS[$t-orph2]=$SB
	cni add "$ETH" "$SB" "$t-orph2" net1 "$(sr_vf 6)" CNI_ARGS="$(args "$t-orph2" "uid-$t-pod")"
	t_eq "$T_RC" 0 "ADD of the next sandbox ($T_ERR)"
	t_contains "$T_ERR" "taking over from ${NS[$t-orph]} (container $t-orph, interface net1)" "the takeover"
	[ ! -e "$SR_STATE/$t-orph:net1.json" ] || t_fail "the forgotten sandbox's record is left"
	t_eq "$(held_by "$t-orph")" 0 "the forgotten sandbox's address released"
	attached 6 "$t-orph2" net1 "$SB"

	t_begin "$who: GC releases the attachment its runtime forgot, and nothing else"
	gc "$ETH" "$(valid "$t-single:net1" "$t-static:net1" "$t-orph2:net1")"
	t_eq "$T_RC" 0 "GC ($T_OUT $T_ERR)"
	vf_home 5 "$t-gc" net1
	attached 0 "$t-single" net1 "${NS[$t-single]}"
	attached 3 "$t-static" net1 "${NS[$t-static]}"

	t_begin "$who: DEL releases every attachment exactly"
	cni del "$ETH" "${NS[$t-single]}" "$t-single" net1 "$(sr_vf 0)" \
		CAP_ARGS="$(caps "$(sr_vf 0)" "$t-single" net1 '"mac": "02:00:00:00:aa:01"')"
	t_eq "$T_RC" 0 "single rail ($T_OUT $T_ERR)"
	t_eq "$(answered)" "$3" "answered by the $3 release"
	vf_home 0 "$t-single" net1
	sb=${NS[$t-rail]}
	cni del "$RAIL" "$sb" "$t-rail" net2 "$(sr_vf 2)"
	t_eq "$T_RC" 0 "rail 2 ($T_OUT $T_ERR)"
	cni del "$RAIL" "$sb" "$t-rail" net1 "$(sr_vf 1)"
	t_eq "$T_RC" 0 "rail 1 ($T_OUT $T_ERR)"
	vf_home 1 "$t-rail" net1
	vf_home 2 "$t-rail" net2
	t_eq "$(ip -n "$(basename "$sb")" rule | grep -c 'lookup 10[01]')" 0 "multiRail's rules gone from the pod"
	cni del "$IB" "${NS[$t-ib]}" "$t-ib" net1 0000:5e:00.2 "${IB_ENV[@]}"
	t_eq "$T_RC" 0 "InfiniBand ($T_OUT $T_ERR)"
	cni del "$ETH" "${NS[$t-static]}" "$t-static" net1 "$(sr_vf 3)" \
		CAP_ARGS="$(caps "$(sr_vf 3)" "$t-static" net1 '"ips": ["10.88.0.200/24"]')"
	t_eq "$T_RC" 0 "static address ($T_OUT $T_ERR)"
	vf_home 3 "$t-static" net1
	cni del "$CLUSTER" "${NS[$t-cluster]}" "$t-cluster" net1 "$(sr_vf 4)"
	t_eq "$T_RC" 0 "cluster pool ($T_OUT $T_ERR)"
	vf_home 4 "$t-cluster" net1
	cni del "$ETH" "${NS[$t-orph2]}" "$t-orph2" net1 "$(sr_vf 6)" CNI_ARGS="$(args "$t-orph2" "uid-$t-pod")"
	t_eq "$T_RC" 0 "the next sandbox ($T_OUT $T_ERR)"
	vf_home 6 "$t-orph2" net1
	node_home "$who"
}

# swap FROM TO: TO installed over FROM while another pod is added and deleted
# on VF 7 over and over; both releases must have answered it, every time well.
swap() {
	local i at n_from=0 n_to=0
	rm -f "$T_TMP/loop.stop" "$T_TMP/loop.log"
	sandbox
	(
		n=0
		while [ ! -e "$T_TMP/loop.stop" ]; do
			n=$((n + 1))
			for op in add del; do
				cni "$op" "$ETH" "$SB" "loop$n" net1 "$(sr_vf 7)"
				echo "$op loop$n $T_RC $(answered) $(printf '%s' "$T_OUT" | tr -d '\n' | cut -c1-200)"
			done >> "$T_TMP/loop.log"
		done
	) &
	local loop=$!
	# Hang guards: the loop's ops are what is waited for, never a time.
	for ((i = 0; i < 6000 && n_from < 2; i++)); do
		n_from=$(grep -c " $1 " "$T_TMP/loop.log" 2>/dev/null)
		sleep 0.1
	done
	install "$2"
	t_eq "$?" 0 "scripts/install of the $2 release ($(cat "$T_TMP/install.log"))"
	at=$(wc -l < "$T_TMP/loop.log")
	for ((i = 0; i < 6000 && n_to < 2; i++)); do
		n_to=$(tail -n +"$((at + 1))" "$T_TMP/loop.log" | grep -c " $2 ")
		sleep 0.1
	done
	touch "$T_TMP/loop.stop"
	wait "$loop"
	if [ "$n_from" -lt 2 ] || [ "$n_to" -lt 2 ]; then
		t_fail "the loop ran $n_from ops by the $1 release before the install, $n_to by the $2 after"
	fi
	echo "# through the swap: $(grep -c " $1 " "$T_TMP/loop.log") ADDs and DELs answered by the $1 release, $(grep -c " $2 " "$T_TMP/loop.log") by the $2"
	t_eq "$(awk '$3 != 0' "$T_TMP/loop.log")" "" "every ADD and DEL through the swap succeeded"
	t_eq "$(awk '$4 == "unknown"' "$T_TMP/loop.log")" "" "every op's release known"
	vf_home 7 "loop$(tail -n 1 "$T_TMP/loop.log" | cut -d' ' -f2 | tr -dc 0-9)" net1
	kill "$PAUSE"
	wait "$PAUSE" 2>/dev/null
}

# ==== upgrade ====

t_begin "the old release ($OLD_REV) built beside this tree, installed with scripts/install"
install old
t_eq "$?" 0 "scripts/install ($(cat "$T_TMP/install.log"))"
t_eq "$(installed)" "$OLD_VERSION" "installed"
t_not_contains "$OLD_VERSION" "${NEW_VERSION#* }" "the old release says another version"

t_begin "the old release attaches every kind of pod"
attach_all a
t_eq "$(record a-single:net1 | jq -r '.version, .writtenBy // "none"' | tr '\n' ' ')" "1 none " \
	"the old release's record: version 1, no writtenBy"

t_begin "the new release installed while another pod is added and deleted through the swap"
swap old new
t_eq "$(installed)" "$NEW_VERSION" "installed"
doctor
t_contains "$OUT" "INFO attachment a-single:net1: VF $(sr_vf 0) in ${NS[a-single]}, written by a release before 0.2.0 (attachment record version 1)" \
	"rdma-doctor names who wrote each attachment"
t_contains "$OUT" "is installed: $NEW_VERSION, reads attachment record 1" "and what the installed release reads"

release_all a "the new release on the old release's attachments" new

# ==== what a newer release leaves ====

t_begin "a record of a version this one does not read: DEL, CHECK, GC, a repeated ADD and two takeovers refuse it by name and change nothing"
sandbox
FUT=$SB
FUT_PAUSE=$PAUSE
cni add "$ETH" "$FUT" f-rec net1 "$(sr_vf 0)" CNI_ARGS="$(args f-rec uid-f)"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
cp "$SR_STATE/f-rec:net1.json" "$T_TMP/f-rec.v1"
t_eq "$(record f-rec:net1 | jq -r '.version, .writtenBy' | tr '\n' ' ')" "1 sriov-rdma-cni ${NEW_VERSION#* } " \
	"this release writes version 1 and says so"
as_newer "$SR_STATE/f-rec:net1.json" '.version = 2 | .writtenBy = "sriov-rdma-cni 9.0.0" | .futureMember = {"must": "know"}'
# What must not move: the VF in the pod, its PF settings, its RDMA device, the files, the address.
frozen() {
	printf '%s\n' "$(sr_pod_link "$FUT" net1)" "$(snap_vf 0)" "$(snap_rdma 0)" \
		"$(cat "$SR_STATE/f-rec:net1.json" "$SR_STATE/pci/$(sr_vf 0)" "$DI/f-rec-net1")" \
		"$(find "$POOL" -name 'c-f-rec:*')"
}
before=$(frozen)
WANT="the record f-rec:net1.json was written by sriov-rdma-cni 9.0.0 as attachment record version 2; this sriov-rdma-cni ${NEW_VERSION#* } reads attachment records up to version 1"
cni check "$ETH" "$FUT" f-rec net1 "$(sr_vf 0)"
t_eq "$T_RC/$(t_jq .code)" 1/11 "CHECK: code ($T_OUT)"
t_contains "$(t_jq .msg)" "$WANT" "CHECK names it"
# The same attachment added again (its runtime lost the answer), into a namespace without net1.
sandbox
cni add "$ETH" "$SB" f-rec net1 "$(sr_vf 0)"
t_eq "$T_RC/$(t_jq .code)" 1/11 "a repeated ADD: code ($T_OUT)"
t_contains "$(t_jq .msg)" "$WANT, and cannot release it safely: nothing was changed" "a repeated ADD names it"
cni del "$ETH" "$FUT" f-rec net1 "$(sr_vf 0)"
t_eq "$T_RC/$(t_jq .code)" 1/11 "DEL: code ($T_OUT)"
t_contains "$(t_jq .msg)" "$WANT, and cannot release it safely: nothing was changed" "DEL names it"
t_contains "$(t_jq .details)" "install sriov-rdma-cni 9.0.0 or later again" "DEL says what to install"
gc "$ETH" "[]"
t_eq "$T_RC" 0 "GC ($T_OUT)"
t_contains "$T_ERR" "GC: stateDir $SR_STATE: $WANT, and cannot release it safely: left as it is, its address too" "GC names it"
kill "$FUT_PAUSE"
wait "$FUT_PAUSE" 2>/dev/null
sandbox
cni add "$ETH" "$SB" f-rec2 net1 "$(sr_vf 0)" CNI_ARGS="$(args f-rec2 uid-f)"
t_eq "$T_RC/$(t_jq .code)" 1/11 "the pod's next sandbox: code ($T_OUT)"
t_contains "$(t_jq .msg)" "$WANT, and cannot release it safely: the VF is not taken over" "the takeover names it"
# A stale claim (its marker names a namespace that is gone): another pod's ADD does not take it over either.
cp "$SR_STATE/pci/$(sr_vf 0)" "$T_TMP/f-rec.marker"
as_newer "$SR_STATE/pci/$(sr_vf 0)" '.netns = "/run/netns/gone-'$$'"'
cni add "$ETH" "$SB" f-other net1 "$(sr_vf 0)"
t_eq "$T_RC/$(t_jq .code)" 1/11 "another pod's ADD of a stale claim: code ($T_OUT)"
t_contains "$(t_jq .msg)" "$WANT, and cannot release it safely: the VF is not taken over" "the stale claim's takeover names it"
cp "$T_TMP/f-rec.marker" "$SR_STATE/pci/$(sr_vf 0)"
t_eq "$(frozen)" "$before" "nothing changed: the VF, its settings, its files, its address"
doctor
t_contains "$OUT" "FAIL attachment f-rec:net1: VF $(sr_vf 0)'s record $SR_STATE/f-rec:net1.json was written by sriov-rdma-cni 9.0.0 as attachment record version 2, which the installed $NEW_VERSION (reading up to version 1) refuses" \
	"rdma-doctor names it"
# Before a rollback: the doctor pointed at the older release's binaries says what it would misread.
mkdir -p "$T_TMP/old-bin"
cp "$OLD/build/plugins/sriov-rdma/sriov-rdma" "$OLD/build/plugins/pool-ipam/pool-ipam" "$T_TMP/old-bin/"
OUT=$("$SOURCE_DIR/scripts/rdma-doctor" --sysfs-root "$SR_SYS" --cni-bin-dir "$T_TMP/old-bin" \
	--state-dir "$SR_STATE" 2>&1)
t_contains "$OUT" "FAIL attachment f-rec:net1: VF $(sr_vf 0)'s record $SR_STATE/f-rec:net1.json was written by sriov-rdma-cni 9.0.0 as attachment record version 2, which the installed $OLD_VERSION (before 0.2.0: version 1 alone) takes for a damaged file" \
	"rdma-doctor with the old release's binaries names it"
# The newer release's DEL would read it as its own: the record as this one wrote it stands in for that.
cp "$T_TMP/f-rec.v1" "$SR_STATE/f-rec:net1.json"
cni del "$ETH" "$FUT" f-rec net1 "$(sr_vf 0)"
t_eq "$T_RC" 0 "DEL once the record is readable again ($T_OUT $T_ERR)"
vf_home 0 f-rec net1

t_begin "an in-use marker of a newer version: DEL and another pod's ADD refuse it by name and change nothing"
sandbox
MSB=$SB
cni add "$ETH" "$MSB" f-mark net1 "$(sr_vf 1)"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
M=$SR_STATE/pci/$(sr_vf 1)
cp "$M" "$T_TMP/f-mark.v1"
as_newer "$M" '.version = 3 | .writtenBy = "sriov-rdma-cni 9.1.0"'
before=$(sr_pod_link "$MSB" net1; snap_vf 1; cat "$M" "$SR_STATE/f-mark:net1.json"; find "$POOL" -name 'c-f-mark:*')
cni del "$ETH" "$MSB" f-mark net1 "$(sr_vf 1)"
t_eq "$T_RC/$(t_jq .code)" 1/11 "DEL: code ($T_OUT)"
t_contains "$(t_jq .msg)" "the in-use marker $SR_STATE/pci/$(sr_vf 1) was written by sriov-rdma-cni 9.1.0 as in-use marker version 3" "names it"
sandbox
cni add "$ETH" "$SB" f-mark2 net1 "$(sr_vf 1)"
t_eq "$T_RC/$(t_jq .code)" 1/11 "another pod's ADD of the VF: code ($T_OUT)"
t_contains "$(t_jq .msg)" "was written by sriov-rdma-cni 9.1.0 as in-use marker version 3; this sriov-rdma-cni ${NEW_VERSION#* } reads in-use markers up to version 1, and cannot tell which attachment holds the VF: the VF is not taken over" \
	"another pod's ADD names it"
# The DEL that follows a failed ADD has no record of its own to release: it succeeds, touching nothing.
cni del "$ETH" "$SB" f-mark2 net1 "$(sr_vf 1)"
t_eq "$T_RC" 0 "the DEL after that ADD ($T_OUT $T_ERR)"
t_eq "$(sr_pod_link "$MSB" net1; snap_vf 1; cat "$M" "$SR_STATE/f-mark:net1.json"; find "$POOL" -name 'c-f-mark:*')" \
	"$before" "nothing changed, the address kept"
cp "$T_TMP/f-mark.v1" "$M"
cni del "$ETH" "$MSB" f-mark net1 "$(sr_vf 1)"
t_eq "$T_RC" 0 "DEL once the marker is readable again ($T_OUT $T_ERR)"
vf_home 1 f-mark net1

t_begin "a pool record of a newer version: the VF goes home, its address stays until the DEL that can release it"
cni add "$ETH" "$SB" f-pool net1 "$(sr_vf 2)"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
P=$(find "$POOL" -name 'c-f-pool:*')
cp "$P" "$T_TMP/f-pool.v1"
as_newer "$P" '.version = 2 | .writtenBy = "sriov-rdma-cni 9.0.0"'
cni del "$ETH" "$SB" f-pool net1 "$(sr_vf 2)"
t_eq "$T_RC/$(t_jq .code)" 1/11 "DEL: code ($T_OUT)"
t_contains "$(t_jq .msg)" "was written by sriov-rdma-cni 9.0.0 as pool record version 2; this sriov-rdma-cni ${NEW_VERSION#* } reads pool records up to version 1: this attachment's addresses are left as they are" \
	"pool-ipam names it"
t_eq "$(held_by f-pool)" 1 "the address stays held"
cat "$T_TMP/f-pool.v1" > "$P"
cni del "$ETH" "$SB" f-pool net1 "$(sr_vf 2)"
t_eq "$T_RC" 0 "the runtime's next DEL ($T_OUT $T_ERR)"
vf_home 2 f-pool net1

t_begin "a record of version 1 with a member this version does not know (an optional addition): released exactly"
cni add "$ETH" "$SB" f-opt net1 "$(sr_vf 3)"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
as_newer "$SR_STATE/f-opt:net1.json" '.writtenBy = "sriov-rdma-cni 9.0.0" | .podNetns = {"dev": 4, "ino": 4026532999}'
as_newer "$SR_STATE/pci/$(sr_vf 3)" '.writtenBy = "sriov-rdma-cni 9.0.0" | .podNetns = {"dev": 4, "ino": 4026532999}'
cni check "$ETH" "$SB" f-opt net1 "$(sr_vf 3)"
t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
cni del "$ETH" "$SB" f-opt net1 "$(sr_vf 3)"
t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
vf_home 3 f-opt net1

t_begin "a node config of a newer version: ADD refused naming it, nothing attached"
cp "$SRIOV_RDMA_CNI_NODE_CONFIG" "$T_TMP/nc.v1"
jq '.version = 2' "$T_TMP/nc.v1" > "$SRIOV_RDMA_CNI_NODE_CONFIG"
cni add "$ETH" "$SB" f-nc net1 "$(sr_vf 3)"
t_eq "$T_RC/$(t_jq .code)" 1/7 "code ($T_OUT)"
t_contains "$(t_jq .msg)" "\"version\": 2 is a newer release's; this sriov-rdma-cni ${NEW_VERSION#* } reads version 1" "names it"
cp "$T_TMP/nc.v1" "$SRIOV_RDMA_CNI_NODE_CONFIG"
cni del "$ETH" "$SB" f-nc net1 "$(sr_vf 3)"
t_eq "$T_RC" 0 "the runtime's DEL after the failed ADD ($T_OUT $T_ERR)"
vf_home 3 f-nc net1
node_home "what a newer release leaves" "no doctor"

# ==== rollback ====

t_begin "the new release attaches every kind of pod"
attach_all b
t_eq "$(record b-single:net1 | jq -r '.version, .writtenBy' | tr '\n' ' ')" "1 sriov-rdma-cni ${NEW_VERSION#* } " \
	"the new release's record: version 1, its writer"
# What a later release may add to version 1, beside what this one did: the old reader ignores both.
as_newer "$SR_STATE/b-static:net1.json" '.podNetns = {"dev": 4, "ino": 4026532999}'

t_begin "the old release installed back while another pod is added and deleted through the swap"
swap new old
t_eq "$(installed)" "$OLD_VERSION" "installed"

release_all b "the old release on the new release's attachments" old

t_done
