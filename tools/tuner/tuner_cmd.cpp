// SPDX-License-Identifier: Apache-2.0
// `railscope tuner explain`: what the tuner plugin decides for a topology, size by size, and why.
// It builds the plugin's Engine from the flags and calls the same decision function NCCL reaches
// through getCollInfo.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "calibrate.h"
#include "explain_report.h"
#include "preflight_fingerprint.h"
#include "railscope/cli/exit_status.h"
#include "railscope/cli/output_file.h"
#include "railscope/cli/size.h"
#include "railscope/cli/usage.h"
#include "railscope/core/diagnosis.h"

namespace railscope::cli {
namespace {

constexpr uint64_t kMaxExplainBytes = 1ull << 50;  // 1 PiB: far beyond any collective

struct ExplainOptions {
  int nodes = 0;
  int gpus_per_node = 0;
  double nic_gbit = 0;  // Gbit/s
  double nic_gbps_deprecated = 0;
  int nics = 0;
  int node_gpus = 0;
  std::string coll = "allreduce";
  std::string config;
  std::string calibration;
  bool json = false;
  int pipe_ops = 1;
  int reg_buff = 0;
  int nvl_domains = 0;
  std::string intra;
  double intra_GBps = 0;  // GB/s
  double intra_gbps_deprecated = 0;
  bool no_strict = false;
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 16ull << 30;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "railscope tuner explain: %s\n", message.c_str());
  throw CLI::RuntimeError(kExitUsage);
}

// What no single flag's check can see: the flags against each other. One message per problem, the
// first found; a usage error like every other.
void check_inputs(const ExplainOptions& o) {
  if (o.min_bytes > o.max_bytes)
    usage_error(fmt::format("--min-bytes ({}) is above --max-bytes ({})", o.min_bytes, o.max_bytes));
  if (o.node_gpus > 0 && o.node_gpus < o.gpus_per_node)
    usage_error(fmt::format("--node-gpus {} is fewer than --gpus-per-node {}", o.node_gpus, o.gpus_per_node));
  const int64_t ranks = int64_t{o.nodes} * o.gpus_per_node;
  if (o.nvl_domains > 0 && (o.nvl_domains > ranks || ranks % o.nvl_domains != 0))
    usage_error(
        fmt::format("--nvl-domains {} does not divide the {} ranks ({} nodes x {} GPUs) into equal "
                    "NVLink domains",
                    o.nvl_domains, ranks, o.nodes, o.gpus_per_node));
}

// A NIC count with no rate (or a rate with no count) from any source leaves the inter-node hop
// unknown: the model would silently defer to NCCL. Checked on the merged facts, so a rate from
// RAILSCOPE_TUNER_NIC_GBIT, the rules file's `node` line or the node completes a --nics.
void check_nic_facts(const ExplainOptions& o, const railscope::tuner::NicFacts& nics) {
  if (o.nics > 0 && nics.gbps <= 0)
    usage_error(
        fmt::format("--nics {} needs the NICs' rate: --nic-gbit X (Gbit/s), RAILSCOPE_TUNER_NIC_GBIT "
                    "or a rules file's `node nic_gbit=X`; none is set and the node has no active "
                    "RDMA port",
                    o.nics));
  if (o.nic_gbit > 0 && nics.count <= 0)
    usage_error(
        fmt::format("--nic-gbit {} needs the NIC count: --nics N, RAILSCOPE_TUNER_NICS or a rules "
                    "file's `node nics=N`; none is set and the node has no active RDMA port",
                    o.nic_gbit));
}

void run_explain(const ExplainOptions& o) {
  using namespace railscope::tuner;
  const auto coll = parse_coll(o.coll);
  if (!coll)
    usage_error(fmt::format(
        "unknown collective '{}' (broadcast, reduce, allgather, reducescatter, allreduce)", o.coll));
  check_inputs(o);
  EngineInputs in;
  in.abi_version = 6;
  in.shape.n_nodes = o.nodes;
  in.shape.n_ranks = o.nodes * o.gpus_per_node;
  if (o.nvl_domains > 0) {
    in.shape.nvl_domains = o.nvl_domains;
    in.shape.min_ranks_per_nvl_domain = in.shape.max_ranks_per_nvl_domain = in.shape.n_ranks / o.nvl_domains;
  }
  in.overrides.nic_source = in.overrides.intra_source = "cli";
  if (o.nics > 0) in.overrides.nics = o.nics;
  if (o.nic_gbit > 0) in.overrides.nic_gbps = o.nic_gbit;
  if (o.node_gpus > 0) in.overrides.node_gpus = o.node_gpus;
  if (o.intra == "nvlink") in.overrides.intra = IntraLink::NvLink;
  if (o.intra == "pcie") in.overrides.intra = IntraLink::Pcie;
  if (o.intra_GBps > 0) in.overrides.intra_gbps = o.intra_GBps;
  if (!o.config.empty()) in.config_path = o.config;
  if (!o.calibration.empty()) in.calibration_path = o.calibration;
  if (o.no_strict) in.strict = false;
  in.lax_switch = "--no-strict";
  in.log_decisions = false;
  EngineOrError made = Engine::create(in);
  if (made.error) {
    std::fprintf(stderr, "%s\n", diag::one_line(*made.error).c_str());
    throw CLI::RuntimeError(kExitDataError);  // the rules file, not the command line
  }
  for (const std::string& note : made.engine->config().deprecations) spdlog::warn("{}", note);
  check_nic_facts(o, made.engine->topology().nics);
  spdlog::debug("tuner explain: {}", made.engine->summary());
  tuner_explain::Request req;
  req.coll = *coll;
  req.pipe_ops = o.pipe_ops;
  req.reg_buff = o.reg_buff;
  req.min_bytes = o.min_bytes;
  req.max_bytes = o.max_bytes;
  if (const auto& refused = made.engine->calibration_refusal()) {
    std::fprintf(stderr, "railscope tuner explain: %s\n", diag::one_line(*refused).c_str());
    throw CLI::RuntimeError(kExitDataError);  // the calibration file, not the command line
  }
  if (made.engine->calibration().active) {
    const auto rows = tuner_explain::explain_calibrated(*made.engine, req);
    if (o.json)
      std::cout << tuner_explain::render_calibrated_json(*made.engine, rows)
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    else
      std::cout << tuner_explain::render_calibrated_text(*made.engine, rows);
    return;
  }
  const auto rows = tuner_explain::explain(*made.engine, req);
  if (o.json)
    std::cout << tuner_explain::render_json(*made.engine, rows)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  else
    std::cout << tuner_explain::render_text(*made.engine, rows);
}

struct CalibrateOptions {
  std::vector<std::string> profiles;
  std::string output;
  std::string preflight;
  tuner_calibrate::Fingerprint print;
};

[[noreturn]] void calibrate_data_error(const std::string& message) {
  std::fprintf(stderr, "railscope tuner calibrate: %s; nothing written\n", message.c_str());
  throw CLI::RuntimeError(kExitDataError);
}

// The NIC facts of the fingerprint from a preflight report (a --nic flag still names the family).
std::optional<tuner_calibrate::PreflightFacts> fingerprint_from_preflight(CalibrateOptions& o) {
  if (o.preflight.empty()) return std::nullopt;
  std::string why;
  auto facts = tuner_calibrate::read_preflight_report(o.preflight, &why);
  if (!facts) calibrate_data_error(fmt::format("--preflight {}: {}", o.preflight, why));
  for (const std::string& concern : facts->concerns) spdlog::warn("--preflight {}: {}", o.preflight, concern);
  o.print.nics = facts->nics;
  o.print.nic_gbit = facts->nic_gbit;
  o.print.rail_gbs = facts->rail_gbs;
  if (o.print.nic.empty() && facts->nic.find_first_of(" \t=#") == std::string::npos) o.print.nic = facts->nic;
  std::string rails;
  for (double gbs : facts->rail_median_gbs) rails += fmt::format("{}{:.4g}", rails.empty() ? "" : " ", gbs);
  o.print.origin = fmt::format(
      "railscope preflight report {} (verdict {}): {} node{}, {} active NIC{} per node at {} Gbit/s{}",
      std::filesystem::path(o.preflight).filename().string(), facts->status, facts->nodes,
      facts->nodes == 1 ? "" : "s", facts->nics, facts->nics == 1 ? "" : "s", facts->nic_gbit,
      rails.empty() ? "" : "; rails' measured median GB/s: " + rails);
  for (char& ch : o.print.origin)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '_';
  return facts;
}

void run_calibrate(CalibrateOptions& o) {
  cli::require_writable_output("railscope tuner calibrate", "-o", o.output);
  const auto facts = fingerprint_from_preflight(o);
  report::ProfileSet set;
  try {
    set = report::read_profiles(o.profiles);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "railscope tuner calibrate: %s\n", e.what());
    throw CLI::RuntimeError(2);  // as `report`: the profiles, not the command line
  }
  for (const std::string& problem : set.problems) spdlog::warn("{}", problem);
  const auto cal = tuner_calibrate::calibrate(set, o.print);
  if (cal.points.empty()) {
    std::fprintf(
        stderr,
        "railscope tuner calibrate: no collective in %zu records has a bus bandwidth, an algorithm and "
        "a protocol (profiles of NCCL 2.23+ with the railscope profiler record them); nothing written\n",
        cal.records_used + cal.records_skipped);
    throw CLI::RuntimeError(1);
  }
  // The profiles and the report must describe the same nodes, or the fingerprint is another cluster's.
  if (facts && facts->nodes != cal.cluster.nodes)
    calibrate_data_error(fmt::format(
        "--preflight {} covers {} node{}, the profiles measured {} (the shape with most samples): give the "
        "preflight report of the nodes the profiled job ran on",
        o.preflight, facts->nodes, facts->nodes == 1 ? "" : "s", cal.cluster.nodes));
  const std::string tmp = o.output + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << tuner_calibrate::render(cal);
    if (!f.flush()) {
      std::fprintf(stderr, "railscope tuner calibrate: -o %s: cannot write %s\n", o.output.c_str(),
                   tmp.c_str());
      throw CLI::RuntimeError(cli::kExitCannotCreate);
    }
  }
  if (std::rename(tmp.c_str(), o.output.c_str()) != 0) {
    std::fprintf(stderr, "railscope tuner calibrate: -o %s: cannot write it\n", o.output.c_str());
    throw CLI::RuntimeError(cli::kExitCannotCreate);
  }
  std::fprintf(stderr, "railscope tuner calibrate: %zu points from %zu records (%zu skipped) -> %s\n",
               cal.points.size(), cal.records_used, cal.records_skipped, o.output.c_str());
}

}  // namespace

