#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/net_instructions/callgrind_file.py reads the Ir of each cost line whatever positions the file
declares: one (line, callgrind's default) or two (instr line, with --dump-instr=yes). With two it once read the
line number as the cost, and table.py printed empty tables for such files."""
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, sys.argv.pop(1))
import callgrind_file  # noqa: E402

BODY = """
ob=(1) /lib/plugin.so
fn=(1) isend
{p} 7
{p} 5
cfn=(2) post_send
calls=3 {p}
{p} 40
fn=(2) post_send
{p} 40
"""


def write(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".cg", delete=False)
    f.write(text)
    f.close()
    return f.name


class Positions(unittest.TestCase):
    def check(self, header, pos):
        text = "# callgrind format\nversion: 1\n" + header + "events: Ir\nsummary: 92\n" + BODY.format(p=pos)
        path = write(text)
        try:
            prof = callgrind_file.read(path)
        finally:
            Path(path).unlink()
        self.assertEqual(prof.self_ir[("/lib/plugin.so", "isend")], 12)
        self.assertEqual(prof.self_ir[("/lib/plugin.so", "post_send")], 40)
        self.assertEqual(prof.calls["post_send"], 3)
        self.assertEqual(prof.call_ir["post_send"], 40)
        self.assertEqual(prof.entries("^isend$|post_send"), (3, 40))
        self.assertEqual(prof.total, 92)

    def test_line_positions_by_default(self):
        self.check("", "12")

    def test_line_positions_declared(self):
        self.check("positions: line\n", "12")

    def test_instr_and_line_positions(self):
        self.check("positions: instr line\n", "0x7be40 0")


if __name__ == "__main__":
    unittest.main()
