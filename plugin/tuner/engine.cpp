// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/engine.h"

#include <algorithm>
#include <cfloat>
#include <limits>

#include "railscope/core/log.h"
#include "railscope/core/params.h"

namespace railscope::tuner {
namespace {

// RAILSCOPE_TUNER_NICS / RAILSCOPE_TUNER_NIC_GBIT (0 = not set). RAILSCOPE_TUNER_NIC_GBPS, the name
// before units in names meant one thing (GBPS = 10^9 bytes/s, GBIT = 10^9 bits/s; docs/cli.md), is still
// read as Gbit/s when the new name is not set, with a note in `deprecations`.
NodeOverrides env_overrides(std::vector<std::string>* deprecations) {
  NodeOverrides o;
  o.nic_source = o.intra_source = "env";
  if (const int64_t nics = params::get_int("RAILSCOPE_TUNER_NICS"); nics > 0) o.nics = static_cast<int>(nics);
  if (const int64_t gbit = params::get_int("RAILSCOPE_TUNER_NIC_GBIT"); gbit > 0) {
    o.nic_gbps = static_cast<double>(gbit);
  } else if (const int64_t old = params::get_int("RAILSCOPE_TUNER_NIC_GBPS"); old > 0) {
    o.nic_gbps = static_cast<double>(old);
    deprecations->push_back(
        "RAILSCOPE_TUNER_NIC_GBPS is read as Gbit/s per NIC; its name is now RAILSCOPE_TUNER_NIC_GBIT "
        "(GBPS means 10^9 bytes/s)");
  }
  if (const int64_t intra = params::get_int("RAILSCOPE_TUNER_INTRA_GBPS"); intra > 0)
    o.intra_gbps = static_cast<double>(intra);
  return o;
}

// Which bandwidth per rail the model priced and why; "" when the communicator crosses no NIC or the
// NICs are unknown.
std::string describe_rail_rate(const CostModel& m, const Topology& t, const Figures& f,
                               const ClusterPrint* cluster, const std::string& path) {
  if (t.islands <= 1 || !t.nics.known()) return "";
  const double line_gbs = t.nics.gbps / 8.0;
  if (m.rail_measured)
    return fmt::format(
        "measured {:.4g} GB/s per rail by preflight (calibration '{}' line {}; line rate {:.4g} GB/s)",
        m.rail_gbs, path, cluster->line, line_gbs);
  std::string out = fmt::format("nominal {:.4g} GB/s per rail ({} Gbit/s x NIC efficiency {})", m.rail_gbs,
                                t.nics.gbps, f.nic_eff);
  if (cluster != nullptr && cluster->rail_gbs > 0)
    out += fmt::format(
        "; the measured {:.4g} GB/s per rail (calibration '{}' line {}) is above the line rate "
        "{:.4g} GB/s: ignored",
        cluster->rail_gbs, path, cluster->line, line_gbs);
  return out;
}

std::string join_errors(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : "; ") + e.to_string();
  return out;
}

}  // namespace