void add_tuner(CLI::App& app) {
  CLI::App* tuner = app.add_subcommand("tuner", "The tuner plugin's decisions, offline");
  tuner->require_subcommand(1);
  auto opts = std::make_shared<ExplainOptions>();
  CLI::App* ex = tuner->add_subcommand(
      "explain",
      "For sizes 8 B to 16 GiB: the algorithm/protocol the tuner plugin picks, its predicted busbw, and "
      "every candidate's cost. Exit 0; 65 a bad rules file (strict mode); 64 a usage error");
  ex->add_option("--nodes", opts->nodes, "Nodes in the communicator")
      ->required()
      ->check(CLI::Range(1, 1 << 20));
  ex->add_option("--gpus-per-node", opts->gpus_per_node, "Ranks (GPUs) per node")
      ->required()
      ->check(CLI::Range(1, 1024));
  ex->add_option("--nic-gbit", opts->nic_gbit,
                 "Line rate of each NIC, Gbit/s (10^9 bits/s; default: env/config/node)")
      ->check(CLI::Range(0.001, 1e6));
  // Until 0.1.0 the NIC rate was --nic-gbps: still read, same meaning, with a warning (see the callback).
  ex->add_option("--nic-gbps", opts->nic_gbps_deprecated, "Deprecated: --nic-gbit")
      ->check(CLI::Range(0.001, 1e6))
      ->group("");
  ex->add_option("--nics", opts->nics, "NICs (rails) per node (default: env/config/node)")
      ->check(CLI::Range(1, 64));
  ex->add_option("--node-gpus", opts->node_gpus,
                 "GPUs per node sharing the NICs (default: this node's PCI bus, else one GPU per NIC)")
      ->check(CLI::Range(1, 1024));
  ex->add_option("--coll", opts->coll, "Collective: broadcast, reduce, allgather, reducescatter, allreduce")
      ->capture_default_str();
  ex->add_option("--config", opts->config, "Rules file (default: RAILSCOPE_TUNER_CONFIG)");
  ex->add_option(
      "--calibration", opts->calibration,
      "Calibration file (railscope tuner calibrate; default: RAILSCOPE_TUNER_CALIBRATION): per size, "
      "NCCL's likely choice, the model's, the measured best, the choice and its expected gain");
  ex->add_flag("--json", opts->json, "JSON instead of a table");
  ex->add_option("--pipe-ops", opts->pipe_ops, "Pipelined ops in the group (numPipeOps)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  ex->add_option("--regbuff", opts->reg_buff, "Registered user buffers (0/1)")->check(CLI::Range(0, 1));
  ex->add_option("--nvl-domains", opts->nvl_domains, "NVLink domains (default: one per node)")
      ->check(CLI::Range(1, 1 << 20));
  ex->add_option("--intra", opts->intra, "Intra-node link: nvlink or pcie")
      ->check(CLI::IsMember({"nvlink", "pcie"}));
  ex->add_option("--intra-GBps", opts->intra_GBps, "Per-GPU intra-node bus bandwidth, GB/s (10^9 bytes/s)")
      ->check(CLI::Range(0.001, 1e6));
  ex->add_option("--intra-gbps", opts->intra_gbps_deprecated, "Deprecated: --intra-GBps")
      ->check(CLI::Range(0.001, 1e6))
      ->group("");
  add_size_option(ex, "--min-bytes", opts->min_bytes, "Smallest size, default 8", kMaxExplainBytes, 1);
  add_size_option(ex, "--max-bytes", opts->max_bytes, "Largest size, default 16G", kMaxExplainBytes, 1);
  ex->add_flag("--no-strict", opts->no_strict, "Ignore bad config lines instead of failing");
  ex->callback([opts] {
    // Until 0.1.0 these were the flags' names; "gbps" now means nothing (GBps bytes, gbit bits).
    if (opts->nic_gbps_deprecated > 0) {
      spdlog::warn("--nic-gbps is deprecated: use --nic-gbit (same value, Gbit/s)");
      if (opts->nic_gbit <= 0) opts->nic_gbit = opts->nic_gbps_deprecated;
    }
    if (opts->intra_gbps_deprecated > 0) {
      spdlog::warn("--intra-gbps is deprecated: use --intra-GBps (same value, GB/s)");
      if (opts->intra_GBps <= 0) opts->intra_GBps = opts->intra_gbps_deprecated;
    }
    run_explain(*opts);
  });

  auto cal = std::make_shared<CalibrateOptions>();
  CLI::App* cc = tuner->add_subcommand(
      "calibrate",
      "Profiles of real runs (railscope profiler JSONL) into a calibration file for the tuner "
      "(RAILSCOPE_TUNER_CALIBRATION): measured busbw per collective, size, algorithm and protocol");
  cc->add_option("profiles", cal->profiles, "Profile files or directories")->required();
  cc->add_option("-o,--output", cal->output, "Calibration file to write")->required();
  auto* preflight = cc->add_option(
      "--preflight", cal->preflight,
      "A `railscope preflight --json` report of these nodes (railscope.preflight/2): the fingerprint's "
      "nodes, NICs per node, NIC rate and family come from it; a report of another schema or a corrupt "
      "one is exit 65");
  cc->add_option("--gpu", cal->print.gpu, "GPU model for the cluster fingerprint, e.g. H100");
  cc->add_option("--nic", cal->print.nic, "NIC model for the cluster fingerprint, e.g. ConnectX-7");
  cc->add_option("--nic-gbit", cal->print.nic_gbit,
                 "NIC line rate, Gbit/s (the tuner refuses the file on "
                 "nodes whose NICs run at another rate)")
      ->check(CLI::Range(0.001, 1e5))
      ->excludes(preflight);
  cc->add_option("--nics", cal->print.nics, "NICs per node (after NCCL_IB_HCA)")
      ->check(CLI::Range(1, 64))
      ->excludes(preflight);
  cc->callback([cal] {
    for (const std::string* word : {&cal->print.gpu, &cal->print.nic})
      if (word->find_first_of(" \t=#") != std::string::npos)
        usage_error(fmt::format("'{}': one word without blanks, '=' or '#'", *word));
    run_calibrate(*cal);
  });
}

}  // namespace railscope::cli
