#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints, for each test the last ctest run in BUILD_DIR failed, the lines that say why.

CI shows only the end of its log, and ctest's --output-on-failure prints a failed test's output where
it ran, long before that end. scripts/test.sh writes this digest after each ctest run that failed and
.ci/run prints it again last, so the end of the log says which check failed and what it printed.

From a GoogleTest binary: each "file:line: Failure" with the lines after it (the values, the message),
and the "[  FAILED  ]" lines. From anything else (the test bed's scripts): the last lines of its output.

usage: failed-tests.py BUILD_DIR [LABEL]
"""
import pathlib
import re
import sys

LINES_AFTER_FAILURE = 8  # "Expected equality of these values:", the two values, the message
TAIL_LINES = 12          # of a test without GoogleTest failure blocks
MAX_LINES_PER_TEST = 40


def outputs(log_text):
    """Each test's output in ctest's LastTest.log, by test name."""
    found = {}
    pattern = re.compile(r'^\d+/\d+ Test: (\S+)\n.*?^Output:\n-+\n(.*?)^<end of output>', re.M | re.S)
    for m in pattern.finditer(log_text):
        found[m.group(1)] = m.group(2).splitlines()
    return found


def digest(lines):
    picked = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.endswith(': Failure') or 'runtime error:' in line or 'ERROR: AddressSanitizer' in line:
            picked.append(line)
            i += 1
            # the block ends at GoogleTest's next marker ("[  FAILED  ]", "[ RUN      ]", ...)
            for _ in range(LINES_AFTER_FAILURE):
                if i >= len(lines) or re.match(r'\[[ =-]', lines[i]):
                    break
                picked.append(lines[i])
                i += 1
            continue
        if line.startswith('[  FAILED  ]') and '(' in line:
            picked.append(line)
        i += 1
    if not picked:
        picked = lines[-TAIL_LINES:]
    return picked[:MAX_LINES_PER_TEST]


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    build = pathlib.Path(sys.argv[1])
    label = sys.argv[2] if len(sys.argv) > 2 else str(build)
    tmp = build / 'Testing' / 'Temporary'
    failed_file = tmp / 'LastTestsFailed.log'
    if not failed_file.is_file():
        return 0
    failed = [line.split(':', 1)[1] for line in failed_file.read_text(errors='replace').splitlines() if ':' in line]
    if not failed:
        return 0
    log_file = tmp / 'LastTest.log'
    found = outputs(log_file.read_text(errors='replace')) if log_file.is_file() else {}
    for name in failed:
        print(f'failed ({label}): {name}')
        for line in digest(found.get(name, ['(no output recorded)'])):
            print(f'  | {line}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
