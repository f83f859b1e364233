// SPDX-License-Identifier: Apache-2.0
// Fuzzes the tuner's configuration file and what it feeds (plugin/tuner/config/*, model/cost_model.h,
// explain/decision.h): the parser, the node facts and measured figures it yields, the cost model built
// from them, and the decision applied to NCCL's cost table. RAILSCOPE_TUNER_CONFIG is a file any user
// of the job can point at, so no content may crash the training process or corrupt NCCL's table.
//
// Input: 22 bytes of communicator and call (ranks u16, nodes u16, NVLink domains u8, max ranks per
// domain u8, NICs u8, collective u8, bytes u64, pipelined ops u8, registered buffer u8, supported-entry
// mask u24, table shape u8), then the config text; after a NUL, NCCL_ALGO, and after a second NUL,
// NCCL_PROTO.
// Properties: every rule and measured figure the parser keeps pins only (algorithm, protocol) pairs
// that exist; a cost-model entry is disabled (CostSource::None) or has finite, non-negative
// coefficients and prices every size to a finite, non-negative cost; apply() changes at most the
// chosen entry, only from supported to 0, never an unsupported (-1, NaN) entry; channels stay 0..64.
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "plugin/tuner/config/config.h"
#include "plugin/tuner/config/nccl_env.h"
#include "plugin/tuner/explain/decision.h"
#include "plugin/tuner/model/cost_model.h"
#include "plugin/tuner/model/figures.h"
#include "plugin/tuner/model/topology.h"
#include "tests/fuzz/fuzz_check.h"

namespace rt = railscope::tuner;
using railscope::fuzz::Input;

