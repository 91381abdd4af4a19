#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The CNI skeleton end to end, run as a container runtime runs a plugin:
# environment, stdin, exit status, stdout. Needs jq.
#
#   SKEL_PLUGIN   the skel_plugin fixture (required)
#   PROJECT_VERSION  meson's project version, which --version must print (required)
#   SKEL_WRAPPER  command prefixed to each run, e.g. "valgrind -q --error-exitcode=99"

set -u
: "${SKEL_PLUGIN:?set SKEL_PLUGIN to the skel_plugin executable}"
: "${PROJECT_VERSION:?set PROJECT_VERSION to the meson project version}"
WRAP=${SKEL_WRAPPER:-}

# shellcheck source=SCRIPTDIR/harness.sh
. "$(dirname "$0")/harness.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

conf() { # conf VERSION [NAME]
	printf '{"cniVersion":"%s","name":"%s","type":"skel-plugin"}' "$1" "${2:-skelnet}"
}

# run CMD STDIN_FILE [VAR=VALUE...]: runs the plugin with a runtime's
# environment (the VARs override it; VAR= unsets), leaving $OUT, $ERR, $RC.
run() {
	local cmd=$1 in=$2
	shift 2
	local -a env=(-u CNI_ARGS CNI_COMMAND="$cmd" CNI_PATH=/nonexistent)
	local kv var
	for var in CNI_CONTAINERID=3f2a1b0c9d8e7f60 CNI_NETNS=/var/run/netns/skel CNI_IFNAME=net1; do
		case " $* " in *" ${var%%=*}="*) ;; *) env+=("$var") ;; esac
	done
	for kv in "$@"; do
		if [ "${kv#*=}" = "" ]; then
			env=(-u "${kv%%=*}" "${env[@]}")
		else
			env+=("$kv")
		fi
	done
	env "${env[@]}" $WRAP "$SKEL_PLUGIN" <"$in" >"$TMP/out" 2>"$TMP/err"
	RC=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}

# run_conf CMD CONF_JSON [VAR=VALUE...]
run_conf() {
	local cmd=$1
	printf '%s' "$2" >"$TMP/in"
	shift 2
	run "$cmd" "$TMP/in" "$@"
}

expect_error() { # expect_error CODE MSG_PART
	local code msg
	eq "$RC" 1 "exit status"
	{ read -r code; read -r msg; } < <(jq -r '.code, .msg' <<<"$OUT" 2>/dev/null)
	eq "$code" "$1" "error code"
	has "$msg" "$2" "error msg"
}

begin "no CNI_COMMAND prints the about text and versions to stderr"
env -u CNI_COMMAND $WRAP "$SKEL_PLUGIN" </dev/null >"$TMP/out" 2>"$TMP/err"
eq "$?" 0 "exit status"
eq "$(cat "$TMP/out")" "" "stdout"
has "$(cat "$TMP/err")" "CNI protocol versions supported: 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0" "stderr"

begin "--version prints the name, version, supported versions and the state versions it reads"
OUT=$($WRAP "$SKEL_PLUGIN" --version)
eq "$?" 0 "exit status"
eq "$(head -n1 <<<"$OUT" | cut -d' ' -f1)" "skel-plugin" "first word"
eq "$(head -n1 <<<"$OUT" | cut -d' ' -f2)" "$PROJECT_VERSION" "the meson project version"
eq "$(sed -n 2p <<<"$OUT")" "CNI protocol versions supported: 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0" "second line"
eq "$(sed -n 3p <<<"$OUT")" "state versions read: fixture record 3" "third line"

begin "--help names the CNI variables"
OUT=$($WRAP "$SKEL_PLUGIN" --help)
eq "$?" 0 "exit status"
for v in CNI_COMMAND CNI_CONTAINERID CNI_NETNS CNI_IFNAME CNI_ARGS CNI_PATH; do
	has "$OUT" "$v" "help"
done

