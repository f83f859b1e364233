// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/config/values.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace railscope::tuner::values {

Parsed<uint64_t> size(std::string_view s) {
  if (s.empty()) return std::string("empty number");
  uint64_t mult = 1;
  std::string_view digits = s;
  switch (s.back()) {
    case 'k':
    case 'K': mult = 1ull << 10; break;
    case 'm':
    case 'M': mult = 1ull << 20; break;
    case 'g':
    case 'G': mult = 1ull << 30; break;
    case 't':
    case 'T': mult = 1ull << 40; break;
    default: break;
  }
  if (mult != 1) digits.remove_suffix(1);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return fmt::format("'{}' is not a number (digits with an optional K, M, G or T suffix)", s);
  if (v > std::numeric_limits<uint64_t>::max() / mult) return fmt::format("'{}' is too large", s);
  return v * mult;
}

Parsed<int64_t> integer(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return fmt::format("'{}' is not an integer", s);
  return v;
}

Parsed<double> positive_decimal(std::string_view s, double min, double max) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || end != s.data() + s.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
    return fmt::format("'{}' is not a decimal number", s);
  if (ec == std::errc::result_out_of_range || !std::isfinite(v) || std::fpclassify(v) == FP_SUBNORMAL)
    return fmt::format(
        "'{}' is not a usable number (too large, too small or not finite; use a value in "
        "[{:g}, {:g}])",
        s, min, max);
  if (v <= 0) return fmt::format("'{}' must be greater than 0", s);
  if (v < min || v > max) return fmt::format("'{}' is outside [{:g}, {:g}]", s, min, max);
  return v;
}

Parsed<Range> range(std::string_view s) {
  Range r;
  if (s == "*") return r;
  const size_t dots = s.find("..");
  if (dots == std::string_view::npos) {
    auto v = size(s);
    if (!ok(v)) return std::get<1>(v);
    r.lo = r.hi = std::get<0>(v);
    return r;
  }
  const std::string_view lo = s.substr(0, dots), hi = s.substr(dots + 2);
  if (lo.empty() && hi.empty()) return fmt::format("'{}' has no bounds (use * for any)", s);
  if (!lo.empty()) {
    auto v = size(lo);
    if (!ok(v)) return std::get<1>(v);
    r.lo = std::get<0>(v);
  }
  if (!hi.empty()) {
    auto v = size(hi);
    if (!ok(v)) return std::get<1>(v);
    r.hi = std::get<0>(v);
  }
  if (r.lo > r.hi) return fmt::format("range '{}' is empty (lower bound above upper bound)", s);
  return r;
}

}  // namespace railscope::tuner::values
