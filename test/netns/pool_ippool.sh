#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pool-ipam with ipam.ippool: this node's block read from nvidia-k8s-ipam's
# IPPool / CIDRPool resources on a test API server (HTTPS on loopback, a CA
# made at start), cached in the store. Token and client-certificate
# kubeconfigs, 401, 404, a node without a block, slow and dropped answers
# with and without a cache, fresh and stale caches counted in requests,
# DEL/CHECK/GC/STATUS with no request and no server, two nodes from one
# pool, a block that moved, CIDRPools (also /31) and dual stack.
. "$(dirname "$0")/lib.sh"

API=$T_TMP/api
t_kubeapi_start "$API" || { echo "cannot start the test API server"; exit 1; }
OBJ=$API/objects
DATA=$T_TMP/data
NS=$(t_netns) || { echo "cannot create a netns"; exit 1; }
mkdir -p "$OBJ/kube-system/ippools" "$OBJ/kube-system/cidrpools"

# put RESOURCE NAME JSON: replace an object atomically (the server reads it per request).
put() {
	printf '%s' "$3" > "$OBJ/kube-system/$1/.$2.tmp"
	mv "$OBJ/kube-system/$1/.$2.tmp" "$OBJ/kube-system/$1/$2.json"
}

# An IPPool as nv-ipam's controller leaves it: ippool NAME RESOURCE_VERSION ALLOCATIONS
ippool() {
	put ippools "$1" '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool",
"metadata":{"name":"'"$1"'","namespace":"kube-system","resourceVersion":"'"$2"'","generation":1,
"uid":"6f1d2c3b-0a9e-4b8f-8c7d-1e2f3a4b5c6d","creationTimestamp":"2026-03-02T10:11:12Z"},
"spec":{"subnet":"10.50.0.0/16","perNodeBlockSize":120,"gateway":"10.50.0.1",
"exclusions":[{"startIP":"10.50.0.10","endIP":"10.50.0.19"}],"perNodeExclusions":[{"startIndex":0,"endIndex":0}],
"nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"nvidia.com/gpu.present","operator":"Exists"}]}]},
"defaultGateway":true,"routes":[{"dst":"10.60.0.0/16"}]},
"status":{"allocations":'"$3"'}}'
}
ALLOC='[{"nodeName":"node-a","startIP":"10.50.0.1","endIP":"10.50.0.120"},{"nodeName":"node-b","startIP":"10.50.0.121","endIP":"10.50.0.240"}]'
MOVED='[{"nodeName":"node-a","startIP":"10.50.1.1","endIP":"10.50.1.120"},{"nodeName":"node-b","startIP":"10.50.0.121","endIP":"10.50.0.240"}]'
ippool pool1 1000 "$ALLOC"

# conf NAME IPPOOL_FIELDS [DATA_DIR]
conf() {
	printf '{"cniVersion":"1.1.0","name":"%s","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s","ippool":{%s}}}' \
		"$1" "${3:-$DATA}" "$2"
}
TOKEN_KC=$API/kubeconfig
# Nothing here depends on the machine's speed: a request that the server
# answers gets the longest apiTimeout and a cache the longest cacheMaxAge
# there are, as hang guards (a valgrind-wrapped plugin on a busy machine
# takes seconds for the TLS handshake alone); a request that must time out
# goes to a server that would answer after two minutes, and the tests look
# at what the plugin did, never at how long it took.
ANSWERED='"apiTimeout":30'
FRESH='"cacheMaxAge":604800'
POOL1='"name":"pool1","kubeconfig":"'$TOKEN_KC'",'$ANSWERED','$FRESH

# run VERB CONFIG CONTAINER_ID [VAR=VALUE...] (NODE_NAME=node-a unless given)
run() {
	local verb=$1 c=$2 id=$3
	shift 3
	t_exec pool-ipam "$verb" "$c" CNI_CONTAINERID="$id" CNI_IFNAME=net1 CNI_NETNS="$NS" NODE_NAME=node-a "$@"
}
requests() { if [ -f "$API/requests.log" ]; then wc -l < "$API/requests.log"; else echo 0; fi; }
in_block() { # address lo hi (last octets of 10.50.0.x or 10.50.1.x): prints yes/no
	awk -v a="$1" -v lo="$2" -v hi="$3" 'BEGIN {
		split(a, x, "[./]"); v = x[3] * 256 + x[4]
		split(lo, l, "."); split(hi, h, ".")
		print (v >= l[3] * 256 + l[4] && v <= h[3] * 256 + h[4]) ? "yes" : "no" }'
}

