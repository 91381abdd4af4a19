#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The NAD is tenant input: it tries to make the plugins (root on the node)
# create, write, append to or delete files outside the directories the
# node allows, through symlinks, FIFOs and the host's own namespace. Each
# attempt fails with a clear code 7 (or 8 for the namespace) and nothing
# outside the allowed trees changes. Driven through libcni with the
# NAD's own runtimeConfig, which libcni hands over when no capabilities
# are declared.
. "$(dirname "$0")/sriov_lib.sh"

OUTSIDE=$(mktemp -d /tmp/cni-outside.XXXXXX)
t_defer "rm -rf $OUTSIDE"
echo "root:x:0:0:root:/root:/bin/bash" > "$OUTSIDE/passwd"
SUM0=$(cd "$OUTSIDE" && find . -mindepth 1 -printf '%p %s %T@\n' | sort | md5sum)
outside_unchanged() { # what
	t_eq "$(cd "$OUTSIDE" && find . -mindepth 1 -printf '%p %s %T@\n' | sort | md5sum)" "$SUM0" "$1: nothing outside the allowed trees changed"
}
CONF=$T_TMP/net.conflist
POOL="{\"type\": \"pool-ipam\", \"ranges\": [[{\"subnet\": \"10.67.0.0/24\"}]], \"dataDir\": \"$T_TMP/pool\"}"
sr_setup 1
pod=$(t_netns)

attempt() { # what extra-sriov-fields [ipam]
	sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\"${2:+, $2}" "${3:-$POOL}"
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=evil
}

t_begin "runtimeConfig.CNIDeviceInfoFile naming a file outside the device-info tree"
attempt x "\"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$OUTSIDE/passwd\"}"
t_eq "$(t_jq .code)" 7 "code ($T_OUT)"
t_contains "$(t_jq .msg)" "CNIDeviceInfoFile" "names the field"
t_contains "$(t_jq .msg)" "allowedDeviceInfoDirs" "says how a node admin allows one"
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "the VF stays on the host"
outside_unchanged "device-info"

t_begin "a device-info path through a symlink inside the allowed tree"
mkdir -p "$T_TMP/devinfo"
ln -s "$OUTSIDE/passwd" "$T_TMP/devinfo/link.json"
ln -s "$OUTSIDE" "$T_TMP/devinfo/dir"
attempt x "\"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/link.json\"}"
t_eq "$T_RC" 1 "refused ($T_OUT)"
attempt x "\"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/dir/passwd\"}"
t_eq "$T_RC" 1 "a symlinked directory too ($T_OUT)"
outside_unchanged "symlinked device-info"
t_eq "$(sr_markers)" "" "no claim left"

t_begin "DEL deletes only the device-info file ADD wrote for this VF"
attempt x "\"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/pod.json\"}"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(jq -r '.pci["pci-address"]' "$T_TMP/devinfo/pod.json")" "$(sr_vf 0)" "ADD wrote it"
echo '{"type":"pci","pci":{"pci-address":"0000:99:00.1"}}' > "$T_TMP/devinfo/pod.json"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=evil
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(jq -r '.pci["pci-address"]' "$T_TMP/devinfo/pod.json")" "0000:99:00.1" "another VF's file is left alone"

t_begin "the device plugin's copy for this VF at the path, as Multus puts it there: ADD takes it over, DEL removes it"
dp='{"type":"pci","version":"1.1.0","pci":{"pci-address":"'"$(sr_vf 0)"'","rdma-device":"mlx5_2"},"extra":{"from":"the device plugin"}}'
printf '%s' "$dp" > "$T_TMP/devinfo/ml-rail0-c1_net1"
chmod 0444 "$T_TMP/devinfo/ml-rail0-c1_net1"
attempt x "\"vlan\": 100, \"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/ml-rail0-c1_net1\"}"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_eq "$(jq -c '[.type, .version, .pci["pci-address"], .pci["pf-pci-address"], .extra.from]' "$T_TMP/devinfo/ml-rail0-c1_net1")" \
	"[\"pci\",\"1.1.0\",\"$(sr_vf 0)\",\"$SR_PF\",\"the device plugin\"]" "the copy's members kept, the PF's address added"
