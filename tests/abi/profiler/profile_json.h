// SPDX-License-Identifier: Apache-2.0
// Test helpers: parse a profile directory back (every line must be valid JSON) and pick records; read a
// file whole.
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "abi/profiler/profiler_driver.h"

namespace railscope::abi_test {

// A file's whole text ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<nlohmann::json> parse_profile(const std::string& dir) {
  std::vector<nlohmann::json> out;
  for (const std::string& line : read_profile_lines(dir)) out.push_back(nlohmann::json::parse(line));
  return out;
}

inline std::vector<nlohmann::json> of_type(const std::vector<nlohmann::json>& all, const std::string& type) {
  std::vector<nlohmann::json> out;
  for (const auto& j : all)
    if (j.value("type", "") == type) out.push_back(j);
  return out;
}

// nccl-tests (doc/PERFORMANCE.md), written out independently of the plugin's code.
inline double nccl_tests_factor(const std::string& op, int n) {
  if (op == "AllReduce") return 2.0 * (n - 1) / n;
  if (op == "AllGather" || op == "ReduceScatter" || op == "AlltoAll") return static_cast<double>(n - 1) / n;
  return 1.0;  // Broadcast, Reduce, Send, Recv
}
inline double nccl_tests_bytes(const std::string& op, double count, double type_size, int n) {
  if (op == "AllGather" || op == "ReduceScatter" || op == "AlltoAll") return count * type_size * n;
  return count * type_size;
}

}  // namespace railscope::abi_test
