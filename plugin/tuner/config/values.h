// SPDX-License-Identifier: Apache-2.0
// Parsing of the value forms used in the tuner's rules file: unsigned numbers with binary suffixes
// (64K = 65536), inclusive ranges (`lo..hi`, `lo..`, `..hi`, `*`, a single value), and decimals.
// Each returns an error message on failure instead of a value; the caller adds file/line/column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "plugin/tuner/config/config.h"

namespace railscope::tuner::values {

template <class T>
using Parsed = std::variant<T, std::string>;  // value, or why not

template <class T>
bool ok(const Parsed<T>& p) {
  return p.index() == 0;
}

// Decimal unsigned integer with an optional K, M, G or T suffix (powers of 1024).
Parsed<uint64_t> size(std::string_view s);
// Decimal signed integer (for NCCL's CSV fields where -1 means "any").
Parsed<int64_t> integer(std::string_view s);
// Decimal in [min, max] (min > 0), e.g. 12.5: rejects what is not finite and what is out of range, so
// tiny (subnormal) or huge figures cannot make the cost model's times NaN or infinite.
Parsed<double> positive_decimal(std::string_view s, double min, double max);
// Inclusive range of sizes.
Parsed<Range> range(std::string_view s);

}  // namespace railscope::tuner::values
