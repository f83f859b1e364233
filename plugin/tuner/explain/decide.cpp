// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include "plugin/tuner/explain/decision.h"
#include "plugin/tuner/model/spread_rule.h"

namespace railscope::tuner {
namespace {

bool in_pin(const Rule* r, int a, int p) {
  return r == nullptr || ((r->algo < 0 || r->algo == a) && (r->proto < 0 || r->proto == p));
}

// Replaces the cost of every supported entry the calibration covers at this size with its measured
// time; true when at least one is covered.
bool price_measured(const Calibration& cal, int coll, uint64_t bytes, int n_ranks, TableView table,
                    Decision& d) {
  bool any = false;
  const float bus_bytes = static_cast<float>(bytes) * static_cast<float>(bus_factor(coll, n_ranks));
  for (int a = 0; a < table.num_algo; ++a)
    for (int p = 0; p < table.num_proto; ++p) {
      Candidate& c = d.cand[a][p];
      if (!c.supported()) continue;
      const auto m = cal.at(coll, a, p, bytes);
      if (!m || m->busbw_gbs <= 0) continue;
      c.measured = *m;
      c.cost = bus_bytes / (m->busbw_gbs * 1e3f);  // µs: bytes / (GB/s × 10^3 bytes per µs)
      c.terms = {0, c.cost};
      c.source = CostSource::Measured;
      any = true;
    }
  return any;
}

// On a calibrated size, NCCL's own choice stands unless a measured entry beats it by more than the
// spread of both measurements (or NCCL's choice was not measured: nothing says the other is faster).
Decision choose_measured(Decision& d, TableView table) {
  for (int a = 0; a < table.num_algo; ++a)
    for (int p = 0; p < table.num_proto; ++p) {
      const Candidate& c = d.cand[a][p];
      if (!c.supported()) continue;
      if (d.nccl_algo < 0 || c.nccl < d.cand[d.nccl_algo][d.nccl_proto].nccl)
        d.nccl_algo = a, d.nccl_proto = p;
      if (c.calibrated() &&
          (d.best_algo < 0 || c.measured.busbw_gbs > d.cand[d.best_algo][d.best_proto].measured.busbw_gbs))
        d.best_algo = a, d.best_proto = p;
    }
  d.reason = Reason::MeasuredKeeps;
  const Candidate& nccl = d.cand[d.nccl_algo][d.nccl_proto];
  const Candidate& best = d.cand[d.best_algo][d.best_proto];
  if (nccl.calibrated() && &best != &nccl &&
      faster_beyond_spreads(best.measured.busbw_gbs, best.measured.spread_gbs, nccl.measured.busbw_gbs,
                            nccl.measured.spread_gbs)) {
    d.reason = Reason::Measured;
    d.algo = d.best_algo;
    d.proto = d.best_proto;
    d.cost = best.cost;
    d.runner_algo = d.nccl_algo;
    d.runner_proto = d.nccl_proto;
    d.runner_cost = nccl.cost;
  }
  return d;
}

}  // namespace

Decision decide(const Policy& policy, int coll, uint64_t bytes, int pipe_ops, int reg_buff, TableView table) {
  Decision d;
  d.coll = coll;
  d.bytes = bytes;
  d.pipe_ops = pipe_ops < 1 ? 1 : pipe_ops;
  d.reg_buff = reg_buff;
  if (coll < 0 || coll >= kNumColls) return d;

  // Price every supported entry: the model's (or a measured) figure, else NCCL's own estimate.
  bool any_supported = false, any_modelled = false;
  for (int a = 0; a < table.num_algo; ++a)
    for (int p = 0; p < table.num_proto; ++p) {
      Candidate& c = d.cand[a][p];
      const float v = table.at(a, p);
      c.nccl = std::isfinite(v) && v >= 0 ? v : -1.0f;
      if (!c.supported()) continue;
      any_supported = true;
      const Coeffs& k = policy.model->coeff[coll][a][p];
      if (k.source != CostSource::None) {
        c.terms = price(k, bytes, d.pipe_ops);
        c.cost = c.terms.total();
        c.source = k.source;
        any_modelled = true;
      } else {
        c.cost = c.nccl;
      }
    }
  if (!any_supported) return d;
  const bool measured = policy.calibration != nullptr && policy.calibration->any[coll] &&
                        price_measured(*policy.calibration, coll, bytes, policy.n_ranks, table, d);
  if (policy.user != nullptr && policy.user->restricted[coll]) {
    d.reason = Reason::UserRestricted;
    return d;
  }

  // The first matching rule pins the choice, if NCCL supports what it pins here.
  const Rule* rule = nullptr;
  for (const Rule& r : policy.rules) {
    if (!r.matches(coll, bytes, policy.n_nodes, policy.n_ranks, d.pipe_ops, reg_buff)) continue;
    bool supported = false;
    for (int a = 0; a < table.num_algo && !supported; ++a)
      for (int p = 0; p < table.num_proto; ++p)
        if (in_pin(&r, a, p) && d.cand[a][p].supported()) supported = true;
    if (supported)
      rule = &r;
    else
      d.rule_skipped = &r;
    break;
  }
  if (rule == nullptr && measured) return choose_measured(d, table);
  if (rule == nullptr && !any_modelled) {
    d.reason = Reason::NcclNoModel;
    return d;
  }

  // Cheapest candidate within the pin; runner-up: cheapest other supported entry.
  for (int a = 0; a < table.num_algo; ++a)
    for (int p = 0; p < table.num_proto; ++p) {
      const Candidate& c = d.cand[a][p];
      if (!c.supported() || !in_pin(rule, a, p)) continue;
      if (d.algo < 0 || c.cost < d.cost) {
        d.algo = a;
        d.proto = p;
        d.cost = c.cost;
      }
    }
  for (int a = 0; a < table.num_algo; ++a)
    for (int p = 0; p < table.num_proto; ++p) {
      const Candidate& c = d.cand[a][p];
      if (!c.supported() || (a == d.algo && p == d.proto)) continue;
      if (d.runner_algo < 0 || c.cost < d.runner_cost) {
        d.runner_algo = a;
        d.runner_proto = p;
        d.runner_cost = c.cost;
      }
    }
  d.reason = rule != nullptr ? Reason::Rule : Reason::Model;
  d.rule = rule;
  if (rule != nullptr) d.channels = rule->channels;
  // A rule that only sets channels/chunk leaves the choice to the model: keep the table unless the
  // model priced the winner (otherwise NCCL's own choice stands).
  if (rule != nullptr && rule->algo < 0 && rule->proto < 0 && !any_modelled) d.algo = d.proto = -1;
  return d;
}

void apply(const Decision& d, float* table, int num_proto, int* n_channels) {
  if (d.changes_table()) {
    float& entry = table[d.algo * num_proto + d.proto];
    if (entry >= 0) entry = 0.0f;  // never turn an unsupported (-1) entry valid
  }
  if (d.channels > 0 && n_channels != nullptr) *n_channels = d.channels;
}

}  // namespace railscope::tuner
