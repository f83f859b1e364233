#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/net_vs_reference/ratios.py over two made-up boots whose every ratio is known: each railscope run is
paired with the reference runs around it, each boot gives one ratio per cell, the table quotes the median over
boots; and each boot's railscope / ib_write_bw and reference / ib_write_bw (its median run over the boot's
ib_write_bw) are listed below, what a bandwidth target against perftest is judged by."""
import contextlib
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, sys.argv.pop(1))
import ratios  # noqa: E402


def boot(folder, write_bw, runs):
    """A boot folder as guest.sh writes it: ib_write_bw of 64 KiB first, then netbench runs (who, MiB/s) of
    64 KiB at window 8, in that order."""
    folder.mkdir(parents=True)
    lines = []
    perftest = folder / "000-ib_write_bw-64K.txt"
    # perftest's result line: bytes, iterations, BW peak, BW average [MB/sec], MsgRate
    perftest.write_text(f" #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]\n"
                        f" 65536 1000 {write_bw + 1:.2f} {write_bw:.2f} 0.000600\n")
    lines.append(f"0 ib_write_bw 64K - {perftest}")
    for seq, (who, mib) in enumerate(runs, start=1):
        f = folder / f"{seq:03d}-{who}-bw-64K-8.json"
        f.write_text(json.dumps({"results": [{"bytes_per_s": mib * 2**20, "bw_messages": 384}]}))
        lines.append(f"{seq} {who}-bw 64K 8 {f}")
    (folder / "manifest.txt").write_text("\n".join(lines) + "\n")
    return str(folder)


class Ratios(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        # Boot 1: railscope 30 then 34 around reference 36 and 40: pairs 30/36 and 34/mean(36, 40), median
        # 0.864; railscope's median run 32 over ib_write_bw 40 is 0.8, the reference's 38 / 40 is 0.95.
        # Boot 2: every run 45 against 50, ib_write_bw 50: pairs 0.9, railscope 0.9 and reference 1.0 of it.
        self.folders = [
            boot(root / "boot1", 40.0, [("railscope", 30.0), ("reference", 36.0), ("railscope", 34.0),
                                        ("reference", 40.0)]),
            boot(root / "boot2", 50.0, [("railscope", 45.0), ("reference", 50.0), ("railscope", 45.0),
                                        ("reference", 50.0)]),
        ]

    def tearDown(self):
        self.tmp.cleanup()

    def table(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = ratios.main(self.folders)
        self.assertEqual(rc, 0)
        return out.getvalue().splitlines()

    def test_each_boot_against_ib_write_bw_and_their_median(self):
        lines = self.table()
        head = [i for i, line in enumerate(lines) if line.startswith("against ib_write_bw of the same boot")]
        self.assertEqual(len(head), 1, "\n".join(lines))
        row = lines[head[0] + 2].split()
        self.assertEqual(row[:3], ["bw", "64K", "w8"])
        self.assertEqual(row[3:], ["0.850", "0.975", "0.800", "0.900", "|", "0.950", "1.000"])

    def test_railscope_paired_with_its_neighbouring_reference_runs(self):
        rows = [line.split() for line in self.table() if line.startswith("bw 64K w8")]
        main = rows[0]  # the first table: medians, then the per-boot railscope / reference
        # railscope, reference, ib_write_bw: medians over boots of each boot's median run (no ib_send_bw)
        self.assertEqual(main[3:7], ["38.50", "44.00", "45.00", "-"])
        self.assertEqual(main[7], "0.882")  # median of 0.864 and 0.900
        self.assertEqual(main[8], "0.850")  # railscope / ib_write_bw, as the per-boot block's median
        self.assertEqual(main[-2:], ["0.864", "0.900"])

    def test_a_perftest_result_that_is_not_finite_counts_as_missing(self):
        # perftest prints inf where it could not calibrate its cycle counter (a guest clocked by the HPET):
        # such a boot has no ib_write_bw, and the medians are boot 2's alone.
        self.folders[0] = boot(Path(self.tmp.name) / "boot1-inf", float("inf"),
                               [("railscope", 30.0), ("reference", 36.0)])
        main = [line.split() for line in self.table() if line.startswith("bw 64K w8")][0]
        self.assertEqual(main[5], "50.00")  # ib_write_bw
        self.assertEqual(main[8], "0.900")  # railscope / ib_write_bw


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
