#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the include layering of the source tree (docs/architecture.md, "Rules the layout enforces"):
#   1. the net plugin's engines stand alone: plugin/net/tcp includes nothing from plugin/net/verbs and
#      plugin/net/verbs nothing from plugin/net/tcp (what both need lives in plugin/net/common);
#   2. lib/ includes nothing from plugin/ (the libraries sit below the plugins);
#   3. tools/ never includes a plugin's ABI layer (plugin/<x>/abi/): a tool may link a plugin's core
#      library (tools/tuner/explain_report.h uses plugin/tuner/engine.h), never its ABI layer; tools
#      reach a plugin's ABI only by loading the .so, as NCCL does;
#   4. the TCP engine's library does not link the verbs engine's (railscope_net_tcp's link libraries,
#      given as the second argument, do not name railscope_net_verbs).
# Usage: check_layering.sh <source root> [railscope_net_tcp link libraries]. Exit 0 when clean, 1 with
# one line per violation otherwise.
set -u
root=${1:?source root}
tcp_libs=${2-}
bad=0

# Prints "file:line: text" for each include of a path under $2 in the files under $1.
includes_of() {
  local dir=$1 target=$2
  [ -d "$root/$dir" ] || return 0
  grep -rnE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc' --include='*.c' \
    "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]${target}" "$root/$dir" | sed "s#^$root/##"
}

violation() {
  echo "layering: $1"
  bad=1
}

while IFS= read -r hit; do [ -n "$hit" ] && violation "$hit (plugin/net/tcp must not include the verbs engine)"; done \
  < <(includes_of plugin/net/tcp 'plugin/net/verbs/')
while IFS= read -r hit; do [ -n "$hit" ] && violation "$hit (plugin/net/verbs must not include the TCP engine)"; done \
  < <(includes_of plugin/net/verbs 'plugin/net/tcp/')
while IFS= read -r hit; do [ -n "$hit" ] && violation "$hit (plugin/net/common must not include an engine)"; done \
  < <(includes_of plugin/net/common 'plugin/net/(tcp|verbs)/')
while IFS= read -r hit; do [ -n "$hit" ] && violation "$hit (lib/ must not include plugin/)"; done \
  < <(includes_of lib 'plugin/')
while IFS= read -r hit; do [ -n "$hit" ] && violation "$hit (tools/ must not include a plugin's ABI layer)"; done \
  < <(includes_of tools 'plugin/[^/"<>]+/abi/')
case ";$tcp_libs;" in
  *";railscope_net_verbs;"*) violation "railscope_net_tcp links railscope_net_verbs (link railscope_net_common)" ;;
esac
exit $bad
