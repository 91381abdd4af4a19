#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every example under conf/ is a config the plugins accept, so users can
# copy them: each NetworkAttachmentDefinition (its spec.config) and each
# .conflist/.conf/.json is valid JSON with a supported cniVersion; a NAD's
# config carries the NAD's name and, for sriov-rdma, the resourceName
# annotation Multus needs to inject a deviceID (a NAD without spec.config
# has its node-local config file next to it); every sriov-rdma config gets
# through parsing to the device lookup (code 102 on an empty sysfs, not 7);
# every pool-ipam config hands out an address for real (one per range set),
# passes CHECK and gives it back on DEL; every other plugin named is one
# that containernetworking-plugins installs. Every sriov-rdma config
# declares the capabilities Multus fills (CNIDeviceInfoFile, deviceID, mac,
# ips), and runs through libcni as Multus sends it: deviceID and the
# device-info path as capability arguments, on a stand-in VF (the NAD's
# IPAM swapped for a local range: the pool side is checked on its own). An
# InfiniBand config (guid, pkey, ibKubernetesEnabled) declares
# infinibandGUID instead of mac, and runs on an IB stand-in VF that holds
# the GUID Multus passes already (the rebind is sriov_ib.sh's).
. "$(dirname "$0")/sriov_lib.sh"

CONF_DIR=$SOURCE_DIR/conf
SUPPORTED="0.3.0 0.3.1 0.4.0 1.0.0 1.1.0"
NS=$(t_netns) || { echo "cannot create a network namespace" >&2; exit 1; }
EMPTY_SYSFS=$T_TMP/empty-sysfs
mkdir -p "$EMPTY_SYSFS" "$T_TMP/nad"
N=0

# Split the NetworkAttachmentDefinitions of a YAML file: for document i,
# $2/i.json gets spec.config (written as a literal block, "config: |") and
# a line "i<TAB>kind<TAB>name<TAB>resourceName<TAB>style" goes to stdout,
# style being "block", "none" (no spec.config) or "inline" (not a block).
nad_split() { # file outdir
	awk -v out="$2" '
	function emit() {
		if (kind != "")
			printf "%d\t%s\t%s\t%s\t%s\n", doc, kind, name, res, style
		doc++; kind = ""; name = ""; res = "-"; style = "none"; sect = ""; inblock = 0
	}
	BEGIN { doc = 0; emit(); doc = 0 }
	/^---/ { emit(); next }
	inblock {
		if ($0 ~ /^[ \t]*$/ || match($0, /^ +/) && RLENGTH > 2) { print > (out "/" doc ".json"); next }
		inblock = 0
	}
	/^[^ #]/ { sect = $1 }
	/^kind:/ { kind = $2 }
	sect == "metadata:" && /^  name:/ { name = $2 }
	/k8s\.v1\.cni\.cncf\.io\/resourceName:/ { res = $2 }
	sect == "spec:" && /^  config:/ {
		if ($0 ~ /^  config: *[|][-+]? *$/) { style = "block"; inblock = 1; printf "" > (out "/" doc ".json") }
		else style = "inline"
	}
	END { emit() }' "$1"
}

version_ok() {
	case " $SUPPORTED " in *" $1 "*) return 0 ;; esac
	return 1
}

# Point every path of a plugin config at this test's temporary directory
# and drop log files, so that nothing on the host is touched.
sandboxed() { # plugin-config-json
	printf '%s' "$1" | jq -c --arg t "$T_TMP/state-$N" --arg s "$SR_STATE" '
		(if .type == "sriov-rdma" then .stateDir = $s elif has("stateDir") then .stateDir = $t + "/sriov-rdma" else . end)
		| del(.logFile)
		| (if .ipam then .ipam.dataDir = $t + "/pool-ipam" | del(.ipam.logFile) | del(.ipam.resolvConf) else . end)'
}