t_eq "$(jq -r '.pci["rdma-device"]' "$T_TMP/devinfo/ml-rail0-c1_net1")" mlx5_2 "no RDMA device moved: the device plugin's name stands"
t_eq "$(stat -c %a "$T_TMP/devinfo/ml-rail0-c1_net1")" 444 "its mode kept"
t_eq "$(t_count "$T_TMP/devinfo" '.tmp*')" 0 "no temporary left"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=evil
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(ls "$T_TMP/devinfo/ml-rail0-c1_net1" 2>/dev/null)" "" "DEL removes what ADD wrote there"

t_begin "... a failed ADD leaves the device plugin's copy as it was"
printf '%s' "$dp" > "$T_TMP/devinfo/ml-rail0-c1_net1"
attempt x "\"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/ml-rail0-c1_net1\"}" \
	'{"type": "no-such-ipam"}'
t_eq "$T_RC" 1 "ADD fails ($T_OUT)"
t_eq "$(cat "$T_TMP/devinfo/ml-rail0-c1_net1")" "$dp" "the copy is unchanged"
t_eq "$(sr_state_files)" "" "no record left"
rm -f "$T_TMP/devinfo/ml-rail0-c1_net1"

# A writer at the path inside the plugin's window between looking at the
# file and moving it (a second attachment given the same path, Multus
# copying again): strace stops the plugin right after a system call of that
# window, the other writer's file goes in, and the plugin goes on.
# stopped_run LOG STRACE-ARGS... -- CONF VAR=VALUE...: the plugin started
# under strace in the background; returns once it has stopped ($RACE_PID).
stopped_run() {
	local log=$1 conf
	shift
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	conf=$1
	shift
	# LeakSanitizer cannot run under ptrace: off for this run (an ASan
	# build's other cases check the same paths for leaks).
	printf '%s' "$conf" | env CNI_PATH="$(t_cni_path)" "$@" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -qq -o "$log" "${args[@]}" "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" \
		> "$T_TMP/race.out" 2> "$T_TMP/race.err" &
	RACE_STRACE=$!
	# strace logs the group stop; a generous bound, never the assertion.
	for _ in $(seq 3000); do
		grep -q 'stopped by SIGSTOP' "$log" 2>/dev/null && break
		kill -0 "$RACE_STRACE" 2>/dev/null || break
		sleep 0.1
	done
	RACE_PID=$(pgrep -P "$RACE_STRACE")
}
race_finish() {
	[ -n "$RACE_PID" ] && kill -CONT "$RACE_PID"
	wait "$RACE_STRACE"
	T_RC=$?
	T_OUT=$(cat "$T_TMP/race.out")
	T_ERR=$(cat "$T_TMP/race.err")
}
other='{"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:3b:00.7"},"extra":{"from":"another writer"}}'
put_other() { # PATH: written as a writer does, by a rename into place
	printf '%s' "$other" > "$T_TMP/other.tmp" && mv -f "$T_TMP/other.tmp" "$1"
}

