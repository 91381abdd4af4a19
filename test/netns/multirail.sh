#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Multi-rail pods: sysctls in the pod, multiRail's ARP and source routing,
# against a fabric that drops what leaves by the wrong rail. Each rail's VF
# is a veth end whose peer is that rail's gateway port in a "fabric"
# namespace; behind each gateway sits a remote peer in its own namespace.
. "$(dirname "$0")/sriov_lib.sh"

FAB=mr$$fab
command ip netns add "$FAB" || exit 1
t_defer "command ip netns del $FAB"

# Addresses: rail i is 10.70.i.0/24 with gateway 10.70.i.1; remote peer i is
# 10.80.i.2 behind it. Each rail's IPAM routes all remotes via its gateway,
# so without source routing the pod's main table sends every reply by the
# first rail. The fabric checks sources strictly (rp_filter=1), as a rail
# switch that knows its subnet does: a reply by the wrong rail is dropped.
fabric() { # NRAILS
	local i rem
	nsenter --net="/run/netns/$FAB" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=1
	for ((i = 0; i < $1; i++)); do
		ip -n "$FAB" link show "sr$$p$i" >/dev/null 2>&1 && continue
		ip link set "sr$$p$i" netns "$FAB" || return 1
		ip -n "$FAB" addr add "10.70.$i.1/24" dev "sr$$p$i"
		ip -n "$FAB" link set "sr$$p$i" up
		nsenter --net="/run/netns/$FAB" sysctl -qw "net.ipv4.conf.sr$$p$i.rp_filter=1"
		rem=mr$$r$i
		command ip netns add "$rem" || return 1
		t_defer "command ip netns del $rem"
		ip -n "$FAB" link add "mr$$g$i" type veth peer name eth0 netns "$rem"
		ip -n "$FAB" addr add "10.80.$i.1/24" dev "mr$$g$i"
		ip -n "$FAB" link set "mr$$g$i" up
		ip -n "$rem" addr add "10.80.$i.2/24" dev eth0
		ip -n "$rem" link set eth0 up
		ip -n "$rem" route add default via "10.80.$i.1"
	done
}

rail_conf() { # FILE RAIL VERSION 'extra keys' ['more plugins']
	local ipam="{\"type\": \"host-local\", \"dataDir\": \"$T_TMP/hl$2\",
	  \"ranges\": [[{\"subnet\": \"10.70.$2.0/24\", \"gateway\": \"10.70.$2.1\"}]],
	  \"routes\": [{\"dst\": \"10.80.0.0/16\", \"gw\": \"10.70.$2.1\"}]}"
	sr_conflist "$1" "$3" "\"deviceID\": \"$(sr_vf "$2")\"${4:+, $4}" "$ipam" "${5:-}"
}

# pod_up NRAILS NETNS 'extra keys' ['more plugins']: ADD every rail through libcni; ADDR[i] gets rail i's address.
pod_up() {
	local n=$1 pod=$2 i
	ADDR=()
	for ((i = 0; i < n; i++)); do
		rail_conf "$T_TMP/rail$i.conflist" "$i" 1.0.0 "$3" "${4:-}"
		t_cnitool add "$T_TMP/rail$i.conflist" "$pod" CNI_IFNAME="net$((i + 1))" CNI_CONTAINERID=mr
		t_eq "$T_RC" 0 "ADD of rail $i ($T_ERR)" || return 1
		ADDR[i]=$(t_jq '.ips[0].address' | cut -d/ -f1)
	done
	ip -n "$FAB" neigh flush all
}

pod_down() { # NRAILS NETNS
	local i
	for ((i = $1 - 1; i >= 0; i--)); do
		t_cnitool del "$T_TMP/rail$i.conflist" "$2" CNI_IFNAME="net$((i + 1))" CNI_CONTAINERID=mr
		t_eq "$T_RC" 0 "DEL of rail $i ($T_ERR)"
	done
	for ((i = 0; i < $1; i++)); do rm -rf "$T_TMP/hl$i"; done
}

