// SPDX-License-Identifier: Apache-2.0
// Case-folding of the ASCII names ab compares (variants, algorithms, protocols): NCCL and users spell
// them in either case.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace railscope::ab {

inline std::string ascii_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace railscope::ab
