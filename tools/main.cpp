// SPDX-License-Identifier: Apache-2.0
// railscope — pre-flight checks, benchmarks and reports for railscope's NCCL plugins.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "railscope/cli/logging.h"
#include "railscope/cli/usage.h"
#include "railscope/cli/version.h"

namespace railscope::cli {
#define RS_COMMAND(name) void add_##name(CLI::App& app);
#include "commands.inc"
#undef RS_COMMAND
}  // namespace railscope::cli

int main(int argc, char** argv) {
  namespace cli = railscope::cli;
  CLI::App app{"railscope: NCCL net/tuner/profiler plugins — doctor, netbench, report, A/B", "railscope"};
  app.require_subcommand(1);
  app.fallthrough();  // --log-level/--log-file also after the command's name
  app.set_version_flag("--version", std::string("railscope ") + cli::kVersion);
  app.footer(
      "Exit status 64: a usage error (bad option, value or command); 73: an output file cannot be written; "
      "0 to 4: each command's verdict (its --help).");
  cli::LogOptions log;
  cli::add_log_options(app, log);
  cli::start_logging(log);  // stderr at the default level until the options are known: never stdout
  // Logging starts once the top-level options are parsed, before any command's callback runs.
  app.parse_complete_callback([&log] {
    if (const std::string err = cli::start_logging(log); !err.empty()) {
      std::fprintf(stderr, "railscope: --log-file %s: cannot write there: %s\n", log.file.c_str(),
                   err.c_str());
      throw CLI::RuntimeError(cli::kExitCannotCreate);
    }
    spdlog::debug("railscope {}", cli::kVersion);
  });
#define RS_COMMAND(name) cli::add_##name(app);
#include "commands.inc"
#undef RS_COMMAND
  return cli::run(app, argc, argv);
}
