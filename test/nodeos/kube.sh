#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Cluster pools on a node whose libcurl predates the options pool-ipam
# prefers: pool-ipam of a test build made as the release is, chrooted into
# the Debian 11 root with its libcurl4 (7.74: no CURLOPT_PROTOCOLS_STR, which
# came in 7.85, no CURLOPT_CAINFO_BLOB, 7.77) and libyaml-0-2 laid over it
# (in-root.sh's NODE_LAYER, mkroot.sh's curl), reading nv-ipam's IPPool from
# the test API server through a token kubeconfig with its CA inline and a
# client-certificate one. Oracle Linux 8, the OKE GPU shapes' node OS,
# ships libcurl 7.61.
. "$(dirname "$0")/../netns/lib.sh"

if [ -z "${PLUGIN_ROOT:-}" ] || [ -z "${NODE_LAYER:-}" ]; then
	echo "SKIP: runs inside a node root with libcurl laid over it: NODE_LAYER=DIR test/nodeos/in-root.sh bash $0"
	exit 77
fi

t_begin "the root's libcurl is Debian 11's, older than 7.77"
version=$(cat "$NODE_LAYER/../curl.version" 2>/dev/null)
t_contains "$version" "7.74" "libcurl4's version ($version)"
dpkg --compare-versions "$version" lt 7.77 || t_fail "libcurl4 $version is not older than 7.77"
# What the package's trigger runs when it is installed.
chroot "$PLUGIN_ROOT" /sbin/ldconfig
t_eq "$(chroot "$PLUGIN_ROOT" /sbin/ldconfig -p | grep -c 'libcurl.so.4 ')" 1 "libcurl.so.4 known to the root's loader"

API=$T_TMP/api
t_kubeapi_start "$API" || { echo "cannot start the test API server"; exit 1; }
NS=$(t_netns) || { echo "cannot create a netns"; exit 1; }
mkdir -p "$API/objects/kube-system/ippools"
printf '%s' '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool",
"metadata":{"name":"pool1","namespace":"kube-system","resourceVersion":"1000"},
"spec":{"subnet":"10.50.0.0/16","perNodeBlockSize":120,"gateway":"10.50.0.1"},
"status":{"allocations":[{"nodeName":"node-a","startIP":"10.50.0.1","endIP":"10.50.0.120"}]}}' \
	> "$API/objects/kube-system/ippools/pool1.json"
# conf NAME KUBECONFIG: a fresh store each, so each ADD reads the API.
conf() {
	printf '{"cniVersion":"1.1.0","name":"%s","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s","ippool":{"name":"pool1","kubeconfig":"%s","apiTimeout":30}}}' \
		"$1" "$T_TMP/data-$1" "$2"
}
run() { # VERB CONFIG CONTAINER_ID
	t_exec pool-ipam "$1" "$2" CNI_CONTAINERID="$3" CNI_IFNAME=net1 CNI_NETNS="$NS" NODE_NAME=node-a
}
requests() { if [ -f "$API/requests.log" ]; then wc -l < "$API/requests.log"; else echo 0; fi; }

for kc in kubeconfig kubeconfig-cert; do
	case $kc in
	kubeconfig) what="a token, the CA inline" ;;
	*) what="a client certificate and key, the CA as files" ;;
	esac
	t_begin "ADD, CHECK and DEL through $what, on libcurl 7.74"
	r0=$(requests)
	c=$(conf "$kc" "$API/$kc")
	run ADD "$c" "c-$kc"
	t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)"
	t_eq "$(t_jq '.ips[0].address')" "10.50.0.2/16" "node-a's block"
	t_eq "$(($(requests) - r0))" 1 "requests"
	t_contains "$(tail -n 1 "$API/requests.log")" "/ippools/pool1 200" "the server's answer"
	run CHECK "$(jq -c --argjson r "$T_OUT" '. + {prevResult: $r}' <<< "$c")" "c-$kc"
	t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
	run DEL "$c" "c-$kc"
	t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
	t_eq "$(find "$T_TMP/data-$kc" -name 'a-*' | wc -l)" 0 "the address released"
done

t_done
