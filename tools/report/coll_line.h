// SPDX-License-Identifier: Apache-2.0
// The reader's fast path for the bulk of a profile: `coll` and `p2p` lines, parsed with simdjson (a
// few hundred MB/s faster than building an nlohmann DOM per line, which made `railscope report` of a
// 4,096-rank job take minutes). It takes a line only when every member it reads is one the general
// reader (profile_reader.cpp) accepts; any other line, or a number out of range, is left to the general
// reader, which words the problem, so both read every line the same.
#pragma once

#include <simdjson.h>

#include <string>

#include "tools/report/profile_reader.h"

namespace railscope::report {

class CollLineParser {
 public:
  // True when `line` is a `coll` or `p2p` record the general reader would take whole: `row` holds it
  // (its `file` untouched). False: leave the line to the general reader (`row` is then unspecified).
  bool parse(const std::string& line, CollRow& row);

 private:
  simdjson::dom::parser parser_;
  std::string padded_;  // the line with simdjson's padding after it
};

}  // namespace railscope::report
