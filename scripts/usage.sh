# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
#
# usage [STATUS], for the scripts here (sourced, not a command): the
# script's header comment, from its third line to the first line that is
# not a comment, is its manual. On stdout with status 0 (--help), else on
# stderr, and the script exits with STATUS (2 by default).

# Where the script is, taken before it changes directory.
USAGE_SCRIPT=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

usage() {
	local status=${1:-2}

	if [ "$status" = 0 ]; then
		usage_text
	else
		usage_text >&2
	fi
	exit "$status"
}

usage_text() {
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$USAGE_SCRIPT"
}
