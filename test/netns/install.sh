#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Installing the plugins: scripts/install on a bare host, the DaemonSet's
# conf/deploy/install-cni.sh, and the release tarball of scripts/package.
# What operators rely on: the right files with mode 0755, a runtime that
# executes a plugin during an upgrade never sees a partial file, a full
# disk leaves the old binary working, and a restarted DaemonSet pod does
# not rewrite what is already current. And what they install is the kernel
# path alone: the recording fakes (test/fakes/) live only in a test build
# (-Dtest_fakes=true), which scripts/install and scripts/package refuse, so
# this script installs from a default build of its own.
. "$(dirname "$0")/lib.sh"

INSTALL=$SOURCE_DIR/scripts/install
INSTALL_CNI=$SOURCE_DIR/conf/deploy/install-cni.sh
PLUGINS="pool-ipam sriov-rdma"
# Configured by the first scripts/install below, as on a bare host: default options.
DEFAULT_BUILD=$T_TMP/build-default

mode() { stat -c %a "$1"; }
inode() { stat -c %i "$1"; }
leftovers() { find "$1" -name '.*' -type f | wc -l; }
# What of the recording fakes a binary holds, one per line: their variables, their symbols.
fakes_in() {
	{
		strings -a "$1" | grep -oE 'SRIOV_RDMA_(PF|RDMA|NETNS)_FAKE_DIR'
		nm "$1" 2>/dev/null | awk '{ print $NF }' | grep -iE 'fake'
	} | sort -u | tr '\n' ' '
}

run_install() { # DIR [ARGS...]: scripts/install into DIR from this build
	local dir=$1
	shift
	OUT=$("$INSTALL" --build-dir "$DEFAULT_BUILD" --bin-dir "$dir" "$@" 2>&1)
	RC=$?
}

t_begin "scripts/install: both plugins and the doctor, mode 0755, identical to the build"
bin=$T_TMP/opt/cni/bin
run_install "$bin" --prefix "$T_TMP/usr"
t_eq "$RC" 0 "exit status ($OUT)"
for p in $PLUGINS; do
	t_eq "$(mode "$bin/$p")" 755 "$p mode"
	cmp -s "$bin/$p" "$DEFAULT_BUILD/plugins/$p/$p" || t_fail "$p differs from the build"
	t_contains "$OUT" "installed $bin/$p" "$p reported"
done
t_eq "$(mode "$T_TMP/usr/sbin/rdma-doctor")" 755 "rdma-doctor mode"
cmp -s "$T_TMP/usr/sbin/rdma-doctor" "$SOURCE_DIR/scripts/rdma-doctor" || t_fail "rdma-doctor differs"
t_eq "$(leftovers "$bin")" 0 "temporary files left"

t_begin "the default build holds no fake: neither variable name nor fake symbol"
for p in $PLUGINS; do
	t_eq "$(fakes_in "$bin/$p")" "" "fakes in the installed $p"
done

if [ "$(meson introspect --buildoptions "$BUILD_DIR" |
	jq -r '.[] | select(.name == "test_fakes") | .value')" = true ]; then
	t_begin "the same check finds the fakes of this test build"
	got=$(fakes_in "$BUILD_DIR/plugins/sriov-rdma/sriov-rdma")
	for want in SRIOV_RDMA_PF_FAKE_DIR SRIOV_RDMA_RDMA_FAKE_DIR SRIOV_RDMA_NETNS_FAKE_DIR \
		pf_fake_use rdma_fake_use netns_fake_use; do
		t_contains "$got" "$want" "$want found"
	done

	t_begin "scripts/install and scripts/package refuse a test build"
	OUT=$("$INSTALL" --build-dir "$BUILD_DIR" --bin-dir "$T_TMP/refused/bin" --prefix "" 2>&1)
	[ "$?" != 0 ] || t_fail "scripts/install installed a test build"
	t_contains "$OUT" "test build (meson -Dtest_fakes=true)" "install says why"
	[ ! -e "$T_TMP/refused/bin/sriov-rdma" ] || t_fail "sriov-rdma installed from a test build"
	OUT=$("$SOURCE_DIR/scripts/package" --build-dir "$BUILD_DIR" --output-dir "$T_TMP/refused" 2>&1)
	[ "$?" != 0 ] || t_fail "scripts/package packaged a test build"
	t_contains "$OUT" "test build (meson -Dtest_fakes=true)" "package says why"
	[ -z "$(ls "$T_TMP/refused"/*.tar.gz 2>/dev/null)" ] || t_fail "a tarball of a test build"

	t_begin "scripts/install --test-build installs it, and says so (the upgrade test's stand-in node)"
	OUT=$("$INSTALL" --build-dir "$BUILD_DIR" --bin-dir "$T_TMP/testbuild/bin" --prefix "" \
		--test-build 2>&1)
	t_eq "$?" 0 "exit status ($OUT)"
	for p in $PLUGINS; do
		cmp -s "$T_TMP/testbuild/bin/$p" "$BUILD_DIR/plugins/$p/$p" || t_fail "$p differs from the build"
	done
	t_contains "$OUT" "is a test build, installed as --test-build asks: never on a node" "install says so"
