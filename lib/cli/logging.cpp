#include "railscope/cli/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <memory>
#include <vector>

namespace railscope::cli {

void add_log_options(CLI::App& app, LogOptions& options) {
  app.add_option("--log-level", options.level,
                 "The CLI's own diagnostic log on stderr: trace, debug, info, warn, error, critical, off")
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
  logger->set_pattern("railscope [%l] %v");
  // A file outlives the terminal session: each line says when and which process.
  if (sinks.size() > 1) sinks[1]->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z railscope[%P] [%l] %v");
  logger->set_level(spdlog::level::from_str(options.level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return {};
}

}  // namespace railscope::cli
