#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checklist for deploy/Dockerfile, standing in for hadolint (not packaged for Debian; its npm wrapper
downloads a binary at run time, which cannot work offline). Each rule names the hadolint rule it
mirrors where there is one. Usage: dockerfile_checklist.py DOCKERFILE  (exit 1 and one line per finding)."""
import re
import sys


def instructions(text):
    """(line_no, KEYWORD, arguments) with continuation lines joined and comments dropped."""
    out, buf, start = [], "", 0
    for no, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue  # comment inside a continued instruction
        if not buf:
            start = no
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += stripped
        kw, _, args = buf.partition(" ")
        out.append((start, kw.upper(), args.strip()))
        buf = ""
    if buf:
        out.append((start, "UNTERMINATED", buf))
    return out


def main(path):
    text = open(path).read()
    ins = instructions(text)
    problems = []
    bad = lambda no, msg: problems.append(f"{path}:{no}: {msg}")

    args = {}
    for no, kw, a in ins:
        if kw == "ARG" and "=" in a and not any(k == "FROM" for _, k, _ in ins[: ins.index((no, kw, a))]):
            name, _, value = a.partition("=")
            args[name.strip()] = value.strip()
    stages = []  # (line, image, name)
    for no, kw, a in ins:
        if kw == "UNTERMINATED":
            bad(no, "instruction ends with a line continuation")
        if kw == "FROM":
            m = re.match(r"(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$", a, re.I)
            if not m:
                bad(no, f"FROM not understood: {a}")
                continue
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda v: args.get(v.group(1) or v.group(2), "?UNSET?"), m.group(1))
            stages.append((no, image, m.group(2)))
            if "?UNSET?" in image:
                bad(no, f"FROM uses an ARG without a default: {m.group(1)}")
            tag = image.split("@")[0].rsplit(":", 1)
            if "@sha256:" not in image and (len(tag) < 2 or "/" in tag[1]):
                bad(no, f"DL3006: image without an explicit tag: {image}")
            if image.endswith(":latest"):
                bad(no, f"DL3007: 'latest' tag: {image}")
            if not m.group(2):
                bad(no, "stage without a name (AS <name>): COPY --from needs stable names")
        if kw == "RUN":
            for cmd in re.split(r"&&|;|\|\|", a):
                cmd = cmd.strip()
                if re.match(r"apt-get\s+(-\S+\s+)*install\b", cmd):
                    if "--no-install-recommends" not in cmd:
                        bad(no, "DL3015: apt-get install without --no-install-recommends")
                    if not re.search(r"(^|\s)(-y|--yes|-qq?y)\b", cmd):
                        bad(no, "DL3014: apt-get install without -y")
            if re.search(r"apt-get\s+(-\S+\s+)*install\b", a):
                if "apt-get update" not in a:
                    bad(no, "DL3009/DL3019-style: apt-get install without apt-get update in the same RUN")
                if "rm -rf /var/lib/apt/lists/*" not in a:
                    bad(no, "DL3009: apt lists not removed in the same RUN")
            if re.search(r"apt-get\s+(dist-)?upgrade", a):
                bad(no, "DL3005: apt-get upgrade in an image build")
            if re.search(r"(^|\s)sudo\s", a):
                bad(no, "DL3004: sudo in RUN")
            if re.search(r"(^|\s)cd\s", a):
                bad(no, "DL3003: use WORKDIR instead of cd")
            if "|" in a.replace("||", "") and not any(k == "SHELL" and "pipefail" in s for _, k, s in ins):
                bad(no, "DL4006: pipe in RUN without SHELL [..., -o, pipefail, ...]")
            if re.search(r"\b(curl|wget)\b", a):
                bad(no, "downloads in RUN: the build must use only the base image and apt")
        if kw == "ADD":
            bad(no, "DL3020: use COPY, not ADD")
        if kw == "WORKDIR" and not a.startswith("/"):
            bad(no, "DL3000: WORKDIR must be absolute")
        if kw == "MAINTAINER":
            bad(no, "DL4000: MAINTAINER is deprecated")
        if kw in ("CMD", "ENTRYPOINT") and not a.startswith("["):
            bad(no, f"DL3025: {kw} in shell form (use JSON form so signals reach the process)")

    if len(stages) < 2:
        bad(1, "not multi-stage: the build tools must stay out of the shipped image")
    names = [s[2] for s in stages]
    if stages and "devel" not in stages[0][1]:
        bad(stages[0][0], "the build stage must start from an NVIDIA CUDA devel image")
    for no, image, _ in stages:
        if not image.startswith("nvidia/cuda:"):
            bad(no, f"unexpected base image {image} (expected nvidia/cuda)")
        if "ubuntu" not in image:
            bad(no, f"{image}: the package names here are Ubuntu's")
    # The last stage is what ships: non-root, /opt/railscope from the build stage, rdma-core runtime.
    last_from = max(i for i, (_, k, _) in enumerate(ins) if k == "FROM")
    final = ins[last_from:]
    users = [a for _, k, a in final if k == "USER"]
    if not users or users[-1].split(":")[0] in ("0", "root"):
        bad(final[0][0], "DL3002: the final stage must end as a non-root USER")
    if not any(k == "COPY" and re.search(r"--from=(\S+)\s+/opt/railscope\s+/opt/railscope", a) and
               re.search(r"--from=(\S+)", a).group(1) in names for _, k, a in final):
        bad(final[0][0], "final stage must COPY --from=<build stage> /opt/railscope /opt/railscope")
    runtime_pkgs = " ".join(a for _, k, a in final if k == "RUN")
    for pkg in ("libibverbs1", "ibverbs-providers", "librdmacm1"):
        if not re.search(rf"(^|\s){re.escape(pkg)}(\s|$)", runtime_pkgs):
            bad(final[0][0], f"final stage lacks rdma-core runtime package {pkg}")
    if re.search(r"-dev\b", runtime_pkgs):
        bad(final[0][0], "final stage installs -dev packages")
    build_text = " ".join(a for _, k, a in ins[:last_from] if k == "RUN")
    for lib in ("railscope", "libnccl-${kind}-railscope.so"):
        if lib not in build_text:
            bad(1, f"build stage does not install {lib}")
    if "-DRAILSCOPE_BUILD_TESTS=OFF" not in build_text:
        bad(1, "build stage builds the tests (slow, needs GTest): pass -DRAILSCOPE_BUILD_TESTS=OFF")
    for p in problems:
        print(p)
    print(f"dockerfile checklist: {len(problems)} finding(s) in {len(ins)} instructions, {len(stages)} stages")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
