#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# doctor_plugins_test.sh RAILSCOPE CC TUNER_SO PROFILER_SO — doctor's `plugins` section against a plugin
# that cannot load: a .so built here that needs a library which is then removed (what an image without
# a plugin's dependency looks like). The real tuner and profiler sit next to it and must load.
#  1. RAILSCOPE_PLUGIN_DIR=<dir>: railscope's own net plugin fails -> plugin.load_failed, a warning,
#     naming the missing library; tuner and profiler load; no finding for them.
#  2. NCCL_NET_PLUGIN=<that file>: NCCL would load it -> plugin.load_failed is an error, exit 2.
#  3. NCCL_NET_PLUGIN=<nothing there> -> plugin.not_found, an error.
#  4. NCCL_NET_PLUGIN unset, a libnccl-net.so on LD_LIBRARY_PATH: reported as what NCCL loads by
#     default (origin nccl_default, its symbol), no finding.
#  5. RAILSCOPE_PLUGIN_DIR=<a folder without railscope's plugins> -> three plugin.not_found warnings.
set -euo pipefail
railscope=$1 cc=$2 tuner=$3 profiler=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/dep" "$work/plugins"
cat >"$work/dep.c" <<'C'
int railscope_test_dep_value(void) { return 42; }
C
cat >"$work/plugin.c" <<'C'
int railscope_test_dep_value(void);
/* Looks like a net plugin to a symbol lookup; it never gets that far: its dependency is gone. */
struct { const char* name; int (*value)(void); } ncclNetPlugin_v12 = {"broken", railscope_test_dep_value};
C
"$cc" -shared -fPIC -o "$work/dep/libraildoctor-missing-dep.so" "$work/dep.c"
"$cc" -shared -fPIC -o "$work/plugins/libnccl-net-railscope.so" "$work/plugin.c" \
  -L"$work/dep" -lraildoctor-missing-dep
rm "$work/dep/libraildoctor-missing-dep.so"
cp "$tuner" "$profiler" "$work/plugins/"
mkdir -p "$work/default"
cat >"$work/default.c" <<'C'
struct { const char* name; } ncclNetPlugin_v8 = {"someone-elses"};
C
"$cc" -shared -fPIC -o "$work/default/libnccl-net.so" "$work/default.c"

run() {  # run <json out> [env...]: doctor --json with only the given plugin variables set
  local out=$1; shift
  local rc=0
  # NCCL_NET_PLUGIN_REF_COUNT=1: a host's NCCL 2.28/2.29 would add plugin.net_ref_count_unset to the
  # findings checked here (doctor_nccl_ref_count_test.sh checks that one).
  env -u NCCL_NET_PLUGIN -u NCCL_TUNER_PLUGIN -u NCCL_PROFILER_PLUGIN -u RAILSCOPE_PLUGIN_DIR \
    NCCL_NET_PLUGIN_REF_COUNT=1 "$@" \
    "$railscope" doctor --json >"$out" 2>"$out.err" || rc=$?
  [ $rc -le 2 ] || { echo "doctor exited $rc" >&2; cat "$out.err" >&2; exit 1; }
  echo $rc >"$out.rc"
}
run "$work/own.json" RAILSCOPE_PLUGIN_DIR="$work/plugins"
run "$work/selected.json" RAILSCOPE_PLUGIN_DIR="$work/plugins" NCCL_NET_PLUGIN="$work/plugins/libnccl-net-railscope.so"
run "$work/absent.json" RAILSCOPE_PLUGIN_DIR="$work/plugins" NCCL_NET_PLUGIN=railscope-absent-plugin
run "$work/default.json" RAILSCOPE_PLUGIN_DIR="$work/plugins" LD_LIBRARY_PATH="$work/default"
run "$work/emptydir.json" RAILSCOPE_PLUGIN_DIR="$work/dep"

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def load(name):
    rep = json.load(open(f"{work}/{name}.json"))
    rc = int(open(f"{work}/{name}.json.rc").read())
    assert rep["exit_code"] == rc, (name, rep["exit_code"], rc)
    sec = rep["sections"]["plugins"]
    found = [f for f in rep["findings"] if f["section"] == "plugins"]
    return rep, sec, found
fails = []
def check(cond, what):
    if not cond: fails.append(what)

rep, sec, found = load("own")
check(sec["railscope_dir_origin"] == "RAILSCOPE_PLUGIN_DIR", f"own: origin {sec['railscope_dir_origin']}")
by_kind = {p["kind"]: p for p in sec["probes"] if p["origin"] == "railscope_dir"}
check(by_kind["net"]["found"] and not by_kind["net"]["loads"], f"own: net probe {by_kind['net']}")
check("libraildoctor-missing-dep.so" in (by_kind["net"]["error"] or ""), "own: the loader's error names the missing library")
for k in ("tuner", "profiler"):
    check(by_kind[k]["loads"] and by_kind[k]["path"].startswith(work), f"own: {k} should load from {work}: {by_kind[k]}")
check([(f["id"], f["severity"]) for f in found] == [("plugin.load_failed", "warning")], f"own: findings {found}")
check(found and "libraildoctor-missing-dep.so" in found[0]["detail"], "own: finding names the missing library")
check(found and "missing" in found[0]["fix"], f"own: fix {found[0]['fix'] if found else None}")

rep, sec, found = load("selected")
check([(f["id"], f["severity"]) for f in found] == [("plugin.load_failed", "error")], f"selected: findings {found}")
check(rep["exit_code"] == 2, f"selected: exit {rep['exit_code']}")
check(found and "NCCL_NET_PLUGIN=" in found[0]["detail"], "selected: finding names the variable")

rep, sec, found = load("absent")
ids = [(f["id"], f["severity"]) for f in found]
check(("plugin.not_found", "error") in ids, f"absent: findings {found}")
sel = [p for p in sec["probes"] if p["origin"] == "NCCL_NET_PLUGIN"]
check(sel and sel[0]["tried"] == ["railscope-absent-plugin", "libnccl-net-railscope-absent-plugin.so"],
      f"absent: NCCL's names tried {sel}")
rep, sec, found = load("default")
dflt = [p for p in sec["probes"] if p["origin"] == "nccl_default"]
check(len(dflt) == 1 and dflt[0]["loads"] and dflt[0]["symbol"] == "ncclNetPlugin_v8"
      and dflt[0]["path"] == f"{work}/default/libnccl-net.so", f"default: {dflt}")
check([f["id"] for f in found] == ["plugin.load_failed"], f"default: only the broken own net plugin: {found}")
rep, sec, found = load("emptydir")
check(sorted((f["id"], f["severity"]) for f in found) == [("plugin.not_found", "warning")] * 3,
      f"emptydir: {found}")
if fails:
    print("\n".join("FAIL " + f for f in fails)); sys.exit(1)
print("ok: a plugin with a missing library is reported (warning when railscope's own, error when "
      "NCCL_NET_PLUGIN selects it), a missing one is plugin.not_found, the real tuner/profiler load")
PY
