// SPDX-License-Identifier: Apache-2.0
#include "railscope/cli/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <vector>

#include "railscope/core/log.h"

namespace railscope::cli {
namespace {

// lib/core's lines arrive as NCCL's logger would get them: "railscope: <text>".
void core_logger(ncclDebugLogLevel level, unsigned long /*flags*/, const char* /*file*/, int /*line*/,
                 const char* format, ...) {
  char text[4096];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(text, sizeof text, format, ap);
  va_end(ap);
  std::string_view line(text);
  if (line.starts_with("railscope: ")) line.remove_prefix(11);
  log_nccl_line(level, line);
}

}  // namespace

void add_log_options(CLI::App& app, LogOptions& options) {
  app.add_option("--log-level", options.level,
                 "Messages on stderr: trace, debug (what each step does), info (progress), warn, error, "
                 "critical, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str()
      ->configurable(false);
  app.add_option("--log-file", options.file, "Also append the diagnostic log to FILE (at the same level)");
}

std::string start_logging(const LogOptions& options) {
  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_st>());
  if (!options.file.empty()) {
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_st>(options.file, /*truncate=*/false));
    } catch (const spdlog::spdlog_ex& e) {
      return e.what();
    }
  }
  auto logger = std::make_shared<spdlog::logger>("railscope", sinks.begin(), sinks.end());
  // As grep and gcc write theirs: "railscope: warning: [tuner.config] ...".
  logger->set_pattern("railscope: %l: %v");
  // A file outlives the terminal session: each line says when and which process.
  if (sinks.size() > 1) sinks[1]->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z railscope[%P] %l: %v");
  logger->set_level(spdlog::level::from_str(options.level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  log::set_nccl_logger(&core_logger);
  return {};
}

void log_nccl_line(int nccl_level, std::string_view text, bool info_shown) {
  switch (nccl_level) {
    case NCCL_LOG_NONE: return;
    case NCCL_LOG_WARN: spdlog::warn("{}", text); return;
    case NCCL_LOG_ABORT: spdlog::error("{}", text); return;
    case NCCL_LOG_TRACE: spdlog::trace("{}", text); return;
    case NCCL_LOG_INFO:
      if (info_shown)
        spdlog::info("{}", text);
      else
        spdlog::debug("{}", text);
      return;
    default: spdlog::debug("{}", text); return;
  }
}

std::string log_level_name() {
  const auto name = spdlog::level::to_string_view(spdlog::default_logger_raw()->level());
  return name == "warning" ? "warn" : std::string(name.data(), name.size());
}

}  // namespace railscope::cli
