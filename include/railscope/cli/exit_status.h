// SPDX-License-Identifier: Apache-2.0
// The exit statuses every `railscope` command shares, from sysexits(3) as BSD and Debian tools use them,
// so a script can tell a mistyped command line or an unwritable output file from a command's verdict
// (0 to 4, each command's own: docs/cli.md).
#pragma once

#include <sysexits.h>

namespace railscope::cli {

// A bad option, value, argument or command: nothing was done and nothing printed on stdout.
inline constexpr int kExitUsage = EX_USAGE;  // 64
// Input the command was pointed at is malformed (the tuner's rules file in strict mode).
inline constexpr int kExitDataError = EX_DATAERR;  // 65
// An output file (--html, --json FILE, --log-file) cannot be written: found out before anything is
// printed or measured.
inline constexpr int kExitCannotCreate = EX_CANTCREAT;  // 73

}  // namespace railscope::cli
