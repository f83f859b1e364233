// SPDX-License-Identifier: Apache-2.0
#include "cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace railscope::netbench {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

namespace {

std::optional<int> parse_cpu(std::string_view s) {
  int v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (int c : cpus) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out.empty() ? "none" : out;
}

}  // namespace

std::optional<CpuPair> parse_cpu_pair(const std::string& text, std::string* why) {
  const auto comma = text.find(',');
  const std::optional<int> a =
      comma == std::string::npos ? std::nullopt : parse_cpu(std::string_view(text).substr(0, comma));
  const std::optional<int> b =
      comma == std::string::npos ? std::nullopt : parse_cpu(std::string_view(text).substr(comma + 1));
  if (!a || !b) {
    *why = fmt::format("--pin-cpus wants two CPU numbers, the server's and the client's (e.g. 0,1), not '{}'",
                       text);
    return std::nullopt;
  }
  const std::vector<int> allowed = allowed_cpus();
  for (int c : {*a, *b})
    if (!std::binary_search(allowed.begin(), allowed.end(), c)) {
      *why = fmt::format("--pin-cpus {}: CPU {} is not one this process may run on ({})", text, c,
                         cpu_list(allowed));
      return std::nullopt;
    }
  return CpuPair{*a, *b};
}

bool pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

}  // namespace railscope::netbench
