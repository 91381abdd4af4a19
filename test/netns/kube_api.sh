#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The Kubernetes API client (plugins/pool-ipam/kube.c, driven by test/unit/kube_get)
# against a test API server on loopback (test/client/kubeapi.go) with a CA
# made at start: nv-ipam's IPPool and CIDRPool objects and lists, token and
# client-certificate authentication, the Status answers of 401, 404 and
# 503, a slow server, a dropped connection, a server the CA did not sign.
. "$(dirname "$0")/lib.sh"

KUBE_GET=$BUILD_DIR/test/unit/kube_get
if [ ! -x "$KUBE_GET" ]; then
	echo "kube_get is not built: run ninja -C $BUILD_DIR" >&2
	exit 1
fi
API=/apis/nv-ipam.nvidia.com/v1alpha1
NS=nvidia-network-operator

# kget KUBECONFIG PATH [TIMEOUT_MS]: the HTTP status (or "error ENAME") in
# K_STATUS, the body in K_BODY, stderr in K_ERR and the exit code in K_RC.
kget() { # KUBECONFIG PATH [TIMEOUT_MS]
	local out
	# A request the server answers gets a minute, a hang guard: a loaded
	# machine or a sanitizer build makes the TLS handshake slow.
	out=$("$KUBE_GET" "$1" "$2" "${3:-60000}" 2>"$T_TMP/kget.err")
	K_RC=$?
	K_STATUS=${out%%$'\n'*}
	K_BODY=
	[ "$K_STATUS" = "$out" ] || K_BODY=${out#*$'\n'}
	K_ERR=$(cat "$T_TMP/kget.err")
}
kjq() { printf '%s' "$K_BODY" | jq -r "$1"; }

# Another server first: its CA signed a different server certificate.
t_kubeapi_start "$T_TMP/other" || exit 1
OTHER_CA=$(base64 -w0 < "$KUBEAPI_DIR/ca.crt")
OTHER_ADDR=$KUBEAPI_ADDR
t_kubeapi_stop

t_kubeapi_start "$T_TMP/api" || exit 1
OBJ=$KUBEAPI_DIR/objects
mkdir -p "$OBJ/$NS/ippools" "$OBJ/$NS/cidrpools"
cat > "$OBJ/$NS/ippools/pool1.json" <<'EOF'
{
  "metadata": {"resourceVersion": "4711", "uid": "0b9e1a4c-1f2d-4d5e-9a3b-6c7d8e9f0a1b",
               "generation": 1, "creationTimestamp": "2025-01-01T00:00:00Z"},
  "spec": {"subnet": "192.168.0.0/16", "perNodeBlockSize": 100, "gateway": "192.168.0.1"},
  "status": {"allocations": [
    {"nodeName": "node-a", "startIP": "192.168.0.1", "endIP": "192.168.0.100"},
    {"nodeName": "node-b", "startIP": "192.168.0.101", "endIP": "192.168.0.200"}]}
}
EOF
cat > "$OBJ/$NS/ippools/pool2.json" <<'EOF'
{"metadata": {"resourceVersion": "4800"}, "spec": {"subnet": "10.10.0.0/24", "perNodeBlockSize": 16}}
EOF
cat > "$OBJ/$NS/cidrpools/cidr1.json" <<'EOF'
{
  "metadata": {"resourceVersion": "5001"},
  "spec": {"cidr": "10.200.0.0/16", "perNodeNetworkPrefix": 24, "gatewayIndex": 1},
  "status": {"allocations": [{"nodeName": "node-a", "prefix": "10.200.3.0/24", "gateway": "10.200.3.1"}]}
}
EOF
KC=$KUBEAPI_DIR/kubeconfig
KC_CERT=$KUBEAPI_DIR/kubeconfig-cert

t_begin "token: GET an IPPool returns the object"
kget "$KC" "$API/namespaces/$NS/ippools/pool1"
t_eq "$K_RC:$K_STATUS" "0:200" "exit:status ($K_ERR)"
t_eq "$(kjq .kind)" IPPool "kind"
t_eq "$(kjq .metadata.name)/$(kjq .metadata.namespace)" "pool1/$NS" "name/namespace"
t_eq "$(kjq .metadata.resourceVersion)" 4711 "resourceVersion"
t_eq "$(kjq '.status.allocations[] | select(.nodeName == "node-b") | .startIP')" 192.168.0.101 \
	"node-b's block"
grep -q "^GET $API/namespaces/$NS/ippools/pool1 200\$" "$KUBEAPI_DIR/requests.log" ||
	t_fail "request log: $(cat "$KUBEAPI_DIR/requests.log")"

t_begin "client certificate (files relative to the kubeconfig): GET a CIDRPool"
kget "$KC_CERT" "$API/namespaces/$NS/cidrpools/cidr1"
t_eq "$K_RC:$K_STATUS" "0:200" "exit:status ($K_ERR)"
t_eq "$(kjq .kind)" CIDRPool "kind"
t_eq "$(kjq '.status.allocations[0].prefix')" 10.200.3.0/24 "prefix"

t_begin "list: an IPPoolList with a resourceVersion and every item"
kget "$KC" "$API/namespaces/$NS/ippools"
t_eq "$K_RC:$K_STATUS" "0:200" "exit:status ($K_ERR)"
t_eq "$(kjq .kind)" IPPoolList "kind"
t_eq "$(kjq '[.items[].metadata.name] | join(",")')" pool1,pool2 "items"
t_eq "$(kjq .metadata.resourceVersion)" 4800 "list resourceVersion"

t_begin "wrong token: 401 with the API server's Status"
sed "s/token: .*/token: not-$KUBEAPI_TOKEN/" "$KC" > "$T_TMP/kubeconfig-bad"
kget "$T_TMP/kubeconfig-bad" "$API/namespaces/$NS/ippools/pool1"
t_eq "$K_RC:$K_STATUS" "0:401" "exit:status ($K_ERR)"
t_eq "$(kjq .kind)/$(kjq .reason)/$(kjq .code)" Status/Unauthorized/401 "Status"

t_begin "missing object: 404 NotFound naming it"
kget "$KC" "$API/namespaces/$NS/ippools/nope"
t_eq "$K_RC:$K_STATUS" "0:404" "exit:status ($K_ERR)"
t_eq "$(kjq .reason)" NotFound "reason"
t_eq "$(kjq .message)" 'ippools.nv-ipam.nvidia.com "nope" not found' "message"
t_eq "$(kjq .details.name)" nope "details.name"

t_begin "slow server: -ETIMEDOUT within the timeout, not after the answer"
# The server would answer after two minutes, with the object: a client
# that waited for it gets a 200, not ETIMEDOUT.
echo 120000 > "$OBJ/.delay-ms"
kget "$KC" "$API/namespaces/$NS/ippools/pool1" 500
rm -f "$OBJ/.delay-ms"
t_eq "$K_RC:$K_STATUS" "1:error ETIMEDOUT" "exit:result"
t_contains "$K_ERR" "no answer within 500 ms" "message"
t_not_contains "$K_ERR" "$KUBEAPI_TOKEN" "message"

t_begin "dropped connection: an error, not a hang and not a success"
touch "$OBJ/.drop"
kget "$KC" "$API/namespaces/$NS/ippools/pool1"
rm -f "$OBJ/.drop"
case $K_STATUS in
"error ECONNRESET" | "error EPROTO") ;;
*) t_fail "got '$K_STATUS' ($K_ERR), want error ECONNRESET or EPROTO" ;;
esac
t_eq "$K_RC" 1 "exit (a hang would have ended in ETIMEDOUT after a minute)"
grep -q "ippools/pool1 dropped\$" "$KUBEAPI_DIR/requests.log" || t_fail "the server did not drop it"

