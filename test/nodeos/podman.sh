# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Debian's podman for the image tests (sourced after lib.sh, in a mount
# namespace of the test's own): /run a fresh tmpfs, podman's storage in the
# test's directory, the base images made by the test (podman import: no
# registry).
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || [ ! -x /bin/busybox ]; then
	echo "SKIP: needs podman, runc and busybox-static (scripts/setup node)"
	exit 77
fi

PM=$T_TMP/podman
mkdir -p "$PM"
mount -t tmpfs -o mode=0755 tmpfs /run ||
	{ echo "Bail out: cannot make the test's own /run" >&2; exit 1; }
cat > "$PM/containers.conf" <<EOC
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$PM/events.log"
runtime = "runc"
EOC
export CONTAINERS_CONF=$PM/containers.conf
t_podman_storage "$PM"

# pm_base BUSYBOX ARCH TAG: what install-cni.sh runs on, one static busybox
# of that architecture (podman's name: amd64, arm64).
pm_base() {
	local dir=$PM/base-$2 a
	mkdir -p "$dir/bin"
	cp "$1" "$dir/bin/busybox"
	for a in sh ls mkdir cp chmod rm cat sha256sum wc cut tr mktemp sync mv sleep; do
		ln -sf busybox "$dir/bin/$a"
	done
	t_pm import --arch "$2" - "$3" < <(tar -C "$dir" -c .)
	[ "$T_RC" = 0 ] || { echo "Bail out: podman import ($2): $T_ERR" >&2; exit 1; }
}

# pm_build DIR TAG BASE PLATFORM: the image of the unpacked release tarball
# DIR, as the Containerfile's header says.
pm_build() {
	t_pm build --pull=never --platform "$4" -f "$1/conf/deploy/Containerfile" \
		--build-arg BASE="$3" -t "$2" "$1"
}
