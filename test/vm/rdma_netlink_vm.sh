#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The rdma module against a real kernel: run inside scripts/vm, where
# rdma_rxe gives an RDMA device on top of a veth end.
if [ -z "${VM_GUEST:-}" ]; then
	echo "SKIP: runs inside the VM (scripts/vm run $0)"
	exit 77
fi
. "$SOURCE_DIR/test/netns/lib.sh"
PROBE=${VM_ARG_RDMA_PROBE:-$BUILD_DIR/test/vm/rdma_probe}

modprobe rdma_rxe || { echo "SKIP: no rdma_rxe module"; exit 77; }
ip link add rv0 type veth peer name rv1 || exit 1
ip link set rv0 up && ip link set rv1 up
rdma link add rxe0 type rxe netdev rv0 || exit 1
t_defer rdma link delete rxe0

# Index of a device as iproute2's rdma tool reports it ("3: rxe0: node_type ca ...").
rdma_index() { rdma dev show "$1" | sed -n 's/^\([0-9]*\): .*/\1/p'; }

# The RoCE v2 entry of GID $2 of rxe0 port 1 as sysfs shows it (one grep: the
# table has 1024 entries and every fork is slow without KVM).
sysfs_gid_index() {
	local d=/sys/class/infiniband/$1/ports/1 f n
	for f in $(grep -lx "$2" "$d"/gids/* 2>/dev/null); do
		n=${f##*/}
		[ "$(cat "$d/gid_attrs/types/$n" 2>/dev/null)" = "RoCE v2" ] && echo "$n"
	done
}

t_begin "the netns mode reads shared, as iproute2 says"
t_eq "$("$PROBE" mode)" shared "rdma_probe mode"
t_contains "$(rdma system show)" "netns shared" "rdma system show"

t_begin "a device is found by name and by its netdev"
idx=$(rdma_index rxe0)
t_contains "$("$PROBE" get rxe0)" "rxe0 index=$idx ports=1 protocol=roce" "get rxe0"
t_eq "$("$PROBE" find rv0)" "rxe0 index=$idx port=1 netdev=rv0" "find rv0"
t_contains "$("$PROBE" find rv1)" "error: find: No such device" "find rv1 (no RDMA device)"
t_contains "$("$PROBE" get nosuch0)" "No such device" "get nosuch0"

t_begin "libibverbs opens the device and finds the RoCE v2 GID of an IPv4 address"
ip addr add 192.0.2.10/24 dev rv0
t_eq "$("$PROBE" present rxe0)" present "present rxe0"
want=$(sysfs_gid_index rxe0 0000:0000:0000:0000:0000:ffff:c000:020a)
[ -n "$want" ] || t_fail "no RoCE v2 GID for 192.0.2.10 in sysfs"
t_eq "$("$PROBE" gid rxe0 1 192.0.2.10/24)" "$want" "gid index (sysfs says $want)"
t_contains "$("$PROBE" gid rxe0 1 198.51.100.1)" "No such file or directory" "unknown address"
t_contains "$("$PROBE" gid nosuch0 1 192.0.2.10)" "No such device" "unknown device"
t_contains "$("$PROBE" gid rxe0 9 192.0.2.10)" "Invalid argument" "port 9"

t_begin "the RoCE v2 GID of an IPv6 address"
ip addr add 2001:db8::10/64 dev rv0 nodad
want=$(sysfs_gid_index rxe0 2001:0db8:0000:0000:0000:0000:0000:0010)
t_eq "$("$PROBE" gid rxe0 1 2001:db8::10)" "${want:-none}" "gid index (sysfs says ${want:-none})"

t_begin "rename to a stable name and back; bad and taken names are refused"
t_eq "$("$PROBE" rename rxe0 rdma_net1)" "" "rename rxe0 rdma_net1"
t_eq "$(rdma_index rdma_net1)" "$idx" "index kept across the rename"
t_eq "$("$PROBE" find rv0)" "rdma_net1 index=$idx port=1 netdev=rv0" "find after rename"
t_eq "$("$PROBE" rename rdma_net1 rdma_net1)" "" "same name is a no-op"
t_eq "$("$PROBE" rename rdma_net1 rxe0)" "" "rename back"
t_contains "$("$PROBE" rename rxe0 bad/name)" "Invalid argument" "bad/name"
rdma link add rxe1 type rxe netdev rv1
t_contains "$("$PROBE" rename rxe0 rxe1)" "File exists" "rename onto rxe1"
rdma link delete rxe1
t_eq "$(rdma_index rxe0)" "$idx" "rxe0 unchanged"

t_begin "set-netns is refused in shared mode and the device stays"
ns=$(t_netns)
t_contains "$("$PROBE" set-netns rxe0 "$ns")" "Operation not supported" "set-netns (shared)"
t_eq "$(rdma_index rxe0)" "$idx" "rxe0 still in the host"

t_begin "the mode cannot change while another namespace exists"
out=$("$PROBE" set-mode exclusive)
t_contains "$out" "error: set-mode:" "set-mode exclusive with $ns alive"
t_eq "$("$PROBE" mode)" shared "mode unchanged"
ip netns del "${ns##*/}"

t_begin "exclusive mode: set, read back; rxe cannot move (EOPNOTSUPP), nothing changes"
t_eq "$("$PROBE" set-mode exclusive)" "" "set-mode exclusive"
t_eq "$("$PROBE" mode)" exclusive "mode"
t_contains "$(rdma system show)" "netns exclusive" "rdma system show"
ns=$(t_netns)
t_contains "$("$PROBE" set-netns rxe0 "$ns")" "Operation not supported" "set-netns (exclusive, rxe)"
t_eq "$(rdma_index rxe0)" "$idx" "rxe0 still in the host"
t_eq "$(ip netns exec "${ns##*/}" rdma dev show)" "" "nothing in $ns"
t_contains "$(ip netns exec "${ns##*/}" "$PROBE" get rxe0)" "No such device" "exclusive hides rxe0 from $ns"
ip netns del "${ns##*/}"
t_eq "$("$PROBE" set-mode shared)" "" "back to shared"

t_done
