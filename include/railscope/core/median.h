// SPDX-License-Identifier: Apache-2.0
// The median of a set of figures: the judgements that compare a rail or a link with its peers (rail skew
// in the net plugin and in `report`, preflight's link statistics) take the same one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace railscope::core {

// 0 for none; the mean of the middle two for an even count.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

}  // namespace railscope::core