if command -v strace >/dev/null; then
	t_begin "a writer replaces the device plugin's copy after ADD checked it: its file stays, ADD fails and undoes"
	di=$T_TMP/devinfo/race-add
	printf '%s' "$dp" > "$di"
	sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\", \"vlan\": 100, \"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$di\"}" "$POOL"
	# fchmod is the temporary's last step before it goes into place.
	stopped_run "$T_TMP/race-add.log" -e trace=fchmod -e inject=fchmod:signal=STOP:when=1 -- \
		"$(sr_plugin_conf "$CONF")" CNI_COMMAND=ADD CNI_CONTAINERID=race1 CNI_NETNS="$pod" CNI_IFNAME=net1
	t_contains "$(cat "$T_TMP/race-add.log")" "stopped by SIGSTOP" "ADD stopped after its check, before the file went into place"
	put_other "$di"
	race_finish
	t_eq "$T_RC" 1 "ADD fails ($T_OUT)"
	t_contains "$(t_jq .msg)" "did not write took its place" "it says a file it did not write took the path"
	t_eq "$(cat "$di")" "$other" "the other writer's file is at the path, unchanged"
	t_eq "$(t_count "$T_TMP/devinfo" '.tmp*')" 0 "no temporary left"
	t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no claim"
	t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "the VF's netdev is back on the host"
	# A plugin that wrote over it succeeded: released, so the next case stands alone.
	[ "$T_RC" != 0 ] || t_exec sriov-rdma DEL "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=race1 \
		CNI_NETNS="$pod" CNI_IFNAME=net1
	rm -f "$di"

	t_begin "a writer puts its file at the path after DEL read the one ADD wrote: DEL leaves the writer's file"
	di=$T_TMP/devinfo/race-del
	attempt x "\"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$di\"}"
	t_eq "$T_RC" 0 "ADD ($T_ERR)"
	t_eq "$(jq -r '.pci["pci-address"]' "$di")" "$(sr_vf 0)" "ADD wrote the file"
	# DEL's read of the file is its look at it; what follows removes it.
	stopped_run "$T_TMP/race-del.log" -P "$di" -e trace=read -e inject=read:signal=STOP:when=1 -- \
		"$(sr_plugin_conf "$CONF")" CNI_COMMAND=DEL CNI_CONTAINERID=evil CNI_NETNS="$pod" CNI_IFNAME=net1
	t_contains "$(cat "$T_TMP/race-del.log")" "stopped by SIGSTOP" "DEL stopped after reading the file"
	put_other "$di"
	race_finish
	t_eq "$T_RC" 0 "DEL ($T_ERR)"
	t_eq "$(cat "$di" 2>/dev/null)" "$other" "the other writer's file is at the path, unchanged"
	t_eq "$(t_count "$T_TMP/devinfo" '.tmp*')" 0 "no temporary left"
	t_eq "$(sr_state_files)$(sr_markers)" "" "the attachment is released"
	rm -f "$di"
else
	echo "# strace not installed: the writer inside the device-info window is not tried (scripts/setup test)"
fi

t_begin "the device plugin's copy too large to take over (2,005 to 2,048 bytes): code 5, the copy as it was"
pad=$(head -c 1930 /dev/zero | tr '\0' x)
big='{"type":"pci","version":"1.1.0","pci":{"pci-address":"'"$(sr_vf 0)"'","rdma-device":"mlx5_2"},"pad":"'"$pad"'"}'
printf '%s' "$big" > "$T_TMP/devinfo/big"
t_eq "$(( $(stat -c %s "$T_TMP/devinfo/big") >= 2005 && $(stat -c %s "$T_TMP/devinfo/big") <= 2048 ))" 1 "a copy of $(stat -c %s "$T_TMP/devinfo/big") bytes"
calls0=$(sr_calls | grep -c setlink)
attempt x "\"vlan\": 100, \"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/big\"}"
t_eq "$(t_jq .code)" 5 "code ($T_OUT)"
t_contains "$(t_jq .msg)" "runtimeConfig.CNIDeviceInfoFile \"$T_TMP/devinfo/big\"" "names the field"
t_contains "$(t_jq .msg)" "2048 bytes" "says the limit"
t_eq "$(sr_calls | grep -c setlink)" "$calls0" "nothing was set on the PF"
t_eq "$(cat "$T_TMP/devinfo/big")" "$big" "the copy is unchanged"
t_eq "$(sr_state_files)$(sr_markers)" "" "no record, no claim"
rm -f "$T_TMP/devinfo/big"