IN_NAD=0
RF=$T_TMP/rdma-fake
sr_setup 1 || { echo "cannot set up the stand-in VF"; exit 1; }
mkdir -p "$RF" "$T_TMP/devinfo"
echo exclusive > "$RF/rdma.mode"

# As Multus runs a NAD: libcni passes runtimeConfig only for declared capabilities.
check_sriov_multus() { # label conf
	local conf list=$T_TMP/multus.conflist pod orig di=$T_TMP/devinfo/$N.json direct=0
	local caps='.CNIDeviceInfoFile, .deviceID, .mac, .ips' capnames="CNIDeviceInfoFile, deviceID, mac, ips"
	local cap env=()
	cap="{\"deviceID\": \"$(sr_vf 0)\", \"CNIDeviceInfoFile\": \"$di\"}"
	if printf '%s' "$2" | jq -e 'has("guid") or has("pkey") or has("ibKubernetesEnabled")' >/dev/null; then
		caps='.CNIDeviceInfoFile, .deviceID, .infinibandGUID, .ips'
		capnames="CNIDeviceInfoFile, deviceID, infinibandGUID, ips"
		cap="{\"deviceID\": \"$(sr_vf 0)\", \"CNIDeviceInfoFile\": \"$di\", \"infinibandGUID\": \"02:00:00:00:00:00:00:21\"}"
		rm -rf "$T_TMP/ibsys" "$T_TMP/ibfake"
		"$SOURCE_DIR/test/fixtures/mksysfs" "$T_TMP/ibsys" --ib --pf "$SR_PF" "$SR_PFNET" \
			--vf 0 "$(sr_vf 0)" "$(sr_net 0)" --guid 0 02:00:00:00:00:00:00:21 --fake-pf "$T_TMP/ibfake"
		env=(SRIOV_RDMA_SYSFS_ROOT="$T_TMP/ibsys" SRIOV_RDMA_PF_FAKE_DIR="$T_TMP/ibfake")
	fi
	# A config file for a direct call (a DRA driver's single config, where the
	# driver puts deviceID at the top level; cnitool) declares nothing. A NAD
	# must declare the capabilities.
	if [ "$IN_NAD" = 0 ] && printf '%s' "$2" | jq -e 'has("capabilities") | not' >/dev/null; then
		direct=1
		t_begin "$1: a direct-call config: ADD, CHECK, DEL through libcni as it is"
	else
		t_begin "$1: declares the capabilities Multus fills"
		t_eq "$(printf '%s' "$2" | jq -c ".capabilities // {} | [$caps]")" \
			'[true,true,true,true]' "capabilities $capnames"
		t_begin "$1: ADD, CHECK, DEL through libcni with Multus's capability arguments"
	fi
	echo "3 mlx5_2 $(sr_net 0) $(stat -L -c %i /proc/self/ns/net)" > "$RF/rdma.devs"
	orig=$(sr_host_link "$(sr_net 0)")
	pod=$(t_netns)
	conf=$(sandboxed "$2" | jq -c --arg p "$T_TMP/mpool-$N" --arg d "$(sr_vf 0)" --argjson direct $direct '
		(if $direct == 1 then .deviceID = $d else del(.deviceID) | del(.pciBusID) end)
		| del(.runtimeConfig)
		| .ipam = {type: "pool-ipam", subnet: "10.230.0.0/24", dataDir: $p}')
	printf '%s' "$conf" | jq -c '{cniVersion: (if .cniVersion == "1.1.0" then "1.0.0" else .cniVersion end),
		name: .name, plugins: [del(.cniVersion) | del(.name)]}' > "$list"
	t_cnitool add "$list" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID="multus$N" \
		CNI_ARGS="IgnoreUnknown=true;K8S_POD_NAMESPACE=default;K8S_POD_NAME=pod-$N" \
		CAP_ARGS="$cap" SRIOV_RDMA_RDMA_FAKE_DIR="$RF" "${env[@]}"
	t_eq "$T_RC" 0 "ADD ($T_OUT $T_ERR)" || return
	[ $direct = 1 ] ||
		t_eq "$(jq -r '.pci["pci-address"]' "$di" 2>/dev/null)" "$(sr_vf 0)" "the device-info file names the VF"
	# CHECK exists from 0.4.0 on: libcni refuses it for older configs.
	if [ "$(printf '%s\n' "$(jq -r .cniVersion "$list")" 0.4.0 | sort -V | head -n 1)" = 0.4.0 ]; then
		t_cnitool check "$list" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID="multus$N" \
			CAP_ARGS="$cap" SRIOV_RDMA_RDMA_FAKE_DIR="$RF" "${env[@]}"
		t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
	fi
	t_cnitool del "$list" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID="multus$N" \
		CAP_ARGS="$cap" SRIOV_RDMA_RDMA_FAKE_DIR="$RF" "${env[@]}"
	t_eq "$T_RC" 0 "DEL ($T_OUT $T_ERR)"
	t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "the VF is home"
	[ ! -e "$di" ] || t_fail "the device-info file is left"
}

