// The CLI's own diagnostic log (spdlog): what a command does on the way to its output, for the user who
// asks (--log-level debug) and for a log file. stdout stays the command's output; log lines go to
// stderr (and to --log-file when given). The plugins never use this: they log through NCCL's logger
// (lib/core/log.cpp) and link no spdlog.
#pragma once

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <string>

namespace railscope::cli {

struct LogOptions {
  std::string level = "warn";  // trace, debug, info, warn, error, critical, off
  std::string file;            // "" = stderr only
};

// --log-level and --log-file on the top-level app (valid before or after the command's name).
void add_log_options(CLI::App& app, LogOptions& options);

// Installs the "railscope" logger as spdlog's default: stderr, plus the file (appended) when given.
// Returns "" or why the file cannot be opened.
std::string start_logging(const LogOptions& options);

}  // namespace railscope::cli