# reply_ok RAIL: the remote peer behind RAIL's gateway pings the pod's address on RAIL.
reply_ok() {
	nsenter --net="/run/netns/mr$$r$1" ping -c 2 -i 0.2 -W 1 "${ADDR[$1]}" >/dev/null 2>&1
}
# route_dev NETNS RAIL: the pod's interface for a reply from RAIL's address to RAIL's remote.
route_dev() {
	ip -n "$(basename "$1")" -j route get "10.80.$2.2" from "${ADDR[$2]}" 2>/dev/null | jq -r '.[0].dev'
}
# arp_answered_on PORT_RAIL ADDR_RAIL: does the pod answer ARP for ADDR_RAIL's address asked on PORT_RAIL's port?
arp_answered_on() {
	local port=sr$$p$1 addr=${ADDR[$2]}
	ip -n "$FAB" neigh flush dev "$port"
	# Bound to the port, the fabric finds no route through it and asks on-link, there.
	nsenter --net="/run/netns/$FAB" ping -c 1 -W 1 -I "$port" "$addr" >/dev/null 2>&1
	ip -n "$FAB" neigh show to "$addr" dev "$port" | grep -q lladdr
}
pod_sysctl() { nsenter --net="$1" sysctl -n "$2"; }

# multi_rail_checks NRAILS NETNS: each rail reached by its own remote, replies by the same rail, ARP per rail.
multi_rail_checks() {
	local n=$1 pod=$2 i next
	for ((i = 0; i < n; i++)); do
		next=$(((i + 1) % n))
		t_eq "$(route_dev "$pod" "$i")" "net$((i + 1))" "reply from rail $i's address leaves by rail $i"
		reply_ok "$i" || t_fail "remote $i gets no reply from ${ADDR[i]} (rail $i)"
		! arp_answered_on "$next" "$i" ||
			t_fail "ARP for rail $i's ${ADDR[i]} answered on rail $next"
		arp_answered_on "$i" "$i" || t_fail "ARP for ${ADDR[i]} not answered on its own rail $i"
	done
}

t_begin "sysctl: set in the pod on CNI_IFNAME after the move; the host's value stays"
sr_setup 1
pod=$(t_netns)
host_before=$(sysctl -n net.ipv4.conf.all.arp_announce)
sr_conflist "$T_TMP/s.conflist" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"sysctl\": {
  \"net.ipv4.conf.net1.arp_ignore\": \"2\", \"net.ipv4.conf.all.arp_announce\": \"1\",
  \"net.ipv4.neigh.net1.gc_stale_time\": \"77\", \"net.core.somaxconn\": \"1234\"}"
t_cnitool add "$T_TMP/s.conflist" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=s1
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(pod_sysctl "$pod" net.ipv4.conf.net1.arp_ignore)" 2 "arp_ignore on net1"
t_eq "$(pod_sysctl "$pod" net.ipv4.conf.all.arp_announce)" 1 "all.arp_announce in the pod"
t_eq "$(pod_sysctl "$pod" net.ipv4.neigh.net1.gc_stale_time)" 77 "neigh gc_stale_time on net1"
t_eq "$(pod_sysctl "$pod" net.core.somaxconn)" 1234 "net.core.somaxconn in the pod"
t_eq "$(sysctl -n net.ipv4.conf.all.arp_announce)" "$host_before" "host's all.arp_announce unchanged"
t_contains "$(ip -n "$(basename "$pod")" -br link show net1)" "UP" "link up after the sysctls"
t_cnitool del "$T_TMP/s.conflist" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=s1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(sr_state_files)" "" "no record left"

