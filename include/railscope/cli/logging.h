// SPDX-License-Identifier: Apache-2.0
// The CLI's own diagnostic log (spdlog): every message a command writes besides its output and the one
// line that explains a failed exit status. Progress at info (the default level), warnings as
// `railscope: warning: [id] text`, what each step does at debug and trace; `--log-level warn` keeps
// warnings only, `off` silences all. stdout stays the command's output; log lines go to stderr (and to
// --log-file when given). The plugins never use this: they log through NCCL's logger (lib/core/log.cpp)
// and link no spdlog; what the libraries they share with the CLI log (lib/core's RS_WARN ...) is routed
// here in the CLI.
#pragma once

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <string>

namespace railscope::cli {

struct LogOptions {
  std::string level = "info";  // trace, debug, info, warn, error, critical, off
  std::string file;            // "" = stderr only
};

// --log-level and --log-file on the top-level app (valid before or after the command's name).
void add_log_options(CLI::App& app, LogOptions& options);

// Installs the "railscope" logger as spdlog's default: stderr, plus the file (appended) when given, and
// routes lib/core's log (railscope/core/log.h) into it. Returns "" or why the file cannot be opened.
std::string start_logging(const LogOptions& options);

// A message an NCCL-style logger received (lib/core's log, a loaded plugin's) at its spdlog level: WARN
// a warning, INFO debug (`info` when `info_shown`: netbench --verbose), TRACE trace.
void log_nccl_line(int nccl_level, std::string_view text, bool info_shown = false);

// The level the user asked for ("debug"), for child processes that log as this one does.
std::string log_level_name();

}  // namespace railscope::cli
