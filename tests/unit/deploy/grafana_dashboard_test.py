#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""deploy/grafana's dashboards: each is JSON with the fields Grafana's import needs, a uid no other
dashboard has, unique panel ids and query refIds, every query parses as PromQL (promtool check rules
on the queries as recording rules), and every metric a query names is one railscope writes: listed in
docs/monitoring.md's metric tables and written by the profiler, the net plugin or doctor (their
sources), or a recording rule of deploy/prometheus/railscope-rules.yml, or Prometheus' ALERTS.
Usage: grafana_dashboard_test.py SOURCE_DIR"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

WRITERS = ["plugin/profiler/core/prom.cpp", "plugin/net/verbs/watch/net_prom.cpp", "tools/doctor/watch_prom.cpp"]
PORT_FAMILIES = "lib/node/port_prom.cpp"
KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
    "inf", "nan",
}
NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def documented_metrics(doc):
    """Names in the first column of docs/monitoring.md's metric tables; a histogram adds _bucket, _sum and
    _count, a summary _sum and _count."""
    names = set()
    in_table = False
    for line in open(doc):
        if line.startswith("| metric"):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`(railscope_[a-z0-9_]+)`", cells[0]) if in_table else None
        if not m:
            continue
        names.add(m.group(1))
        if cells[1].startswith("histogram"):
            names.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))
        elif cells[1].startswith("summary"):
            names.update(m.group(1) + s for s in ("_sum", "_count"))
    return names


def written_metrics(src):
    """Every railscope_* name the writers' sources spell out, and the port families (prefix + suffix) they
    write through railscope/node/port_prom.h."""
    text = "".join(open(os.path.join(src, w)).read() for w in WRITERS)
    names = set(re.findall(r"railscope_[a-z0-9_]+", text))
    prefixes = re.findall(r'append_port_series\(out, "(railscope_[a-z_]+)"', text)
    suffixes = re.findall(r'family\("([a-z_]+)"', open(os.path.join(src, PORT_FAMILIES)).read())
    names.update(f"{p}_{s}" for p in prefixes for s in suffixes)
    return names


def recording_rules(rules):
    return {r["record"] for g in yaml.safe_load(open(rules))["groups"] for r in g["rules"] if "record" in r}


def metric_names(expr):
    """The metric names a PromQL expression selects (Grafana's $variables are inside label matchers)."""
    names = set()
    for alts in re.findall(r'__name__\s*=~?\s*"([^"]*)"', expr):
        names.update(alts.split("|"))
    m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", expr, re.S)
    if m:
        expr = m.group(1)
    e = re.sub(r'"(\\.|[^"\\])*"', "", expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\b\d+(\.\d+)?([eE][+-]?\d+)?\b", " ", e)
    for tok in NAME.finditer(e):
        word = tok.group(0)
        if word.lower() in KEYWORDS or re.match(r"\s*\(", e[tok.end():]):
            continue  # an operator, or a function or aggregation being called
        names.add(word)
    return names


def queries(dash):
    """(where, expr) of every panel target (rows' nested panels too) and every query variable."""
    out = []
    for p in dash.get("panels", []):
        for q in [p] + p.get("panels", []):
            for t in q.get("targets", []):
                out.append((f"panel {q.get('id')} ({q.get('title')}) target {t.get('refId')}", t.get("expr", "")))
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            out.append((f"variable {v.get('name')}", q.get("query", "") if isinstance(q, dict) else q or ""))
    return out


def check_structure(path, dash, problems):
    for field, kind in (("uid", str), ("title", str), ("schemaVersion", int), ("panels", list)):
        if not isinstance(dash.get(field), kind) or not dash.get(field):
            problems.append(f"{path}: `{field}` missing or not a {kind.__name__}")
    if isinstance(dash.get("uid"), str) and not re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", dash["uid"]):
        problems.append(f"{path}: uid {dash['uid']!r} is not 1-40 letters, digits, - or _ (Grafana's limit)")
    variables = {v.get("name") for v in dash.get("templating", {}).get("list", [])}
    ids = []
    for p in dash.get("panels", []):
        for q in [p] + p.get("panels", []):
            ids.append(q.get("id"))
            where = f"{path}: panel {q.get('id')} ({q.get('title')})"
            if not q.get("type") or not q.get("title"):
                problems.append(f"{where}: needs a type and a title")
            g = q.get("gridPos", {})
            if not all(isinstance(g.get(k), int) for k in "hwxy") or g.get("x", 0) + g.get("w", 0) > 24:
                problems.append(f"{where}: gridPos needs whole h, w, x, y within 24 columns")
            if q.get("type") == "row":
                continue
            targets = q.get("targets", [])
            refs = [t.get("refId") for t in targets]
            if not targets or len(set(refs)) != len(refs) or not all(t.get("expr") for t in targets):
                problems.append(f"{where}: needs targets, each with a query and its own refId")
            for t in targets + [q]:
                uid = t.get("datasource", {}).get("uid", "")
                if uid.startswith("$") and uid.strip("${}") not in variables:
                    problems.append(f"{where}: datasource {uid} is no variable of the dashboard")
    if len(set(ids)) != len(ids):
        problems.append(f"{path}: panel ids repeat: {sorted(i for i in ids if ids.count(i) > 1)}")


def check_promql(exprs, problems):
    """Each query as a recording rule, for promtool's parser ($variables replaced by a value)."""
    if shutil.which("promtool") is None:
        problems.append("promtool not found: install Debian's prometheus package (scripts/install-deps.sh does)")
        return
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{i}", "expr": re.sub(r"\$\{?\w+\}?", ".*", e)}
        for i, (_, e) in enumerate(exprs) if not e.lstrip().startswith("label_values(")]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        yaml.safe_dump(rules, f)
    try:
        r = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append("a dashboard query does not parse:\n" + r.stdout + r.stderr)
    finally:
        os.unlink(f.name)


def main():
    src = sys.argv[1]
    documented = documented_metrics(os.path.join(src, "docs/monitoring.md"))
    written = written_metrics(src)
    records = recording_rules(os.path.join(src, "deploy/prometheus/railscope-rules.yml"))
    problems = []
    paths = sorted(glob.glob(os.path.join(src, "deploy/grafana/*.json")))
    if not paths:
        problems.append("no dashboard in deploy/grafana/")
    uids = {}
    for path in paths:
        name = os.path.relpath(path, src)
        try:
            dash = json.load(open(path))
        except json.JSONDecodeError as e:
            problems.append(f"{name}: not JSON: {e}")
            continue
        check_structure(name, dash, problems)
        if dash.get("uid") in uids:
            problems.append(f"{name}: uid {dash['uid']} is also {uids[dash['uid']]}'s")
        uids[dash.get("uid")] = name
        exprs = queries(dash)
        check_promql(exprs, problems)
        for where, expr in exprs:
            for metric in sorted(metric_names(expr)):
                if metric in records or metric == "ALERTS":
                    continue
                if metric not in documented:
                    problems.append(f"{name}: {where} names {metric}, which docs/monitoring.md does not list")
                if metric not in written:
                    problems.append(f"{name}: {where} names {metric}, which no railscope writer writes")
        print(f"{name}: {len(exprs)} queries, uid {dash.get('uid')}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