t_begin "sysctl: bad names and values are code 7 naming the key, and change nothing"
sr_setup 1
pod=$(t_netns)
orig=$(sr_host_link "$(sr_net 0)")
for bad in '"kernel.panic": "1"' '"net.ipv4.conf.eth0.arp_ignore": "1"' \
	   '"net.ipv4..conf": "1"' '"net.ipv4.conf.net1.a/b": "1"' \
	   '"net.ipv4.conf.net1.arp_ignore": "1\n2"' '"net.ipv4.conf.net1.arp_ignore": 1' \
	   '"net.ipv4.conf.net1.no_such_key": "1"'; do
	sr_conflist "$T_TMP/b.conflist" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"sysctl\": {$bad}"
	t_exec sriov-rdma ADD "$(sr_plugin_conf "$T_TMP/b.conflist")" CNI_CONTAINERID=b1 \
		CNI_NETNS="$pod" CNI_IFNAME=net1
	key=$(printf '{%s}' "$bad" | jq -r 'keys[0]' 2>/dev/null)
	t_eq "$T_RC" 1 "ADD with $bad fails"
	t_eq "$(t_jq .code)" 7 "code 7 for $bad"
	t_contains "$(t_jq .msg)" "$key" "message names $key"
	t_eq "$(sr_host_link "$(sr_net 0)")" "$orig" "VF on the host as it was after $bad"
	t_eq "$(sr_state_files)" "" "no record after $bad"
done
for bad in '"routeTable": 254' '"routeTable": 0' '"multiRail": "yes"'; do
	sr_conflist "$T_TMP/b.conflist" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"multiRail\": true, $bad"
	t_exec sriov-rdma ADD "$(sr_plugin_conf "$T_TMP/b.conflist")" CNI_CONTAINERID=b1 \
		CNI_NETNS="$pod" CNI_IFNAME=net1
	t_eq "$(t_jq .code)" 7 "code 7 for $bad ($T_OUT)"
	t_contains "$(t_jq .msg)" "$(echo "$bad" | cut -d'"' -f2)" "message names the field of $bad"
done

t_begin "multiRail: ARP and reverse-path settings on the pod's interface, all.rp_filter lowered"
sr_setup 1
pod=$(t_netns)
nsenter --net="$pod" sysctl -qw net.ipv4.conf.all.rp_filter=1
rail_conf "$T_TMP/m.conflist" 0 1.0.0 '"multiRail": true'
t_cnitool add "$T_TMP/m.conflist" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m1
t_eq "$T_RC" 0 "ADD ($T_ERR)"
for kv in arp_ignore=1 arp_announce=2 arp_filter=1 rp_filter=0 accept_local=1; do
	t_eq "$(pod_sysctl "$pod" "net.ipv4.conf.net1.${kv%=*}")" "${kv#*=}" "net1 ${kv%=*}"
done
t_eq "$(pod_sysctl "$pod" net.ipv4.conf.all.rp_filter)" 0 "all.rp_filter in the pod"
addr=$(t_jq '.ips[0].address' | cut -d/ -f1)
t_contains "$(ip -n "$(basename "$pod")" rule show)" "from $addr lookup 100" "rule in table 100"
rt=$(ip -n "$(basename "$pod")" route show table 100)
t_contains "$rt" "default via 10.70.0.1 dev net1" "default via the rail's gateway in table 100"
t_contains "$(echo "$rt" | grep '^10.70.0.0/24 dev net1 ')" "scope link" "subnet route in table 100"
t_contains "$rt" "10.80.0.0/16 via 10.70.0.1 dev net1" "the result's route in table 100"
t_eq "$(t_jq '.interfaces[0].sandbox')" "$pod" "result sandbox"
t_eq "$(t_jq '.interfaces[0].mac')" "$(sr_pod_link "$pod" net1 | cut -d' ' -f2)" "result mac"
t_cnitool del "$T_TMP/m.conflist" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(sr_state_files)" "" "no record left"
t_not_contains "$(ip -n "$(basename "$pod")" rule show)" "from $addr" "DEL removes the rule of the pod that stays"
rm -rf "$T_TMP/hl0"

