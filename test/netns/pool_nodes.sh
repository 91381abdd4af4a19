#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pool-ipam with per-node blocks ("nodes"): one config, as a NAD gives every
# node, run on two "nodes" (two dataDirs, two node names) at the same time
# never hands out one address twice; a node without a block gets a clear
# code-7 error; ipam.nodeName beats NODE_NAME; a block that moved keeps the
# reservations made in the old one until they are released and hands out
# nothing new outside itself.
. "$(dirname "$0")/lib.sh"

N=${POOL_NODES_N:-150}	# ADDs per node
P=${POOL_NODES_P:-4}	# parallel callers per node
NS=$(t_netns) || { echo "cannot create a netns"; exit 1; }
PLUGIN=$(t_cni_path)/pool-ipam
OUT=$T_TMP/out
mkdir -p "$OUT"
export PLUGIN NS OUT

# conf NAME DATA_DIR IPAM_FIELDS
conf() {
	printf '{"cniVersion":"1.1.0","name":"%s","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s",%s}}' \
		"$1" "$2" "$3"
}

# run VERB CONFIG CONTAINER_ID [VAR=VALUE...]
run() {
	local verb=$1 c=$2 id=$3
	shift 3
	t_exec pool-ipam "$verb" "$c" CNI_CONTAINERID="$id" CNI_IFNAME=net1 CNI_NETNS="$NS" "$@"
}

# ip2int A.B.C.D
ip2int() {
	local IFS=. a b c d
	read -r a b c d <<< "$1"
	echo $(((a << 24) | (b << 16) | (c << 8) | d))
}

# in_span ADDR FIRST LAST
in_span() {
	local v
	v=$(ip2int "$1")
	[ "$v" -ge "$(ip2int "$2")" ] && [ "$v" -le "$(ip2int "$3")" ]
}

# one NODE ID: one ADD as node NODE; stdout to $OUT/NODE/ID.json, exit code to $OUT/NODE/ID.rc
one() {
	CNI_COMMAND=ADD CNI_CONTAINERID=$2 CNI_IFNAME=net1 CNI_NETNS=$NS CNI_PATH=/nonexistent \
		NODE_NAME=$1 "$PLUGIN" < "$OUT/conf.$1" > "$OUT/$1/$2.json" 2>/dev/null
	echo $? > "$OUT/$1/$2.rc"
}
export -f one

BLOCKS='"subnet":"10.90.0.0/16","gateway":"10.90.1.1","exclude":["10.90.2.5"],"nodes":{"node-a":"10.90.1.0/24","node-b":{"rangeStart":"10.90.2.0","rangeEnd":"10.90.2.199","exclude":["10.90.2.100-10.90.2.109"]}}'

t_begin "control: without blocks, two nodes hand out the same addresses"
C=$(conf shared "$T_TMP/ctl-a" '"subnet":"10.89.0.0/24"')
run ADD "$C" x1 NODE_NAME=node-a
A1=$(t_jq '.ips[0].address')
run ADD "$(conf shared "$T_TMP/ctl-b" '"subnet":"10.89.0.0/24"')" x1 NODE_NAME=node-b
t_eq "$(t_jq '.ips[0].address')" "$A1" "node-b's first address"

t_begin "$N ADDs on each of two nodes at once: no address twice, each in its node's block"
conf rdma "$T_TMP/node-a" "$BLOCKS" > "$OUT/conf.node-a"
conf rdma "$T_TMP/node-b" "$BLOCKS" > "$OUT/conf.node-b"
for node in node-a node-b; do
	mkdir -p "$OUT/$node"
	seq -f 'c%g' 1 "$N" | xargs -P "$P" -I{} bash -c "one $node {}" &