t_begin "ADD through a token kubeconfig: node-a's block, pool gateway, routes via it"
R0=$(requests)
run ADD "$(conf n1 "$POOL1")" c1
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address')" "10.50.0.2/16" "address (.1 is the gateway and per-node index 0)"
t_eq "$(t_jq '.ips[0].gateway')" "10.50.0.1" "gateway"
t_eq "$(t_jq '[.routes[] | .dst + " via " + .gw] | sort | join(",")')" \
	"0.0.0.0/0 via 10.50.0.1,10.60.0.0/16 via 10.50.0.1" "routes"
t_eq "$(($(requests) - R0))" 1 "requests"
t_contains "$(tail -n 1 "$API/requests.log")" "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/kube-system/ippools/pool1 200" "request"
ADD1_OUT=$T_OUT

t_begin "the cache: one 0600 file in the store with the node, resourceVersion and block"
t_eq "$(stat -c %a "$DATA/n1/ippool.0" 2>&1)" 600 "mode"
CACHE=$(sed '/^#crc32=/d' "$DATA/n1/ippool.0")
t_eq "$(printf '%s' "$CACHE" | jq -r '[.kind, .namespace, .name, .node, .resourceVersion, .rangeStart, .rangeEnd] | join(" ")')" \
	"IPPool kube-system pool1 node-a 1000 10.50.0.1 10.50.0.120" "cache content"

t_begin "a fresh cache: the next ADD sends no request"
R0=$(requests)
run ADD "$(conf n1 "$POOL1")" c2
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address')" "10.50.0.3/16" "address"
t_eq "$(($(requests) - R0))" 0 "requests"

t_begin "ADD through a client-certificate kubeconfig (relative paths)"
R0=$(requests)
run ADD "$(conf ncert '"name":"pool1","kubeconfig":"'"$API"'/kubeconfig-cert",'"$ANSWERED")" c1
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address')" "10.50.0.2/16" "address"
t_eq "$(($(requests) - R0))" 1 "requests"

t_begin "a stale cache: one request, and the cache rewritten with the new resourceVersion"
STALE='"name":"pool1","kubeconfig":"'$TOKEN_KC'",'$ANSWERED',"cacheMaxAge":0'
run ADD "$(conf nstale "$STALE")" s1
t_eq "$T_RC" 0 "first ADD ($T_OUT $T_ERR)"
S1_OUT=$T_OUT
ippool pool1 1001 "$ALLOC"
R0=$(requests)
run ADD "$(conf nstale "$STALE")" s2
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(($(requests) - R0))" 1 "requests"
t_eq "$(sed '/^#crc32=/d' "$DATA/nstale/ippool.0" | jq -r .resourceVersion)" 1001 "cached resourceVersion"