t_begin "a CA that did not sign the server: TLS error"
sed "s|certificate-authority-data: .*|certificate-authority-data: $OTHER_CA|" "$KC" \
	> "$T_TMP/kubeconfig-other-ca"
kget "$T_TMP/kubeconfig-other-ca" "$API/namespaces/$NS/ippools/pool1"
t_eq "$K_RC:$K_STATUS" "1:error EPROTO" "exit:result ($K_ERR)"
t_contains "$K_ERR" "certificate" "message"

t_begin "service unavailable: status 503 with its Status"
echo 503 > "$OBJ/.status"
kget "$KC" "$API/namespaces/$NS/ippools/pool1"
rm -f "$OBJ/.status"
t_eq "$K_RC:$K_STATUS" "0:503" "exit:status ($K_ERR)"
t_eq "$(kjq .reason)" ServiceUnavailable "reason"

t_begin "nothing listening: -ECONNREFUSED"
sed "s|server: .*|server: https://$OTHER_ADDR|" "$KC" > "$T_TMP/kubeconfig-down"
kget "$T_TMP/kubeconfig-down" "$API/namespaces/$NS/ippools/pool1"
t_eq "$K_RC:$K_STATUS" "1:error ECONNREFUSED" "exit:result ($K_ERR)"

t_begin "every request reached the log, one line each"
t_eq "$(grep -c "^GET $API/" "$KUBEAPI_DIR/requests.log")" 8 "requests logged"

