// SPDX-License-Identifier: Apache-2.0
// How every `railscope` command line ends: a usage error is exit status 64 (EX_USAGE) with one line
// naming what is wrong (a mistyped command gets the closest existing name), help and --version exit 0, a
// command's own status is passed through.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "railscope/cli/exit_status.h"

namespace railscope::cli {

// Levenshtein distance (insertions, deletions, substitutions).
size_t edit_distance(std::string_view a, std::string_view b);

// The name in `names` closest to `typed` when it is near enough to be a typo (distance at most 2, and
// less than half of `typed`'s length), else "".
std::string closest_match(std::string_view typed, const std::vector<std::string>& names);

// The first word on the command line that should name a subcommand (or an option) of the app it
// follows but names none, with that app: "doktor" in `railscope doktor`, "servr" in `railscope netbench
// servr`, "--jsn" in `railscope doctor --jsn` (with the closest name when one is near). The values of
// options that take one are skipped; scanning stops at `--` and at an app that takes positional
// arguments. Empty message when every word is known.
std::string unknown_command_message(CLI::App& app, const std::vector<std::string>& args);

// Parses and runs `app`; returns the process's exit status. Every usage error (bad option, bad value,
// missing argument, unknown command) is kExitUsage: CLI11's own codes (105, 106, 109, 114, ...) never
// leak, and no verdict of a command shares it. Usage errors print one line on stderr
// ("railscope netbench: --window: Value 40 not in range [1 - 32]") and a hint to --help.
int run(CLI::App& app, int argc, const char* const* argv);

}  // namespace railscope::cli