# Anything else at the path: refused before the PF is asked anything.
refused_devinfo() { # what [text the message names]
	local calls0 before
	calls0=$(sr_calls | wc -l)
	before=$(cd "$T_TMP/devinfo" && find . -printf '%p %y %s\n' | sort | md5sum)
	attempt x "\"vlan\": 100, \"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/taken\"}"
	t_eq "$(t_jq .code)" 5 "$1: ADD fails ($T_OUT)"
	t_contains "$(t_jq .msg)" "runtimeConfig.CNIDeviceInfoFile" "$1: names the field"
	[ -z "${2:-}" ] || t_contains "$(t_jq .msg)" "$2" "$1: says what is there"
	t_contains "$(t_jq .details)" "give each attachment its own path" "$1: says the fix"
	t_eq "$(sr_calls | wc -l)" "$calls0" "$1: the PF was asked nothing"
	t_eq "$(sr_state_files)" "" "$1: no record written"
	t_eq "$(sr_markers)" "" "$1: no claim left"
	t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "$1: the VF stays on the host"
	t_eq "$(cd "$T_TMP/devinfo" && find . -printf '%p %y %s\n' | sort | md5sum)" "$before" "$1: the device-info tree is unchanged"
	t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=evil
	t_eq "$T_RC" 0 "$1: DEL ($T_ERR)"
	t_eq "$(cd "$T_TMP/devinfo" && find . -printf '%p %y %s\n' | sort | md5sum)" "$before" "$1: DEL leaves it too"
}

t_begin "another VF's device-info document at the path is refused before anything changes"
unrelated='{"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:3b:00.7","rdma-device":"mlx5_7"}}'
printf '%s\n' "$unrelated" > "$T_TMP/devinfo/taken"
refused_devinfo "another VF's" "holds the device-info of 0000:3b:00.7"
t_begin "a file that is not a device-info document"
printf 'root:x:0:0\n' > "$T_TMP/devinfo/taken"
refused_devinfo "not JSON" "not a device-info document"
printf '{"type":"pci"}\n' > "$T_TMP/devinfo/taken"
refused_devinfo "no pci-address"
t_begin "a symlink, a FIFO, a directory"
rm -f "$T_TMP/devinfo/taken"
printf '%s' "$dp" > "$T_TMP/devinfo/dp-copy"
ln -s dp-copy "$T_TMP/devinfo/taken"
refused_devinfo "a symlink to this VF's document" "is a symlink"
rm -f "$T_TMP/devinfo/taken" "$T_TMP/devinfo/dp-copy"
mkfifo "$T_TMP/devinfo/taken"
refused_devinfo "a FIFO" "not a regular file"
rm -f "$T_TMP/devinfo/taken"
mkdir "$T_TMP/devinfo/taken"
refused_devinfo "a directory"
rmdir "$T_TMP/devinfo/taken"

unrelated='{"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:3b:00.2","note":"not the plugin'"'"'s"}}'
t_begin "... and a file put in place of ADD's, naming the same VF: DEL keeps it"
attempt x "\"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/mine.json\"}"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
printf '%s\n' "$unrelated" > "$T_TMP/devinfo/mine.json.new"
mv "$T_TMP/devinfo/mine.json.new" "$T_TMP/devinfo/mine.json"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=evil
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(cat "$T_TMP/devinfo/mine.json" 2>/dev/null)" "$unrelated" "the replacement stays"
attempt x "\"runtimeConfig\": {\"CNIDeviceInfoFile\": \"$T_TMP/devinfo/own.json\"}"
t_eq "$T_RC" 0 "ADD ($T_ERR)"
t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=evil
t_eq "$T_RC" 0 "DEL ($T_ERR)"
t_eq "$(ls "$T_TMP/devinfo/own.json" 2>/dev/null)" "" "the file ADD wrote is removed by DEL"
rm -f "$T_TMP/devinfo/mine.json"

t_begin "logFile outside the log directories, and a FIFO inside them"
attempt x "\"logFile\": \"$OUTSIDE/passwd\""
t_eq "$(t_jq .code)" 7 "code ($T_OUT)"
t_contains "$(t_jq .msg)" "logFile" "names the field"
# Nobody writes to the FIFO: a plugin that opened it would never answer.
mkfifo "$T_TMP/fifo"
attempt x "\"logFile\": \"$T_TMP/fifo\""
t_eq "$(t_jq .code)" 7 "a FIFO is refused, without blocking ($T_OUT)"
attempt x "" "{\"type\": \"pool-ipam\", \"subnet\": \"10.67.0.0/24\", \"dataDir\": \"$T_TMP/pool\", \"logFile\": \"$OUTSIDE/passwd\"}"
t_eq "$T_RC" 1 "ipam.logFile outside too ($T_OUT)"
t_contains "$T_OUT" "ipam.logFile" "names the field"
outside_unchanged "logFile"