EngineOrError Engine::create(const EngineInputs& in) {
  EngineOrError out;
  std::unique_ptr<Engine> e(new Engine());
  e->abi_version_ = in.abi_version;
  e->comm_id_ = in.comm_id;
  e->log_decisions_ = in.log_decisions;

  // Config and calibration files: a problem fails init only in strict mode; otherwise the bad lines are
  // dropped.
  const bool strict = in.strict.value_or(params::get_bool("RAILSCOPE_TUNER_STRICT"));
  auto load = [&](const std::string& path, Config& into) {
    ParsedConfig parsed = load_config_file(path);
    if (!parsed.errors.empty()) {
      if (strict) {
        out.error = diag::make("tuner.config", join_errors(parsed.errors),
                               "Fix the file at the line and column given, or give " + in.lax_switch +
                                   " to ignore the bad lines");
        return false;
      }
      for (const auto& err : parsed.errors)
        RS_WARN("{}", diag::one_line(diag::make("tuner.config", diag::Severity::Warning,
                                                err.to_string() + " (ignored: " + in.lax_switch + ")")));
      e->config_errors_ignored_ += static_cast<int>(parsed.errors.size());
    }
    for (const std::string& note : parsed.config.deprecations)
      RS_INFO(NCCL_INIT | NCCL_TUNING, "tuner: {}", note);
    into = std::move(parsed.config);
    return true;
  };
  const std::string path = in.config_path.value_or(params::get_string("RAILSCOPE_TUNER_CONFIG"));
  if (!path.empty() && !load(path, e->config_)) return out;
  // The calibration file's points and cluster line join the config's (a config may hold points too).
  Config cal_file;
  e->calibration_path_ = in.calibration_path.value_or(params::get_string("RAILSCOPE_TUNER_CALIBRATION"));
  if (!e->calibration_path_.empty()) {
    if (!load(e->calibration_path_, cal_file)) return out;
    cal_file.rules.clear();  // a calibration measures; it pins nothing
    cal_file.measured.clear();
  }

  // Node facts: CLI flags, then env, then the config's `node` line, then what lib/node reads.
  std::vector<std::string> env_notes;
  const NodeOverrides overrides = merge(in.overrides, merge(env_overrides(&env_notes), e->config_.node));
  for (const std::string& note : env_notes) RS_INFO(NCCL_INIT | NCCL_TUNING, "tuner: {}", note);
  CommShape shape = in.shape;
  Topology probe = resolve_topology(shape, NicFacts{}, overrides);
  NicFacts discovered;
  if (in.discovered)
    discovered = *in.discovered;
  else if (probe.islands > 1 && !probe.nics.known())
    discovered = discover_node_nics();
  else if (probe.islands > 1 && !overrides.node_gpus)
    discovered.node_gpus = discover_node_gpus();  // NICs given, but which GPUs share them
  e->topo_ = resolve_topology(shape, discovered, overrides);

  e->figures_ = in.constants != nullptr ? figures_from_nccl(*in.constants) : standard_figures();
  if (!cal_file.points.empty() || cal_file.cluster) {
    cal_file.points.insert(cal_file.points.begin(), e->config_.points.begin(), e->config_.points.end());
    if (!cal_file.cluster) cal_file.cluster = e->config_.cluster;
  } else {
    cal_file.points = e->config_.points;
    cal_file.cluster = e->config_.cluster;
    cal_file.path = e->config_.path;
  }
  // The rate measured per rail is the cluster's, so it holds for every shape, but only on that cluster.
  const ClusterPrint* cluster = cal_file.cluster ? &*cal_file.cluster : nullptr;
  const bool same_cluster = cluster != nullptr && cluster_difference(*cluster, e->topo_).empty();
  e->model_ = build_cost_model(e->topo_, e->figures_, measured_figures(e->config_),
                               same_cluster ? cluster->rail_gbs : 0.0);
  e->rail_basis_ =
      describe_rail_rate(e->model_, e->topo_, e->figures_, same_cluster ? cluster : nullptr, cal_file.path);
  if (!e->rail_basis_.empty())
    RS_INFO(NCCL_INIT | NCCL_TUNING, "tuner: network per rail: {}", e->rail_basis_);
  CalibrationOrRefusal cal = build_calibration(cal_file, e->topo_);
  e->calibration_ = std::move(cal.calibration);
  e->calibration_refusal_ = std::move(cal.refusal);
  if (e->calibration_refusal_) {
    // Another shape is every sub-communicator's normal case; another cluster is a mistake.
    if (e->calibration_refusal_->severity >= diag::Severity::Warning)
      RS_WARN("tuner: {}", diag::one_line(*e->calibration_refusal_));
    else
      RS_INFO(NCCL_INIT | NCCL_TUNING, "tuner: {}", diag::one_line(*e->calibration_refusal_));
  }
  e->user_ = restrictions_from(params::raw("NCCL_ALGO"), params::raw("NCCL_PROTO"));
  if (!e->user_.warning.empty()) RS_WARN("tuner: {}", e->user_.warning);
  RS_INFO(NCCL_INIT | NCCL_TUNING, "tuner: {}", e->summary());
  if (!e->model_.note.empty())
    RS_INFO(NCCL_INIT | NCCL_TUNING, "tuner: {}: NCCL's own choices stand where there is no model{}",
            e->model_.note,
            e->model_.inter_known ? "" : " (give RAILSCOPE_TUNER_NICS and RAILSCOPE_TUNER_NIC_GBIT)");
  out.engine = std::move(e);
  return out;
}

Policy Engine::policy() const {
  Policy p;
  p.model = &model_;
  p.rules = config_.rules;
  p.user = &user_;
  p.n_nodes = topo_.shape.n_nodes;
  p.n_ranks = topo_.shape.n_ranks;
  p.calibration = calibration_.active ? &calibration_ : nullptr;
  return p;
}

Decision Engine::decide(int coll, uint64_t bytes, int pipe_ops, int reg_buff, TableView table) const {
  return tuner::decide(policy(), coll, bytes, pipe_ops, reg_buff, table);
}