else
	t_begin "this build is a default build: no fake in it either"
	for p in $PLUGINS; do
		t_eq "$(fakes_in "$BUILD_DIR/plugins/$p/$p")" "" "fakes in $p of $BUILD_DIR"
	done
fi

t_begin "scripts/install again: each file replaced by a rename (new inode), still 0755"
chmod 0600 "$bin/pool-ipam"
before=$(inode "$bin/sriov-rdma")
run_install "$bin" --prefix ""
t_eq "$RC" 0 "exit status ($OUT)"
[ "$(inode "$bin/sriov-rdma")" != "$before" ] || t_fail "sriov-rdma rewritten in place (same inode)"
t_eq "$(mode "$bin/pool-ipam")" 755 "mode restored"
t_eq "$(leftovers "$bin")" 0 "temporary files left"
t_not_contains "$OUT" "rdma-doctor" "--prefix '' skips the doctor"

t_begin "a plugin executed during repeated installs always runs complete"
want=$("$DEFAULT_BUILD/plugins/sriov-rdma/sriov-rdma" --version 2>&1)
want_rc=$?
(
	for _ in $(seq 10); do
		"$INSTALL" --build-dir "$DEFAULT_BUILD" --bin-dir "$bin" --prefix "" >/dev/null 2>&1 || exit 1
	done
) &
installer=$!
runs=0
bad=0
# Exec it as a runtime would until the installer is done (at least once after).
while :; do
	alive=0
	kill -0 "$installer" 2>/dev/null && alive=1
	got=$("$bin/sriov-rdma" --version 2>&1)
	rc=$?
	runs=$((runs + 1))
	if [ "$rc" != "$want_rc" ] || [ "$got" != "$want" ]; then
		bad=$((bad + 1))
		[ "$bad" -le 3 ] && t_fail "run $runs: exit $rc, output '$got' (want exit $want_rc, '$want')"
	fi
	if [ "$alive" = 0 ] || [ "$runs" -ge 5000 ]; then break; fi
done
wait "$installer"
t_eq "$?" 0 "installer loop"
t_eq "$bad" 0 "bad runs out of $runs"
t_eq "$(leftovers "$bin")" 0 "temporary files left"

t_begin "scripts/install into a bin dir that is a file: clear error"
: > "$T_TMP/not-a-dir"
run_install "$T_TMP/not-a-dir/bin" --prefix ""
[ "$RC" != 0 ] || t_fail "exit status 0"
t_contains "$OUT" "not-a-dir" "names the path"

# A fake image: the layout the Containerfile gives /usr/lib/sriov-rdma-cni.
image=$T_TMP/image
mkdir -p "$image"
for p in $PLUGINS; do cp "$DEFAULT_BUILD/plugins/$p/$p" "$image/$p"; done
host=$T_TMP/host/opt/cni/bin
mkdir -p "$host"

cni_install() { # install-cni.sh from the fake image into $host, once
	OUT=$(env SRC_DIR="$image" CNI_BIN_DIR="$host" INSTALL_ONCE=1 sh "$INSTALL_CNI" 2>&1)
	RC=$?
}

t_begin "install-cni.sh INSTALL_ONCE=1: installs, verifies, exits 0"
cni_install
t_eq "$RC" 0 "exit status ($OUT)"
for p in $PLUGINS; do
	t_eq "$(mode "$host/$p")" 755 "$p mode"
	cmp -s "$host/$p" "$image/$p" || t_fail "$p differs from the image"
	t_contains "$OUT" "installed $host/$p ($(sha256sum < "$image/$p" | cut -d' ' -f1))" "$p logged with its sha256"
done
t_eq "$(leftovers "$host")" 0 "temporary files left"

