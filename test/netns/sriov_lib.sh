# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared setup of the sriov-rdma integration tests (sourced, not a test).
#
# A ConnectX-7 PF with VFs modelled by test/fixtures/mksysfs, whose VF
# netdevs are veth ends created here (this kernel has no SR-IOV), the
# recording fake PF, a state directory and a pod namespace.

. "$(dirname "$0")/lib.sh"

SR_PF=0000:3b:00.0
SR_PFNET=sr$$pf
: "${T_TMP:?sriov_lib.sh needs lib.sh (source it from test/netns)}"
SR_STATE=$T_TMP/state
SR_FAKE=$T_TMP/fake
SR_SYS=$T_TMP/sys
export SRIOV_RDMA_SYSFS_ROOT=$SR_SYS SRIOV_RDMA_PF_FAKE_DIR=$SR_FAKE

# sr_vf N: PCI address of VF N; sr_net N: its host netdev.
sr_vf() { printf '0000:3b:00.%d' $(($1 + 2)); }
sr_net() { echo "sr$$v$1"; }

# A veth pair; a namespace deleted by an earlier test tears its veth down
# asynchronously, so a leftover peer may still hold the name for a moment.
sr_make_veth() { # NAME PEER
	for _ in $(seq 300); do
		ip link del "$2" >/dev/null 2>&1
		ip link add "$1" type veth peer name "$2" 2>/dev/null && break
		sleep 0.1
	done
	ip link set "$2" up || return 1
	t_defer "ip link del $2"
}

# sr_setup NVFS [mksysfs options...]: fresh sysfs tree, fake PF and state.
sr_setup() {
	local n=$1 i args=()
	shift
	rm -rf "$SR_SYS" "$SR_FAKE" "$SR_STATE"
	for ((i = 0; i < n; i++)); do
		if ! ip link show "$(sr_net $i)" >/dev/null 2>&1; then
			sr_make_veth "$(sr_net $i)" "sr$$p$i" || return 1
		fi
		args+=(--vf "$i" "$(sr_vf $i)" "$(sr_net $i)")
	done
	"$SOURCE_DIR/test/fixtures/mksysfs" "$SR_SYS" --pf "$SR_PF" "$SR_PFNET" "${args[@]}" \
		--fake-pf "$SR_FAKE" "$@"
}

# sr_standin NETNS IFNAME [N]: the PCI device the veth IFNAME in NETNS
# ("" for the host) stands on: VF N's, or none without N. A VF's driver
# names its device wherever the netdev goes; a veth names none, and a pod
# can make one of any name. mksysfs marks each stand-in VF this way
# (test/fakes/standin_fake.c reads it); a test that changes the mark plays
# a link that is another device, or no device at all.
sr_standin() {
	if [ -n "$1" ]; then
		ip -n "$(basename "$1")" link set dev "$2" alias "${3:+standin-pci:$(sr_vf "$3")}"
	else
		ip link set dev "$2" alias "${3:+standin-pci:$(sr_vf "$3")}"
	fi
}

# sr_conflist FILE VERSION 'extra plugin keys' ['ipam object' ['more plugins']]
sr_conflist() {
	local file=$1 version=$2 extra=$3
	local ipam=${4:-"{\"type\": \"host-local\", \"subnet\": \"10.66.0.0/24\", \"dataDir\": \"$T_TMP/hl\"}"}
	local more=${5:-}
	cat > "$file" <<EOJ
{
  "cniVersion": "$version",
  "name": "sriov-test",
  "plugins": [
    {
      "type": "sriov-rdma",
      "stateDir": "$SR_STATE"${extra:+,
      $extra},
      "ipam": $ipam
    }${more:+,
    $more}
  ]
}
EOJ
}

# The single plugin config of a conflist, as a runtime sends it on stdin.
sr_plugin_conf() { # FILE [INDEX]
	jq -c --argjson i "${2:-0}" '.plugins[$i] + {cniVersion: .cniVersion, name: .name}' "$1"
}

# "name mac mtu state" of a host link, or "" when absent.
sr_host_link() {
	ip -j link show "$1" 2>/dev/null | jq -r '.[0] | "\(.ifname) \(.address) \(.mtu) \(.operstate)"'
}
sr_pod_link() { # NETNS_PATH IFNAME
	ip -n "$(basename "$1")" -j link show "$2" 2>/dev/null |
		jq -r '.[0] | "\(.ifname) \(.address) \(.mtu)"'
}
sr_state_files() { find "$SR_STATE" -maxdepth 1 -type f 2>/dev/null | sort | tr '\n' ' '; }
sr_markers() { find "$SR_STATE/pci" -type f ! -name '*.lock' 2>/dev/null | tr '\n' ' '; }
sr_calls() { cat "$SR_FAKE/$SR_PFNET.calls" 2>/dev/null; }

