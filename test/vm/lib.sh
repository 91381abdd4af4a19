# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# test/netns/sriov_lib.sh sources the lib.sh beside the test that sources
# it, so that each directory of tests can add helpers of its own: the
# aarch64 VM's test needs only the netns suite's.
. "$(dirname "${BASH_SOURCE[0]}")/../netns/lib.sh"
