// SPDX-License-Identifier: Apache-2.0
// The bus bandwidth of a repeated collective as `railscope tuner calibrate` measures it and `railscope ab
// --calibration` judges it: each collective counts once, as its slowest rank (it ends when its last rank
// does); over the collectives, the median and half the interquartile range around it (the spread).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace railscope::report {

struct BusbwSpread {
  double median_gbs = 0;  // GB/s
  double spread_gbs = 0;  // half the interquartile range, GB/s
  std::size_t collectives = 0;
};

class CollectiveBusbw {
 public:
  // What is the same on every rank of one collective: its communicator (and run) and its ordinal.
  using Id = std::pair<std::string, std::uint64_t>;

  void add(const Id& collective, double busbw_gbs) {
    auto [it, added] = slowest_.try_emplace(collective, busbw_gbs);
    if (!added) it->second = std::min(it->second, busbw_gbs);
  }
  std::size_t collectives() const { return slowest_.size(); }

  BusbwSpread summary() const {
    std::vector<double> bw;
    bw.reserve(slowest_.size());
    for (const auto& [id, v] : slowest_) bw.push_back(v);
    std::sort(bw.begin(), bw.end());
    if (bw.empty()) return {};
    return {quantile(bw, 0.5), (quantile(bw, 0.75) - quantile(bw, 0.25)) / 2, bw.size()};
  }

 private:
  // Linear interpolation between the closest ranks of sorted values.
  static double quantile(const std::vector<double>& sorted, double q) {
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
  }

  std::map<Id, double> slowest_;
};

}  // namespace railscope::report