begin "VERSION lists the supported versions, with and without stdin"
run VERSION /dev/null
eq "$RC" 0 "exit status"
eq "$(jq -r .cniVersion <<<"$OUT")" "1.1.0" "cniVersion"
eq "$(jq -c .supportedVersions <<<"$OUT")" '["0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]' "supportedVersions"
run_conf VERSION "$(conf 0.3.1)"
eq "$RC" 0 "exit status with a config"
eq "$(jq -r '.supportedVersions | length' <<<"$OUT")" 5 "supportedVersions with a config"

# One line per result: what a runtime reads, with "-" for an absent member.
RESULT_FIELDS='[.cniVersion, .interfaces[0].name, .interfaces[0].sandbox, .ips[0].address,
	.ips[0].gateway, .ips[0].interface, .routes[0].dst, .routes[0].gw,
	([.ips[] | .version // "-"] | join(",")), .interfaces[0].mtu // "-",
	.interfaces[0].pciID // "-", .routes[0].mtu // "-", has("dns")] | map(tostring) | join(" ")'

for v in 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0; do
	begin "ADD with cniVersion $v answers a $v result"
	run_conf ADD "$(conf "$v")"
	eq "$RC" 0 "exit status ($ERR)"
	case $v in
	0.*) extra="4,6 - - -" ;;	# ips[].version, no mtu or pciID
	1.0.0) extra="-,- 9000 0000:3b:02.1 -" ;;	# no ips[].version; interface mtu and pciID as Go's types100 keeps them
	*) extra="-,- 9000 0000:3b:02.1 8000" ;;
	esac
	eq "$(jq -r "$RESULT_FIELDS" <<<"$OUT")" \
		"$v net1 /var/run/netns/skel 10.1.0.5/24 10.1.0.1 0 10.2.0.0/16 10.1.0.1 $extra false" \
		"result"
done

begin "DEL without CNI_NETNS succeeds and prints nothing"
run_conf DEL "$(conf 0.3.1)" CNI_NETNS=
eq "$RC" 0 "exit status ($OUT)"
eq "$OUT" "" "stdout"

begin "DEL with a prevResult that is not an object succeeds (nothing to undo needs it)"
run_conf DEL '{"cniVersion":"1.0.0","name":"skelnet","type":"skel-plugin","prevResult":"junk"}'
eq "$RC" 0 "exit status ($OUT)"
eq "$OUT" "" "stdout"

begin "ADD with a prevResult that is not an object is code 6"
run_conf ADD '{"cniVersion":"1.0.0","name":"skelnet","type":"skel-plugin","prevResult":"junk"}'
expect_error 6 "prevResult: must be an object"

begin "duplicate keys are code 7 naming both as written (Go keeps the last, cJSON the first)"
run_conf ADD '{"cniVersion":"1.0.0","name":"skelnet","type":"skel-plugin","name":"other"}'
expect_error 7 'duplicate keys "name" and "name" in the top level'
run_conf ADD '{"cniVersion":"1.0.0","name":"skelnet","type":"skel-plugin","ipam":{"type":"x","Type":"y"}}'
expect_error 7 'in ipam'
has "$(jq -r .msg <<<"$OUT")" '"Type"' "the key as written"
run_conf ADD '{"cniVersion":"1.0.0","name":"skelnet","type":"skel-plugin","ipam":{"ranges":[[{"subnet":"a","SUBNET":"b"}]]}}'
expect_error 7 'in ipam.ranges[0][0]'
run_conf DEL '{"cniVersion":"1.0.0","name":"skelnet","type":"skel-plugin","name":"other"}'
eq "$RC" 0 "DEL warns only ($OUT)"

begin "a \\u0000 escape is code 7 (it would cut a name short); DEL warns only"
run_conf ADD '{"cniVersion":"1.0.0","name":"netA\u0000evil","type":"skel-plugin"}'
expect_error 7 'u0000 at byte'
run_conf ADD '{"cniVersion":"1.0.0","name":"skelnet","type":"skel-plugin","x":"a\\u0000"}'
eq "$RC" 0 "an escaped backslash before u0000 is not a NUL ($OUT)"
run_conf DEL '{"cniVersion":"1.0.0","name":"netA\u0000evil","type":"skel-plugin"}'
eq "$RC" 0 "DEL ($OUT)"

