// SPDX-License-Identifier: Apache-2.0
// The `railscope doctor` subcommand.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "doctor.h"
#include "railscope/cli/exit_status.h"
#include "railscope/cli/output_file.h"
#include "watch.h"
#include "watch_prom.h"

namespace railscope::cli {
namespace {

// A string from the node or the environment (NCCL_ALGO, a device name) need not be UTF-8: U+FFFD stands in
// for a byte that starts no UTF-8 sequence, rather than dump() throwing.
std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

void add_doctor(CLI::App& app) {
  struct Options {
    bool json = false;
    bool no_verbs = false;
    std::string sysfs_root;
    std::string topo;
    double watch = 0;
    std::string prom;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("doctor",
                         "Pre-flight check of this node's RDMA setup: devices, ports, GIDs, MTU, "
                         "link health, memlock, env, GPUDirect, RoCE QoS; --watch: counter deltas. Exit 0 "
                         "healthy, 1 warnings, 2 errors; 64 a usage error (nothing printed on stdout)");
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
  CLI::Option* watch =
      cmd->add_option(
             "--watch", opt->watch,
             "Instead of the report: counter deltas of each selected port over SECONDS, by category "
             "(loss, congestion, pause, link, discard, traffic, other), with findings; same exit codes")
          ->option_text("SECONDS")
          ->check(CLI::Range(0.1, 86400.0));
  cmd->add_option("--prom", opt->prom,
                  "With --watch: also write the ports' series for node_exporter's textfile collector to "
                  "PATH (a file when it ends in .prom, else a folder; docs/monitoring.md)")
      ->option_text("PATH")
      ->needs(watch);
  cmd->callback([opt] {
    if (opt->watch > 0) {
      // Checked before the watch runs, as every output file is (docs/cli.md): a folder by a file in it.
      if (!opt->prom.empty())
        require_writable_output("railscope doctor", "--prom",
                                opt->prom.ends_with(".prom") ? opt->prom : opt->prom + "/.railscope-check");
      std::string root;
      const doctor::WatchResult r = doctor::run_watch({opt->sysfs_root, !opt->no_verbs, opt->watch}, &root);
      const std::string out =
          opt->json ? json_text(doctor::watch_json(r, root)) : doctor::watch_text(r, root);
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      if (!opt->prom.empty()) {
        const std::string why = doctor::write_watch_prometheus(r, root, opt->prom);
        if (!why.empty()) {
          std::fprintf(stderr, "railscope doctor: no Prometheus textfile (--prom): %s\n", why.c_str());
          throw CLI::RuntimeError(kExitCannotCreate);
        }
      }
      if (r.exit_code != 0) throw CLI::RuntimeError(r.exit_code);
      return;
    }
    const doctor::NodeFacts facts = doctor::gather({opt->sysfs_root, !opt->no_verbs, opt->topo});
    const doctor::Report report = doctor::run(facts);
    const std::string out =
        opt->json ? json_text(doctor::to_json(report, facts)) : doctor::to_text(report, facts);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (report.exit_code != 0) throw CLI::RuntimeError(report.exit_code);
  });
}

}  // namespace railscope::cli
