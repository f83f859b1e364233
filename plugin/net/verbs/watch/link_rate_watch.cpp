// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/watch/link_rate_watch.h"

#include <fmt/format.h>

namespace railscope::net::verbs {
namespace {

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

bool LinkRateWatch::below(const node::RateText& now, const node::RateText& ref) {
  return now.mbps < ref.mbps || (now.width > 0 && ref.width > 0 && now.width < ref.width);
}

LinkRateWatch::Change LinkRateWatch::look(const std::string& port,
                                          const std::optional<std::string>& rate_text) {
  Change c;
  if (!rate_text) return c;
  const node::RateText now = node::parse_rate_text(*rate_text);
  if (now.mbps == 0) return c;  // unknown (a port that is down writes no rate worth judging)
  const std::string now_text = trimmed(*rate_text);
  if (first_.mbps == 0 || (!below(now, first_) && now.mbps > first_.mbps)) {
    first_ = now;
    first_text_ = now_text;
    reported_ = {};
    return c;
  }
  if (below(now, first_)) {
    if (now.mbps == reported_.mbps && now.width == reported_.width) return c;
    reported_ = now;
    c.degraded = diag::make(
        "link.degraded",
        fmt::format("{} retrained from {} to {} while the job runs: NCCL planned with the first rate, and "
                    "every transfer on this rail now runs at the lower one",
                    port, first_text_, now_text));
    return c;
  }
  if (reported_.mbps != 0) {
    c.restored = fmt::format("{} is back at {}", port, now_text);
    reported_ = {};
  }
  return c;
}

}  // namespace railscope::net::verbs
