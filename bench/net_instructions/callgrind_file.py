# SPDX-License-Identifier: Apache-2.0
"""Reads one callgrind output file (format: valgrind.org/docs/manual/cl-format.html) into what
bench/net_instructions needs: the instructions (Ir) each function executed itself, per object, and the calls
between functions (how many, and the instructions spent inside them)."""

import collections
import re

_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


class Profile:
    def __init__(self):
        self.self_ir = collections.Counter()  # (object, function) -> Ir executed in the function itself
        self.calls = collections.Counter()  # callee function -> calls into it
        self.call_ir = collections.Counter()  # callee function -> Ir inside those calls (inclusive)
        self.callers = collections.defaultdict(collections.Counter)  # callee function -> caller -> calls
        self.total = 0

    def object_ir(self):
        per = collections.Counter()
        for (obj, _), ir in self.self_ir.items():
            per[obj] += ir
        return per

    def entries(self, pattern):
        """Callees whose function name matches `pattern`: (calls, inclusive Ir) summed over them."""
        rx = re.compile(pattern)
        calls = ir = 0
        for key, n in self.calls.items():
            if rx.search(key):
                calls += n
                ir += self.call_ir[key]
        return calls, ir


def _ir_of(cost_line, npositions):
    # "<positions> <Ir> [more events]": one position (line) by default, two (instr line) with
    # --dump-instr=yes (the file's "positions:" line says which); the only event collected here is Ir. A
    # cost may be omitted (0).
    parts = cost_line.split()
    return int(parts[npositions]) if len(parts) > npositions else 0


def read(path):
    prof = Profile()
    names = {"ob": {}, "fn": {}}

    def name(kind, value):
        m = _NAMED.match(value)
        if not m:
            return value
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), "(%s)" % m.group(1))

    obj = fn = cfn = None
    pending_calls = None  # the calls= line whose cost line comes next
    npositions = 1  # "positions: line" unless the header says otherwise
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                ir = _ir_of(line, npositions)
                if pending_calls is not None:
                    prof.calls[cfn] += pending_calls
                    prof.callers[cfn][fn] += pending_calls
                    prof.call_ir[cfn] += ir
                    pending_calls = None
                else:
                    prof.self_ir[(obj, fn)] += ir
                continue
            if line.startswith("positions:"):
                npositions = len(line.split()) - 1
                continue
            if line.startswith(("summary:", "totals:")):
                prof.total = int(line.split()[1])
                continue
            key, _, value = line.partition("=")
            if key == "ob":
                obj = name("ob", value)
            elif key == "fn":
                fn = name("fn", value)
            elif key == "cob":
                name("ob", value)  # may define a name; the callee is known by its function
            elif key == "cfn":
                cfn = name("fn", value)
            elif key == "calls":
                pending_calls = int(value.split()[0])
    return prof