t_begin "install-cni.sh again: current files are left alone; a new image replaces them"
before=$(inode "$host/pool-ipam")
cni_install
t_eq "$RC" 0 "exit status ($OUT)"
t_contains "$OUT" "$host/pool-ipam is up to date" "up to date"
t_eq "$(inode "$host/pool-ipam")" "$before" "inode kept"
printf '\n' >> "$image/pool-ipam"
cni_install
t_eq "$RC" 0 "exit status ($OUT)"
t_contains "$OUT" "installed $host/pool-ipam" "reinstalled"
cmp -s "$host/pool-ipam" "$image/pool-ipam" || t_fail "new image not installed"
[ "$(inode "$host/pool-ipam")" != "$before" ] || t_fail "rewritten in place (same inode)"
t_contains "$OUT" "$host/sriov-rdma is up to date" "the other one untouched"

t_begin "install-cni.sh on a full disk: fails, the old binary stays intact"
small=$T_TMP/small
mkdir -p "$small"
# Room for the installed binaries plus 256 KiB; the new sriov-rdma is bigger.
room=$(( ($(stat -c %s "$DEFAULT_BUILD/plugins/pool-ipam/pool-ipam") +
	$(stat -c %s "$DEFAULT_BUILD/plugins/sriov-rdma/sriov-rdma")) / 1024 + 256 ))
if mount -t tmpfs -o size=${room}k tmpfs "$small"; then
	t_defer umount "$small"
	for p in $PLUGINS; do cp "$DEFAULT_BUILD/plugins/$p/$p" "$small/$p" || t_fail "setup: cp $p"; done
	old=$(sha256sum < "$small/sriov-rdma")
	big=$T_TMP/big-image
	mkdir -p "$big"
	cp "$image/pool-ipam" "$big/"
	head -c $(( (room + 1024) * 1024 )) /dev/urandom > "$big/sriov-rdma"
	OUT=$(env SRC_DIR="$big" CNI_BIN_DIR="$small" INSTALL_ONCE=1 sh "$INSTALL_CNI" 2>&1) &&
		t_fail "exit status 0 on a full disk"
	t_contains "$OUT" "No space left on device" "the reason"
	t_eq "$(sha256sum < "$small/sriov-rdma")" "$old" "old binary"
	t_eq "$(leftovers "$small")" 0 "temporary files left"
	"$small/sriov-rdma" --version >/dev/null 2>&1 || t_fail "old binary no longer runs"
else
	t_fail "cannot mount a tmpfs"
fi

t_begin "install-cni.sh without the host mount: clear error naming CNI_BIN_DIR"
OUT=$(env SRC_DIR="$image" CNI_BIN_DIR="$T_TMP/nowhere" INSTALL_ONCE=1 sh "$INSTALL_CNI" 2>&1) &&
	t_fail "exit status 0"
t_contains "$OUT" "$T_TMP/nowhere does not exist" "message"
t_contains "$OUT" "CNI_BIN_DIR" "names the variable"

t_begin "install-cni.sh without INSTALL_ONCE stays up, and ends on SIGTERM"
log=$T_TMP/install-cni.log
env SRC_DIR="$image" CNI_BIN_DIR="$host" sh "$INSTALL_CNI" > "$log" 2>&1 &
pid=$!
t_defer kill "$pid"
# Up to a minute, a hang guard for a busy machine.
for _ in $(seq 600); do
	grep -q sleeping "$log" && break
	sleep 0.1
done
t_contains "$(cat "$log")" "done; sleeping" "reached the sleep"
kill -0 "$pid" 2>/dev/null || t_fail "exited without INSTALL_ONCE"
kill -TERM "$pid"
wait "$pid"
t_eq "$?" 143 "exit status after SIGTERM"

t_begin "DaemonSet, Containerfile and install-cni.sh agree on paths"
ds=$(cat "$SOURCE_DIR/conf/deploy/daemonset.yaml")
cf=$(cat "$SOURCE_DIR/conf/deploy/Containerfile")
# shellcheck disable=SC2016 # the $ are the script's text, not expansions
src_default=$(sed -n 's/^SRC_DIR=${SRC_DIR:-\(.*\)}$/\1/p' "$INSTALL_CNI")
# shellcheck disable=SC2016
bin_default=$(sed -n 's/^CNI_BIN_DIR=${CNI_BIN_DIR:-\(.*\)}$/\1/p' "$INSTALL_CNI")
t_eq "$src_default" /usr/lib/sriov-rdma-cni "install-cni.sh SRC_DIR default"
t_eq "$bin_default" /host/opt/cni/bin "install-cni.sh CNI_BIN_DIR default"
t_contains "$ds" "command: [\"$src_default/install-cni.sh\"]" "DaemonSet command"
t_contains "$ds" "mountPath: $bin_default" "DaemonSet mount"
t_contains "$ds" "path: /opt/cni/bin" "hostPath"
t_contains "$ds" "feature.node.kubernetes.io/network-sriov.capable: \"true\"" "nodeSelector"
t_contains "$ds" "key: nvidia.com/gpu" "GPU toleration"
t_contains "$ds" "key: kubernetes.io/arch" "the architectures the image is built for"
t_contains "$cf" "conf/deploy/install-cni.sh $src_default/" "Containerfile image dir"
t_contains "$cf" "ENTRYPOINT [\"$src_default/install-cni.sh\"]" "Containerfile entrypoint"

