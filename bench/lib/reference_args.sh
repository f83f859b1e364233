# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The command line of the benches that run railscope beside the reference plugin (NCCL's IB transport built
# by bench/net_vs_reference/build-reference.sh): [BUILD_DIR] REF_PLUGIN=/path/libnccl-net-ref.so, in any order.
# Sets `build` (default $root/build) and REF_PLUGIN (made absolute); exits 2 naming what is missing. A caller
# that measures railscope alone sets reference_optional=1 first: REF_PLUGIN may then be left out (empty).
# usage: source bench/lib/reference_args.sh
#        reference_args "$@"
reference_args() {
  local a
  build=${root:?}/build
  for a in "$@"; do
    case $a in
      REF_PLUGIN=*) REF_PLUGIN=${a#REF_PLUGIN=} ;;
      *) build=$a ;;
    esac
  done
  [[ -x $build/tools/railscope && -f $build/plugin/net/libnccl-net-railscope.so ]] ||
    { echo "no build in $build (cmake --build build)" >&2; exit 2; }
  [[ -z ${REF_PLUGIN:-} && ${reference_optional:-0} == 1 ]] && { REF_PLUGIN=; return; }
  [[ -n ${REF_PLUGIN:-} && -f $REF_PLUGIN ]] ||
    { echo "give REF_PLUGIN=/path/libnccl-net-ref.so (bench/net_vs_reference/README.md builds it)" >&2; exit 2; }
  REF_PLUGIN=$(cd "$(dirname "$REF_PLUGIN")" && pwd)/$(basename "$REF_PLUGIN")
}
