// railscope — pre-flight checks, benchmarks and reports for railscope's NCCL plugins.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "railscope/core/log.h"

namespace railscope::cli {
#define RS_COMMAND(name) void add_##name(CLI::App& app);
#include "commands.inc"
#undef RS_COMMAND
}  // namespace railscope::cli

int main(int argc, char** argv) {
  CLI::App app{"railscope: NCCL net/tuner/profiler plugins — doctor, netbench, report, A/B", "railscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "railscope 0.1.0");
#define RS_COMMAND(name) railscope::cli::add_##name(app);
#include "commands.inc"
#undef RS_COMMAND
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