# sr_rename_pf NEW: the PF's netdev renamed (udev after a driver reload, an
# admin's `ip link set ... name`), in sysfs and in the fake PF.
sr_rename_pf() {
	local pfdev
	pfdev=$(readlink -f "$SR_SYS/bus/pci/devices/$SR_PF")
	mv "$pfdev/net/$SR_PFNET" "$pfdev/net/$1"
	rm -f "$SR_SYS/class/net/$SR_PFNET"
	ln -sfn "$pfdev/net/$1" "$SR_SYS/class/net/$1"
	mv "$SR_FAKE/$SR_PFNET.vfs" "$SR_FAKE/$1.vfs"
}

# One full attachment of stand-in VF 1, as the node's OS and aarch64 stages
# run it: PF settings, an RDMA device (the RDMA fake in RF_DIR), a
# device-info file (in DEVINFO_DIR) and pool-ipam's address (POOL, its
# dataDir POOL_DIR). sr_full_setup RF_DIR HOST_NS CONFLIST POOL DEVINFO_DIR:
# the fake's device (and its variable exported) and the conflist; then sr_full_attached after ADD, sr_full_released
# after DEL, each with what the other needs to compare.
sr_full_setup() { # RF_DIR HOST_NS CONFLIST POOL DEVINFO_DIR
	mkdir -p "$1" "$5"
	export SRIOV_RDMA_RDMA_FAKE_DIR=$1
	echo exclusive > "$1/rdma.mode"
	echo "3 mlx5_3 $(sr_net 1) $2" > "$1/rdma.devs"
	sr_conflist "$3" 1.0.0 "\"deviceID\": \"$(sr_vf 1)\", \"vlan\": 100, \"spoofchk\": \"off\", \"trust\": \"on\", \"mac\": \"02:11:22:33:44:55\", \"mtu\": 1400, \"rdma\": \"exclusive\", \"capabilities\": {\"CNIDeviceInfoFile\": true}" "$4"
}
sr_full_leased() { find "$1" -name 'a-*' 2>/dev/null | wc -l; }
sr_full_attached() { # POD_PATH ADDR RF_DIR DEVINFO_FILE POOL_DIR
	local calls
	t_contains "$2" "10.66.0." "pool-ipam's address in the result"
	t_contains "$(ip -n "$(basename "$1")" -br addr show net1)" "$2" "the address in the pod"
	t_eq "$(sr_pod_link "$1" net1)" "net1 02:11:22:33:44:55 1400" "the VF in the pod: name, MAC, MTU"
	calls=$(sr_calls)
	t_contains "$calls" "vf=1 vlan=100" "vlan asked of the PF"
	t_contains "$calls" "vf=1 mac=02:11:22:33:44:55" "admin MAC asked of the PF"
	t_contains "$calls" "vf=1 spoofchk=off" "spoof checking asked of the PF"
	t_eq "$(cut -d' ' -f4 "$3/rdma.devs")" "$(stat -L -c %i "$1")" "the RDMA device in the pod"
	t_eq "$(jq -r '.pci["rdma-device"]' "$4")" mlx5_3 "device-info names it"
	t_eq "$(sr_full_leased "$5")" 1 "one address held"
}
sr_full_released() { # HOST_LINK_BEFORE RF_DIR HOST_NS DEVINFO_DIR POOL_DIR
	t_eq "$(sr_host_link "$(sr_net 1)")" "$1" "the VF back on the host: name, MAC, MTU"
	t_eq "$(grep '^vf=1 ' "$SR_FAKE/$SR_PFNET.vfs")" \
		"$(grep '^vf=0 ' "$SR_FAKE/$SR_PFNET.vfs" | sed 's/^vf=0/vf=1/')" "VF 1's PF settings as before"
	t_eq "$(cat "$2/rdma.devs")" "3 mlx5_3 $(sr_net 1) $3" "the RDMA device home under its name"
	t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no in-use marker"
	t_eq "$(sr_full_leased "$5")" 0 "the address released"
	t_eq "$(ls "$4")" "" "the device-info file removed"
}