t_begin "logFile and ipam.logFile through a symlink below the log directory: code 7, nothing created where it leads"
mkdir -p "$T_TMP/logs/sub"
ln -s "$OUTSIDE" "$T_TMP/logs/out"
ln -s /dev "$T_TMP/logs/dev"
LOG_CNI_PATH=$(t_cni_path)
log_attempt() { # extra-sriov-fields [ipam]
	sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\"${1:+, $1}" "${2:-$POOL}"
	t_cnitool add "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=evil CNI_PATH="$LOG_CNI_PATH"
}
# What the two plugins do with such paths, and with real directories.
log_cases() { # what
	log_attempt "\"logFile\": \"$T_TMP/logs/out/x.log\""
	t_eq "$(t_jq .code)" 7 "$1: a link to a directory outside: code ($T_OUT)"
	t_contains "$(t_jq .msg)" "logFile: \"$T_TMP/logs/out/x.log\" leads through a symlink" "$1: says why"
	log_attempt "\"logFile\": \"$T_TMP/logs/dev/null\""
	t_eq "$(t_jq .code)" 7 "$1: a link to /dev: code ($T_OUT)"
	log_attempt "" "{\"type\": \"pool-ipam\", \"subnet\": \"10.67.0.0/24\", \"dataDir\": \"$T_TMP/pool\", \"logFile\": \"$T_TMP/logs/out/ipam.log\"}"
	t_eq "$T_RC" 1 "$1: ipam.logFile through it ($T_OUT)"
	t_contains "$T_OUT" "ipam.logFile: " "$1: names the field"
	t_contains "$T_OUT" "leads through a symlink" "$1: says why"
	outside_unchanged "$1"
	log_attempt "\"logFile\": \"$T_TMP/logs/sub/sriov.log\"" \
		"{\"type\": \"pool-ipam\", \"subnet\": \"10.67.0.0/24\", \"dataDir\": \"$T_TMP/pool\", \"logFile\": \"$T_TMP/logs/sub/ipam.log\"}"
	t_eq "$T_RC" 0 "$1: real directories: ADD ($T_ERR)"
	t_contains "$(cat "$T_TMP/logs/sub/sriov.log" 2>/dev/null)" "INFO ADD evil:net1: VF $(sr_vf 0)" "$1: sriov-rdma logs there"
	t_contains "$(cat "$T_TMP/logs/sub/ipam.log" 2>/dev/null)" "pool-ipam/" "$1: pool-ipam logs there"
	t_cnitool del "$CONF" "$pod" CNI_IFNAME=net1 CNI_CONTAINERID=evil CNI_PATH="$LOG_CNI_PATH"
	t_eq "$T_RC" 0 "$1: DEL ($T_ERR)"
	rm -f "$T_TMP/logs/sub/sriov.log" "$T_TMP/logs/sub/ipam.log"
}
log_cases "openat2"
if command -v strace >/dev/null; then
	t_begin "the same without openat2 (ENOSYS, as on Linux 4.18): the walk refuses the same links"
	# sriov-rdma under strace answering openat2 ENOSYS, and the pool-ipam
	# it runs with it (-f). LeakSanitizer cannot run under ptrace: the run
	# above checks leaks.
	LOG_CNI_PATH=$T_TMP/enosys-bin
	mkdir -p "$LOG_CNI_PATH"
	# shellcheck disable=SC2016  # the wrapper expands them when it runs
	printf '#!/bin/sh\nASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" exec strace -f -qq -A -o %q -e trace=openat2 -e inject=openat2:error=ENOSYS %q "$@"\n' \
		"$T_TMP/enosys.log" "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma" > "$LOG_CNI_PATH/sriov-rdma"
	chmod +x "$LOG_CNI_PATH/sriov-rdma"
	ln -s "$BUILD_DIR/plugins/pool-ipam/pool-ipam" "$LOG_CNI_PATH/pool-ipam"
	log_cases "no openat2"
	injected=$(grep -c 'ENOSYS .*(INJECTED)' "$T_TMP/enosys.log")
	echo "# openat2 answered ENOSYS $injected times"
	t_eq "$((injected > 0))" 1 "the plugins asked for openat2 and were answered ENOSYS ($injected times)"
	t_eq "$(grep -v 'ENOSYS .*(INJECTED)' "$T_TMP/enosys.log" | grep -c 'openat2(')" 0 "no openat2 reached the kernel"
