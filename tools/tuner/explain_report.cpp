// SPDX-License-Identifier: Apache-2.0
#include "explain_report.h"

#include <fmt/format.h>

#include "plugin/tuner/explain/simulated_table.h"
#include "plugin/tuner/model/cost_model.h"
#include "railscope/cli/json_figure.h"

namespace railscope::cli::tuner_explain {

using namespace railscope::tuner;

namespace {

std::string human(uint64_t b) {
  static constexpr const char* kUnits[] = {"B", "K", "M", "G", "T"};
  int u = 0;
  while (b >= 1024 && b % 1024 == 0 && u < 4) {
    b /= 1024;
    ++u;
  }
  return fmt::format("{}{}", b, kUnits[u]);
}

std::string entry(int a, int p) {
  return a < 0 ? std::string("nccl") : fmt::format("{}/{}", algo_name(a), proto_name(p));
}

// Why, in a few words, for the table's last column.
std::string why(const Decision& d, const Config& config) {
  switch (d.reason) {
    case Reason::Rule: return fmt::format("rule {}:{}", config.path, d.rule->line);
    case Reason::Model: return deciding_term(d);
    case Reason::NcclNoModel: return "no model: NCCL's choice";
    case Reason::UserRestricted: return "NCCL_ALGO/NCCL_PROTO: NCCL's choice";
    case Reason::NoCandidate: return "nothing supported";
    case Reason::Measured:
    case Reason::MeasuredKeeps: return measured_why(d);
  }
  return "";
}

// The engine's summary, and which network bandwidth per rail the model priced when it crosses NICs.
std::string header(const Engine& engine) {
  std::string out = fmt::format("# {}\n", engine.summary());
  if (!engine.rail_basis().empty()) out += fmt::format("# network per rail: {}\n", engine.rail_basis());
  return out;
}

}  // namespace

double predicted_busbw_GBps(const Decision& d, int n_ranks) {
  if (!d.changes_table() || !(d.cost > 0)) return 0;
  // busbw = algbw x bus factor (nccl-tests' doc/PERFORMANCE.md); bytes per µs / 1e3 = GB/s.
  return static_cast<double>(d.bytes) / d.cost / 1e3 * bus_factor(d.coll, n_ranks);
}

std::vector<Decision> explain(const Engine& engine, const Request& req) {
  float table[kNumAlgos][kNumProtos];
  // NCCL's own estimates are unknown offline: supported entries carry a placeholder that no model
  // entry is compared against unless the model has nothing (then NCCL's choice is reported).
  simulated_nccl_table(engine.topology(), req.coll, 0.5f, table);
  std::vector<Decision> rows;
  for (uint64_t s = req.min_bytes; s <= req.max_bytes && s != 0; s *= 2)
    rows.push_back(engine.decide(req.coll, s, req.pipe_ops, req.reg_buff,
                                 TableView{&table[0][0], kNumAlgos, kNumProtos}));
  return rows;
}

std::vector<CalibratedRow> explain_calibrated(const Engine& engine, const Request& req) {
  std::vector<CalibratedRow> rows;
  Policy model_only = engine.policy();
  model_only.calibration = nullptr;
  float placeholder[kNumAlgos][kNumProtos];
  simulated_nccl_table(engine.topology(), req.coll, 0.5f, placeholder);
  for (uint64_t s = req.min_bytes; s <= req.max_bytes && s != 0; s *= 2) {
    CalibratedRow row;
    row.model = decide(model_only, req.coll, s, req.pipe_ops, req.reg_buff,
                       TableView{&placeholder[0][0], kNumAlgos, kNumProtos});
    // NCCL's table as the model estimates it: its cheapest entry is NCCL's likely choice.
    float table[kNumAlgos][kNumProtos];
    for (int a = 0; a < kNumAlgos; ++a)
      for (int p = 0; p < kNumProtos; ++p) {
        const Candidate& c = row.model.cand[a][p];
        table[a][p] = c.supported() ? c.cost : -1.0f;
      }
    row.calibrated = engine.decide(req.coll, s, req.pipe_ops, req.reg_buff,
                                   TableView{&table[0][0], kNumAlgos, kNumProtos});
    rows.push_back(row);
  }
  return rows;
}

std::string render_calibrated_text(const Engine& engine, const std::vector<CalibratedRow>& rows) {
  std::string out = header(engine);
  if (rows.empty()) return out;
  out += fmt::format(
      "# {} — nccl: NCCL's likely choice (its table as the model estimates it); model: the model's choice; "
      "measured best: the calibration's fastest entry at this size (busbw_gbs ± spread, GB/s); choice: "
      "what the tuner gives NCCL; gain: measured busbw of the choice over NCCL's\n",
      coll_name(rows.front().model.coll));
  out += fmt::format("{:>6}  {:<12} {:<12} {:<12} {:>15}  {:<12} {:>6}  {}\n", "size", "nccl", "model",
                     "measured", "busbw_gbs", "choice", "gain", "why");
  for (const CalibratedRow& r : rows) {
    const Decision& d = r.calibrated;
    const bool measured = d.reason == Reason::Measured || d.reason == Reason::MeasuredKeeps;
    const int nccl_a = measured ? d.nccl_algo : r.model.algo,
              nccl_p = measured ? d.nccl_proto : r.model.proto;
    std::string best = "-", best_bw = "-";
    if (measured && d.best_algo >= 0) {
      const Candidate& b = d.cand[d.best_algo][d.best_proto];
      best = entry(d.best_algo, d.best_proto);
      best_bw = fmt::format("{:.1f}±{:.1f}", b.measured.busbw_gbs, b.measured.spread_gbs);
    }
    const std::string choice = d.changes_table() ? entry(d.algo, d.proto) : entry(nccl_a, nccl_p);
    out += fmt::format("{:>6}  {:<12} {:<12} {:<12} {:>15}  {:<12} {:>6}  {}\n", human(d.bytes),
                       entry(nccl_a, nccl_p), entry(r.model.algo, r.model.proto), best, best_bw, choice,
                       fmt::format("x{:.2f}", expected_gain(d)),
                       measured ? measured_why(d) : "not calibrated here: " + why(d, engine.config()));
  }
  return out;
}

nlohmann::json render_calibrated_json(const Engine& engine, const std::vector<CalibratedRow>& rows) {
  nlohmann::json j;
  j["summary"] = engine.summary();
  j["rail_basis"] = engine.rail_basis();
  j["rows"] = nlohmann::json::array();
  auto pick = [](int a, int p) {
    return a < 0 ? nlohmann::json(nullptr)
                 : nlohmann::json{{"algo", std::string(algo_name(a))}, {"proto", std::string(proto_name(p))}};
  };
  for (const CalibratedRow& r : rows) {
    const Decision& d = r.calibrated;
    const bool measured = d.reason == Reason::Measured || d.reason == Reason::MeasuredKeeps;
    nlohmann::json row;
    row["bytes"] = d.bytes;
    row["nccl"] = measured ? pick(d.nccl_algo, d.nccl_proto) : pick(r.model.algo, r.model.proto);
    row["model"] = pick(r.model.algo, r.model.proto);
    row["measured_best"] = measured ? pick(d.best_algo, d.best_proto) : nlohmann::json(nullptr);
    if (measured && d.best_algo >= 0) {
      row["measured_best"]["busbw_gbs"] =
          cli::json_figure(d.cand[d.best_algo][d.best_proto].measured.busbw_gbs);
      row["measured_best"]["spread_gbs"] =
          cli::json_figure(d.cand[d.best_algo][d.best_proto].measured.spread_gbs);
    }
    row["choice"] = d.changes_table() ? pick(d.algo, d.proto) : row["nccl"];
    row["changes_nccl"] = d.changes_table();
    row["reason"] = std::string(to_string(d.reason));
    row["why"] = measured ? measured_why(d) : why(d, engine.config());
    row["expected_gain"] = cli::json_figure(expected_gain(d));
    j["rows"].push_back(row);
  }
  return j;
}

std::string render_text(const Engine& engine, const std::vector<Decision>& rows) {
  std::string out = header(engine);
  if (rows.empty()) return out;
  std::vector<std::pair<int, int>> cols;
  for (int a = 0; a < kNumAlgos; ++a)
    for (int p = 0; p < kNumProtos; ++p)
      if (rows.front().cand[a][p].supported()) cols.emplace_back(a, p);
  out += fmt::format(
      "# {} — cost per candidate in microseconds ([m] model, [x] measured, nccl = NCCL's own "
      "estimate, unknown offline); busbw_gbs: the choice's predicted bus bandwidth, 10^9 bytes/s\n",
      coll_name(rows.front().coll));
  out += fmt::format("{:>6}  {:<12} {:>11} {:>11}  {:<12} {:>11}", "size", "choice", "cost_us", "busbw_gbs",
                     "runner-up", "cost_us");
  for (auto [a, p] : cols) out += fmt::format(" {:>13}", entry(a, p));
  out += "  decided by\n";
  for (const Decision& d : rows) {
    const bool chosen = d.changes_table();
    const double busbw = predicted_busbw_GBps(d, engine.topology().shape.n_ranks);
    out += fmt::format("{:>6}  {:<12} {:>11} {:>11}  {:<12} {:>11}", human(d.bytes), entry(d.algo, d.proto),
                       chosen ? fmt::format("{:.2f}", d.cost) : "-",
                       busbw > 0 ? fmt::format("{:.2f}", busbw) : "-",
                       d.runner_algo >= 0 && chosen ? entry(d.runner_algo, d.runner_proto) : "-",
                       d.runner_algo >= 0 && chosen ? fmt::format("{:.2f}", d.runner_cost) : "-");
    for (auto [a, p] : cols) {
      const Candidate& c = d.cand[a][p];
      const char* tag = c.source == CostSource::Measured ? "x" : "m";
      out += c.source == CostSource::None ? fmt::format(" {:>13}", "nccl")
                                          : fmt::format(" {:>10.2f}[{}]", c.cost, tag);
    }
    out += "  " + why(d, engine.config()) + "\n";
  }
  return out;
}

nlohmann::json render_json(const Engine& engine, const std::vector<Decision>& rows) {
  const Topology& t = engine.topology();
  nlohmann::json j;
  j["summary"] = engine.summary();
  j["topology"] = {{"ranks", t.shape.n_ranks},
                   {"nodes", t.shape.n_nodes},
                   {"islands", t.islands},
                   {"ranks_per_island", t.ranks_per_island},
                   {"intra", std::string(to_string(t.intra))},
                   {"intra_gbs", cli::json_figure(t.intra_gbps)},  // 10^9 bytes/s per GPU
                   {"nics", t.nics.count},
                   {"nic_gbits", cli::json_figure(t.nics.gbps)},  // 10^9 bits/s per NIC
                   {"nic_source", t.nics.source},
                   {"node_gpus", t.nics.node_gpus},  // 0 = unknown
                   {"rails", t.rails},               // the NICs one node's ranks of the communicator drive
                   {"rails_basis", t.rails_basis},
                   {"rail_gbs", cli::json_figure(engine.model().rail_gbs)},  // what the model priced per rail
                   {"rail_basis", engine.rail_basis()}};
  j["config"] = engine.config().path;
  j["rows"] = nlohmann::json::array();
  for (const Decision& d : rows) {
    nlohmann::json row;
    row["collective"] = std::string(coll_name(d.coll));
    row["bytes"] = d.bytes;
    row["reason"] = std::string(to_string(d.reason));
    row["decided_by"] = why(d, engine.config());
    if (d.changes_table())
      row["choice"] = {{"algo", std::string(algo_name(d.algo))},
                       {"proto", std::string(proto_name(d.proto))},
                       {"cost_us", cli::json_figure(d.cost)},
                       {"busbw_gbs", cli::json_figure(predicted_busbw_GBps(d, t.shape.n_ranks))}};
    else
      row["choice"] = nullptr;
    if (d.changes_table() && d.runner_algo >= 0)
      row["runner_up"] = {{"algo", std::string(algo_name(d.runner_algo))},
                          {"proto", std::string(proto_name(d.runner_proto))},
                          {"cost_us", cli::json_figure(d.runner_cost)}};
    else
      row["runner_up"] = nullptr;
    if (d.channels > 0) row["channels"] = d.channels;
    row["candidates"] = nlohmann::json::array();
    for (int a = 0; a < kNumAlgos; ++a)
      for (int p = 0; p < kNumProtos; ++p) {
        const Candidate& c = d.cand[a][p];
        if (!c.supported()) continue;
        nlohmann::json cj = {{"algo", std::string(algo_name(a))}, {"proto", std::string(proto_name(p))}};
        if (c.source == CostSource::None) {
          cj["source"] = "nccl";
        } else {
          cj["source"] = std::string(to_string(c.source));
          cj["cost_us"] = cli::json_figure(c.cost);
          cj["latency_us"] = cli::json_figure(c.terms.latency_us);
          cj["bandwidth_us"] = cli::json_figure(c.terms.bandwidth_us);
        }
        row["candidates"].push_back(cj);
      }
    j["rows"].push_back(row);
  }
  return j;
}

}  // namespace railscope::cli::tuner_explain