check_sriov() { # label conf
	local conf
	check_sriov_multus "$@"
	t_begin "$1: sriov-rdma accepts the config (ADD gets to the device lookup)"
	# Multus injects deviceID from the device plugin's allocation.
	conf=$(sandboxed "$2" | jq -c '.deviceID //= "0000:3b:00.2"')
	t_exec sriov-rdma ADD "$conf" CNI_CONTAINERID="conf$N" CNI_NETNS="$NS" CNI_IFNAME=net1 \
		SRIOV_RDMA_SYSFS_ROOT="$EMPTY_SYSFS" SRIOV_RDMA_PF_FAKE_DIR="$T_TMP/fake-pf-$N"
	[ "$T_RC" != 0 ] || t_fail "ADD succeeded on an empty sysfs"
	t_eq "$(t_jq .code)" 102 "error code (want 102 device not found; msg: $(t_jq .msg))"
}

# A config with ipam.ippool gets its blocks from the test API server: each
# pool it names is served with a block for node "conf-node", and the
# kubeconfig points at the server, with the longest apiTimeout, a hang
# guard for a plugin under valgrind on a busy machine (the examples' own
# timeout is for a cluster). Prints the rewritten config.
cluster_pools() { # conf
	local kind ns name dir
	while IFS=$'\t' read -r kind ns name; do
		case ${kind,,} in
		cidrpool)
			dir=$KUBEAPI_DIR/objects/$ns/cidrpools
			mkdir -p "$dir"
			printf '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"CIDRPool","metadata":{"name":"%s","namespace":"%s","resourceVersion":"1"},"spec":{"cidr":"10.251.0.0/16","perNodeNetworkPrefix":24,"gatewayIndex":1},"status":{"allocations":[{"nodeName":"conf-node","prefix":"10.251.7.0/24","gateway":"10.251.7.1"}]}}' \
				"$name" "$ns" > "$dir/$name.json" ;;
		*)
			dir=$KUBEAPI_DIR/objects/$ns/ippools
			mkdir -p "$dir"
			printf '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"%s","namespace":"%s","resourceVersion":"1"},"spec":{"subnet":"10.250.0.0/16","perNodeBlockSize":100,"gateway":"10.250.0.1"},"status":{"allocations":[{"nodeName":"conf-node","startIP":"10.250.0.101","endIP":"10.250.0.200"}]}}' \
				"$name" "$ns" > "$dir/$name.json" ;;
		esac
	done < <(printf '%s' "$1" | jq -r '.ipam.ippool | if type == "array" then .[] else . end
		| [.kind // "IPPool", .namespace // "kube-system", .name] | @tsv')
	printf '%s' "$1" | jq -c --arg kc "$KUBEAPI_DIR/kubeconfig" '.ipam.ippool |=
		if type == "array" then map(.kubeconfig = $kc | .apiTimeout = 30)
		else .kubeconfig = $kc | .apiTimeout = 30 end'
}

check_pool() { # label conf
	local conf version sets result addrs dir node=NODE_NAME=conf-node
	t_begin "$1: pool-ipam hands out, checks and releases an address"
	conf=$(sandboxed "$2")
	# Per-node blocks: run as the first node listed.
	node=NODE_NAME=$(printf '%s' "$conf" | jq -r '[.ipam | ., .ranges[]?[]? | .nodes? // empty | keys[]] | first // "conf-node"')
	version=$(printf '%s' "$conf" | jq -r '.cniVersion')
	sets=$(printf '%s' "$conf" | jq '.ipam.ranges // (.ipam.ippool | if type == "array" then . else [.] end) // [0] | length')
	if printf '%s' "$conf" | jq -e '.ipam.ippool' >/dev/null; then
		if [ -z "${KUBEAPI_DIR:-}" ]; then
			command -v go >/dev/null || { echo "# $1: no go for the test API server, cluster pool not exercised"; return; }
			t_kubeapi_start "$T_TMP/kubeapi" || { t_fail "cannot start the test API server"; return; }
		fi
		conf=$(cluster_pools "$conf")
	fi
	t_exec pool-ipam ADD "$conf" CNI_CONTAINERID="conf$N" CNI_NETNS="$NS" CNI_IFNAME=net1 "$node"
	t_eq "$T_RC" 0 "ADD exit code ($T_OUT $T_ERR)" || return
	result=$T_OUT
	addrs=$(t_jq '.ips | length')
	t_eq "$addrs" "$sets" "addresses in the result (one per range set)"
	if [ "$(printf '%s\n' "$version" 0.4.0 | sort -V | head -n 1)" = 0.4.0 ]; then
		t_exec pool-ipam CHECK "$(printf '%s' "$conf" | jq -c --argjson r "$result" '.prevResult = $r')" \
			CNI_CONTAINERID="conf$N" CNI_NETNS="$NS" CNI_IFNAME=net1 "$node"
		t_eq "$T_RC" 0 "CHECK exit code ($T_OUT $T_ERR)"
	fi
	t_exec pool-ipam DEL "$(printf '%s' "$conf" | jq -c --argjson r "$result" '.prevResult = $r')" \
		CNI_CONTAINERID="conf$N" CNI_NETNS="$NS" CNI_IFNAME=net1 "$node"
	t_eq "$T_RC" 0 "DEL exit code ($T_OUT $T_ERR)"
	dir=$T_TMP/state-$N/pool-ipam/$(printf '%s' "$conf" | jq -r .name)
	t_eq "$(find "$dir" -maxdepth 1 -name 'a-*' 2>/dev/null | wc -l)" 0 \
		"address records left after DEL in $dir"
}

# A network config: a single plugin config or a conflist.
check_config() { # label json
	local label=$1 json=$2 version v p type
	t_begin "$label: cniVersion is supported"
	version=$(printf '%s' "$json" | jq -r '.cniVersion // ""')
	version_ok "$version" || t_fail "cniVersion \"$version\" not in: $SUPPORTED"
	# containerd and podman carry libcni 1.1, which reads results up to
	# 1.0.0: a 1.1.0 config's ADD succeeds and its answer is lost. CRI-O's
	# newer libcni takes the highest of "cniVersions" it knows, for GC and STATUS.
	t_begin "$label: every client the README names reads its cniVersion"
	[ "$version" != 1.1.0 ] ||
		t_fail "cniVersion 1.1.0: containerd and podman cannot read the result; say \"1.0.0\" and list 1.1.0 in \"cniVersions\""
	for v in $(printf '%s' "$json" | jq -r '.cniVersions // [] | .[]'); do
		version_ok "$v" || t_fail "cniVersions: \"$v\" not in: $SUPPORTED"
	done
	if printf '%s' "$json" | jq -e 'has("cniVersions")' >/dev/null; then
		printf '%s' "$json" | jq -e --arg v "$version" '.cniVersions | index($v) != null' >/dev/null ||
			t_fail "cniVersions does not list the cniVersion \"$version\""
	fi
	t_begin "$label: has a network name"
	[ -n "$(printf '%s' "$json" | jq -r '.name // ""')" ] || t_fail "no \"name\""
	while IFS= read -r p; do
		N=$((N + 1))
		type=$(printf '%s' "$p" | jq -r '.type // ""')
		case $type in
		sriov-rdma) check_sriov "$label" "$p" ;;
		pool-ipam) ;;
		*)
			t_begin "$label: plugin \"$type\" is one containernetworking-plugins installs"
			[ -x "$PEER_CNI_DIR/$type" ] || t_fail "no $PEER_CNI_DIR/$type"
			;;
		esac
		if [ "$(printf '%s' "$p" | jq -r '.ipam.type // ""')" = pool-ipam ]; then
			check_pool "$label" "$p"
		fi
	done < <(printf '%s' "$json" | jq -c 'if .plugins then .cniVersion as $v | .name as $n
		| .plugins[] | . + {cniVersion: $v, name: $n} else . end')
}

