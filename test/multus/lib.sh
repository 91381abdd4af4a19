# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# test/netns/sriov_lib.sh sources the lib.sh beside the script that sources
# it: this one hands it test/netns/lib.sh.
. "$SOURCE_DIR/test/netns/lib.sh"
