// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/model/cost_model.h"

#include <algorithm>
#include <cmath>

namespace railscope::tuner {
namespace {

int ceil_log2(int n) {
  int d = 0;
  while ((1 << d) < n) ++d;
  return d;
}

// Bytes per µs for a bandwidth in GB/s.
constexpr double kBytesPerUsPerGbs = 1e3;

struct Shape {
  int n = 1;        // ranks
  int islands = 1;  // NVLink islands (nodes)
  int g = 1;        // ranks per island
  bool multi = false;
  int intra_hw = kHwNvlink;
  double intra_gbs = 0;
  double net_gbs = 0;  // the rails the ranks of one node drive, after NIC efficiency
};

// The bus bandwidth a ring sees: the slower of the intra link and the node's NICs.
double ring_busbw(const Shape& s) { return s.multi ? std::min(s.intra_gbs, s.net_gbs) : s.intra_gbs; }

Coeffs ring(const Shape& s, const Figures& f, int coll, int p) {
  const int a = kRing;
  // A chunk's journey: AllReduce goes round the ring twice (reduce-scatter, then all-gather), the
  // others once; of each traversal's hops, one per island boundary crosses the NICs.
  const int traversals = coll == kAllReduce ? 2 : 1;
  const int steps = traversals * (s.n - 1);
  const int net_steps = s.multi ? traversals * (s.islands - 1) : 0;
  const double latency =
      (steps - net_steps) * f.hw_lat_us[s.intra_hw][a][p] + net_steps * f.hw_lat_us[kHwNet][a][p];
  const double bw = ring_busbw(s) * f.proto_eff[p];
  Coeffs c;
  c.alpha_us = static_cast<float>(f.base_lat_us[a][p] + latency);
  c.beta_us_per_byte = static_cast<float>(bus_factor(coll, s.n) / (bw * kBytesPerUsPerGbs));
  c.latency_per_op = true;
  c.source = CostSource::Model;
  return c;
}

Coeffs tree(const Shape& s, const Figures& f, int p) {
  const int a = kTree;
  const int intra_depth = s.g - 1;
  const int net_depth = s.multi ? ceil_log2(s.islands) : 0;
  const double one_way = intra_depth * f.hw_lat_us[s.intra_hw][a][p] + net_depth * f.hw_lat_us[kHwNet][a][p];
  const double bw = ring_busbw(s) * f.tree_eff * f.proto_eff[p];
  Coeffs c;
  c.alpha_us = static_cast<float>(f.base_lat_us[a][p] + 2 * one_way);
  c.beta_us_per_byte = static_cast<float>(bus_factor(kAllReduce, s.n) / (bw * kBytesPerUsPerGbs));
  // The first chunk crosses the whole depth (up and down) before the pipeline runs full.
  const int depth = 2 * (intra_depth + net_depth);
  c.fill_us_per_byte = static_cast<float>(depth / (bw * kBytesPerUsPerGbs));
  c.fill_cap_bytes = static_cast<float>(f.chunk_bytes[p]);
  c.latency_per_op = false;
  c.source = CostSource::Model;
  return c;
}

Coeffs pat(const Shape& s, const Figures& f, int coll) {
  const int a = kPat;
  const int p = kSimple;
  const double hop = s.multi ? f.hw_lat_us[kHwNet][a][p] : f.hw_lat_us[s.intra_hw][a][p];
  const double bw = ring_busbw(s) * f.pat_eff * f.proto_eff[p];
  Coeffs c;
  c.alpha_us = static_cast<float>(f.base_lat_us[a][p] + ceil_log2(s.n) * hop);
  c.beta_us_per_byte = static_cast<float>(bus_factor(coll, s.n) / (bw * kBytesPerUsPerGbs));
  c.latency_per_op = false;
  c.source = CostSource::Model;
  return c;
}

}  // namespace

std::string_view to_string(CostSource s) {
  switch (s) {
    case CostSource::Model: return "model";
    case CostSource::Measured: return "measured";
    case CostSource::None: break;
  }
  return "none";
}

double bus_factor(int coll, int n_ranks) {
  const double n = std::max(1, n_ranks);
  switch (coll) {
    case kAllReduce: return n > 1 ? 2.0 * (n - 1) / n : 1.0;
    case kAllGather:
    case kReduceScatter: return n > 1 ? (n - 1) / n : 1.0;
    default: return 1.0;  // Broadcast, Reduce
  }
}

CostModel build_cost_model(const Topology& topo, const Figures& f, std::span<const MeasuredFigure> measured,
                           double measured_rail_gbs) {
  CostModel m;
  Shape s;
  s.n = topo.shape.n_ranks;
  s.islands = topo.islands;
  s.g = topo.ranks_per_island;
  s.multi = topo.islands > 1;
  s.intra_hw = topo.intra == IntraLink::NvLink ? kHwNvlink : kHwPci;
  s.intra_gbs = topo.intra_gbps;
  // A measured rate above the line rate was not measured on these NICs: the nominal one stands.
  const double line_gbs = topo.nics.gbps / 8.0;
  m.rail_measured = measured_rail_gbs > 0 && measured_rail_gbs <= line_gbs;
  m.rail_gbs = m.rail_measured ? measured_rail_gbs : line_gbs * f.nic_eff;
  s.net_gbs = topo.rails * m.rail_gbs;
  m.inter_known = !s.multi || topo.nics.known();

  if (s.n > 1 && s.intra_gbs > 0 && m.inter_known) {
    for (int coll = 0; coll < kNumColls; ++coll) {
      for (int p = 0; p < kNumProtos; ++p) m.coeff[coll][kRing][p] = ring(s, f, coll, p);
      if (coll == kAllReduce)
        for (int p = 0; p < kNumProtos; ++p) m.coeff[coll][kTree][p] = tree(s, f, p);
      if ((coll == kAllGather || coll == kReduceScatter) && s.g == 1)
        m.coeff[coll][kPat][kSimple] = pat(s, f, coll);
    }
  } else if (!m.inter_known) {
    m.note = "no NIC facts for a multi-node communicator";
  } else if (s.n <= 1) {
    m.note = "single rank";
  } else {
    m.note = "no intra-node bandwidth";
  }

  for (const MeasuredFigure& mf : measured) {
    if (mf.nodes != topo.shape.n_nodes || mf.busbw_gbs <= 0) continue;
    if (mf.coll < 0 || mf.coll >= kNumColls || mf.algo < 0 || mf.algo >= kNumAlgos || mf.proto < 0 ||
        mf.proto >= kNumProtos)
      continue;
    Coeffs c;
    c.alpha_us = static_cast<float>(mf.lat_us);
    c.beta_us_per_byte = static_cast<float>(bus_factor(mf.coll, s.n) / (mf.busbw_gbs * kBytesPerUsPerGbs));
    c.latency_per_op = mf.algo == kRing;
    c.source = CostSource::Measured;
    m.coeff[mf.coll][mf.algo][mf.proto] = c;
  }
  return m;
}

}  // namespace railscope::tuner