begin "CHECK with cniVersion 0.4.0 succeeds"
run_conf CHECK "$(conf 0.4.0)"
eq "$RC" 0 "exit status ($OUT)"

begin "CHECK with cniVersion 0.3.1 is code 1"
run_conf CHECK "$(conf 0.3.1)"
expect_error 1 "CHECK needs cniVersion 0.4.0"
eq "$(jq -r .cniVersion <<<"$OUT")" 0.3.1 "error answered in the config's version"

begin "STATUS with cniVersion 1.0.0 is code 1; with 1.1.0 it succeeds"
run_conf STATUS "$(conf 1.0.0)" CNI_CONTAINERID= CNI_IFNAME= CNI_NETNS=
expect_error 1 "STATUS needs cniVersion 1.1.0"
run_conf STATUS "$(conf 1.1.0)" CNI_CONTAINERID= CNI_IFNAME= CNI_NETNS=
eq "$RC" 0 "exit status with 1.1.0 ($OUT)"

begin "GC reads the valid attachments; a malformed list is code 6"
run_conf GC '{"cniVersion":"1.1.0","name":"skelnet","cni.dev/valid-attachments":[{"containerID":"a","ifname":"net1"}]}' \
	CNI_CONTAINERID= CNI_IFNAME= CNI_NETNS=
eq "$RC" 0 "exit status ($OUT)"
has "$ERR" "1 valid attachments" "log"
run_conf GC '{"cniVersion":"1.1.0","name":"skelnet","cni.dev/valid-attachments":[{"containerID":1}]}' \
	CNI_CONTAINERID= CNI_IFNAME= CNI_NETNS=
expect_error 6 "cni.dev/valid-attachments[0]"

begin "cniVersion 0.2.0 is code 1 and lists the supported versions"
run_conf ADD "$(conf 0.2.0)"
expect_error 1 "0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0"
has "$(jq -r .msg <<<"$OUT")" 'set "cniVersion"' "msg says the fix"

begin "a config without cniVersion is 0.1.0: code 1"
run_conf ADD '{"name":"skelnet","type":"skel-plugin"}'
expect_error 1 '"0.1.0" is not supported'

begin "invalid JSON is code 6 with the position"
run_conf ADD '{"cniVersion":"1.1.0", "name": }'
expect_error 6 "invalid JSON at byte"

begin "stdin larger than 1 MiB is code 6"
{ printf '{"cniVersion":"1.1.0","name":"skelnet","pad":"'; head -c 1100000 /dev/zero | tr '\0' a; printf '"}'; } >"$TMP/big"
run ADD "$TMP/big"
expect_error 6 "network config larger than 1 MiB"

begin "missing CNI_CONTAINERID is code 4"
run_conf ADD "$(conf 1.1.0)" CNI_CONTAINERID=
expect_error 4 "CNI_CONTAINERID"

begin "container ID ../x is code 4"
run_conf ADD "$(conf 1.1.0)" CNI_CONTAINERID=../x
expect_error 4 "CNI_CONTAINERID \"../x\" is invalid"

begin "ifname a/b is code 4"
run_conf ADD "$(conf 1.1.0)" CNI_IFNAME=a/b
expect_error 4 "CNI_IFNAME \"a/b\" is invalid"

begin "missing CNI_NETNS on ADD is code 4"
run_conf ADD "$(conf 1.1.0)" CNI_NETNS=
expect_error 4 "CNI_NETNS"

begin "network name ../n is code 7"
run_conf ADD "$(conf 1.1.0 ../n)"
expect_error 7 "name: \"../n\" is invalid"

begin "an unknown CNI_COMMAND is code 4 naming it"
run_conf FROB "$(conf 1.1.0)"
expect_error 4 "FROB"

begin "a malformed CNI_ARGS is code 4"
run_conf ADD "$(conf 1.1.0)" "CNI_ARGS=IgnoreUnknown=true;novalue"
expect_error 4 "CNI_ARGS"

harness_done
