#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The longest chain of project headers a file pulls in (a.cpp -> a.h -> b.h -> ...), for every file
under the given folders: fails when one is longer than the limit, printing the chain. A deep chain
means a reader opens a file and has to follow many others to learn what a type is; the net plugin keeps
its chains at 6 or fewer (docs/architecture.md).
usage: include_depth.py SOURCE_ROOT LIMIT FOLDER...   (--selftest: a planted 3-deep chain must fail at 2)"""
import functools
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def longest_chains(root, folders):
    def resolve(source, name):
        for base in (root, os.path.join(root, "include"), os.path.dirname(source)):
            path = os.path.normpath(os.path.join(base, name))
            if os.path.isfile(path):
                return path
        return None

    @functools.lru_cache(maxsize=None)
    def chain(path):
        best = (path,)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            header = resolve(path, m.group(1))
            if header and header.endswith(".h") and header != path:
                sub = chain(header)
                if len(sub) + 1 > len(best):
                    best = (path,) + sub
        return best

    for folder in folders:
        for d, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if name.endswith((".h", ".cpp")):
                    yield chain(os.path.join(d, name))


def check(root, limit, folders):
    bad = [c for c in longest_chains(root, folders) if len(c) - 1 > limit]
    for c in bad:
        print(f"{len(c) - 1} > {limit}: " + " -> ".join(os.path.relpath(p, root) for p in c))
    return not bad


def selftest():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "x"))
        for name, inc in (("a.cpp", "x/b.h"), ("b.h", "x/c.h"), ("c.h", "x/d.h"), ("d.h", None)):
            with open(os.path.join(root, "x", name), "w") as f:
                f.write(f'#include "{inc}"\n' if inc else "// leaf\n")
        return not check(root, 2, ["x"]) and check(root, 3, ["x"])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--selftest"]:
        ok = selftest()
        print("selftest:", "ok" if ok else "FAILED")
        sys.exit(0 if ok else 1)
    ok = check(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
    sys.exit(0 if ok else 1)
