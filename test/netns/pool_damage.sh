#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pool-ipam's DEL and GC against a damaged world, as libcni (the runtimes'
# client) drives them: a NAD edited after ADD into one that no longer
# validates, a prevResult that is junk, records that cannot be read, a
# store copied without its hard links, stray entries in tmp/. DEL exits 0
# and releases what the attachment holds; what cannot be read stays held,
# is logged with how to free it by hand, and is never handed out again.
. "$(dirname "$0")/lib.sh"

DATA=$T_TMP/data
NS=$(t_netns) || { echo "cannot create a netns"; exit 1; }

# conflist NAME IPAM_FIELDS: a conflist file as the runtime reads it, path on stdout.
conflist() {
	local f=$T_TMP/$1.conflist
	printf '{"cniVersion":"1.0.0","name":"%s","plugins":[{"type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s",%s}}]}' \
		"$1" "$DATA" "$2" > "$f"
	echo "$f"
}
lib() { # add|check|del FILE CID
	t_cnitool "$1" "$2" "$NS" CNI_IFNAME=net1 CNI_CONTAINERID="$3"
}
held() { t_count "$DATA/$1" 'a-*'; }

GOOD='"subnet":"10.80.0.0/29"'
for broken in \
	'"subnet":"10.80.0.0/29","rangeStrat":"10.80.0.3"' \
	'"subnet":"10.80.0.0/33"' \
	'"subnet":"10.80.0.0/29","rangeStart":"10.99.0.1"' \
	'"ranges":"not a list"' \
	'"subnet":"10.80.0.0/29","logLevel":"loud","logFile":"relative/path"'; do
	t_begin "DEL after the NAD was edited into one that fails validation: $broken"
	f=$(conflist nedit "$GOOD")
	lib add "$f" e1
	t_eq "$T_RC" 0 "ADD ($T_ERR)"
	conflist nedit "$broken" >/dev/null
	lib del "$f" e1
	t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT $T_ERR)"
	t_eq "$(held nedit)" 0 "the address is released"
	t_contains "$T_ERR" "releasing by attachment anyway" "the config error is logged"
done

t_begin "DEL with a dataDir that is not a path: code 7 saying how to clean up by hand"
f=$(conflist nbad "$GOOD")
lib add "$f" b1
conflist nbad '"subnet":"10.80.0.0/29","dataDir":"../x"' >/dev/null
sed -i "s|\"dataDir\":\"$DATA\",||" "$f"
lib del "$f" b1
t_eq "$(t_jq .code)" 7 "code ($T_OUT)"
t_contains "$(t_jq .msg)" "ipam.dataDir" "names the field"
t_contains "$(t_jq .msg)" "by hand" "says how to clean up by hand"
conflist nbad "$GOOD" >/dev/null
lib del "$f" b1
t_eq "$T_RC" 0 "with the NAD restored, DEL finishes ($T_ERR)"

t_begin "DEL with a prevResult that is junk (a string, a list, wrong types)"
for prev in '"junk"' '[1,2]' '{"ips":"no","interfaces":7}' 'null'; do
	printf '{"cniVersion":"1.0.0","name":"nprev","type":"pool-ipam","ipam":{"type":"pool-ipam","dataDir":"%s",%s}}' \
		"$DATA" "$GOOD" > "$T_TMP/nprev.conf"
	t_exec pool-ipam ADD "$(cat "$T_TMP/nprev.conf")" CNI_CONTAINERID=p1 CNI_IFNAME=net1 CNI_NETNS="$NS"
	t_exec pool-ipam DEL "$(jq -c --argjson p "$prev" '. + {prevResult: $p}' "$T_TMP/nprev.conf")" \
		CNI_CONTAINERID=p1 CNI_IFNAME=net1 CNI_NETNS="$NS"
	t_eq "$T_RC" 0 "DEL exits 0 with prevResult $prev ($T_OUT)"
	t_eq "$(held nprev)" 0 "released with prevResult $prev"
done

t_begin "an unreadable record: DEL finishes, says how to free it, the address stays held"
f=$(conflist nunr "$GOOD")
lib add "$f" u1
A=$(t_jq '.ips[0].address' | cut -d/ -f1)
printf 'garbage' >> "$DATA/nunr/a-$A"
lib del "$f" u1
t_eq "$T_RC" 0 "DEL exits 0 ($T_OUT)"
t_contains "$T_ERR" "c-u1:net1.0 is unreadable" "the log names the record"
t_contains "$T_ERR" "$A stays held; if no pod uses it, remove $DATA/nunr/a-$A by hand" "and how to free it"
lib del "$f" u1
t_eq "$T_RC" 0 "DEL again: still 0"
for i in 2 3 4 5 6 7; do lib add "$f" "u$i"; done
t_eq "$(t_jq .code)" 103 "the pool fills up around it"
t_not_contains "$(cat "$DATA"/nunr/c-u[2-7]*)" "\"$A\"" "no other pod was given $A"