t_begin "401 without a cache: code 7 naming the kubeconfig"
sed "s/token: .*/token: wrong-token/" "$TOKEN_KC" > "$API/kubeconfig-bad"
BAD='"name":"pool1","kubeconfig":"'$API'/kubeconfig-bad",'$ANSWERED',"cacheMaxAge":0'
run ADD "$(conf n401 "$BAD")" u1
t_eq "$T_RC" 1 "exit code"
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" "refused kubeconfig $API/kubeconfig-bad (HTTP 401" "message"
t_contains "$(t_jq .msg)" "no cached block" "message"
t_eq "$(tail -n 1 "$API/requests.log" | awk '{print $NF}')" 401 "the server's answer"

t_begin "401 with a cache: ADD goes on with the cached block and says why"
run ADD "$(conf nstale "$BAD")" s3
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_contains "$T_ERR" "HTTP 401" "warning"
t_contains "$T_ERR" "using node node-a's cached block" "warning"
t_contains "$T_ERR" "resourceVersion 1001" "warning"

t_begin "403 (an identity without RBAC on nv-ipam, as Multus's is): code 7 naming RBAC, the user and the fix"
echo 403 > "$OBJ/.status"
run ADD "$(conf n403 "$POOL1")" f1
rm -f "$OBJ/.status"
t_eq "$T_RC" 1 "exit code"
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" "HTTP 403 Forbidden with kubeconfig $TOKEN_KC: its identity may not get ippools of nv-ipam.nvidia.com in namespace kube-system (RBAC)" "message"
t_contains "$(t_jq .msg)" 'User "system:serviceaccount:kube-system:multus" cannot get resource "ippools"' "the API server's words"
t_contains "$(t_jq .details)" "conf/deploy/rbac.yaml" "details name the ClusterRole to apply"
t_eq "$(tail -n 1 "$API/requests.log" | awk '{print $NF}')" 403 "the server's answer"

t_begin "404: code 7, the pool does not exist"
run ADD "$(conf n404 '"name":"pool-typo","kubeconfig":"'"$TOKEN_KC"'",'"$ANSWERED")" x1
t_eq "$T_RC" 1 "exit code"
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" "IPPool kube-system/pool-typo does not exist" "message"
t_contains "$(t_jq .details)" "kubectl get ippools.nv-ipam.nvidia.com -n kube-system" "details"

t_begin "a node without a block: code 11 naming the node, the nodes listed and why"
run ADD "$(conf nc "$POOL1")" x1 NODE_NAME=node-c
t_eq "$T_RC" 1 "exit code"
t_eq "$(t_jq .code)" 11 "code"
t_contains "$(t_jq .msg)" "no block for node \"node-c\"" "message"
t_contains "$(t_jq .msg)" "node-a, node-b" "message"
t_contains "$(t_jq .msg)" "nodeSelector" "message"

t_begin "a slow API server with a cache: ADD gives up at apiTimeout and uses the cache"
# The server would answer after two minutes, with a block: an ADD that
# waited for it would use that block and warn of nothing.
echo 120000 > "$OBJ/.delay-ms"
SLOW_STALE='"name":"pool1","kubeconfig":"'$TOKEN_KC'","apiTimeout":1,"cacheMaxAge":0'
run ADD "$(conf nstale "$SLOW_STALE")" s4
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_contains "$T_ERR" "no answer within 1000 ms" "warning names the timeout that ended the wait"
t_contains "$T_ERR" "using node node-a's cached block" "warning"

t_begin "a slow API server without a cache: code 11, it gave up at apiTimeout"
run ADD "$(conf nslow '"name":"pool1","kubeconfig":"'"$TOKEN_KC"'","apiTimeout":1')" w1
t_eq "$(t_jq .code)" 11 "code: it gave up instead of waiting for the answer ($T_OUT)"
t_contains "$(t_jq .msg)" "no cached block yet" "message"
rm -f "$OBJ/.delay-ms"

t_begin "a dropped connection with a cache: ADD uses the cache"
touch "$OBJ/.drop"
run ADD "$(conf nstale "$STALE")" s5
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_contains "$T_ERR" "using node node-a's cached block" "warning"
rm -f "$OBJ/.drop"

t_begin "HTTP 503 with a cache: ADD uses the cache"
echo 503 > "$OBJ/.status"
run ADD "$(conf nstale "$STALE")" s6
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_contains "$T_ERR" "answered HTTP 503" "warning"
rm -f "$OBJ/.status"

t_begin "DEL, CHECK, GC and STATUS send no request, even when the cache is stale"
R0=$(requests)
run CHECK "$(conf nstale "$STALE" | jq -c --argjson r "$S1_OUT" '.prevResult = $r')" s1
t_eq "$T_RC" 0 "CHECK ($T_OUT)"
run CHECK "$(conf nstale "$STALE")" s2
t_eq "$T_RC" 0 "CHECK ($T_OUT)"
run DEL "$(conf nstale "$STALE")" s2
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_exec pool-ipam STATUS "$(conf nstale "$STALE")" NODE_NAME=node-a
t_eq "$T_RC" 0 "STATUS ($T_OUT)"
t_exec pool-ipam GC "$(conf nstale "$STALE" | jq -c '."cni.dev/valid-attachments" = [{"containerID":"s1","ifname":"net1"}]')" NODE_NAME=node-a
t_eq "$T_RC" 0 "GC ($T_OUT)"
t_eq "$(($(requests) - R0))" 0 "requests"
t_eq "$(find "$DATA/nstale" -name 'a-*' | wc -l)" 1 "reservations left after GC (s1 only)"

# POOL_IPPOOL_N ADDs per node (default 100; at most 120, a node's block).
BOTH_N=${POOL_IPPOOL_N:-100}
t_begin "two nodes from one pool, $BOTH_N concurrent ADDs each: no address twice, each in its block"
# The first ADDs of each node race to fetch the block: a timeout that fits a
# valgrind-wrapped plugin among eight at once.
# shellcheck disable=SC2089  # a JSON fragment: its quotes are meant literally
BOTH='"name":"pool1","kubeconfig":"'$TOKEN_KC'",'$ANSWERED','$FRESH
one_add() { # node data id
	printf '%s' "$(conf nboth "$BOTH" "$2")" | env CNI_COMMAND=ADD CNI_CONTAINERID="$3" CNI_IFNAME=net1 \
		CNI_NETNS="$NS" NODE_NAME="$1" CNI_PATH="$(t_cni_path)" "$(t_cni_path)/pool-ipam" 2>/dev/null |
		jq -r '.ips[0].address // "error"' | sed "s/^/$1 /"
}
export -f one_add conf t_cni_path
# shellcheck disable=SC2090  # BOTH is used quoted
export NS BOTH T_TMP PEER_CNI_DIR BUILD_DIR
R0=$(requests)
for i in $(seq 1 "$BOTH_N"); do
	echo "node-a $T_TMP/data-a a$i"
	echo "node-b $T_TMP/data-b b$i"
done | xargs -P 8 -L 1 bash -c 'one_add "$0" "$1" "$2"' > "$T_TMP/both.out"
t_eq "$(wc -l < "$T_TMP/both.out")" $((2 * BOTH_N)) "answers"
t_eq "$(grep -c ' error$' "$T_TMP/both.out")" 0 "failed ADDs"
t_eq "$(awk '{print $2}' "$T_TMP/both.out" | sort | uniq -d | wc -l)" 0 "addresses handed out twice"
t_eq "$(awk '$1 == "node-a" {print $2}' "$T_TMP/both.out" | while read -r a; do in_block "$a" 10.50.0.1 10.50.0.120; done | grep -c no)" 0 "node-a addresses outside its block"
t_eq "$(awk '$1 == "node-b" {print $2}' "$T_TMP/both.out" | while read -r a; do in_block "$a" 10.50.0.121 10.50.0.240; done | grep -c no)" 0 "node-b addresses outside its block"
# How many of the first ADDs miss the cache depends on how fast they run;
# once it is written, none asks the server.
R0=$(requests)
for i in $(seq $((BOTH_N + 1)) $((BOTH_N + 4))); do
	echo "node-a $T_TMP/data-a a$i"
	echo "node-b $T_TMP/data-b b$i"
done | xargs -P 8 -L 1 bash -c 'one_add "$0" "$1" "$2"' > "$T_TMP/both2.out"
t_eq "$(grep -c ' error$' "$T_TMP/both2.out")" 0 "failed ADDs once the cache is there"
t_eq "$(($(requests) - R0))" 0 "requests once the cache is there"

t_begin "the block moved: the old reservation stays and passes CHECK, new ones only in the new block"
MOVE='"name":"pool1","kubeconfig":"'$TOKEN_KC'",'$ANSWERED',"cacheMaxAge":0'
run ADD "$(conf nmove "$MOVE")" m1
t_eq "$(t_jq '.ips[0].address')" "10.50.0.2/16" "address before the move ($T_ERR)"
M1_OUT=$T_OUT
ippool pool1 2000 "$MOVED"
run ADD "$(conf nmove "$MOVE")" m1
t_eq "$(t_jq '.ips[0].address')" "10.50.0.2/16" "the same container gets its old address back ($T_OUT $T_ERR)"
run CHECK "$(conf nmove "$MOVE" | jq -c --argjson r "$M1_OUT" '.prevResult = $r')" m1
t_eq "$T_RC" 0 "CHECK of the old reservation ($T_OUT)"
OUTSIDE=0
for i in $(seq 2 6); do
	run ADD "$(conf nmove "$MOVE")" "m$i"
	[ "$(in_block "$(t_jq '.ips[0].address')" 10.50.1.1 10.50.1.120)" = yes ] || OUTSIDE=$((OUTSIDE + 1))
done
t_eq "$OUTSIDE" 0 "new ADDs outside the new block"
t_eq "$(sed '/^#crc32=/d' "$DATA/nmove/ippool.0" | jq -r '.resourceVersion + " " + .rangeStart')" "2000 10.50.1.1" "cache"
run DEL "$(conf nmove "$MOVE")" m1
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(find "$DATA/nmove" -name 'a-10.50.0.*' | wc -l)" 0 "old reservation released"
ippool pool1 2001 "$ALLOC"

t_begin "CIDRPool end to end: the node's prefix, its gateway, routes"
put cidrpools cpool '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"CIDRPool",
"metadata":{"name":"cpool","namespace":"kube-system","resourceVersion":"55"},
"spec":{"cidr":"10.70.0.0/16","gatewayIndex":1,"perNodeNetworkPrefix":24,"perNodeExclusions":[{"startIndex":2,"endIndex":4}],
"defaultGateway":true},
"status":{"allocations":[{"nodeName":"node-a","prefix":"10.70.1.0/24","gateway":"10.70.1.1"},
{"nodeName":"node-b","prefix":"10.70.2.0/24","gateway":"10.70.2.1"}]}}'
CPOOL='"name":"cpool","kind":"CIDRPool","kubeconfig":"'$TOKEN_KC'",'$ANSWERED
run ADD "$(conf ncidr "$CPOOL")" k1
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address')" "10.70.1.5/24" "address (.1 gateway, .2-.4 per-node exclusions)"
t_eq "$(t_jq '.ips[0].gateway')" "10.70.1.1" "gateway"
t_eq "$(t_jq '.routes[0].dst + " via " + .routes[0].gw')" "0.0.0.0/0 via 10.70.1.1" "default route"
t_contains "$(tail -n 1 "$API/requests.log")" "/namespaces/kube-system/cidrpools/cpool 200" "request"
run ADD "$(conf ncidr "$CPOOL")" k2 NODE_NAME=node-b
t_eq "$(t_jq '.ips[0].address')" "10.70.2.5/24" "node-b's address"