t_begin "scripts/package: the tarball holds the binaries, conf, scripts, docs, and installs without building"
pkg=$T_TMP/pkg
mkdir -p "$pkg"
tarball=$("$SOURCE_DIR/scripts/package" --build-dir "$DEFAULT_BUILD" --output-dir "$pkg" 2>"$T_TMP/package.err")
t_eq "$?" 0 "exit status ($(cat "$T_TMP/package.err"))"
case $tarball in "$pkg"/sriov-rdma-cni-*-"$(uname -m)".tar.gz) ;; *) t_fail "tarball path '$tarball'" ;; esac
top=$(basename "$tarball" .tar.gz)
list=$(tar -tzf "$tarball")
for f in bin/pool-ipam bin/sriov-rdma scripts/install scripts/usage.sh scripts/rdma-doctor \
	conf/deploy/daemonset.yaml conf/deploy/install-cni.sh; do
	t_contains "$list" "$top/$f" "$f in the tarball"
done
for f in README.md LICENSE; do
	[ ! -f "$SOURCE_DIR/$f" ] || t_contains "$list" "$top/$f" "$f in the tarball"
done
# README.md links to docs/: every page of it ships beside it.
[ -d "$SOURCE_DIR/docs" ] || t_fail "docs/ missing from the source tree"
for f in "$SOURCE_DIR"/docs/*.md; do
	[ -f "$f" ] || continue
	t_contains "$list" "$top/docs/${f##*/}" "docs/${f##*/} in the tarball"
done
first=$(sha256sum < "$tarball")
"$SOURCE_DIR/scripts/package" --build-dir "$DEFAULT_BUILD" --output-dir "$pkg" >/dev/null 2>&1
t_eq "$(sha256sum < "$tarball")" "$first" "same bytes when built twice"
tar -xzf "$tarball" -C "$pkg"
OUT=$("$pkg/$top/scripts/install" --bin-dir "$T_TMP/target/bin" --prefix "" 2>&1)
t_eq "$?" 0 "install from the tarball ($OUT)"
[ ! -e "$pkg/$top/build-install" ] || t_fail "it configured a build instead of using bin/"
for p in $PLUGINS; do
	t_eq "$(fakes_in "$pkg/$top/bin/$p")" "" "fakes in the tarball's $p (the image's)"
	cmp -s "$T_TMP/target/bin/$p" "$DEFAULT_BUILD/plugins/$p/$p" || t_fail "$p from the tarball differs"
	t_eq "$(mode "$T_TMP/target/bin/$p")" 755 "$p mode"
done

t_begin "scripts/package --arch aarch64 refuses a build for this machine, makes no tarball"
OUT=$("$SOURCE_DIR/scripts/package" --arch aarch64 --build-dir "$DEFAULT_BUILD" --output-dir "$T_TMP/arch" 2>&1)
[ "$?" != 0 ] || t_fail "packaged a $(uname -m) build as aarch64"
t_contains "$OUT" "is built for 'Advanced Micro Devices X86-64', not aarch64" "says for what"
[ -z "$(ls "$T_TMP/arch"/*.tar.gz 2>/dev/null)" ] || t_fail "a tarball of the wrong architecture"

t_begin "the tarball's scripts/install refuses plugins built for another architecture, installs nothing"
other=$T_TMP/other/$top
mkdir -p "$(dirname "$other")"
cp -a "$pkg/$top" "$other"
# The ELF header's machine (e_machine, offset 18) made AArch64's (183).
printf '\267\000' | dd of="$other/bin/sriov-rdma" bs=1 seek=18 conv=notrunc 2>/dev/null
OUT=$("$other/scripts/install" --bin-dir "$T_TMP/other-bin" --prefix "" 2>&1)
[ "$?" != 0 ] || t_fail "installed an aarch64 sriov-rdma on $(uname -m) ($OUT)"
t_contains "$OUT" "bin/sriov-rdma is built for aarch64 and this machine is $(uname -m)" "names both"
t_contains "$OUT" "sriov-rdma-cni-<version>-$(uname -m) tarball" "names the tarball to take"
t_eq "$(t_count "$T_TMP/other-bin" '*')" 0 "nothing installed"

t_done
