#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/net_instructions/check_budget.py's verdicts: a figure within its tolerance passes, one above it fails,
one far below it passes with a hint to lower the budget, a figure the runs cannot give fails, and a figure's own
tolerance wins over the file's."""
import sys
import unittest

sys.path.insert(0, sys.argv.pop(1))
import check_budget  # noqa: E402

BUDGET = {"tolerance": 0.05, "figures": {"isend work": {"instructions": 600},
                                         "test idle": {"instructions": 100, "tolerance": 0.01}}}


def verdicts(figures):
    rows, failed = check_budget.compare(BUDGET, figures)
    return {r[0]: r[4] for r in rows}, failed


class Compare(unittest.TestCase):
    def test_within_tolerance_passes(self):
        v, failed = verdicts({"isend work": (629.0, True), "test idle": (100.9, True)})
        self.assertFalse(failed)
        self.assertEqual(v, {"isend work": "ok", "test idle": "ok"})

    def test_over_tolerance_fails(self):
        v, failed = verdicts({"isend work": (631.0, True), "test idle": (100.0, True)})
        self.assertTrue(failed)
        self.assertTrue(v["isend work"].startswith("OVER"))

    def test_own_tolerance_wins(self):
        v, failed = verdicts({"isend work": (600.0, True), "test idle": (101.5, True)})
        self.assertTrue(failed)
        self.assertTrue(v["test idle"].startswith("OVER"))

    def test_far_below_passes_and_says_lower_it(self):
        v, failed = verdicts({"isend work": (500.0, True), "test idle": (100.0, True)})
        self.assertFalse(failed)
        self.assertIn("lower the budget", v["isend work"])

    def test_missing_figure_fails(self):
        v, failed = verdicts({"isend work": (600.0, True)})
        self.assertTrue(failed)
        self.assertEqual(v["test idle"], "not measured")

    def test_upper_bound_is_marked(self):
        v, _ = verdicts({"isend work": (600.0, False), "test idle": (100.0, True)})
        self.assertIn("upper bound", v["isend work"])


if __name__ == "__main__":
    unittest.main()
