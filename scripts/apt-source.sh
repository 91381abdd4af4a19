# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
#
# The machine's own apt sources, for the scripts here (sourced, not a
# command): scripts/setup adds suites next to them, scripts/sysroot and the
# node's OS stage download from the mirror they name (or the proxy, or the
# snapshot), so that no host name is written anywhere.

# The URI of the apt source that serves the release itself (Suites holds
# the bare code name), from the one-line and the deb822 formats, so that the
# backports entry uses the machine's own mirror (or proxy, or snapshot);
# then the key file that source is signed with (deb822 Signed-By), if any.
release_uri() { # codename
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		# deb [opts] URI SUITE COMPONENTS...
		awk -v c="$1" '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
			if ($(i + 1) == c) { print $i; exit }
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# Stanzas separated by blank lines; a stanza with Enabled: no is off.
		awk -v c="$1" 'BEGIN { RS = ""; FS = "\n" } {
			uri = ""; key = ""; suite = 0; deb = 0; off = 0
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^#/) continue
				split($i, kv, ":[ \t]*"); k = tolower(kv[1])
				v = substr($i, index($i, ":") + 1)
				if (k == "types" && v ~ /(^|[ \t])deb([ \t]|$)/) deb = 1
				if (k == "enabled" && v ~ /no/) off = 1
				if (k == "uris") { split(v, u, " "); uri = u[1] }
				if (k == "signed-by" && v ~ /^[ \t]*\//) { split(v, u, " "); key = u[1] }
				if (k == "suites") { n = split(v, s, /[ \t]+/); for (j = 1; j <= n; j++) if (s[j] == c) suite = 1 }
			}
			if (deb && suite && !off && uri != "") { print uri, key; exit }
		}' "$f"
	done
}

# Does any apt source already serve SUITE?
has_suite() { # suite
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] && grep -v '^[[:space:]]*#' "$f" | grep -qw -- "$1" && return 0
	done
	return 1
}

# apt on lists, archives and an empty package database of its own under
# DIR, for ARCH's packages (DIR/etc/sources.list is the caller's to write):
# sets APT_OPTS, the options every apt-get and apt-cache call takes. Nothing
# is installed on this machine: what it downloads is unpacked with dpkg -x.
private_apt() { # dir arch
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial" "$1/etc/apt.conf.d" \
		"$1/etc/preferences.d" "$1/etc/sources.list.d"
	: > "$1/status"
	# shellcheck disable=SC2034 # the caller's
	APT_OPTS=(-q -o "Dir::Etc::SourceList=$1/etc/sources.list"
		-o "Dir::Etc::SourceParts=$1/etc/sources.list.d"
		-o "Dir::Etc::Preferences=$1/etc/preferences" -o "Dir::Etc::PreferencesParts=$1/etc/preferences.d"
		-o "Dir::State::Lists=$1/lists" -o "Dir::State::status=$1/status" -o "Dir::Cache=$1/cache"
		-o "APT::Architecture=$2" -o "APT::Architectures::=$2" -o "Acquire::Languages=none"
		-o "APT::Sandbox::User=root")
}
