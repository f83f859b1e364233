# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Copies what a test-bed bench runs of a build (the CLI and the net plugin) into a folder the guest sees: the guest
# sees the host's files, but not every folder (its /tmp and /var/tmp are its own), and a build that changes while
# a bench runs must not change under it. The copy keeps the build's layout (DEST/tools/railscope,
# DEST/plugin/net/libnccl-net-railscope.so), so DEST works wherever a build folder does.
# usage: source bench/lib/stage_build.sh
#        stage_build BUILD DEST
stage_build() {
  local from=$1 to=$2
  mkdir -p "$to/tools" "$to/plugin/net"
  cp "$from/tools/railscope" "$to/tools/"
  cp "$from/plugin/net/libnccl-net-railscope.so" "$to/plugin/net/"
}
