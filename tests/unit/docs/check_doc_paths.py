#!/usr/bin/env python3
"""Every repository path and docs/ cross-reference named in README.md and docs/*.md exists.

Checked: markdown links to local files ([text](docs/x.md), relative to the linking file, #anchors
dropped) and backticked words that name a repository path: they start with one of the repository's
top-level folders (docs/, lib/, tools/, ...) or are a bare *.md name of docs/. Brace lists expand
(`tests/abi/plugin_loader.{h,cpp}`); a trailing `:line` or `:symbol` is dropped. Words with spaces,
globs (`*`), placeholders (`<x>`, `…`) or `=` are commands or patterns, not paths. IGNORED lists the few
paths the docs name on purpose that are not in the tree (examples, files created at run time).

Usage: check_doc_paths.py <source root> [file.md ...]   (default: README.md docs/*.md)
Exit 0 when every path exists; 1 with one line per missing path (file:line: path).
"""
import itertools
import pathlib
import re
import sys

TOP = ("bench/", "cmake/", "deploy/", "docs/", "examples/", "include/", "lib/", "plugin/", "scripts/",
       "tests/", "tools/", ".ci/")
# Paths named on purpose that do not exist in the tree, each with why.
IGNORED = {
    "plugin/profiler/abi/profiler_vN.cpp": "pattern: one file per ABI version",
    "plugin/tuner/abi/tuner_vN.cpp": "pattern: one file per ABI version",
    "tests/abi/net_tcp/net_datapath_abi_test": "a test binary, built from tests/abi/net_tcp/",
}
# Prefixes of paths that are not in the source tree: relative to the install prefix (/opt/railscope),
# or created at build or run time.
IGNORED_PREFIXES = ("lib/libnccl-", "build/")

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")


def expand_braces(word):
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(word[: m.start()] + alt + word[m.end():]))
    return out


def candidate_paths(word):
    word = word.strip().rstrip(".,;)")
    if not word or any(c in word for c in " *<>…=$|"):
        return []
    if word.startswith("./"):
        word = word[2:]
    word = re.sub(r":[A-Za-z0-9_:.()-]*$", "", word)  # file:line, file:symbol
    if word.startswith(TOP) or (re.fullmatch(r"[a-z0-9_-]+\.md", word) is not None):
        return expand_braces(word)
    return []


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    files = [pathlib.Path(f) for f in sys.argv[2:]] or [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    missing = []
    for md in files:
        md = md if md.is_absolute() else root / md
        in_fence = False
        for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue  # code blocks: commands and sample output, checked by the commands' tests
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                path = (md.parent / target.split("#", 1)[0]).resolve()
                if not path.exists():
                    missing.append(f"{md.relative_to(root)}:{n}: link {target}")
            for word in CODE.findall(line):
                for p in candidate_paths(word):
                    if p in IGNORED or p.startswith(IGNORED_PREFIXES):
                        continue
                    base = root / "docs" if re.fullmatch(r"[a-z0-9_-]+\.md", p) else root
                    if not (base / p).exists():
                        missing.append(f"{md.relative_to(root)}:{n}: {p}")
    for m in missing:
        print(f"missing: {m}")
    if not missing:
        print(f"docs paths: {len(files)} files, every path exists")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
