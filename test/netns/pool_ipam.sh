#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pool-ipam run as a runtime runs it: every verb, old and new cniVersions,
# Multus-style CNI_ARGS, static requests, dual stack, exclusions, GC, STATUS,
# and the errors a user meets (typo, corrupt record, symlinked dataDir).
. "$(dirname "$0")/lib.sh"

DATA=$T_TMP/data
NS=$(t_netns) || { echo "cannot create a netns"; exit 1; }
MULTUS_ARGS="IgnoreUnknown=true;K8S_POD_NAMESPACE=default;K8S_POD_NAME=pod-a;K8S_POD_INFRA_CONTAINER_ID=c-multus;K8S_POD_UID=0b5c6e1a-7f7e-4d0e-9a51-3a8f4c1a2b3c"

# conf NAME VERSION IPAM_FIELDS [TOP_LEVEL_FIELDS]
conf() {
	printf '{"cniVersion":"%s","name":"%s","type":"pool-ipam"%s,"ipam":{"type":"pool-ipam","dataDir":"%s",%s}}' \
		"$2" "$1" "${4:+,$4}" "$DATA" "$3"
}

# run VERB CONFIG CONTAINER_ID [VAR=VALUE...]
run() {
	local verb=$1 c=$2 id=$3
	shift 3
	t_exec pool-ipam "$verb" "$c" CNI_CONTAINERID="$id" CNI_IFNAME=net1 CNI_NETNS="$NS" "$@"
}

V4='"subnet":"10.10.0.0/24","gateway":"10.10.0.1","routes":[{"dst":"0.0.0.0/0"}],"dns":{"nameservers":["10.10.0.53"],"search":["svc.local"]}'
C11=$(conf n11 1.1.0 "$V4")

t_begin "VERSION lists 0.3.1 through 1.1.0"
t_exec pool-ipam VERSION '{"cniVersion":"1.1.0"}'
t_eq "$T_RC" 0 "exit code"
t_contains "$(t_jq '.supportedVersions | join(",")')" "0.3.1" "supportedVersions"
t_contains "$(t_jq '.supportedVersions | join(",")')" "1.1.0" "supportedVersions"

t_begin "ADD (1.1.0) returns the first free address, gateway, routes, dns"
run ADD "$C11" c1
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address')" "10.10.0.2/24" "address"
t_eq "$(t_jq '.ips[0].gateway')" "10.10.0.1" "gateway"
t_eq "$(t_jq '.ips[0] | has("interface")')" "false" "no interface index in an IPAM result"
t_eq "$(t_jq '.ips[0] | has("version")')" "false" "no ips[].version in 1.1.0"
t_eq "$(t_jq '.routes[0].dst')" "0.0.0.0/0" "route"
t_eq "$(t_jq '.dns.nameservers[0]')" "10.10.0.53" "dns"
ADD1_OUT=$T_OUT

t_begin "ADD of the same container and ifname gets the same address back"
run ADD "$C11" c1
t_eq "$(t_jq '.ips[0].address')" "10.10.0.2/24" "address"
t_eq "$(find "$DATA/n11" -name 'a-*' | wc -l)" 1 "reservations in the store"

t_begin "CHECK passes with the reservation and its prevResult"
run CHECK "$(conf n11 1.1.0 "$V4" "\"prevResult\":$ADD1_OUT")" c1
t_eq "$T_RC" 0 "exit code ($T_OUT)"

t_begin "CHECK fails when prevResult lacks the reserved address"
run CHECK "$(conf n11 1.1.0 "$V4" '"prevResult":{"cniVersion":"1.1.0","ips":[{"address":"10.10.0.99/24"}]}')" c1
t_eq "$T_RC" 1 "exit code"
t_contains "$(t_jq .msg)" "10.10.0.2" "message names the address"

t_begin "DEL releases; CHECK then fails; a second DEL succeeds"
run DEL "$C11" c1
t_eq "$T_RC" 0 "DEL exit code ($T_OUT)"
t_eq "$(find "$DATA/n11" -name 'a-*' | wc -l)" 0 "reservations left"
run CHECK "$C11" c1
t_eq "$T_RC" 1 "CHECK exit code"
t_eq "$(t_jq .code)" 107 "CHECK error code"
t_contains "$(t_jq .msg)" "no reservation" "CHECK message"
run DEL "$C11" c1
t_eq "$T_RC" 0 "second DEL exit code"

t_begin "DEL without CNI_NETNS succeeds (the netns may be gone)"
run ADD "$C11" c2
t_exec pool-ipam DEL "$C11" CNI_CONTAINERID=c2 CNI_IFNAME=net1
t_eq "$T_RC" 0 "exit code ($T_OUT)"

t_begin "round-robin: a released address is not handed out at once"
run ADD "$C11" c3
t_eq "$(t_jq '.ips[0].address')" "10.10.0.4/24" "address after .2 and .3 were used and released"

