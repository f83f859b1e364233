#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every rule of the rules file has a unit test: each alert fires in at least one alert_rule_test (and
promtool requires exactly the expected alerts, so the healthy twins' series, job="healthy", must stay
silent), and each recording rule is queried by a promql_expr_test or feeds a tested alert.
Usage: every_rule_tested.py RULES TESTS"""
import re
import sys

import yaml


def main():
    rules = yaml.safe_load(open(sys.argv[1]))
    tests = yaml.safe_load(open(sys.argv[2]))["tests"]
    fired, queried = set(), ""
    for t in tests:
        for a in t.get("alert_rule_test", []):
            if a.get("exp_alerts"):
                fired.add(a["alertname"])
        for q in t.get("promql_expr_test", []):
            queried += q["expr"] + "\n"
    problems = []
    alert_exprs = ""
    for g in rules["groups"]:
        for r in g["rules"]:
            if "alert" in r:
                alert_exprs += r["expr"] + "\n"
                if r["alert"] not in fired:
                    problems.append(f"alert {r['alert']} never fires in a test")
    for g in rules["groups"]:
        for r in g["rules"]:
            if "record" in r and r["record"] not in queried and not re.search(re.escape(r["record"]) + r"\b", alert_exprs):
                # A recording rule used only by another recording rule counts through that one.
                users = [x["record"] for gg in rules["groups"] for x in gg["rules"]
                         if "record" in x and r["record"] in x["expr"]]
                if not any(u in queried or u in alert_exprs for u in users):
                    problems.append(f"recording rule {r['record']} is neither queried nor used by a tested alert")
    healthy = sum(1 for t in tests for s in t.get("input_series", []) if 'job="healthy"' in s["series"])
    if healthy == 0:
        problems.append("no healthy twin series (job=\"healthy\") in the tests")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