void Engine::get_coll_info(int coll, uint64_t bytes, int pipe_ops, float** cost_table, int num_algo,
                           int num_proto, int reg_buff, int* n_channels) const {
  if (cost_table == nullptr || num_algo < 1 || num_algo > kNumAlgos || num_proto < 1 ||
      num_proto > kNumProtos || coll < 0 || coll >= kNumColls) {
    if (!bad_args_logged_.exchange(true, std::memory_order_relaxed))
      RS_WARN(
          "tuner: getCollInfo with collType={} numAlgo={} numProto={} table={}: outside what this tuner "
          "understands (collType 0..{}, numAlgo 1..{}, numProto 1..{}); leaving NCCL's choice untouched "
          "(logged once)",
          coll, num_algo, num_proto, cost_table == nullptr ? "null" : "set", kNumColls - 1, kNumAlgos,
          kNumProtos);
    return;
  }
  // NCCL passes a flat float[numAlgo][numProto] behind the float** type.
  float* table = reinterpret_cast<float*>(cost_table);
  const Decision d = decide(coll, bytes, pipe_ops, reg_buff, TableView{table, num_algo, num_proto});
  apply(d, table, num_proto, n_channels);
  log_once(d);
}

void Engine::choose(int coll, uint64_t bytes, int collnet_support, int nvls_support, int pipe_ops, int* algo,
                    int* proto, int* n_channels) const {
  if (algo == nullptr || proto == nullptr || coll < 0 || coll >= kNumColls) {
    if (!bad_args_logged_.exchange(true, std::memory_order_relaxed))
      RS_WARN(
          "tuner: v2 getCollInfo with collType={} algorithm={} protocol={}: leaving NCCL's choice (logged "
          "once)",
          coll, algo == nullptr ? "null" : "set", proto == nullptr ? "null" : "set");
    return;
  }
  // v2 has no table: the entries the model prices are candidates, and CollNet/NVLS are supported
  // (at no known cost, so only a rule can pick them) when NCCL says so.
  float table[kNumAlgos][kNumProtos];
  for (int a = 0; a < kNumAlgos; ++a)
    for (int p = 0; p < kNumProtos; ++p) {
      const bool modelled = model_.coeff[coll][a][p].source != CostSource::None;
      const bool collnet =
          (a == kCollNetDirect || a == kCollNetChain) && p == kSimple && collnet_support != 0;
      const bool nvls = (a == kNvls || a == kNvlsTree) && p == kSimple && nvls_support != 0;
      table[a][p] = modelled ? 1.0f : (collnet || nvls) ? FLT_MAX : -1.0f;
    }
  const Decision d = decide(coll, bytes, pipe_ops, -1, TableView{&table[0][0], kNumAlgos, kNumProtos});
  if (d.changes_table()) {
    *algo = d.algo;
    *proto = d.proto;
  }
  if (d.channels > 0 && n_channels != nullptr) *n_channels = d.channels;
  log_once(d);
}

bool Engine::chunk_size(int coll, uint64_t bytes, int algo, int proto, uint64_t* chunk) const {
  if (chunk == nullptr || coll < 0 || coll >= kNumColls) return false;
  for (const Rule& r : config_.rules) {
    if (!r.matches(coll, bytes, topo_.shape.n_nodes, topo_.shape.n_ranks, 1, -1)) continue;
    if ((r.algo >= 0 && r.algo != algo) || (r.proto >= 0 && r.proto != proto)) continue;
    if (r.chunk == 0) continue;
    *chunk = r.chunk;
    return true;
  }
  return false;
}

void Engine::log_once(const Decision& d) const {
  if (!log_decisions_ || d.coll < 0 || !log::enabled(log::Level::Info)) return;
  const uint64_t bit = 1ull << size_bucket(d.bytes);
  std::atomic<uint64_t>& seen = logged_[d.coll];
  if (seen.load(std::memory_order_relaxed) & bit) return;
  if (seen.fetch_or(bit, std::memory_order_relaxed) & bit) return;
  RS_INFO(NCCL_TUNING, "tuner: {}", describe(d, config_.path));
}

std::string Engine::summary() const {
  const Topology& t = topo_;
  std::string nics = t.nics.known() ? fmt::format("{} x {} Gb/s {} ({}), {}", t.nics.count, t.nics.gbps,
                                                  to_string(t.nics.layer), t.nics.source, t.rails_basis)
                                    : std::string("unknown");
  return fmt::format(
      "abi v{} comm {:#x}: {} ranks, {} nodes, {} islands of {} ({} {} GB/s, {}), NICs {}, figures {}, "
      "config '{}' ({} rules, {} measured{}){}",
      abi_version_, comm_id_, t.shape.n_ranks, t.shape.n_nodes, t.islands, t.ranks_per_island,
      to_string(t.intra), t.intra_gbps, t.intra_source, nics, figures_.source, config_.path,
      config_.rules.size(), config_.measured.size(),
      config_errors_ignored_ > 0 ? fmt::format(", {} bad lines ignored", config_errors_ignored_)
                                 : std::string(),
      calibration_.note.empty() ? std::string() : ", " + calibration_.note);
}

}  // namespace railscope::tuner
