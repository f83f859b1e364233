// SPDX-License-Identifier: Apache-2.0
#include "options.h"

#include <fmt/format.h>

#include <algorithm>

#include "railscope/nccl/net.h"
#include "report.h"

namespace railscope::netbench {

uint32_t Options::modes() const {
  if (mode == "bw") return kModeBandwidth;
  if (mode == "lat") return kModeLatency;
  return kModeBandwidth | kModeLatency;
}

std::vector<std::string> Options::forward_args() const {
  std::vector<std::string> a = {"--min-size",       std::to_string(min_size),
                                "--max-size",       std::to_string(max_size),
                                "--iters",          std::to_string(iters),
                                "--warmup",         std::to_string(warmup),
                                "--lat-iters",      std::to_string(lat_iters),
                                "--bytes-per-size", std::to_string(bytes_per_size),
                                "--min-messages",   std::to_string(min_messages),
                                "--min-time",       std::to_string(min_time_s),
                                "--window",         std::to_string(window),
                                "--recvs",          std::to_string(recvs),
                                "--buffer-bytes",   std::to_string(buffer_cap),
                                "--mode",           mode,
                                "--seed",           std::to_string(seed),
                                "--timeout",        std::to_string(timeout_s),
                                "--poll",           poll};
  if (!plugin.empty()) a.insert(a.end(), {"--plugin", plugin});
  if (!verify) a.emplace_back("--no-verify");
  if (verbose) a.emplace_back("--verbose");
  return a;
}

std::vector<uint64_t> run_sizes(uint64_t min_size, uint64_t max_size) {
  std::vector<uint64_t> out;
  if (min_size == 0) out.push_back(0);
  uint64_t s = 1;
  while (s < min_size) s <<= 1;
  for (; s <= max_size && s != 0; s <<= 1) out.push_back(s);
  return out;
}

std::string no_size_reason(uint64_t min_size, uint64_t max_size) {
  if (!run_sizes(min_size, max_size).empty()) return {};
  uint64_t below = 1;
  while (below * 2 <= max_size) below *= 2;
  return fmt::format(
      "no size to measure: the sizes are the powers of two from --min-size to --max-size, and none lies "
      "between {} and {} (try --min-size {} --max-size {})",
      format_size(min_size), format_size(max_size), format_size(below), format_size(below * 2));
}

std::vector<std::string> size_rounding_notes(uint64_t min_size, uint64_t max_size) {
  const std::vector<uint64_t> sizes = run_sizes(min_size, max_size);
  std::vector<std::string> notes;
  if (sizes.empty()) return notes;
  const uint64_t first = sizes.front() == 0 && sizes.size() > 1 ? sizes[1] : sizes.front();
  if (min_size != 0 && first != min_size)
    notes.push_back(fmt::format("--min-size {} is not a power of two: the first size measured is {}",
                                format_size(min_size), format_size(first)));
  if (sizes.back() != max_size)
    notes.push_back(fmt::format("--max-size {} is not a power of two: the last size measured is {}",
                                format_size(max_size), format_size(sizes.back())));
  return notes;
}

uint64_t region_bytes(const Options& o) {
  const uint64_t slots = uint64_t{o.window} * o.recvs + 1;
  const uint64_t largest = std::max<uint64_t>(o.max_size, 1);
  // At least two messages of the largest size, so a window of one can still rotate patterns.
  return std::max(std::min(largest * slots, o.buffer_cap), 2 * largest);
}

SizePlan plan_size(const Options& o, uint64_t size, uint64_t region) {
  SizePlan p;
  p.size = size;
  const uint64_t per = std::max<uint64_t>(size, 1);
  // Slots the region holds for this size; one is kept for pattern rotation on the send side.
  const uint64_t slots =
      std::max<uint64_t>(2, std::min<uint64_t>(region / per, uint64_t{o.window} * o.recvs + 1));
  p.recvs = static_cast<uint32_t>(std::clamp<uint64_t>(o.recvs, 1, slots - 1));
  p.window = static_cast<uint32_t>(std::clamp<uint64_t>((slots - 1) / p.recvs, 1, o.window));
  p.window = std::min<uint32_t>(p.window, NCCL_NET_MAX_REQUESTS);

  const uint64_t budget_msgs = std::max<uint64_t>(o.bytes_per_size / per, 2);
  // The budget never takes a size below --min-messages; an explicit --iters below it does (marked).
  uint64_t timed = std::min<uint64_t>(o.iters, std::max<uint64_t>(budget_msgs, o.min_messages));
  uint64_t warm = std::min<uint64_t>(o.warmup, std::max<uint64_t>(timed / 8, 1));
  // Both counts in whole grouped receives.
  auto round_up = [&](uint64_t v) { return (v + p.recvs - 1) / p.recvs * p.recvs; };
  warm = round_up(warm);
  timed = round_up(std::max<uint64_t>(timed, 1));
  p.warmup = static_cast<uint32_t>(warm);
  p.messages = static_cast<uint32_t>(warm + timed);

  if (o.modes() & kModeLatency) {
    const uint64_t lat_budget = std::max<uint64_t>(o.bytes_per_size / 4 / per, 2);
    p.lat_iters = static_cast<uint32_t>(
        std::min<uint64_t>(o.lat_iters, std::max<uint64_t>(lat_budget, o.min_messages)));
    p.lat_warmup = std::min<uint32_t>(p.lat_iters / 10, 10);
  }
  if (!(o.modes() & kModeBandwidth)) p.messages = p.warmup = 0;
  return p;
}

uint64_t messages_for_min_time(const Options& o, uint64_t done, double seconds) {
  if (done == 0 || seconds >= o.min_time_s) return done;
  const double scale = seconds > 0 ? std::min(64.0, o.min_time_s / seconds * 1.1) : 64.0;
  return std::max<uint64_t>(done, static_cast<uint64_t>(static_cast<double>(done) * scale) + 1);
}

}  // namespace railscope::netbench