t_begin "CIDRPool /31: both addresses are usable, the gateway is skipped"
put cidrpools p2p '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"CIDRPool",
"metadata":{"name":"p2p","namespace":"kube-system","resourceVersion":"9"},
"spec":{"cidr":"10.80.0.0/24","gatewayIndex":0,"perNodeNetworkPrefix":31},
"status":{"allocations":[{"nodeName":"node-a","prefix":"10.80.0.4/31","gateway":"10.80.0.4"}]}}'
run ADD "$(conf np2p '"name":"p2p","kind":"cidrpool","kubeconfig":"'"$TOKEN_KC"'",'"$ANSWERED")" p1
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address + " " + .ips[0].gateway')" "10.80.0.5/31 10.80.0.4" "address and gateway"

t_begin "dual stack: an IPv4 IPPool and an IPv6 CIDRPool"
put cidrpools v6 '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"CIDRPool",
"metadata":{"name":"v6","namespace":"kube-system","resourceVersion":"3"},
"spec":{"cidr":"fd00:50::/48","perNodeNetworkPrefix":64},
"status":{"allocations":[{"nodeName":"node-a","prefix":"fd00:50:0:1::/64"}]}}'
DUAL='{"cniVersion":"1.1.0","name":"ndual","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"'$DATA'","ippool":[{'$POOL1'},{"name":"v6","kind":"CIDRPool","kubeconfig":"'$TOKEN_KC'",'$ANSWERED'}]}}'
run ADD "$DUAL" d1
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '[.ips[].address] | join(" ")')" "10.50.0.2/16 fd00:50:0:1::1/64" "addresses"
t_eq "$(find "$DATA/ndual" -name 'ippool.*' | wc -l)" 2 "one cache file per pool"

