# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# What the igb benchmarks (bench-igb-vm, bench-igb-node) and the igb test
# (test/vm/igb_vm.sh) share inside the guest of scripts/vm: sourced, never
# run.

# Wait for a condition, as a hang guard only (TCG on a loaded host is slow).
wait_for() { # SECONDS COMMAND...
	local n=$(($1 * 10))
	shift
	while ! "$@" 2>/dev/null; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}
carrier() { [ "$(cat "/sys/class/net/$1/carrier")" = 1 ]; }
vf_netdev_of() { ls "/sys/bus/pci/devices/$1/net" 2>/dev/null; }
has_netdev() { [ -n "$(vf_netdev_of "$1")" ]; }

# The guest's root is 9p without a cache: every exec would read each shared
# library (and ld.so.cache) over it again, a cost a node's local disk does
# not have and a static binary does not pay. tmpfs copies, bound over the
# same paths, of the programs given and of what they load keep the loader's
# view unchanged. Each bound path goes to DIR/bound, for tmpfs_unbind.
tmpfs_bind() { # DIR PROGRAM...
	local dir=$1 f b
	shift
	mkdir -p "$dir/libs"
	for f in $( { for b in "$@"; do
			ldd "$b" 2>/dev/null | grep -o '/[^ ]*' || true
			echo "$b"
		done; echo /etc/ld.so.cache; } | xargs -n1 realpath | sort -u); do
		# The programs copied to DIR already are on tmpfs.
		case $f in "$dir"/*) continue ;; esac
		cp "$f" "$dir/libs/${f//\//_}" && mount --bind "$dir/libs/${f//\//_}" "$f" || {
			echo "cannot put $f on tmpfs" >&2
			return 1
		}
		echo "$f" >>"$dir/bound"
	done
}
tmpfs_unbind() { # DIR
	[ -f "$1/bound" ] || return 0
	while read -r f; do umount "$f" 2>/dev/null || true; done <"$1/bound"
}