t_begin "multiRail: routeTable picks the table; a failed later step removes the rule again"
sr_setup 1
pod=$(t_netns)
rail_conf "$T_TMP/m.conflist" 0 1.0.0 '"multiRail": true, "routeTable": 1234'
t_cnitool add "$T_TMP/m.conflist" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m2
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_contains "$(ip -n "$(basename "$pod")" rule show)" "lookup 1234" "rule to table 1234"
t_cnitool del "$T_TMP/m.conflist" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=m2
rm -rf "$T_TMP/hl0"
# The device-info file cannot be written: ADD fails after the routing step and undoes it.
# (a directory that is a file: not even root can write below it).
: > "$T_TMP/notadir"
rail_conf "$T_TMP/m.conflist" 0 1.0.0 '"multiRail": true'
t_exec sriov-rdma ADD "$(sr_plugin_conf "$T_TMP/m.conflist" |
	jq -c --arg f "$T_TMP/notadir/x.json" '. + {runtimeConfig: {CNIDeviceInfoFile: $f}}')" \
	CNI_CONTAINERID=m3 CNI_NETNS="$pod" CNI_IFNAME=net1
t_eq "$T_RC" 1 "ADD fails at the device-info file ($T_OUT)"
t_contains "$(t_jq .msg)" "CNIDeviceInfoFile" "the failure is the device-info file"
t_eq "$(ip -n "$(basename "$pod")" rule show | grep -c 'lookup 100')" 0 "no rule left after the failed ADD"
t_eq "$(sr_pod_link "$pod" net1)" "" "no netdev left in the pod"
t_eq "$(sr_state_files)" "" "no record after the failed ADD"
rm -rf "$T_TMP/hl0"

