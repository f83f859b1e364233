// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "plugin/tuner/explain/decision.h"

namespace railscope::tuner {
namespace {

std::string entry(int a, int p) { return fmt::format("{}/{}", algo_name(a), proto_name(p)); }

std::string_view source_of(const Candidate& c) {
  return c.source == CostSource::None ? std::string_view("nccl") : to_string(c.source);
}

std::string human_bytes(uint64_t b) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(b);
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.4g} {}", v, kUnits[u]);
}

}  // namespace

std::string_view to_string(Reason r) {
  switch (r) {
    case Reason::Rule: return "rule";
    case Reason::Model: return "model";
    case Reason::NcclNoModel: return "nccl-no-model";
    case Reason::UserRestricted: return "user-restricted";
    case Reason::NoCandidate: return "no-candidate";
    case Reason::Measured: return "measured";
    case Reason::MeasuredKeeps: return "measured-keeps-nccl";
  }
  return "?";
}

std::string deciding_term(const Decision& d) {
  if (d.algo < 0 || d.runner_algo < 0) return "no runner-up";
  const Candidate& w = d.cand[d.algo][d.proto];
  const Candidate& r = d.cand[d.runner_algo][d.runner_proto];
  if (w.source == CostSource::None || r.source == CostSource::None)
    return fmt::format("total cost ({:.2f} vs {:.2f} us; NCCL's estimate on one side)", w.cost, r.cost);
  const float lat_gain = r.terms.latency_us - w.terms.latency_us;
  const float bw_gain = r.terms.bandwidth_us - w.terms.bandwidth_us;
  if (lat_gain >= bw_gain)
    return fmt::format("latency term ({:.2f} vs {:.2f} us)", w.terms.latency_us, r.terms.latency_us);
  return fmt::format("bandwidth term ({:.2f} vs {:.2f} us)", w.terms.bandwidth_us, r.terms.bandwidth_us);
}

std::string measured_why(const Decision& d) {
  if (d.nccl_algo < 0 || d.best_algo < 0) return "no measurement";
  const Candidate& n = d.cand[d.nccl_algo][d.nccl_proto];
  const Candidate& b = d.cand[d.best_algo][d.best_proto];
  auto figure = [](const Candidate& c) {
    return fmt::format("{:.1f}±{:.1f} GB/s", c.measured.busbw_gbs, c.measured.spread_gbs);
  };
  const std::string nccl = entry(d.nccl_algo, d.nccl_proto), best = entry(d.best_algo, d.best_proto);
  if (d.reason == Reason::Measured)
    return fmt::format("measured {} {} beats NCCL's {} {} by more than the spread (x{:.2f})", best, figure(b),
                       nccl, figure(n), expected_gain(d));
  if (!n.calibrated())
    return fmt::format("NCCL's {} was not measured at this size (measured best {} {}): NCCL's choice stands",
                       nccl, best, figure(b));
  if (&n == &b) return fmt::format("NCCL's {} is the measured best ({})", nccl, figure(n));
  return fmt::format("measured best {} {} is within the spread of NCCL's {} {}: NCCL's choice stands", best,
                     figure(b), nccl, figure(n));
}

double expected_gain(const Decision& d) {
  if (d.reason != Reason::Measured) return 1.0;
  const Candidate& n = d.cand[d.nccl_algo][d.nccl_proto];
  const Candidate& b = d.cand[d.best_algo][d.best_proto];
  return n.measured.busbw_gbs > 0 ? b.measured.busbw_gbs / n.measured.busbw_gbs : 1.0;
}

std::string describe(const Decision& d, std::string_view config_path) {
  std::string head =
      fmt::format("{} {} (pipeOps {}, regBuff {}): ", coll_name(d.coll), human_bytes(d.bytes), d.pipe_ops,
                  d.reg_buff < 0 ? std::string("n/a") : std::to_string(d.reg_buff));
  std::string skipped;
  if (d.rule_skipped != nullptr)
    skipped = fmt::format("; rule at {}:{} ignored: NCCL does not support its pin here", config_path,
                          d.rule_skipped->line);
  switch (d.reason) {
    case Reason::NoCandidate: return head + "no supported entry; table untouched";
    case Reason::UserRestricted:
      return head + "NCCL_ALGO/NCCL_PROTO restrict this collective; NCCL's choice stands";
    case Reason::NcclNoModel:
      return head + "no model for any supported entry; NCCL's choice stands" + skipped;
    case Reason::MeasuredKeeps: return head + measured_why(d) + skipped;
    case Reason::Measured: return head + "chose " + entry(d.algo, d.proto) + ": " + measured_why(d) + skipped;
    case Reason::Rule:
    case Reason::Model: break;
  }
  if (d.algo < 0)
    return head + fmt::format("rule at {}:{} sets channels={} only; NCCL's choice stands", config_path,
                              d.rule->line, d.channels);
  const Candidate& w = d.cand[d.algo][d.proto];
  std::string out =
      head + fmt::format("chose {} {:.2f} us [{}]", entry(d.algo, d.proto), w.cost, source_of(w));
  if (d.runner_algo >= 0) {
    const Candidate& r = d.cand[d.runner_algo][d.runner_proto];
    out += fmt::format("; runner-up {} {:.2f} us [{}]", entry(d.runner_algo, d.runner_proto), r.cost,
                       source_of(r));
  }
  if (d.reason == Reason::Rule) {
    out += fmt::format("; decided by rule at {}:{}", config_path, d.rule->line);
    if (d.rule->algo < 0 || d.rule->proto < 0) out += " (model within the pin: " + deciding_term(d) + ")";
  } else {
    out += "; decided by " + deciding_term(d);
  }
  if (d.channels > 0) out += fmt::format("; channels {}", d.channels);
  return out + skipped;
}

}  // namespace railscope::tuner
