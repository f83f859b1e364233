#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/failed-tests.py against a ctest log laid out as ctest 3.25 writes Testing/Temporary/LastTest.log:
a GoogleTest failure gives its failure block and FAILED line (not the passing cases around it), a script's
failure its last lines, a passing test nothing, a failed test with no output says so, and a build folder
whose last run failed nothing prints nothing.

usage: failed_tests_test.py PATH/TO/failed-tests.py
"""
import pathlib
import subprocess
import sys
import tempfile


def section(n, name, lines):
    out = f'{n}/4 Testing: {name}\n{n}/4 Test: {name}\nCommand: "/bin/{name}"\nDirectory: /b\n'
    out += f'"{name}" start time: Dec 03 11:04 UTC\nOutput:\n' + '-' * 58 + '\n'
    out += ''.join(line + '\n' for line in lines)
    out += '<end of output>\nTest time =   0.01 sec\n' + '-' * 58 + '\nTest Failed.\n'
    return out


GTEST = [
    '[==========] Running 3 tests from 1 test suite.',
    '[ RUN      ] NetDataPath.Passes',
    '[       OK ] NetDataPath.Passes (2 ms)',
    '[ RUN      ] NetDataPath.SenderKilledMidTransferIsPeerClosed',
    '/src/net_datapath_abi_test.cpp:545: Failure',
    'Expected equality of these values:',
    '  rc',
    '    Which is: 2',
    '  ncclRemoteError',
    '    Which is: 6',
    'the plugin logged:',
    'NET/railscope : [peer.closed] recv on the connection with 10.0.0.2',
    '[  FAILED  ] NetDataPath.SenderKilledMidTransferIsPeerClosed (850 ms)',
    '[ RUN      ] NetDataPath.AlsoPasses',
    '[       OK ] NetDataPath.AlsoPasses (1 ms)',
    '[  FAILED  ] 1 test, listed below:',
    '[  FAILED  ] NetDataPath.SenderKilledMidTransferIsPeerClosed',
]
SCRIPT = [f'guest line {i}' for i in range(1, 31)] + ['flap 2: no [link.recovered]']


def run(script, build):
    return subprocess.run([sys.executable, script, str(build), 'unit'], capture_output=True, text=True, check=True).stdout


def main():
    script = sys.argv[1]
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        build = pathlib.Path(d)
        tmp = build / 'Testing' / 'Temporary'
        tmp.mkdir(parents=True)
        expect(run(script, build) == '', 'no LastTestsFailed.log: nothing printed')
        log = 'Start testing: Dec 03 11:04 UTC\n' + '-' * 58 + '\n'
        log += section(1, 'net_tcp.abi.datapath.veth', GTEST)
        log += section(2, 'all.good', ['[==========] 1 test', '[       OK ] X.Y (1 ms)'])
        log += section(3, 'netfabric.link_flap', SCRIPT)
        (tmp / 'LastTest.log').write_text(log)
        (tmp / 'LastTestsFailed.log').write_text(
            '22:net_tcp.abi.datapath.veth\n905:netfabric.link_flap\n906:never.ran\n')
        out = run(script, build)
        lines = out.splitlines()
        expect('failed (unit): net_tcp.abi.datapath.veth' in lines, 'the GoogleTest failure is named')
        for want in ['net_datapath_abi_test.cpp:545: Failure', 'Which is: 2', '[peer.closed]',
                     '[  FAILED  ] NetDataPath.SenderKilledMidTransferIsPeerClosed (850 ms)']:
            expect(want in out, f'the failure block has {want!r}')
        expect('Passes' not in out, 'passing cases are left out')
        expect('listed below' not in out, "GoogleTest's closing list is left out")
        expect('all.good' not in out, 'a passing test is left out')
        expect('failed (unit): netfabric.link_flap' in lines, 'the script failure is named')
        expect('flap 2: no [link.recovered]' in out and 'guest line 20' in out, 'its last lines are printed')
        expect('guest line 5\n' not in out, 'only its last lines')
        expect('failed (unit): never.ran' in lines and '(no output recorded)' in out, 'no output: said so')
        if failures:
            print(out)
    for f in failures:
        print(f'FAIL: {f}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
