// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/model/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace railscope::tuner {

std::optional<MeasuredBusbw> Calibration::at(int coll, int algo, int proto, uint64_t bytes) const {
  const CalibrationCurve& c = curve[coll][algo][proto];
  if (c.bytes.empty()) return std::nullopt;
  const auto it = std::lower_bound(c.bytes.begin(), c.bytes.end(), bytes);
  if (it == c.bytes.begin()) {
    // Below the smallest size: the same time, so the bandwidth shrinks with the size.
    if (bytes * kCalibrationReach < c.bytes.front()) return std::nullopt;
    const float f = static_cast<float>(bytes) / static_cast<float>(c.bytes.front());
    return MeasuredBusbw{c.at.front().busbw_gbs * f, c.at.front().spread_gbs * f};
  }
  if (it == c.bytes.end()) {
    if (bytes / kCalibrationReach > c.bytes.back()) return std::nullopt;
    return c.at.back();
  }
  const auto hi = static_cast<size_t>(it - c.bytes.begin());
  if (*it == bytes) return c.at[hi];
  const size_t lo = hi - 1;
  const float t = std::log2(static_cast<float>(bytes) / static_cast<float>(c.bytes[lo])) /
                  std::log2(static_cast<float>(c.bytes[hi]) / static_cast<float>(c.bytes[lo]));
  return MeasuredBusbw{c.at[lo].busbw_gbs + t * (c.at[hi].busbw_gbs - c.at[lo].busbw_gbs),
                       c.at[lo].spread_gbs + t * (c.at[hi].spread_gbs - c.at[lo].spread_gbs)};
}

std::string cluster_difference(const ClusterPrint& c, const Topology& topo) {
  if (!topo.nics.known()) return "";
  if (c.nic_gbit > 0 && std::fabs(c.nic_gbit - topo.nics.gbps) > 0.01 * c.nic_gbit)
    return fmt::format("NICs of {} Gbit/s there, {} Gbit/s here", c.nic_gbit, topo.nics.gbps);
  if (c.nics > 0 && c.nics != topo.nics.count)
    return fmt::format("{} NICs per node there, {} here", c.nics, topo.nics.count);
  return "";
}

CalibrationOrRefusal build_calibration(const Config& config, const Topology& topo) {
  CalibrationOrRefusal out;
  Calibration& cal = out.calibration;
  if (config.points.empty()) return out;
  const int ranks = topo.shape.n_ranks, nodes = topo.shape.n_nodes;
  const std::string shape = fmt::format("{} ranks on {} node{}", ranks, nodes, nodes == 1 ? "" : "s");

  // A cluster whose NICs differ from the ones this communicator sees was measured somewhere else.
  if (const auto& c = config.cluster) {
    const std::string diff = cluster_difference(*c, topo);
    if (!diff.empty()) {
      cal.note = "calibration refused: another cluster";
      out.refusal =
          diag::make("tuner.calibration_other_cluster",
                     fmt::format("calibration '{}' (cluster line {}): {}", config.path, c->line, diff),
                     "Calibrate on this cluster (railscope tuner calibrate), or give the tuner no "
                     "calibration here");
      return out;
    }
  }

  std::vector<const CalibrationPoint*> mine;
  std::set<std::pair<int, int>> shapes;
  for (const CalibrationPoint& p : config.points) {
    if (p.ranks == ranks && p.nodes == nodes)
      mine.push_back(&p);
    else
      shapes.insert({p.ranks, p.nodes});
  }
  if (mine.empty()) {
    std::string measured;
    for (const auto& [r, n] : shapes)
      measured += fmt::format("{}{} ranks on {} nodes", measured.empty() ? "" : ", ", r, n);
    cal.note = "calibration refused: no point for " + shape;
    out.refusal = diag::make(
        "tuner.calibration_other_shape",
        fmt::format("calibration '{}' measured {}; this communicator has {}", config.path, measured, shape),
        "Calibrate with profiles of a run of this shape, or let the model decide for it");
    return out;
  }
  std::sort(mine.begin(), mine.end(),
            [](const CalibrationPoint* a, const CalibrationPoint* b) { return a->bytes < b->bytes; });
  for (const CalibrationPoint* p : mine) {
    CalibrationCurve& c = cal.curve[p->coll][p->algo][p->proto];
    c.bytes.push_back(p->bytes);
    c.at.push_back({static_cast<float>(p->busbw_gbs), static_cast<float>(p->spread_gbs)});
    cal.any[p->coll] = true;
  }
  cal.active = true;
  cal.note = fmt::format("calibration: {} points for {}", mine.size(), shape);
  return out;
}

}  // namespace railscope::tuner