t_begin "with the API server stopped and no cache: DEL, CHECK, GC and STATUS still work"
t_kubeapi_stop
rm -f "$DATA"/n1/ippool.*
run CHECK "$(conf n1 "$POOL1" | jq -c --argjson r "$ADD1_OUT" '.prevResult = $r')" c1
t_eq "$T_RC" 0 "CHECK ($T_OUT)"
run DEL "$(conf n1 "$POOL1")" c1
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(find "$DATA/n1" -name 'a-10.50.0.2' | wc -l)" 0 "c1's address released"
run DEL "$(conf n1 "$POOL1")" c1
t_eq "$T_RC" 0 "second DEL ($T_OUT)"
t_exec pool-ipam STATUS "$(conf n1 "$POOL1")" NODE_NAME=node-a
t_eq "$T_RC" 0 "STATUS ($T_OUT)"
t_exec pool-ipam GC "$(conf n1 "$POOL1" | jq -c '."cni.dev/valid-attachments" = []')" NODE_NAME=node-a
t_eq "$T_RC" 0 "GC ($T_OUT)"
t_eq "$(find "$DATA/n1" -name 'a-*' | wc -l)" 0 "reservations left after GC"

t_begin "with the API server stopped: ADD with a stale cache goes on, without one fails with code 11"
run ADD "$(conf nstale "$STALE")" s7
t_eq "$T_RC" 0 "ADD from the cache ($T_OUT $T_ERR)"
t_contains "$T_ERR" "using node node-a's cached block" "warning"
run ADD "$(conf n1 "$POOL1")" c9
t_eq "$(t_jq .code)" 11 "code without a cache ($T_OUT)"

t_done
