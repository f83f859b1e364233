#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-instruction counts of one function, beside its disassembly: where a function's own instructions go.

Reads a callgrind file of bench/net_instructions written with per-instruction positions
(CG_OPTS="--dump-instr=yes --compress-pos=no --compress-strings=no" bench/net_instructions/run.sh ...), takes
the self cost (Ir) of every instruction of the first function whose name contains FUNC, and prints objdump's
disassembly of that function from the shared object with each instruction's count divided by PER (the round
trips or messages of the run, to read it per message). Instructions that never ran print 0.00; `--min 0.5`
hides them. callgrind records run-time addresses; the function's entry (its lowest executed address, which
every call runs) is aligned with its symbol in the file.

usage: annotate.py CALLGRIND_FILE SHARED_OBJECT FUNC [--per N] [--min X]
  e.g. annotate.py OUT/boot1/runs/000-railscope-pingpong-8-fast.cg OUT/boot1/build/plugin/net/libnccl-net-railscope.so \\
           'EagerSend::isend' --per 1010 --min 0.5
"""
import argparse
import collections
import re
import subprocess
import sys


def self_costs(path, func):
    """Ir per run-time address of the instructions of functions whose name contains func (calls excluded)."""
    counts = collections.Counter()
    fn, after_call = None, False
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('fn='):
                fn = line[3:].rstrip('\n')
                continue
            if line.startswith('calls='):
                after_call = True  # the next position line is the call's inclusive cost
                continue
            if not line[:1].isdigit():
                continue
            if after_call:
                after_call = False
                continue
            if fn is None or func not in fn:
                continue
            parts = line.split()
            if len(parts) >= 2 and parts[0].startswith('0x'):
                counts[int(parts[0], 16)] += int(parts[-1])  # "addr [line] Ir"
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('callgrind')
    ap.add_argument('shared_object')
    ap.add_argument('func')
    ap.add_argument('--per', type=float, default=1.0)
    ap.add_argument('--min', type=float, default=-1.0)
    a = ap.parse_args()
    counts = self_costs(a.callgrind, a.func)
    if not counts:
        sys.exit(f'no per-instruction counts for {a.func!r} (was the file written with --dump-instr=yes '
                 '--compress-pos=no?)')
    symbols = subprocess.run(['nm', '-C', a.shared_object], capture_output=True, text=True, check=True).stdout
    sym = next((int(l.split()[0], 16) for l in symbols.splitlines()
                if a.func in l and len(l.split()) > 2 and l.split()[1] in 'tTwW'), None)
    if sym is None:
        sys.exit(f'{a.func!r} is not in the symbol table of {a.shared_object}')
    entry = min(counts)
    dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', '-C', a.shared_object,
                          f'--start-address={sym:#x}', f'--stop-address={sym + 0x4000:#x}'],
                         capture_output=True, text=True, check=True).stdout
    print(f'{a.func}: {sum(counts.values()) / a.per:.1f} instructions of its own per unit')
    started = False
    for line in dis.splitlines():
        if re.match(r'^[0-9a-f]+ <', line):
            if started:
                break  # the next function
            started = True
            continue
        m = re.match(r'\s+([0-9a-f]+):\s+(.*)', line)
        if not m:
            continue
        c = counts.get(int(m.group(1), 16) - sym + entry, 0) / a.per
        if c > a.min:
            print(f'{c:8.2f}  {m.group(1)}: {m.group(2)[:110]}')


if __name__ == '__main__':
    main()
