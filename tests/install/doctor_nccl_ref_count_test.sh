#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# doctor_nccl_ref_count_test.sh RAILSCOPE CC NET_SO — doctor's plugins section reads the version of the
# libnccl.so.2 the loader finds (a stand-in built here, exporting ncclGetVersion) and warns
# (plugin.net_ref_count_unset) when NCCL_NET_PLUGIN is set, that NCCL is 2.28 or 2.29 and
# NCCL_NET_PLUGIN_REF_COUNT is unset. Healthy twins: the same with NCCL_NET_PLUGIN_REF_COUNT=1, NCCL 2.30
# and 2.27, and NCCL_NET_PLUGIN unset (NCCL is then not looked at).
set -euo pipefail
railscope=$1 cc=$2 net=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for code in 22809 22903 23003 22707; do
  mkdir -p "$work/$code"
  printf 'int ncclGetVersion(int* v) { *v = %s; return 0; }\n' "$code" >"$work/$code.c"
  "$cc" -shared -fPIC -Wl,-soname,libnccl.so.2 -o "$work/$code/libnccl.so.2" "$work/$code.c"
done
run() {  # run NAME CODE [env...]: doctor --json with that NCCL on the loader's path
  local name=$1 code=$2 rc=0
  shift 2
  env -u NCCL_NET_PLUGIN -u NCCL_NET_PLUGIN_REF_COUNT LD_LIBRARY_PATH="$work/$code" "$@" \
    "$railscope" doctor --json >"$work/$name.json" 2>"$work/$name.err" || rc=$?
  [ $rc -le 2 ] || { echo "doctor exited $rc" >&2; cat "$work/$name.err" >&2; exit 1; }
}
run unset_2_28 22809 NCCL_NET_PLUGIN="$net"
run unset_2_29 22903 NCCL_NET_PLUGIN="$net"
run zero_2_28 22809 NCCL_NET_PLUGIN="$net" NCCL_NET_PLUGIN_REF_COUNT=0
run set_2_28 22809 NCCL_NET_PLUGIN="$net" NCCL_NET_PLUGIN_REF_COUNT=1
run unset_2_30 23003 NCCL_NET_PLUGIN="$net"
run unset_2_27 22707 NCCL_NET_PLUGIN="$net"
run no_plugin 22809
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def load(name):
    with open(f"{work}/{name}.json") as f:
        d = json.load(f)
    return d["sections"]["plugins"], [f["id"] for f in d["findings"] if f["section"] == "plugins"]
bad = []
for name, version, warned in [("unset_2_28", "2.28.9", True), ("unset_2_29", "2.29.3", True),
                              ("zero_2_28", "2.28.9", True), ("set_2_28", "2.28.9", False),
                              ("unset_2_30", "2.30.3", False), ("unset_2_27", "2.27.7", False)]:
    sec, ids = load(name)
    nccl = sec.get("nccl") or {}
    if nccl.get("version") != version or not str(nccl.get("path", "")).endswith("libnccl.so.2"):
        bad.append(f"{name}: nccl = {nccl}, want version {version} from .../libnccl.so.2")
    if ("plugin.net_ref_count_unset" in ids) != warned:
        bad.append(f"{name}: plugin.net_ref_count_unset {'missing' if warned else 'reported'}: {ids}")
sec, ids = load("no_plugin")
if sec.get("nccl") is not None or "plugin.net_ref_count_unset" in ids:
    bad.append(f"no_plugin: NCCL looked at without NCCL_NET_PLUGIN: {sec.get('nccl')} {ids}")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: warned for NCCL 2.28/2.29 without NCCL_NET_PLUGIN_REF_COUNT; silent with it =1, for 2.30 and 2.27, "
      "and without NCCL_NET_PLUGIN")
PY
