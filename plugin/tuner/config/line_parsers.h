// SPDX-License-Identifier: Apache-2.0
// One line of the tuner config at a time, in either format. Internal to config/.
#pragma once

#include <string_view>

#include "plugin/tuner/config/config.h"

namespace railscope::tuner::detail {

// Where a parsed line's problems go; `column` is 1-based in the original line.
struct LineSink {
  std::string_view file;
  int line = 0;
  std::vector<ConfigError>* errors = nullptr;
  std::vector<std::string>* deprecations = nullptr;
  bool error(int column, std::string message) const;       // always false, so `return sink.error(...)`
  void deprecated(int column, std::string message) const;  // an old spelling, still read
};

// Each returns false (after reporting) when the line is bad; nothing is added to `config` then.
// `first_range_column` receives the column the overlap check points at.
bool parse_railscope_line(std::string_view text, const LineSink& sink, Config& config,
                          int& first_range_column);
bool parse_csv_line(std::string_view text, const LineSink& sink, Config& config);

// True when the line looks like NCCL's CSV (a collective name, then a comma).
bool is_csv_line(std::string_view text);

}  // namespace railscope::tuner::detail
