#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# scripts/check-floor, the check of what a release binary needs from a node,
# on programs built here against this machine's glibc: one linking a library
# that is not glibc's (cJSON), one that needs glibc's newest entry points
# (dlopen, and __libc_start_main from its start files). Each is refused with
# what it needs; a floor at this machine's own glibc lets the second pass.
set -u
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"

# shellcheck source=SCRIPTDIR/harness.sh
. "$(dirname "$0")/harness.sh"

CHECK_FLOOR=$SOURCE_DIR/scripts/check-floor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v cc >/dev/null || ! command -v readelf >/dev/null; then
	echo "SKIP: needs cc and binutils"
	exit 77
fi
glibc=$(getconf GNU_LIBC_VERSION | awk '{ print $2 }')

cat > "$tmp/dl.c" <<'EOF'
#include <dlfcn.h>
int main(int argc, char **argv) { (void)argv; return dlopen(argc > 5 ? "x" : 0, RTLD_NOW) == 0; }
EOF
cat > "$tmp/cjson.c" <<'EOF'
#include <cjson/cJSON.h>
int main(void) { cJSON_Delete(cJSON_Parse("{}")); return 0; }
EOF
cc -o "$tmp/dl" "$tmp/dl.c" -ldl
cc -o "$tmp/cjson" "$tmp/cjson.c" -lcjson

begin "a library that is not glibc's is named, and refused"
out=$("$CHECK_FLOOR" --glibc "$glibc" "$tmp/cjson" 2>&1)
eq "$?" 1 "exit status ($out)"
has "$out" "$tmp/cjson needs libcjson.so.1, which is not glibc's" "the library named"

begin "a glibc symbol version above the floor is named with its symbols"
newest=$(readelf -V "$tmp/dl" | sed -n 's/.*Name: GLIBC_\([0-9.]*\) .*/\1/p' | sort -V | tail -n 1)
if [ "$(printf '%s\n2.28\n' "$newest" | sort -V | tail -n 1)" = 2.28 ]; then
	echo "SKIP: this machine's glibc ($glibc) binds nothing above 2.28"
	exit 77
fi
out=$("$CHECK_FLOOR" --glibc 2.28 "$tmp/dl" 2>&1)
eq "$?" 1 "exit status ($out)"
has "$out" "needs GLIBC_$newest (above 2.28)" "the version named"
has "$(grep "GLIBC_$newest" <<< "$out")" "dlopen" "the symbol named"

begin "the same program passes at a floor of this machine's glibc"
out=$("$CHECK_FLOOR" --glibc "$glibc" "$tmp/dl" 2>&1)
eq "$?" 0 "exit status ($out)"
has "$out" "newest glibc symbol version GLIBC_$newest" "what it needs"

begin "what is no ELF file, or no version, is refused"
echo '#!/bin/sh' > "$tmp/script"
out=$("$CHECK_FLOOR" "$tmp/script" 2>&1)
eq "$?" 1 "a script ($out)"
has "$out" "not an ELF file" "says so"
out=$("$CHECK_FLOOR" --glibc two "$tmp/dl" 2>&1)
eq "$?" 2 "--glibc two ($out)"

harness_done
