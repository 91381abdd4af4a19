#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# enosys.sh SYSCALL PROGRAM: a unit test program run again with SYSCALL
# failing with ENOSYS, as on a kernel older than it (the field's RHEL 8
# nodes run 4.18): the fallback must pass the same cases. It fails when the
# program never made the call, so the fallback was not what ran. Skipped
# (77) without strace.
set -u
command -v strace >/dev/null || { echo "# strace not installed (scripts/setup test)"; exit 77; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# LeakSanitizer cannot run under ptrace: the program's own run checks leaks.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -o "$log" -e trace="$1" -e inject="$1":error=ENOSYS "$2"
rc=$?
if ! grep -q "ENOSYS .*(INJECTED)" "$log"; then
	echo "not ok - $1 was never called: its fallback did not run"
	exit 1
fi
echo "# $(grep -c "(INJECTED)" "$log") calls of $1 answered ENOSYS"
exit "$rc"
