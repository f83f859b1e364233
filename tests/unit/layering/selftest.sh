#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layering check catches each rule's violation: a fake tree with one violation at a time must
# fail, and the same tree without it must pass.
set -u
check=${1:?check_layering.sh}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
clean_tree() {
  rm -rf "$tmp/t" && mkdir -p "$tmp/t"/{plugin/net/tcp,plugin/net/verbs,plugin/net/common,plugin/tuner/abi,lib/core,tools/tuner}
  echo '#include "plugin/net/common/socket.h"' > "$tmp/t/plugin/net/tcp/a.cpp"
  echo '#include "plugin/net/common/socket.h"' > "$tmp/t/plugin/net/verbs/a.cpp"
  echo '#include "railscope/core/log.h"' > "$tmp/t/lib/core/a.cpp"
  echo '#include "plugin/tuner/engine.h"' > "$tmp/t/tools/tuner/a.h"   # a plugin's core: allowed
}
expect() {  # expect <0|1> <what> [tcp libs]
  bash "$check" "$tmp/t" "${3-}" > "$tmp/out" 2>&1
  local rc=$?
  if [ "$rc" != "$1" ]; then echo "FAIL: $2: exit $rc, expected $1"; cat "$tmp/out"; fail=1; else echo "ok: $2"; fi
}
clean_tree; expect 0 "clean tree" "railscope_net_common;railscope_core"
clean_tree; echo '#include "plugin/net/verbs/stats.h"' >> "$tmp/t/plugin/net/tcp/a.cpp"; expect 1 "tcp includes verbs"
clean_tree; echo '  #  include "plugin/net/tcp/wire.h"' >> "$tmp/t/plugin/net/verbs/a.cpp"; expect 1 "verbs includes tcp"
clean_tree; echo '#include "plugin/net/verbs/wire.h"' > "$tmp/t/plugin/net/common/b.h"; expect 1 "common includes an engine"
clean_tree; echo '#include <plugin/net/transport.h>' > "$tmp/t/lib/core/b.h"; expect 1 "lib includes plugin"
clean_tree; echo '#include "plugin/tuner/abi/adapter.h"' > "$tmp/t/tools/tuner/b.cpp"; expect 1 "tool includes an ABI layer"
clean_tree; expect 1 "tcp links verbs" "railscope_net_common;railscope_net_verbs;Threads::Threads"
exit $fail