else
	echo "# strace not installed: the walk without openat2 is not tried (scripts/setup test)"
fi

t_begin "stateDir and dataDir outside their directories"
attempt x "\"stateDir\": \"$OUTSIDE/state\""
t_eq "$(t_jq .code)" 7 "stateDir: code ($T_OUT)"
t_contains "$(t_jq .msg)" "allowedStateDirs" "names the node config key"
attempt x "" "{\"type\": \"pool-ipam\", \"subnet\": \"10.67.0.0/24\", \"dataDir\": \"$OUTSIDE/pool\"}"
t_eq "$(t_jq .code)" 7 "dataDir: code ($T_OUT)"
t_contains "$(t_jq .msg)" "allowedDataDirs" "names the node config key"
t_exec pool-ipam DEL "{\"cniVersion\":\"1.0.0\",\"name\":\"x\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.67.0.0/24\",\"dataDir\":\"$OUTSIDE/pool\"}}" \
	CNI_CONTAINERID=evil CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$T_RC" 0 "pool-ipam DEL with such a dataDir finishes ($T_OUT)"
outside_unchanged "stateDir/dataDir"
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "the VF stays on the host"

t_begin "resolvConf naming a FIFO or a huge file: refused, no hang"
t_exec pool-ipam ADD "{\"cniVersion\":\"1.0.0\",\"name\":\"rc\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.68.0.0/24\",\"dataDir\":\"$T_TMP/pool\",\"resolvConf\":\"$T_TMP/fifo\"}}" \
	CNI_CONTAINERID=rc1 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$(t_jq .code)" 7 "FIFO: code, without blocking ($T_OUT)"
head -c 70000 /dev/zero | tr '\0' '#' > "$T_TMP/big.conf"
t_exec pool-ipam ADD "{\"cniVersion\":\"1.0.0\",\"name\":\"rc\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.68.0.0/24\",\"dataDir\":\"$T_TMP/pool\",\"resolvConf\":\"$T_TMP/big.conf\"}}" \
	CNI_CONTAINERID=rc1 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$(t_jq .code)" 7 "over 64 KiB: code ($T_OUT)"
t_contains "$(t_jq .msg)" "64 KiB" "says why"

# The file's nameserver, search and options lines would go into the result:
# a NAD must not read them out of any root-readable file.
t_begin "resolvConf outside the allowed directories, or a link leading out: refused, nothing allocated"
printf 'nameserver 10.9.9.9\nsearch secret.example\n' > "$OUTSIDE/resolv.conf"
SUM0=$(cd "$OUTSIDE" && find . -mindepth 1 -printf '%p %s %T@\n' | sort | md5sum)
printf 'nameserver 10.8.8.8\nsearch pods.example\n' > "$T_TMP/resolv.conf"
ln -s "$OUTSIDE/resolv.conf" "$T_TMP/leads-out.conf"
rc_conf() { # resolvConf
	echo "{\"cniVersion\":\"1.0.0\",\"name\":\"rc\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.68.0.0/24\",\"dataDir\":\"$T_TMP/pool\",\"resolvConf\":\"$1\"}}"
}
t_exec pool-ipam ADD "$(rc_conf "$OUTSIDE/resolv.conf")" CNI_CONTAINERID=rc2 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$(t_jq .code)" 7 "outside: code ($T_OUT)"
t_contains "$(t_jq .msg)" "ipam.resolvConf" "names the field"
t_contains "$(t_jq .msg)" "allowedResolvConfDirs" "says how a node admin allows one"
t_exec pool-ipam ADD "$(rc_conf "$T_TMP/leads-out.conf")" CNI_CONTAINERID=rc2 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$(t_jq .code)" 7 "a link leading out: code ($T_OUT)"
t_contains "$(t_jq .msg)" "$OUTSIDE/resolv.conf" "names where the link leads"
t_eq "$(t_count "$T_TMP/pool/rc" 'a-*')" 0 "no address was reserved"
t_exec pool-ipam ADD "$(rc_conf "$T_TMP/resolv.conf")" CNI_CONTAINERID=rc2 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$T_RC" 0 "an allowed resolv.conf: ADD succeeds ($T_OUT)"
t_eq "$(t_jq '.dns.nameservers[0]')" "10.8.8.8" "its nameserver is in the result"
t_eq "$(t_count "$T_TMP/pool/rc" 'a-*')" 1 "its address is reserved"
t_exec pool-ipam DEL "$(rc_conf "$T_TMP/resolv.conf")" CNI_CONTAINERID=rc2 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
outside_unchanged "resolvConf"