# The file under conf/ holding the network config called $1.
config_named() {
	local f
	while IFS= read -r f; do
		[ "$(jq -r '.name // ""' "$f" 2>/dev/null)" = "$1" ] && { echo "$f"; return 0; }
	done < <(find "$CONF_DIR" -type f \( -name '*.conf' -o -name '*.conflist' \))
	return 1
}

check_nad_file() { # file
	local f=$1 rel=${1#"$SOURCE_DIR"/} out i kind name res style json label
	out=$T_TMP/nad/$(basename "$f")
	mkdir -p "$out"
	while IFS=$'\t' read -r i kind name res style; do
		[ "$kind" = NetworkAttachmentDefinition ] || continue
		label="$rel: $name"
		if [ "$style" = none ]; then
			# Multus then reads <confDir>/<name>.conf or .conflist on each node.
			t_begin "$label: spec-less NAD has its node-local config in conf/"
			config_named "$name" >/dev/null || t_fail "no .conf/.conflist under conf/ with \"name\": \"$name\""
			continue
		fi
		t_begin "$label: spec.config is a JSON literal block"
		t_eq "$style" block "spec.config style (write it as \"config: |\")" || continue
		json=$(jq -c . "$out/$i.json" 2>&1) || { t_fail "not JSON: $json"; continue; }
		t_begin "$label: the config's name is the NAD's name"
		t_eq "$(printf '%s' "$json" | jq -r .name)" "$name" "config name"
		if printf '%s' "$json" | jq -e '[.type, .plugins[]?.type] | index("sriov-rdma")' >/dev/null; then
			t_begin "$label: names the device-plugin resource of its VFs"
			[ "$res" != - ] || t_fail "no k8s.v1.cni.cncf.io/resourceName annotation: Multus will not pass a deviceID"
		fi
		IN_NAD=1
		check_config "$label" "$json"
		IN_NAD=0
	done < <(nad_split "$f" "$out")
}

t_begin "conf/ holds examples"
[ -n "$(find "$CONF_DIR" -type f \( -name '*.yaml' -o -name '*.conflist' \) -print -quit)" ] ||
	t_fail "no .yaml or .conflist under $CONF_DIR"

while IFS= read -r f; do
	case $f in
	*.yaml | *.yml)
		check_nad_file "$f"
		;;
	*.conflist | *.conf | *.json)
		json=$(jq -c . "$f" 2>&1) || { t_begin "${f#"$SOURCE_DIR"/}: is JSON"; t_fail "$json"; continue; }
		check_config "${f#"$SOURCE_DIR"/}" "$json"
		;;
	esac
done < <(find "$CONF_DIR" -type f | sort)

t_done