namespace {

bool finite_nonneg(float v) { return std::isfinite(v) && v >= 0; }

void check_config(const rt::ParsedConfig& parsed) {
  for (const rt::Rule& r : parsed.config.rules) {
    RS_FUZZ_CHECK(r.algo < rt::kNumAlgos && r.proto < rt::kNumProtos, "rule at line %d pins %d/%d", r.line,
                  r.algo, r.proto);
    if (r.algo >= 0 && r.proto >= 0)
      RS_FUZZ_CHECK(rt::algo_proto_possible(r.algo, r.proto), "rule at line %d pins %s/%s", r.line,
                    std::string(rt::algo_name(r.algo)).c_str(), std::string(rt::proto_name(r.proto)).c_str());
    RS_FUZZ_CHECK(r.channels >= 0 && r.channels <= 64, "rule at line %d: %d channels", r.line, r.channels);
    RS_FUZZ_CHECK(r.coll_mask != 0 && r.coll_mask < (1u << rt::kNumColls), "rule at line %d: collectives %#x",
                  r.line, r.coll_mask);
  }
  for (const rt::MeasuredEntry& m : parsed.config.measured) {
    const rt::MeasuredFigure& f = m.figure;
    RS_FUZZ_CHECK(f.coll >= 0 && f.coll < rt::kNumColls && f.algo >= 0 && f.algo < rt::kNumAlgos &&
                      f.proto >= 0 && f.proto < rt::kNumProtos && rt::algo_proto_possible(f.algo, f.proto),
                  "measure at line %d for %d/%d/%d", m.line, f.coll, f.algo, f.proto);
    RS_FUZZ_CHECK(f.lat_us > 0 && f.busbw_gbs > 0, "measure at line %d: %g us, %g GB/s", m.line, f.lat_us,
                  f.busbw_gbs);
  }
  for (const rt::ConfigError& e : parsed.errors)
    RS_FUZZ_CHECK(e.line >= 1 && e.column >= 1 && !e.message.empty(), "error without a place: %s",
                  e.to_string().c_str());
}

void check_model(const rt::CostModel& model, uint64_t bytes, int pipe_ops) {
  for (int c = 0; c < rt::kNumColls; ++c)
    for (int a = 0; a < rt::kNumAlgos; ++a)
      for (int p = 0; p < rt::kNumProtos; ++p) {
        const rt::Coeffs& k = model.coeff[c][a][p];
        if (k.source == rt::CostSource::None) continue;
        RS_FUZZ_CHECK(rt::algo_proto_possible(a, p), "model entry for %d/%d/%d", c, a, p);
        RS_FUZZ_CHECK(finite_nonneg(k.alpha_us) && finite_nonneg(k.beta_us_per_byte) &&
                          finite_nonneg(k.fill_us_per_byte) && finite_nonneg(k.fill_cap_bytes),
                      "entry %s/%s/%s (%s): alpha %g us, beta %g us/B, fill %g us/B up to %g B",
                      std::string(rt::coll_name(c)).c_str(), std::string(rt::algo_name(a)).c_str(),
                      std::string(rt::proto_name(p)).c_str(), std::string(rt::to_string(k.source)).c_str(),
                      static_cast<double>(k.alpha_us), static_cast<double>(k.beta_us_per_byte),
                      static_cast<double>(k.fill_us_per_byte), static_cast<double>(k.fill_cap_bytes));
        const rt::Terms t = rt::price(k, bytes, pipe_ops);
        RS_FUZZ_CHECK(finite_nonneg(t.latency_us) && finite_nonneg(t.bandwidth_us),
                      "entry %s/%s/%s (%s) prices %llu bytes x %d ops at %g + %g us",
                      std::string(rt::coll_name(c)).c_str(), std::string(rt::algo_name(a)).c_str(),
                      std::string(rt::proto_name(p)).c_str(), std::string(rt::to_string(k.source)).c_str(),
                      static_cast<unsigned long long>(bytes), pipe_ops, static_cast<double>(t.latency_us),
                      static_cast<double>(t.bandwidth_us));
      }
}

// NCCL's values for a supported entry, and what it leaves in an unsupported one.
constexpr float kSupported[] = {0.0f, 1.0f, 12.5f, 3.0e5f, 1.0e30f};
float unsupported_value(unsigned pick) { return pick % 3 == 0 ? -1.0f : pick % 3 == 1 ? NAN : -INFINITY; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  rt::CommShape shape;
  shape.n_ranks = static_cast<int>(in.le(2));
  shape.n_nodes = static_cast<int>(in.le(2));
  shape.nvl_domains = in.u8() % 9;
  shape.max_ranks_per_nvl_domain = in.u8() % 9;
  const uint8_t nics = in.u8();
  const int coll = in.u8() % (rt::kNumColls + 1);  // kNumColls: not a tunable collective
  const uint64_t bytes = in.le(8);
  const int pipe_ops = in.u8();
  const int reg_buff = static_cast<int>(in.u8() % 3) - 1;
  const auto mask = static_cast<uint32_t>(in.le(3));
  const uint8_t table_shape = in.u8();

  const std::vector<std::byte> rest = in.rest();
  const std::string_view all(reinterpret_cast<const char*>(rest.data()), rest.size());
  const size_t nul1 = all.find('\0');
  const std::string_view text = all.substr(0, nul1);
  std::optional<std::string> nccl_algo, nccl_proto;
  if (nul1 != std::string_view::npos) {
    const std::string_view env = all.substr(nul1 + 1);
    const size_t nul2 = env.find('\0');
    nccl_algo = std::string(env.substr(0, nul2));
    if (nul2 != std::string_view::npos) nccl_proto = std::string(env.substr(nul2 + 1));
  }

  const rt::ParsedConfig parsed = rt::parse_config_text(text, "fuzz.conf");
  check_config(parsed);
  const rt::UserRestrictions user = rt::restrictions_from(nccl_algo, nccl_proto);

  rt::NicFacts discovered;
  discovered.count = nics & 7;
  discovered.gbps = (nics >> 3) % 4 * 100.0;
  const rt::Topology topo = rt::resolve_topology(shape, discovered, parsed.config.node);
  const rt::Figures figures = rt::standard_figures();
  const std::vector<rt::MeasuredFigure> measured = rt::measured_figures(parsed.config);
  const rt::CostModel model = rt::build_cost_model(topo, figures, measured);
  check_model(model, bytes, pipe_ops);

  // NCCL's table: supported entries from the mask (only pairs that exist), the rest unsupported.
  const int num_algo = table_shape % rt::kNumAlgos + 1;
  const int num_proto = (table_shape >> 3) % rt::kNumProtos + 1;
  float table[rt::kNumAlgos * rt::kNumProtos];
  for (int a = 0; a < num_algo; ++a)
    for (int p = 0; p < num_proto; ++p) {
      const int bit = a * rt::kNumProtos + p;
      const unsigned pick = static_cast<unsigned>(table_shape >> 5) + static_cast<unsigned>(bit);
      table[a * num_proto + p] = (mask >> bit & 1u) && rt::algo_proto_possible(a, p)
                                     ? kSupported[pick % std::size(kSupported)]
                                     : unsupported_value(pick);
    }
  float before[rt::kNumAlgos * rt::kNumProtos];
  std::memcpy(before, table, sizeof table);

  rt::Policy policy;
  policy.model = &model;
  policy.rules = parsed.config.rules;
  policy.user = &user;
  policy.n_nodes = topo.shape.n_nodes;
  policy.n_ranks = topo.shape.n_ranks;
  const rt::Decision d = rt::decide(policy, coll, bytes, pipe_ops, reg_buff, {table, num_algo, num_proto});
  int channels = -7;
  rt::apply(d, table, num_proto, &channels);

  RS_FUZZ_CHECK(channels == -7 || (channels >= 1 && channels <= 64), "%d channels", channels);
  if (d.changes_table()) {
    RS_FUZZ_CHECK(d.algo < num_algo && d.proto < num_proto, "chose %d/%d in a %dx%d table", d.algo, d.proto,
                  num_algo, num_proto);
    RS_FUZZ_CHECK(rt::algo_proto_possible(d.algo, d.proto), "chose %d/%d", d.algo, d.proto);
    const float was = before[d.algo * num_proto + d.proto];
    RS_FUZZ_CHECK(std::isfinite(was) && was >= 0, "chose %d/%d, an entry NCCL marked unsupported (%g)",
                  d.algo, d.proto, static_cast<double>(was));
    RS_FUZZ_CHECK(std::isfinite(d.cost), "the choice costs %g", static_cast<double>(d.cost));
  }
  for (int i = 0; i < num_algo * num_proto; ++i) {
    if (std::memcmp(&table[i], &before[i], sizeof(float)) == 0) continue;
    RS_FUZZ_CHECK(d.changes_table() && i == d.algo * num_proto + d.proto && table[i] == 0.0f,
                  "entry %d/%d changed from %g to %g", i / num_proto, i % num_proto,
                  static_cast<double>(before[i]), static_cast<double>(table[i]));
    RS_FUZZ_CHECK(std::isfinite(before[i]) && before[i] >= 0, "unsupported entry %d/%d made valid",
                  i / num_proto, i % num_proto);
  }
  (void)rt::describe(d, parsed.config.path);
  return 0;
}