t_begin "CNI_NETNS naming the host's own namespace, by any path"
sr_conflist "$CONF" 1.0.0 "\"deviceID\": \"$(sr_vf 0)\"" "$POOL"
touch "$T_TMP/hostns"
mount --bind /proc/self/ns/net "$T_TMP/hostns" && t_defer "umount $T_TMP/hostns"
for ns in /proc/self/ns/net "$T_TMP/hostns"; do
	t_exec sriov-rdma ADD "$(sr_plugin_conf "$CONF")" CNI_CONTAINERID=host CNI_IFNAME=net1 CNI_NETNS="$ns"
	t_eq "$(t_jq .code)" 8 "$ns: code ($T_OUT)"
	t_contains "$(t_jq .msg)" "host's own network namespace" "$ns: says why"
done
t_eq "$(sr_host_link "$(sr_net 0)" | cut -d' ' -f1)" "$(sr_net 0)" "the VF keeps its host name"
t_eq "$(sr_markers)" "" "no claim held"

t_begin "a dataDir under /var/run (the system's symlink to /run) is accepted"
if [ -L /var/run ]; then
	d=/var/run/cni/pool-ipam/test-$$
	t_defer "rm -rf /run/cni/pool-ipam/test-$$"
	t_exec pool-ipam ADD "{\"cniVersion\":\"1.0.0\",\"name\":\"vr\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.69.0.0/24\",\"dataDir\":\"$d\"}}" \
		CNI_CONTAINERID=vr1 CNI_IFNAME=net1 CNI_NETNS="$pod"
	t_eq "$T_RC" 0 "ADD ($T_OUT)"
	t_eq "$(t_count "/run/cni/pool-ipam/test-$$/vr" 'a-*')" 1 "the store is under /run"
	t_exec pool-ipam DEL "{\"cniVersion\":\"1.0.0\",\"name\":\"vr\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.69.0.0/24\",\"dataDir\":\"$d\"}}" \
		CNI_CONTAINERID=vr1 CNI_IFNAME=net1 CNI_NETNS="$pod"
	t_eq "$T_RC" 0 "DEL ($T_OUT)"
else
	echo "# skipped: /var/run is not a symlink here"
fi

t_begin "a path written through a system symlink to an allowed directory is admitted; a symlink below it is not followed"
# As /var/run -> /run on Debian, for a directory only the node config allows.
mkdir -p "$T_TMP/realrun"
ln -s "$T_TMP/realrun" "$T_TMP/aliasrun"
ln -s "$OUTSIDE" "$T_TMP/realrun/out"
mkdir -p "$T_TMP/realrun/sub"
ln -s "$T_TMP/realrun/sub" "$T_TMP/realrun/in"
printf '{"allowedDataDirs":["%s/realrun"]}\n' "$T_TMP" > "$T_TMP/node-alias.json"
al_conf() { # dataDir
	echo "{\"cniVersion\":\"1.0.0\",\"name\":\"al\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.69.1.0/24\",\"dataDir\":\"$1\"}}"
}
t_exec pool-ipam ADD "$(al_conf "$T_TMP/aliasrun/x")" CNI_CONTAINERID=al1 CNI_IFNAME=net1 CNI_NETNS="$pod" \
	SRIOV_RDMA_CNI_NODE_CONFIG="$T_TMP/node-alias.json"
