#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Project files name only what a reader can follow.

Paths: every repository path and docs/ cross-reference named in a markdown file of the repository
exists. Checked: markdown links to local files ([text](docs/x.md), relative to the linking file, #anchors
dropped) and backticked words that name a repository path: they start with one of the repository's
top-level folders (docs/, lib/, tools/, ...) or are a bare *.md name of docs/. Brace lists expand
(`tests/abi/plugin_loader.{h,cpp}`); a trailing `:line` or `:symbol` is dropped. Words with spaces,
globs (`*`), placeholders (`<x>`, `…`) or `=` are commands or patterns, not paths. IGNORED lists the few
paths the docs name on purpose that are not in the tree (examples, files created at run time).

Hygiene: no markdown file and no comment in a source file (C/C++ `//` and `/* */`; `#` comments of
Python, shell, CMake and YAML; Python docstrings) names a folder of a developer's machine (a home
directory, a scratch folder, the workspace root) or a tracker's issue number, which a user cannot
follow. Code is not checked: a test that really uses a temporary directory at run time is fine, and so
are system paths such as the sysfs or shared-memory folders. External references written as
owner/repo#N stay allowed, and so does a numbered thing such as "AllReduce #5".

Usage: check_doc_paths.py <source root> [file ...]   (default: every *.md and source file of the tree)
Exit 0 when every path exists and nothing names a machine path or an issue; 1 with one line per
problem (file:line: what).
"""
import itertools
import os
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

# Folders of a developer's machine. Built from pieces so that this file's own code shows none whole.
MACHINE_PATHS = re.compile(
    r"(?<![\w.-])(?:/" + "work" + r"/|/" + "home" + r"/[A-Za-z_][\w.-]*|/" + "root" + r"/|/var/" + "tmp" + r"/"
    r"|/[\w.-]*" + "scratch" + r"\b|" + "testbed-" + r"scratch)")
ISSUE_REFS = re.compile(
    r"\b(?:issues?|PR|pull request|tickets?)\s*#?\d+\b|\((?:see |cf\. )?#\d+\)"
    r"|\b(?:see|fixes|fixed by|closes|per)\s+#\d+\b", re.IGNORECASE)
SOURCE_SUFFIXES = {".h": "c", ".hpp": "c", ".c": "c", ".cc": "c", ".cpp": "c", ".cu": "c",
                   ".py": "py", ".sh": "hash", ".bash": "hash", ".cmake": "hash", ".yaml": "hash",
                   ".yml": "hash"}
SOURCE_NAMES = {"CMakeLists.txt": "hash", "Dockerfile": "hash"}

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


def comment_kind(path):
    return SOURCE_NAMES.get(path.name) or SOURCE_SUFFIXES.get(path.suffix)


def c_comments(text):
    """(line, text) of every // and /* */ comment; string and character literals skipped."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i:end]))
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for k, part in enumerate(text[i:end].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, end)
            i = end
            continue
        elif ch == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim = text[i + 2:text.find("(", i)]
            end = text.find(")" + delim + '"', i)
            end = n if end < 0 else end + len(delim) + 2
            line += text.count("\n", i, end)
            i = end
            continue
        elif ch in "\"'" and not (ch == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 separators
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        i += 1
    return out


def hash_comments(text, python):
    """(line, text) of every # comment (shell: a # that starts a word); quoted text skipped.
    Python docstrings count as comments."""
    out = []
    lines = text.split("\n")
    in_doc = None
    for no, raw in enumerate(lines, 1):
        if python and in_doc:
            out.append((no, raw))
            if in_doc in raw:
                in_doc = None
            continue
        stripped = raw.lstrip()
        if python and stripped[:3] in ('"""', "'''"):
            out.append((no, raw))
            if stripped.count(stripped[:3]) == 1:
                in_doc = stripped[:3]
            continue
        if no == 1 and raw.startswith("#!"):
            continue
        quote = None
        for k, ch in enumerate(raw):
            if quote:
                if ch == "\\":
                    continue
                if ch == quote and (k == 0 or raw[k - 1] != "\\"):
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (python or k == 0 or raw[k - 1] in " \t;(|&"):
                out.append((no, raw[k:]))
                break
    return out


def hygiene(path, root):
    """One line per machine path or issue number in a markdown file or a source file's comments."""
    text = path.read_text(encoding="utf-8", errors="replace")
    kind = "md" if path.suffix == ".md" else comment_kind(path)
    if kind == "md":
        spans = list(enumerate(text.split("\n"), 1))
    elif kind == "c":
        spans = c_comments(text)
    elif kind in ("py", "hash"):
        spans = hash_comments(text, kind == "py")
    else:
        return []
    rel = path.relative_to(root) if path.is_relative_to(root) else path
    found = []
    for no, span in spans:
        for m in MACHINE_PATHS.finditer(span):
            found.append(f"{rel}:{no}: machine path {m.group(0)}")
        for m in ISSUE_REFS.finditer(span):
            found.append(f"{rel}:{no}: issue reference {m.group(0)}")
    return found


def tree_files(root):
    """Every markdown and source file of the tree; build folders and hidden folders (but .ci) skipped."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if not (d.startswith("build") or (d.startswith(".") and d != ".ci")))
        for f in sorted(filenames):
            p = pathlib.Path(dirpath) / f
            if p.suffix == ".md" or comment_kind(p):
                out.append(p)
    return out


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    files = [pathlib.Path(f) for f in sys.argv[2:]] or tree_files(root)
    files = [f if f.is_absolute() else root / f for f in files]
    problems = []
    for f in files:
        problems.extend(hygiene(f, root))
    mds = [f for f in files if f.suffix == ".md"]
    missing = []
    for md in mds:
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
    for p in problems:
        print(f"unfollowable: {p}")
    if not missing and not problems:
        print(f"docs paths: {len(mds)} markdown files, every path exists; {len(files)} files name no machine "
              "path and no issue")
    return 1 if missing or problems else 0


if __name__ == "__main__":
    sys.exit(main())