t_begin "cniVersion 0.3.1 (Multus NADs): ips[].version present"
run ADD "$(conf n031 0.3.1 "$V4")" c-old CNI_ARGS="$MULTUS_ARGS"
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '.cniVersion')" "0.3.1" "cniVersion"
t_eq "$(t_jq '.ips[0].version')" "4" "ips[0].version"
t_eq "$(t_jq '.ips[0].address')" "10.10.0.2/24" "address"
run DEL "$(conf n031 0.3.1 "$V4")" c-old CNI_ARGS="$MULTUS_ARGS"
t_eq "$T_RC" 0 "DEL exit code"

t_begin "static request through Multus-style CNI_ARGS IP="
run ADD "$(conf nip 1.0.0 "$V4")" c-ip CNI_ARGS="$MULTUS_ARGS;IP=10.10.0.50"
t_eq "$T_RC" 0 "exit code ($T_OUT $T_ERR)"
t_eq "$(t_jq '.ips[0].address')" "10.10.0.50/24" "address"

t_begin "a requested address held by another container is refused, naming the holder"
run ADD "$(conf nip 1.0.0 "$V4")" c-ip2 CNI_ARGS="IP=10.10.0.50"
t_eq "$T_RC" 1 "exit code"
t_contains "$(t_jq .msg)" "10.10.0.50 is held by c-ip:net1" "message"

t_begin "a repeated ADD asking another static address is refused (code 100), the same one is idempotent"
run ADD "$(conf nip 1.0.0 "$V4")" c-ip CNI_ARGS="$MULTUS_ARGS;IP=10.10.0.51"
t_eq "$(t_jq .code)" 100 "code ($T_OUT)"
t_contains "$(t_jq .msg)" "already holds 10.10.0.50" "names the held address"
t_contains "$(t_jq .msg)" "10.10.0.51" "names the requested one"
t_eq "$(t_count "$DATA/nip" 'a-10.10.0.51')" 0 "nothing reserved"
run ADD "$(conf nip 1.0.0 "$V4")" c-ip CNI_ARGS="$MULTUS_ARGS;IP=10.10.0.50"
t_eq "$(t_jq '.ips[0].address')" "10.10.0.50/24" "the same request again gets it"

t_begin "runtimeConfig.ips wins over args.cni.ips and CNI_ARGS IP="
run ADD "$(conf nip 1.1.0 "$V4" '"runtimeConfig":{"ips":["10.10.0.60/24"]},"args":{"cni":{"ips":["10.10.0.61"]}}')" c-rc CNI_ARGS="IP=10.10.0.62"
t_eq "$(t_jq '.ips[0].address')" "10.10.0.60/24" "address"
run ADD "$(conf nip 1.1.0 "$V4" '"args":{"cni":{"ips":["10.10.0.61"]}}')" c-args CNI_ARGS="IP=10.10.0.62"
t_eq "$(t_jq '.ips[0].address')" "10.10.0.61/24" "address"

t_begin "a requested address outside every range is code 7"
run ADD "$(conf nip 1.1.0 "$V4")" c-bad CNI_ARGS="IP=192.168.9.9"
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" "192.168.9.9" "message"

t_begin "dual stack: one IPv4 and one IPv6 address"
DUAL='"ranges":[[{"subnet":"10.20.0.0/24"}],[{"subnet":"fd00:20::/64","gateway":"fd00:20::1"}]]'
run ADD "$(conf ndual 1.1.0 "$DUAL")" c-dual
t_eq "$T_RC" 0 "exit code ($T_OUT)"
t_eq "$(t_jq '.ips | length')" 2 "ips"
t_eq "$(t_jq '.ips[0].address')" "10.20.0.1/24" "IPv4"
t_eq "$(t_jq '.ips[1].address')" "fd00:20::2/64" "IPv6"
t_eq "$(t_jq '.ips[1].gateway')" "fd00:20::1" "IPv6 gateway"
run DEL "$(conf ndual 1.1.0 "$DUAL")" c-dual
t_eq "$(find "$DATA/ndual" -name 'a-*' -o -name 'c-*' | wc -l)" 0 "store empty after DEL"

t_begin "exclusions are never handed out"
EXC='"subnet":"10.30.0.0/28","exclude":["10.30.0.1","10.30.0.2/31","10.30.0.4/30"]'
run ADD "$(conf nexc 1.1.0 "$EXC")" e1
t_eq "$(t_jq '.ips[0].address')" "10.30.0.8/28" "first address"
for i in 2 3 4 5 6 7; do run ADD "$(conf nexc 1.1.0 "$EXC")" "e$i"; done
t_eq "$(t_jq '.ips[0].address')" "10.30.0.14/28" "last address"
run ADD "$(conf nexc 1.1.0 "$EXC")" e8
t_eq "$(t_jq .code)" 103 "exhausted code"
t_contains "$(t_jq .msg)" "range set 0 (10.30.0.0/28)" "message names the set"

