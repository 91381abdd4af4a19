# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The cases of a unit test written in shell (sourced): begin NAME opens a
# case, fail, eq and has fail it and go on, harness_done prints the TAP-like
# lines' count and exits non-zero when a case failed.
PASSED=0
FAILED=0
NAME=
CUR_FAILED=0

end_current() {
	[ -n "$NAME" ] || return 0
	if [ "$CUR_FAILED" = 0 ]; then
		echo "ok - $NAME"
		PASSED=$((PASSED + 1))
	else
		echo "not ok - $NAME"
		FAILED=$((FAILED + 1))
	fi
	NAME=
}

begin() {
	end_current
	NAME=$1
	CUR_FAILED=0
}

fail() {
	echo "  FAIL: $NAME: $*" >&2
	CUR_FAILED=1
}

eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; }
has() { case "$1" in *"$2"*) ;; *) fail "$3: '$1' does not contain '$2'" ;; esac; }

harness_done() {
	end_current
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
}
