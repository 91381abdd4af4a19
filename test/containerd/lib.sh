# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The containerd tests reuse the netns tests' helpers: test/netns/sriov_lib.sh
# sources lib.sh from the directory of the running script, which is this one.
# shellcheck source=../netns/lib.sh
. "$SOURCE_DIR/test/netns/lib.sh"