t_begin "STATUS: 0 while addresses remain, 50 when a range set is exhausted"
SMALL='"subnet":"10.40.0.0/30"'
run STATUS "$(conf nst 1.1.0 "$SMALL")" x
t_eq "$T_RC" 0 "STATUS on an empty pool ($T_OUT)"
run ADD "$(conf nst 1.1.0 "$SMALL")" s1
run ADD "$(conf nst 1.1.0 "$SMALL")" s2
run STATUS "$(conf nst 1.1.0 "$SMALL")" x
t_eq "$T_RC" 1 "STATUS exit code"
t_eq "$(t_jq .code)" 50 "STATUS code"
t_contains "$(t_jq .msg)" "exhausted" "STATUS message"

t_begin "GC without cni.dev/valid-attachments releases nothing"
run GC "$(conf nst 1.1.0 "$SMALL")" x
t_eq "$T_RC" 0 "exit code ($T_OUT)"
t_eq "$(find "$DATA/nst" -name 'c-*' | wc -l)" 2 "reservations kept"

t_begin "GC releases what is not in cni.dev/valid-attachments"
run GC "$(conf nst 1.1.0 "$SMALL" '"cni.dev/valid-attachments":[{"containerID":"s1","ifname":"net1"}]')" x
t_eq "$T_RC" 0 "exit code ($T_OUT)"
t_eq "$(find "$DATA/nst" -name 'c-*' -printf '%f\n')" "c-s1:net1.0" "reservations left"
run STATUS "$(conf nst 1.1.0 "$SMALL")" x
t_eq "$T_RC" 0 "STATUS after GC"

t_begin "after a reboot with missed DELs, a full pool reclaims the earlier boot's reservations"
mkdir -p "$T_TMP/proc/sys/kernel/random"
echo 0c2a1e4e-0000-4000-8000-000000000001 > "$T_TMP/proc/sys/kernel/random/boot_id"
run ADD "$(conf nboot 1.1.0 "$SMALL")" b1 POOL_IPAM_PROC_ROOT="$T_TMP/proc"
run ADD "$(conf nboot 1.1.0 "$SMALL")" b2 POOL_IPAM_PROC_ROOT="$T_TMP/proc"
run ADD "$(conf nboot 1.1.0 "$SMALL")" b3 POOL_IPAM_PROC_ROOT="$T_TMP/proc"
t_eq "$(t_jq .code)" 103 "full before the reboot"
echo 0c2a1e4e-0000-4000-8000-000000000002 > "$T_TMP/proc/sys/kernel/random/boot_id"
run STATUS "$(conf nboot 1.1.0 "$SMALL")" x POOL_IPAM_PROC_ROOT="$T_TMP/proc"
t_eq "$T_RC" 0 "STATUS counts earlier-boot reservations as free ($T_OUT)"
run ADD "$(conf nboot 1.1.0 "$SMALL")" b3 POOL_IPAM_PROC_ROOT="$T_TMP/proc"
t_eq "$T_RC" 0 "ADD after the reboot ($T_OUT)"
t_eq "$(find "$DATA/nboot" -name 'c-*' -printf '%f\n')" "c-b3:net1.0" "only the new reservation is left"

t_begin "a typo in the config is code 7 naming the field"
run ADD "$(conf ntypo 1.1.0 '"subnet":"10.50.0.0/24","rangeStrat":"10.50.0.10"')" t1
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" "ipam.rangeStrat" "message names the field"
t_contains "$(t_jq .msg)" "rangeStart" "message suggests the fix"
t_eq "$(t_count "$DATA" '*ntypo*')" 0 "nothing created"

t_begin "a gateway outside its subnet is code 7"
run ADD "$(conf ngw 1.1.0 '"ranges":[[{"subnet":"10.51.0.0/24","gateway":"10.52.0.1"}]]')" t1
t_eq "$(t_jq .code)" 7 "code"
t_contains "$(t_jq .msg)" "ipam.ranges[0][0].gateway" "message"

t_begin "a corrupt record is code 104 naming the file and the fix"
run ADD "$(conf ncor 1.1.0 "$V4")" k1
printf 'garbage' >> "$DATA/ncor/a-10.10.0.2"
run ADD "$(conf ncor 1.1.0 "$V4")" k1
t_eq "$(t_jq .code)" 104 "code"
t_contains "$(t_jq .msg)" "$DATA/ncor/c-k1:net1.0" "message names the file"
t_contains "$(t_jq .details)" "DEL the attachment" "details give the fix"
run DEL "$(conf ncor 1.1.0 "$V4")" k1
t_eq "$T_RC" 0 "DEL finishes ($T_OUT)"
t_contains "$T_ERR" "remove $DATA/ncor/a-10.10.0.2 by hand" "DEL says how to free it by hand"
t_eq "$(t_count "$DATA/ncor" 'a-10.10.0.2')" 1 "the address stays held"
run ADD "$(conf ncor 1.1.0 "$V4")" k2
t_eq "$(t_jq '.ips[0].address')" "10.10.0.3/24" "the next pod gets another address"