# libcurl is loaded on first use: without it, a clear error instead of a
# plugin that cannot start. Hide it with a bind mount in a mount namespace.
libcurl=$(ldconfig -p | awk '/libcurl\.so\.4 .*x86-64/ { print $NF; exit }')
if [ -n "$libcurl" ] && unshare -m true 2>/dev/null; then
	t_begin "no libcurl at run time: -ENOSYS naming the package"
	# shellcheck disable=SC2016 # expanded by the inner shell
	out=$(unshare -m --propagation private sh -c \
		'mount --bind /dev/null "$1" && exec "$2" "$3" "$4"' sh \
		"$(readlink -f "$libcurl")" "$KUBE_GET" "$KC" "$API/namespaces/$NS/ippools/pool1" 2>&1)
	t_contains "$out" "error ENOSYS" "result"
	t_contains "$out" "install libcurl4" "message"
fi

# libyaml likewise, needed from the kubeconfig on.
libyaml=$(ldconfig -p | awk '/libyaml-0\.so\.2 .*x86-64/ { print $NF; exit }')
if [ -n "$libyaml" ] && unshare -m true 2>/dev/null; then
	t_begin "no libyaml at run time: -ENOSYS naming the package"
	# shellcheck disable=SC2016 # expanded by the inner shell
	out=$(unshare -m --propagation private sh -c \
		'mount --bind /dev/null "$1" && exec "$2" "$3" "$4"' sh \
		"$(readlink -f "$libyaml")" "$KUBE_GET" "$KC" "$API/namespaces/$NS/ippools/pool1" 2>&1)
	t_contains "$out" "error ENOSYS" "result"
	t_contains "$out" "install libyaml-0-2" "message"
fi

# valgrind cannot run a sanitizer build.
if command -v valgrind >/dev/null 2>&1 && ! ldd "$KUBE_GET" | grep -q libasan; then
	t_begin "valgrind: client certificate GET without errors or leaks"
	out=$(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		"$KUBE_GET" "$KC_CERT" "$API/namespaces/$NS/ippools/pool1" 20000 2>"$T_TMP/vg.err")
	rc=$?
	t_eq "$rc:${out%%$'\n'*}" "0:200" "exit:status ($(cat "$T_TMP/vg.err"))"
	t_begin "valgrind: token GET that times out, without errors or leaks"
	echo 3000 > "$OBJ/.delay-ms"
	out=$(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		"$KUBE_GET" "$KC" "$API/namespaces/$NS/ippools/pool1" 1500 2>"$T_TMP/vg.err")
	rc=$?
	rm -f "$OBJ/.delay-ms"
	t_eq "$rc:$out" "1:error ETIMEDOUT" "exit:result ($(cat "$T_TMP/vg.err"))"
fi

t_done