done
wait
t_eq "$(cat "$OUT"/node-?/*.rc | grep -cvx 0)" 0 "failed ADDs"
cat "$OUT"/node-a/*.json | jq -r '.ips[0].address' | cut -d/ -f1 > "$OUT/a.addrs"
cat "$OUT"/node-b/*.json | jq -r '.ips[0].address' | cut -d/ -f1 > "$OUT/b.addrs"
t_eq "$(wc -l < "$OUT/a.addrs")" "$N" "node-a addresses"
t_eq "$(wc -l < "$OUT/b.addrs")" "$N" "node-b addresses"
t_eq "$(sort "$OUT/a.addrs" "$OUT/b.addrs" | uniq -d | head -n 3)" "" "addresses handed out twice"
t_eq "$(sort -u "$OUT/a.addrs" "$OUT/b.addrs" | wc -l)" $((2 * N)) "distinct addresses"
bad=
while read -r a; do
	in_span "$a" 10.90.1.0 10.90.1.255 && [ "$a" != 10.90.1.1 ] || bad="$bad $a"
done < "$OUT/a.addrs"
t_eq "$bad" "" "node-a addresses outside its block or the gateway"
bad=
while read -r a; do
	in_span "$a" 10.90.2.0 10.90.2.199 && ! in_span "$a" 10.90.2.100 10.90.2.109 &&
		[ "$a" != 10.90.2.5 ] || bad="$bad $a"
done < "$OUT/b.addrs"
t_eq "$bad" "" "node-b addresses outside its block or excluded"
t_eq "$(jq -r '.ips[0].address' "$OUT/node-b/c1.json" | cut -d/ -f2)" 16 "the subnet's prefix length in the result"
t_eq "$(jq -r '.ips[0].gateway' "$OUT/node-b/c1.json")" "10.90.1.1" "the subnet's gateway in the result"

t_begin "a node without a block gets code 7 naming the node, where the name came from, the fix"
run ADD "$(conf rdma "$T_TMP/node-c" "$BLOCKS")" c1 NODE_NAME=node-c
t_eq "$T_RC" 1 "exit code"
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" 'node "node-c" (the name from $NODE_NAME) has no block in "nodes"' "message"
t_contains "$(t_jq .msg)" "or correct NODE_NAME" "the fix"
t_eq "$(find "$T_TMP/node-c" -name 'a-*' 2>/dev/null | wc -l)" 0 "nothing reserved"
run ADD "$(conf rdma "$T_TMP/node-c" "$BLOCKS,\"nodeName\":\"node-d\"")" c1 NODE_NAME=node-a
t_contains "$(t_jq .msg)" 'node "node-d" (the name from ipam.nodeName)' "ipam.nodeName named as the source"

t_begin "ipam.nodeName beats NODE_NAME"
run ADD "$(conf rdma "$T_TMP/node-x" "$BLOCKS,\"nodeName\":\"node-b\"")" n1 NODE_NAME=node-a
t_eq "$T_RC" 0 "exit code ($T_OUT)"
t_eq "$(t_jq '.ips[0].address')" "10.90.2.0/16" "address from node-b's block"

t_begin "a block that moved keeps the old reservation until DEL, and hands out only the new block"
OLD='"subnet":"10.91.0.0/24","nodes":{"node-a":{"rangeStart":"10.91.0.10","rangeEnd":"10.91.0.19"},"node-b":"10.91.0.128/28"}'
NEW='"subnet":"10.91.0.0/24","nodes":{"node-a":"10.91.0.32/28","node-b":"10.91.0.128/28"}'
COLD=$(conf moved "$T_TMP/moved" "$OLD")
CNEW=$(conf moved "$T_TMP/moved" "$NEW")
run ADD "$COLD" m1 NODE_NAME=node-a
t_eq "$(t_jq '.ips[0].address')" "10.91.0.10/24" "ADD in the old block"
run ADD "$COLD" m0 NODE_NAME=node-a
t_eq "$(t_jq '.ips[0].address')" "10.91.0.11/24" "second ADD in the old block"
run ADD "$CNEW" m1 NODE_NAME=node-a
t_eq "$T_RC" 0 "repeated ADD after the move ($T_OUT)"
t_eq "$(t_jq '.ips[0].address')" "10.91.0.10/24" "the old reservation is returned"
RES=$T_OUT
run CHECK "$(printf '%s' "$CNEW" | jq -c --argjson r "$RES" '.prevResult = $r')" m1 NODE_NAME=node-a
t_eq "$T_RC" 0 "CHECK of the old reservation ($T_OUT)"
run STATUS "$CNEW" x NODE_NAME=node-a
t_eq "$T_RC" 0 "STATUS: the old reservations do not count against the new block ($T_OUT)"
run DEL "$CNEW" m1 NODE_NAME=node-a
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(find "$T_TMP/moved/moved" -name 'a-10.91.0.10' | wc -l)" 0 "old reservation released"
run ADD "$CNEW" m1 NODE_NAME=node-a
t_eq "$(t_jq '.ips[0].address')" "10.91.0.32/24" "a new ADD lands in the new block"
bad=
for i in $(seq 2 16); do
	run ADD "$CNEW" "m$i" NODE_NAME=node-a
	a=$(t_jq '.ips[0].address')
	in_span "${a%/*}" 10.91.0.32 10.91.0.47 || bad="$bad m$i=$a"
done
t_eq "$bad" "" "ADDs after the move outside the new block"
run ADD "$CNEW" m17 NODE_NAME=node-a
t_eq "$(t_jq .code)" 103 "the new block full: exhausted, although the old block has free addresses"
run STATUS "$CNEW" x NODE_NAME=node-a
t_eq "$(t_jq .code)" 50 "STATUS when the new block is full"
run ADD "$CNEW" m0 NODE_NAME=node-a
t_eq "$(t_jq '.ips[0].address')" "10.91.0.11/24" "the other old reservation is kept too"

t_begin "a node that lost its block still releases on DEL and GC (no pod stuck in Terminating)"
GONE='"subnet":"10.92.0.0/24","nodes":{"node-b":"10.92.0.128/28"}'
run ADD "$(conf lost "$T_TMP/lost" '"subnet":"10.92.0.0/24","nodes":{"node-a":"10.92.0.16/28"}')" l1 NODE_NAME=node-a
t_eq "$(t_jq '.ips[0].address')" "10.92.0.16/24" "ADD in node-a's block"
run ADD "$(conf lost "$T_TMP/lost" '"subnet":"10.92.0.0/24","nodes":{"node-a":"10.92.0.16/28"}')" l2 NODE_NAME=node-a
run DEL "$(conf lost "$T_TMP/lost" "$GONE")" l1 NODE_NAME=node-a
t_eq "$T_RC" 0 "DEL with node-a gone from nodes ($T_OUT)"
t_eq "$(find "$T_TMP/lost/lost" -name 'a-10.92.0.16' | wc -l)" 0 "its reservation released"
run ADD "$(conf lost "$T_TMP/lost" "$GONE")" l3 NODE_NAME=node-a
t_eq "$(t_jq .code)" 7 "but no new ADD"
run GC "$(conf lost "$T_TMP/lost" "$GONE" | jq -c '.cniVersion = "1.1.0" | .["cni.dev/valid-attachments"] = []')" x NODE_NAME=node-a
t_eq "$T_RC" 0 "GC with node-a gone from nodes ($T_OUT)"
t_eq "$(find "$T_TMP/lost/lost" -name 'a-*' | wc -l)" 0 "GC released the rest"

t_begin "blocks written as CIDRs at the subnet's edges work on every node"
EDGE='"subnet":"10.70.0.0/24","nodes":{"node-a":"10.70.0.0/26","node-b":"10.70.0.192/26"}'
run ADD "$(conf edge "$T_TMP/edge-a" "$EDGE")" e1 NODE_NAME=node-a
t_eq "$(t_jq '.ips[0].address')" "10.70.0.1/24" "node-a: the first usable address of its block ($T_OUT)"
run ADD "$(conf edge "$T_TMP/edge-b" "$EDGE")" e1 NODE_NAME=node-b
t_eq "$(t_jq '.ips[0].address')" "10.70.0.192/24" "node-b: the first of its block ($T_OUT)"

t_done
