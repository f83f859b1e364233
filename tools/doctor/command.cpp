// The `railscope doctor` subcommand.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "doctor.h"

namespace railscope::cli {

void add_doctor(CLI::App& app) {
  struct Options {
    bool json = false;
    bool no_verbs = false;
    std::string sysfs_root;
    std::string topo;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("doctor",
                                     "Pre-flight check of this node's RDMA setup: devices, ports, GIDs, MTU, "
                                     "memlock, env, GPUDirect. Exit 0 "
                                     "healthy, 1 warnings, 2 errors (or a usage error: then nothing is "
                                     "printed on stdout)");
  cmd->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/doctor.md)");
  cmd->add_option(
         "--sysfs-root", opt->sysfs_root,
         "Read sysfs from DIR instead of /sys (or RAILSCOPE_SYSFS_ROOT); libibverbs is then not queried")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--topo", opt->topo,
                  "hwloc XML topology (lstopo --of xml) for the GPUDirect section instead of this "
                  "system's (or RAILSCOPE_TOPO_FILE)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--no-verbs", opt->no_verbs, "Do not query libibverbs (sysfs only)");
  cmd->callback([opt] {
    const doctor::NodeFacts facts = doctor::gather({opt->sysfs_root, !opt->no_verbs, opt->topo});
    const doctor::Report report = doctor::run(facts);
    const std::string out =
        opt->json ? doctor::to_json(report, facts).dump(2) + "\n" : doctor::to_text(report, facts);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (report.exit_code != 0) throw CLI::RuntimeError(report.exit_code);
  });
}

}  // namespace railscope::cli
