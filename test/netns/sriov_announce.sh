#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What reaches the wire when ADD configures addresses: a gratuitous ARP for
# each IPv4 address and an unsolicited NA for each IPv6 address, sent by the
# kernel out of the pod's interface, also when carrier comes after ADD.
. "$(dirname "$0")/sriov_lib.sh"

command -v tcpdump >/dev/null || { echo "SKIP: tcpdump is not installed (scripts/setup test)"; exit 77; }

CONF=$T_TMP/net.conflist
POOL="{\"type\": \"pool-ipam\", \"dataDir\": \"$T_TMP/pool\",
  \"ranges\": [[{\"subnet\": \"10.66.0.0/24\"}], [{\"subnet\": \"fd66::/64\"}]]}"
# A hang guard only: DAD takes a second after carrier, the ARP repeats one.
WAIT=${WAIT:-30}

# cap_start IFACE FILE: tcpdump on IFACE (in the host namespace) into FILE, running when this returns.
cap_start() {
	tcpdump -l -n -e -i "$1" 'arp or icmp6' > "$2" 2>"$2.err" &
	CAP_PID=$!
	t_defer "kill $CAP_PID"
	for _ in $(seq 100); do
		grep -q 'listening on' "$2.err" 2>/dev/null && return 0
		sleep 0.1
	done
	t_fail "tcpdump on $1 did not start: $(cat "$2.err")"
	return 1
}

# The lines a peer must see for each address, from mac.
want_lines() { # MAC ADDR...
	local mac=$1 a
	shift
	for a in "$@"; do
		case "$a" in
		*:*) echo "$mac > 33:33:00:00:00:01.*neighbor advertisement, tgt is $a," ;;
		*) echo "$mac > ff:ff:ff:ff:ff:ff.*Request who-has $a tell $a," ;;
		esac
	done
}

# cap_wait FILE PATTERN...: until FILE holds a line for every pattern, or the guard expires.
cap_wait() {
	local file=$1 p missing
	shift
	for _ in $(seq $((WAIT * 10))); do
		missing=
		for p in "$@"; do
			grep -q -- "$p" "$file" || missing=$p
		done
		[ -z "$missing" ] && return 0
		sleep 0.1
	done
	t_fail "not on the wire: $missing; captured: $(cat "$file")"
	return 1
}

addrs() { t_jq '.ips[].address' | cut -d/ -f1; }

# The VF's peer in a bridge: tcpdump cannot listen on a link that is down,
# and the late-carrier case keeps the peer down during ADD.
br="sr$$b0"
ip link add "$br" type bridge || exit 1
t_defer "ip link del $br"
ip link set "$br" up

for when in prompt late; do
	t_begin "dual-stack ADD, carrier $when: a GARP per IPv4 address and an NA per IPv6 address on the wire"
	sr_setup 1
	pod=$(t_netns)
	ip link set "sr$$p0" master "$br"
	[ "$when" = late ] && ip link set "sr$$p0" down
	cap_start "$br" "$T_TMP/cap-$when" || continue
	# No sysctl of the config's: a VF that arrives without carrier gets a
	# 15 s window of gratuitous ARPs from the plugin itself.
	sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\"" "$POOL"
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID="c-$when"
	t_eq "$T_RC" 0 "ADD ($T_ERR)"
	mac=$(t_jq '.interfaces[0].mac')
	mapfile -t ips <<<"$(addrs)"
	t_eq "${#ips[@]}" 2 "two addresses"
	probes=$(ip netns exec "$pod" cat /proc/sys/net/ipv4/neigh/net1/mcast_solicit)
	if [ "$when" = prompt ]; then
		t_eq "$probes" 3 "with carrier, the kernel's default probes"
	else
		t_eq "$probes" 15 "without carrier, 15 probes: a 15 s window for it"
	fi
	if [ "$when" = late ]; then
		t_eq "$(grep -c "$mac" "$T_TMP/cap-$when")" 0 "nothing crosses a link without carrier"
		ip link set "sr$$p0" up
	fi
	mapfile -t want <<<"$(want_lines "$mac" "${ips[@]}")"
	cap_wait "$T_TMP/cap-$when" "${want[@]}"
	t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID="c-$when"
	t_eq "$T_RC" 0 "DEL ($T_ERR)"
	ip link set "sr$$p0" nomaster
	ip link set "sr$$p0" up
done

t_begin "multiRail: each rail announces its own addresses out of its own interface only"
sr_setup 2
pod=$(t_netns)
macs=()
for n in 0 1; do
	cap_start "sr$$p$n" "$T_TMP/rail$n" || break
done
for n in 0 1; do
	RPOOL="{\"type\": \"pool-ipam\", \"dataDir\": \"$T_TMP/pool\",
	  \"ranges\": [[{\"subnet\": \"10.7$n.0.0/24\"}], [{\"subnet\": \"fd7$n::/64\"}]]}"
	sr_conflist "$T_TMP/r$n.conflist" 1.0.0 "\"deviceID\": \"$(sr_vf $n)\", \"multiRail\": true" "$RPOOL"
	t_cnitool add "$T_TMP/r$n.conflist" "$pod" CNI_IFNAME="net$((n + 1))" CNI_CONTAINERID=c-rail
	t_eq "$T_RC" 0 "ADD rail $n ($T_ERR)"
	macs[n]=$(t_jq '.interfaces[0].mac')
	mapfile -t rips <<<"$(addrs)"
	if [ "$n" = 0 ]; then ips0=("${rips[@]}"); else ips1=("${rips[@]}"); fi
done
mapfile -t want0 <<<"$(want_lines "${macs[0]}" "${ips0[@]}")"
mapfile -t want1 <<<"$(want_lines "${macs[1]}" "${ips1[@]}")"
cap_wait "$T_TMP/rail0" "${want0[@]}"
cap_wait "$T_TMP/rail1" "${want1[@]}"
for a in "${ips1[@]}"; do
	t_not_contains "$(cat "$T_TMP/rail0")" "tell $a," "rail 1's address announced on rail 0"
	t_not_contains "$(cat "$T_TMP/rail0")" "tgt is $a," "rail 1's address announced on rail 0"
done
for a in "${ips0[@]}"; do
	t_not_contains "$(cat "$T_TMP/rail1")" "tell $a," "rail 0's address announced on rail 1"
	t_not_contains "$(cat "$T_TMP/rail1")" "tgt is $a," "rail 0's address announced on rail 1"
done
for n in 1 0; do
	t_cnitool del "$T_TMP/r$n.conflist" "$pod" CNI_IFNAME="net$((n + 1))" CNI_CONTAINERID=c-rail
	t_eq "$T_RC" 0 "DEL rail $n ($T_ERR)"
done

t_done