t_begin "multiRail, dual stack: an IPv6 address gets its rule and table too"
sr_setup 1
pod=$(t_netns)
POOL6="{\"type\": \"pool-ipam\", \"dataDir\": \"$T_TMP/pool6\",
  \"ranges\": [[{\"subnet\": \"10.72.0.0/24\", \"gateway\": \"10.72.0.1\"}],
               [{\"subnet\": \"fd72::/64\", \"gateway\": \"fd72::1\"}]],
  \"routes\": [{\"dst\": \"fd80::/16\"}]}"
sr_conflist "$T_TMP/d.conflist" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"multiRail\": true" "$POOL6"
t_cnitool add "$T_TMP/d.conflist" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=d1
t_eq "$T_RC" 0 "ADD ($T_ERR)"
a6=$(t_jq '.ips[] | select(.address | contains(":")) | .address' | cut -d/ -f1)
t_contains "$(ip -n "$(basename "$pod")" -6 rule show)" "from $a6 lookup 100" "IPv6 rule in table 100"
rt6=$(ip -n "$(basename "$pod")" -6 route show table 100)
t_contains "$rt6" "default via fd72::1 dev net1" "IPv6 default via the rail's gateway"
t_contains "$rt6" "fd72::/64 dev net1" "IPv6 subnet route"
t_contains "$rt6" "fd80::/16 via fd72::1 dev net1" "IPv6 result route via the range's gateway"
t_contains "$(ip -n "$(basename "$pod")" -4 rule show)" "lookup 100" "IPv4 rule in the same table"
t_cnitool del "$T_TMP/d.conflist" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=d1
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_not_contains "$(ip -n "$(basename "$pod")" -6 rule show)" "$a6" "IPv6 rule removed"

for n in 2 4; do
	t_begin "$n-rail pod with multiRail: each remote reaches its rail and gets replies by it; ARP per rail"
	sr_setup "$n" && fabric "$n" || t_fail "fabric setup"
	pod=$(t_netns)
	if pod_up "$n" "$pod" '"multiRail": true'; then
		for ((i = 0; i < n; i++)); do
			t_contains "$(ip -n "$(basename "$pod")" rule show)" "from ${ADDR[i]} lookup $((100 + i))" \
				"rail $i's rule in its own table"
		done
		multi_rail_checks "$n" "$pod"
		for ((i = 0; i < n; i++)); do
			t_cnitool check "$T_TMP/rail$i.conflist" "$pod" CNI_IFNAME="net$((i + 1))" CNI_CONTAINERID=mr
			t_eq "$T_RC" 0 "CHECK of rail $i ($T_OUT $T_ERR)"
		done
	fi
	pod_down "$n" "$pod"
	t_eq "$(sr_state_files)" "" "no record left"
done

# check_rail RAIL: CHECK of RAIL's attachment through libcni.
check_rail() {
	t_cnitool check "$T_TMP/rail$1.conflist" "$pod" CNI_IFNAME="net$(($1 + 1))" CNI_CONTAINERID=mr
}
# check_drift RAIL WHAT: CHECK of RAIL fails with code 107, its message naming WHAT.
check_drift() {
	check_rail "$1"
	t_eq "$T_RC" 1 "CHECK of rail $1 fails after: $2"
	t_eq "$(t_jq .code)" 107 "code 107 ($T_OUT)"
	t_contains "$(t_jq .msg)" "$2" "the message names it"
}

t_begin "multiRail CHECK: a removed rule, a removed table route, a changed sysctl are code 107 naming them"
sr_setup 2
pod=$(t_netns)
pns=$(basename "$pod")
if pod_up 2 "$pod" '"multiRail": true'; then
	check_rail 1
	t_eq "$T_RC" 0 "CHECK on the fresh attachment ($T_OUT $T_ERR)"
	ip -n "$pns" rule del from "${ADDR[1]}" table 101
	check_drift 1 "no rule 'from ${ADDR[1]} lookup 101' in the pod"
	t_contains "$(t_jq .msg)" "delete and re-create the pod" "the message says the fix"
	check_rail 0
	t_eq "$T_RC" 0 "the other rail still passes ($T_OUT)"
	ip -n "$pns" rule add from "${ADDR[1]}" table 101
	check_rail 1
	t_eq "$T_RC" 0 "CHECK passes with the rule back ($T_OUT)"
	ip -n "$pns" route del default table 101
	check_drift 1 "no route 'default via 10.70.1.1 dev net2' in table 101"
	ip -n "$pns" route add default via 10.70.1.1 dev net2 table 101
	ip -n "$pns" route del 10.80.0.0/16 table 100
	check_drift 0 "no route '10.80.0.0/16 via 10.70.0.1 dev net1' in table 100"
	ip -n "$pns" route add 10.80.0.0/16 via 10.70.0.1 dev net1 table 100
	for i in 0 1; do
		check_rail "$i"
		t_eq "$T_RC" 0 "CHECK of rail $i passes with the routes back ($T_OUT)"
	done
	nsenter --net="$pod" sysctl -qw net.ipv4.conf.net2.rp_filter=1
	check_drift 1 "net.ipv4.conf.net2.rp_filter is 1 in the pod, ADD set 0"
	nsenter --net="$pod" sysctl -qw net.ipv4.conf.net2.rp_filter=0
	nsenter --net="$pod" sysctl -qw net.ipv4.conf.all.rp_filter=2
	check_drift 0 "net.ipv4.conf.all.rp_filter is 2 in the pod, ADD set 0"
	nsenter --net="$pod" sysctl -qw net.ipv4.conf.all.rp_filter=0
	check_rail 1
	t_eq "$T_RC" 0 "CHECK passes with the sysctls back ($T_OUT)"
fi
pod_down 2 "$pod"
t_eq "$(sr_state_files)" "" "no record left"

t_begin "multiRail CHECK: the config's sysctl overrides multiRail's value, and CHECK expects it"
sr_setup 1
pod=$(t_netns)
if pod_up 1 "$pod" '"multiRail": true, "sysctl": {"net.ipv4.conf.net1.arp_ignore": "2"}'; then
	t_eq "$(pod_sysctl "$pod" net.ipv4.conf.net1.arp_ignore)" 2 "arp_ignore as the config says"
	check_rail 0
	t_eq "$T_RC" 0 "CHECK ($T_OUT $T_ERR)"
	nsenter --net="$pod" sysctl -qw net.ipv4.conf.net1.arp_ignore=1
	check_drift 0 "net.ipv4.conf.net1.arp_ignore is 1 in the pod, ADD set 2"
fi
pod_down 1 "$pod"

t_begin "multiRail CHECK and DEL of a record written before it held the rail fields"
sr_setup 1
pod=$(t_netns)
if pod_up 1 "$pod" "\"multiRail\": true, \"logLevel\": \"debug\", \"logFile\": \"$T_TMP/old.log\""; then
	rec="$SR_STATE/mr:net1.json"
	t_eq "$(head -n -1 "$rec" | jq -r '.multiRail.table')" 100 "the record holds the table"
	# The previous format: the same record without "multiRail", sealed again.
	head -n -1 "$rec" | jq 'del(.multiRail)' > "$rec.new"
	python3 -c 'import sys, zlib; d = open(sys.argv[1], "rb").read(); sys.stdout.buffer.write(d + b"#crc32=%08x\n" % zlib.crc32(d))' "$rec.new" > "$rec"
	rm -f "$rec.new"
	ip -n "$(basename "$pod")" rule del from "${ADDR[0]}" table 100
	check_rail 0
	t_eq "$T_RC" 0 "CHECK passes: nothing to verify the rail against ($T_OUT $T_ERR)"
	t_contains "$(cat "$T_TMP/old.log")" "predates the rail fields" "the debug log says the rail checks were skipped"
	ip -n "$(basename "$pod")" rule add from "${ADDR[0]}" table 100
fi
pod_down 1 "$pod"
t_eq "$(sr_state_files)" "" "DEL removes the older record"
t_not_contains "$(ip -n "$(basename "$pod")" rule show)" "from ${ADDR[0]}" "DEL removes the rule of the older record"

t_begin "2-rail pod without multiRail: the same checks fail (one rail answers by the other; ARP flux)"
sr_setup 2 && fabric 2 || t_fail "fabric setup"
pod=$(t_netns)
if pod_up 2 "$pod" ""; then
	# Both rails route the remotes through main; one of them wins for both.
	wrong=0
	for i in 0 1; do
		[ "$(route_dev "$pod" "$i")" = "net$((i + 1))" ] && continue
		wrong=$((wrong + 1))
		reply_ok "$i" && t_fail "remote $i got a reply from ${ADDR[i]} though it leaves by the wrong rail"
	done
	t_eq "$wrong" 1 "rails whose replies leave by the other rail"
	arp_answered_on 0 1 || t_fail "ARP for rail 1's address not answered on rail 0 (ARP flux expected)"
	arp_answered_on 1 0 || t_fail "ARP for rail 0's address not answered on rail 1 (ARP flux expected)"
fi
pod_down 2 "$pod"

if [ -x "$PEER_CNI_DIR/tuning" ] && [ -x "$PEER_CNI_DIR/sbr" ]; then
	t_begin "2-rail pod with the tuning + sbr chain passes the same checks"
	sr_setup 2 && fabric 2 || t_fail "fabric setup"
	pod=$(t_netns)
	chain='{"type": "tuning", "sysctl": {"net.ipv4.conf.IFNAME.arp_ignore": "1",
	  "net.ipv4.conf.IFNAME.arp_announce": "2", "net.ipv4.conf.IFNAME.arp_filter": "1",
	  "net.ipv4.conf.IFNAME.rp_filter": "0", "net.ipv4.conf.IFNAME.accept_local": "1"}},
	  {"type": "sbr"}'
	ADDR=()
	for ((i = 0; i < 2; i++)); do
		rail_conf "$T_TMP/rail$i.conflist" "$i" 1.0.0 "" "${chain//IFNAME/net$((i + 1))}"
		t_cnitool add "$T_TMP/rail$i.conflist" "$pod" CNI_IFNAME="net$((i + 1))" CNI_CONTAINERID=mr
		t_eq "$T_RC" 0 "ADD of rail $i with tuning + sbr ($T_ERR)"
		ADDR[i]=$(t_jq '.ips[0].address' | cut -d/ -f1)
	done
	ip -n "$FAB" neigh flush all
	multi_rail_checks 2 "$pod"
	pod_down 2 "$pod"
fi

t_done
