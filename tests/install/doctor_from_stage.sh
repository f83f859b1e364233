#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# doctor_from_stage.sh STAGE BINDIR LIBDIR — runs the installed `railscope doctor` (text and --json) from
# the staged tree, outside the build tree: it must run and exit 0 (healthy), 1 (warnings) or 2 (errors),
# never crash, and its JSON must parse. This machine has no RDMA device, so 2 is the usual answer.
# Its `plugins` section must find the three plugins in STAGE/LIBDIR (next to the binary) and load them,
# and, with NCCL_<KIND>_PLUGIN=railscope and that folder on LD_LIBRARY_PATH, load the same files.
set -euo pipefail
stage=$1 bindir=$2 libdir=$3
exe="$stage/$bindir/railscope"
cd "$(mktemp -d)"
trap 'rm -rf "$PWD"' EXIT
rc=0
"$exe" doctor >text.out 2>text.err || rc=$?
if [ $rc -gt 2 ]; then
  echo "railscope doctor exited $rc (want 0, 1 or 2)" >&2; cat text.out text.err >&2; exit 1
fi
grep -q "^Status: " text.out || { echo "no Status line in doctor's text report" >&2; cat text.out >&2; exit 1; }
rc_json=0
env -u RAILSCOPE_PLUGIN_DIR -u NCCL_NET_PLUGIN -u NCCL_TUNER_PLUGIN -u NCCL_PROFILER_PLUGIN \
  "$exe" doctor --json >json.out 2>json.err || rc_json=$?
rc_sel=0
env -u RAILSCOPE_PLUGIN_DIR NCCL_NET_PLUGIN=railscope NCCL_TUNER_PLUGIN=railscope NCCL_PROFILER_PLUGIN=railscope \
  LD_LIBRARY_PATH="$stage/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$exe" doctor --json >selected.out 2>selected.err || rc_sel=$?
if [ $rc_json -gt 2 ]; then
  echo "railscope doctor --json exited $rc_json" >&2; cat json.err >&2; exit 1
fi
python3 - "$rc_json" json.out "$rc_sel" selected.out "$stage/$libdir" <<'PY'
import json, os, sys
rc, path, rc_sel, path_sel, libdir = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
libdir = os.path.realpath(libdir)
report = json.load(open(path))
assert report["exit_code"] == rc, f"exit_code {report['exit_code']} in the JSON, process exit {rc}"
assert report["schema"] == "railscope.doctor/1", report["schema"]
plugins = report["sections"]["plugins"]
# A libnccl-net.so of this host's own (origin nccl_default) is not railscope's business here.
plugins["probes"] = [p for p in plugins["probes"] if p["origin"] != "nccl_default"]
assert plugins["railscope_dir_origin"] == "installed", plugins
assert os.path.realpath(plugins["railscope_dir"]) == libdir, (plugins["railscope_dir"], libdir)
assert sorted(p["kind"] for p in plugins["probes"]) == ["net", "profiler", "tuner"], plugins["probes"]
for p in plugins["probes"]:
    assert p["loads"] and os.path.dirname(p["path"]) == libdir, p
assert not [f for f in report["findings"] if f["section"] == "plugins"], report["findings"]
sel = json.load(open(path_sel))
assert sel["exit_code"] == rc_sel
probes = sel["sections"]["plugins"]["probes"]
# NCCL_<KIND>_PLUGIN=railscope resolves (LD_LIBRARY_PATH) to the same files: one probe each, selected.
assert sorted((p["kind"], p["selected"]) for p in probes) == [("net", True), ("profiler", True), ("tuner", True)], probes
for p in probes:
    assert p["loads"] and os.path.dirname(p["path"]) == libdir and p["tried"][-1].endswith("-railscope.so"), p
print(f"ok: doctor from the installed tree: exit {rc}, {len(report['findings'])} findings, "
      f"sections {sorted(report['sections'])}")
PY
