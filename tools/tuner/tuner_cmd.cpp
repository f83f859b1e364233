// `railscope tuner explain`: what the tuner plugin decides for a topology, size by size, and why.
// It builds the plugin's Engine from the flags and calls the same decision function NCCL reaches
// through getCollInfo.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "explain_report.h"
#include "railscope/core/diagnosis.h"

namespace railscope::cli {
namespace {

struct ExplainOptions {
  int nodes = 0;
  int gpus_per_node = 0;
  double nic_gbps = 0;
  int nics = 0;
  std::string coll = "allreduce";
  std::string config;
  bool json = false;
  int pipe_ops = 1;
  int reg_buff = 0;
  int nvl_domains = 0;
  std::string intra;
  double intra_gbps = 0;
  bool no_strict = false;
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 16ull << 30;
};

void run_explain(const ExplainOptions& o) {
  using namespace railscope::tuner;
  const auto coll = parse_coll(o.coll);
  if (!coll) {
    std::fprintf(stderr,
                 "railscope tuner explain: unknown collective '%s' (broadcast, reduce, allgather, "
                 "reducescatter, allreduce)\n",
                 o.coll.c_str());
    throw CLI::RuntimeError(2);
  }
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
  if (o.nic_gbps > 0) in.overrides.nic_gbps = o.nic_gbps;
  if (o.intra == "nvlink") in.overrides.intra = IntraLink::NvLink;
  if (o.intra == "pcie") in.overrides.intra = IntraLink::Pcie;
  if (o.intra_gbps > 0) in.overrides.intra_gbps = o.intra_gbps;
  if (!o.config.empty()) in.config_path = o.config;
  if (o.no_strict) in.strict = false;
  in.log_decisions = false;
  EngineOrError made = Engine::create(in);
  if (made.error) {
    std::fprintf(stderr, "%s\n", diag::one_line(*made.error).c_str());
    throw CLI::RuntimeError(2);
  }
  tuner_explain::Request req;
  req.coll = *coll;
  req.pipe_ops = o.pipe_ops;
  req.reg_buff = o.reg_buff;
  req.min_bytes = o.min_bytes;
  req.max_bytes = o.max_bytes;
  const auto rows = tuner_explain::explain(*made.engine, req);
  if (o.json)
    std::cout << tuner_explain::render_json(*made.engine, rows).dump(2) << "\n";
  else
    std::cout << tuner_explain::render_text(*made.engine, rows);
}

}  // namespace

void add_tuner(CLI::App& app) {
  CLI::App* tuner = app.add_subcommand("tuner", "The tuner plugin's decisions, offline");
  tuner->require_subcommand(1);
  auto opts = std::make_shared<ExplainOptions>();
  CLI::App* ex = tuner->add_subcommand(
      "explain",
      "For sizes 8 B to 16 GiB: the algorithm/protocol the tuner plugin picks and every candidate's cost");
  ex->add_option("--nodes", opts->nodes, "Nodes in the communicator")
      ->required()
      ->check(CLI::Range(1, 1 << 20));
  ex->add_option("--gpus-per-node", opts->gpus_per_node, "Ranks (GPUs) per node")
      ->required()
      ->check(CLI::Range(1, 1024));
  ex->add_option("--nic-gbps", opts->nic_gbps, "Line rate of each NIC, Gbit/s (default: env/config/node)")
      ->check(CLI::Range(0.001, 1e6));
  ex->add_option("--nics", opts->nics, "NICs (rails) per node (default: env/config/node)")
      ->check(CLI::Range(1, 64));
  ex->add_option("--coll", opts->coll, "Collective: broadcast, reduce, allgather, reducescatter, allreduce")
      ->capture_default_str();
  ex->add_option("--config", opts->config, "Rules file (default: RAILSCOPE_TUNER_CONFIG)");
  ex->add_flag("--json", opts->json, "JSON instead of a table");
  ex->add_option("--pipe-ops", opts->pipe_ops, "Pipelined ops in the group (numPipeOps)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  ex->add_option("--regbuff", opts->reg_buff, "Registered user buffers (0/1)")->check(CLI::Range(0, 1));
  ex->add_option("--nvl-domains", opts->nvl_domains, "NVLink domains (default: one per node)")
      ->check(CLI::Range(1, 1 << 20));
  ex->add_option("--intra", opts->intra, "Intra-node link: nvlink or pcie")
      ->check(CLI::IsMember({"nvlink", "pcie"}));
  ex->add_option("--intra-gbps", opts->intra_gbps, "Per-GPU intra-node bus bandwidth, GB/s")
      ->check(CLI::Range(0.001, 1e6));
  ex->add_option("--min-bytes", opts->min_bytes, "Smallest size")->check(CLI::Range(1ull, 1ull << 50));
  ex->add_option("--max-bytes", opts->max_bytes, "Largest size")->check(CLI::Range(1ull, 1ull << 50));
  ex->add_flag("--no-strict", opts->no_strict, "Ignore bad config lines instead of failing");
  ex->callback([opts] { run_explain(*opts); });
}

}  // namespace railscope::cli