t_begin "GC goes past an unreadable record and releases the rest"
printf '{"cniVersion":"1.1.0","name":"nunr","type":"pool-ipam","cni.dev/valid-attachments":[{"containerID":"u2","ifname":"net1"}],"ipam":{"type":"pool-ipam","dataDir":"%s",%s}}' \
	"$DATA" "$GOOD" > "$T_TMP/gc.conf"
t_exec pool-ipam GC "$(cat "$T_TMP/gc.conf")"
t_eq "$T_RC" 0 "GC exits 0 ($T_OUT)"
t_eq "$(held nunr)" 2 "u2's address and the unreadable one are left"
t_contains "$T_ERR" "a-$A is unreadable" "the unreadable one is logged"

t_begin "after a reboot, a full set is reclaimed around an unreadable record"
mkdir -p "$T_TMP/proc/sys/kernel/random"
echo 0c2a1e4e-0000-4000-8000-00000000000a > "$T_TMP/proc/sys/kernel/random/boot_id"
f=$(conflist nboot '"subnet":"10.81.0.0/29"')
for i in 1 2 3 4 5 6; do t_exec pool-ipam ADD "$(jq -c '.plugins[0] + {cniVersion, name}' "$f")" \
	CNI_CONTAINERID="r$i" CNI_IFNAME=net1 CNI_NETNS="$NS" POOL_IPAM_PROC_ROOT="$T_TMP/proc"; done
first=$(ls "$DATA/nboot" | sed -n 's/^a-//p' | head -1)
printf 'garbage' >> "$DATA/nboot/a-$first"
echo 0c2a1e4e-0000-4000-8000-00000000000b > "$T_TMP/proc/sys/kernel/random/boot_id"
t_exec pool-ipam ADD "$(jq -c '.plugins[0] + {cniVersion, name}' "$f")" \
	CNI_CONTAINERID=after CNI_IFNAME=net1 CNI_NETNS="$NS" POOL_IPAM_PROC_ROOT="$T_TMP/proc"
t_eq "$T_RC" 0 "ADD after the reboot ($T_OUT)"
t_not_contains "$(t_jq '.ips[0].address')" "$first/" "not the unreadable one's address"
t_eq "$(held nboot)" 2 "the new reservation and the unreadable one are left"

t_begin "a store copied without hard links hands out no held address"
f=$(conflist ncopy "$GOOD")
for i in 1 2 3; do lib add "$f" "h$i"; done
HELD=$(ls "$DATA/ncopy" | sed -n 's/^a-//p' | sort)
cp -r "$DATA/ncopy" "$DATA/ncopy.bak" && rm -rf "$DATA/ncopy" && mv "$DATA/ncopy.bak" "$DATA/ncopy"
t_eq "$(stat -c %h "$DATA/ncopy/c-h1:net1.0")" 1 "the copy has no hard links"
for i in 4 5 6 7; do lib add "$f" "n$i"; done
t_eq "$(t_jq .code)" 103 "the new pods fill only what was free"
for a in $HELD; do
	t_eq "$(grep -l "\"$a\"" "$DATA"/ncopy/c-n* 2>/dev/null | wc -l)" 0 "$a went to no new pod"
done
lib check "$f" h1
t_eq "$T_RC" 0 "an old pod's CHECK still passes ($T_ERR)"
for i in 1 2 3; do lib del "$f" "h$i"; t_eq "$T_RC" 0 "old pod h$i DEL"; done
t_eq "$(held ncopy)" 3 "the old pods' addresses are released, the new ones' kept"

t_begin "stray entries in tmp/ stop nothing"
f=$(conflist ntmp "$GOOD")
lib add "$f" t1
mkdir -p "$DATA/ntmp/tmp/stray/deeper" "$DATA/ntmp/tmp/.tmp.1.0"
touch "$DATA/ntmp/tmp/stray/deeper/file"
lib add "$f" t2
t_eq "$T_RC" 0 "ADD ($T_OUT)"
lib del "$f" t1
t_eq "$T_RC" 0 "DEL ($T_OUT)"
t_eq "$(held ntmp)" 1 "t1 released, t2 held"

t_done
