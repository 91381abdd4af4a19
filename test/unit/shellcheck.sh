#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every shell script of the project passes shellcheck at severity warning
# (scripts/setup test installs it; without it this test is skipped).
set -euo pipefail
shopt -s globstar nullglob

if ! command -v shellcheck >/dev/null 2>&1; then
	echo "SKIP: shellcheck is not installed (scripts/setup test installs it)"
	exit 77
fi
cd "$SOURCE_DIR"
files=()
for f in scripts/* test/**/*.sh conf/**/*.sh; do
	# The benchmarks' probe and floor plugin are C, compiled by the scripts that use them.
	case $f in *.c) continue ;; esac
	files+=("$f")
done
shellcheck -S warning "${files[@]}"
echo "ok - shellcheck -S warning: ${#files[@]} scripts"