t_eq "$T_RC" 0 "ADD with dataDir through the alias ($T_OUT)"
t_eq "$(t_count "$T_TMP/realrun/x/al" 'a-*')" 1 "the store is in the allowed directory"
t_exec pool-ipam DEL "$(al_conf "$T_TMP/aliasrun/x")" CNI_CONTAINERID=al1 CNI_IFNAME=net1 CNI_NETNS="$pod" \
	SRIOV_RDMA_CNI_NODE_CONFIG="$T_TMP/node-alias.json"
t_eq "$T_RC" 0 "DEL ($T_OUT)"
for below in out in; do
	t_exec pool-ipam ADD "$(al_conf "$T_TMP/aliasrun/$below/y")" CNI_CONTAINERID=al2 CNI_IFNAME=net1 \
		CNI_NETNS="$pod" SRIOV_RDMA_CNI_NODE_CONFIG="$T_TMP/node-alias.json"
	t_eq "$(t_jq .code)" 7 "a symlink below the allowed directory ($below): refused ($T_OUT)"
done
t_eq "$(find "$T_TMP/realrun/sub" -mindepth 1 | wc -l)" 0 "nothing was written through the inner symlink"
outside_unchanged "alias"

t_begin "a node config that widens the allowed directories"
printf '{"allowedDataDirs":["%s/extra"]}\n' "$OUTSIDE" > "$T_TMP/node2.json"
t_exec pool-ipam ADD "{\"cniVersion\":\"1.0.0\",\"name\":\"nc\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.69.0.0/24\",\"dataDir\":\"$OUTSIDE/extra\"}}" \
	CNI_CONTAINERID=nc1 CNI_IFNAME=net1 CNI_NETNS="$pod" SRIOV_RDMA_CNI_NODE_CONFIG="$T_TMP/node2.json"
t_eq "$T_RC" 0 "allowed by the node config ($T_OUT)"
rm -rf "$OUTSIDE/extra"
echo '{"allowedDataDirs": "not a list"}' > "$T_TMP/node3.json"
t_exec pool-ipam ADD "{\"cniVersion\":\"1.0.0\",\"name\":\"nc\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.69.0.0/24\",\"dataDir\":\"$T_TMP/pool\"}}" \
	CNI_CONTAINERID=nc1 CNI_IFNAME=net1 CNI_NETNS="$pod" SRIOV_RDMA_CNI_NODE_CONFIG="$T_TMP/node3.json"
t_eq "$(t_jq .code)" 7 "a broken node config: code ($T_OUT)"
t_contains "$(t_jq .msg)" "node config $T_TMP/node3.json" "names the node config"
t_exec pool-ipam ADD "{\"cniVersion\":\"1.0.0\",\"name\":\"nc\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.69.0.0/24\",\"dataDir\":\"$T_TMP/pool\"}}" \
	CNI_CONTAINERID=nc2 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$T_RC" 0 "an address reserved while the node config was good ($T_OUT)"
t_exec pool-ipam DEL "{\"cniVersion\":\"1.0.0\",\"name\":\"nc\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.69.0.0/24\",\"dataDir\":\"$T_TMP/pool\"}}" \
	CNI_CONTAINERID=nc2 CNI_IFNAME=net1 CNI_NETNS="$pod" SRIOV_RDMA_CNI_NODE_CONFIG="$T_TMP/node3.json"
t_eq "$(t_jq .code)" 7 "DEL with the node config broken fails, naming it, rather than leaking ($T_OUT)"
t_exec pool-ipam DEL "{\"cniVersion\":\"1.0.0\",\"name\":\"nc\",\"ipam\":{\"type\":\"pool-ipam\",\"subnet\":\"10.69.0.0/24\",\"dataDir\":\"$T_TMP/pool\"}}" \
	CNI_CONTAINERID=nc2 CNI_IFNAME=net1 CNI_NETNS="$pod"
t_eq "$T_RC" 0 "once it is fixed, the retried DEL releases ($T_OUT)"
t_eq "$(t_count "$T_TMP/pool/nc" 'a-*')" 0 "released"
outside_unchanged "node config"

t_done