t_begin "a dataDir with a symlink component is refused"
mkdir -p "$T_TMP/real"
ln -s "$T_TMP/real" "$T_TMP/link"
run ADD "$(printf '{"cniVersion":"1.1.0","name":"nsym","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s/link/pool","subnet":"10.60.0.0/24"}}' "$T_TMP")" y1
t_eq "$T_RC" 1 "exit code"
t_contains "$(t_jq .msg)" "ipam.dataDir" "message names the field"
t_eq "$(ls "$T_TMP/real" | wc -l)" 0 "nothing written through the symlink"

t_begin "store files are 0600, directories 0700"
t_eq "$(stat -c %a "$DATA/n11")" 700 "network directory"
t_eq "$(stat -c %a "$DATA/n11/tmp")" 700 "tmp directory"
t_eq "$(stat -c %a "$DATA/n11/a-10.10.0.4")" 600 "record"

t_begin "round trip through libcni (the runtimes' client library)"
if [ ! -f "$SOURCE_DIR/test/client/cnitool.go" ]; then
	echo "# skipped: test/client/cnitool.go is not there"
else
	printf '{"cniVersion":"1.0.0","name":"ncni","plugins":[{"type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s","subnet":"10.70.0.0/24"}}]}' \
		"$DATA" > "$T_TMP/ncni.conflist"
	t_cnitool add "$T_TMP/ncni.conflist" "$NS" CNI_IFNAME=net1 CNI_CONTAINERID=lib1
	t_eq "$T_RC" 0 "add exit code ($T_ERR)"
	t_eq "$(t_jq '.ips[0].address')" "10.70.0.1/24" "address"
	t_cnitool check "$T_TMP/ncni.conflist" "$NS" CNI_IFNAME=net1 CNI_CONTAINERID=lib1
	t_eq "$T_RC" 0 "check exit code ($T_ERR)"
	t_cnitool del "$T_TMP/ncni.conflist" "$NS" CNI_IFNAME=net1 CNI_CONTAINERID=lib1
	t_eq "$T_RC" 0 "del exit code ($T_ERR)"
	t_eq "$(find "$DATA/ncni" -name 'a-*' | wc -l)" 0 "released"
fi

# docs/pool-ipam.md, "The pool-ipam store": what an fsync would add protects no live pod.
t_begin "ADD and DEL wait for the disk in no fsync"
if ! command -v strace >/dev/null; then
	echo "# skipped: strace is not installed (scripts/setup test)"
else
	CFS=$(conf nfs 1.1.0 '"subnet":"10.71.0.0/24"')
	for verb in ADD DEL; do
		# LeakSanitizer cannot run under ptrace: the ASan build's leak check is off here.
		printf '%s' "$CFS" | env CNI_COMMAND=$verb CNI_CONTAINERID=fs1 CNI_IFNAME=net1 \
			CNI_NETNS="$NS" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=fsync,fdatasync,syncfs,sync,sync_file_range \
			-o "$T_TMP/fsync.$verb" "$BUILD_DIR/plugins/pool-ipam/pool-ipam" >/dev/null 2>&1
		t_eq "$?" 0 "$verb exit code"
		t_eq "$(grep -c . "$T_TMP/fsync.$verb")" 0 "$verb's syncs: $(cat "$T_TMP/fsync.$verb")"
	done
	t_eq "$(find "$DATA/nfs" -name 'a-*' | wc -l)" 0 "released"
fi

t_begin "ADD and DEL log what they waited for the pool's lock"
CLW=$(conf nlw 1.1.0 "\"subnet\":\"10.72.0.0/24\",\"logFile\":\"$T_TMP/lw.log\"")
run ADD "$CLW" lw1
t_eq "$T_RC" 0 "ADD ($T_ERR)"
run DEL "$CLW" lw1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(grep -cE ' INFO ADD lw1:net1: reserved 10\.72\.0\.1 in range set 0; lock waits pool=[0-9]+\.[0-9]{2}ms$' "$T_TMP/lw.log")" 1 \
	"ADD's line ($(cat "$T_TMP/lw.log"))"
t_eq "$(grep -cE ' INFO DEL lw1:net1: released 1 reservation\(s\); lock waits pool=[0-9]+\.[0-9]{2}ms$' "$T_TMP/lw.log")" 1 \
	"DEL's line"

t_done
