// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/failover/replay_plan.h"

#include <algorithm>
#include <bitset>

namespace railscope::net::verbs::failover {

size_t ring_qp(uint64_t failed, size_t nqps) {
  for (size_t q = 0; q < nqps && q < kMaxQps; ++q)
    if ((failed & (uint64_t{1} << q)) == 0) return q;
  return nqps;
}

std::vector<Replay> plan_replays(std::span<const InFlight> in_flight, const Notice& held, uint64_t failed,
                                 size_t nqps) {
  std::vector<Replay> out;
  std::vector<uint8_t> live;
  for (size_t q = 0; q < nqps && q < kMaxQps; ++q)
    if ((failed & (uint64_t{1} << q)) == 0) live.push_back(static_cast<uint8_t>(q));
  if (live.empty()) return out;
  size_t next = 0;
  // HELD names one message per target: a second entry for it in the sender's list is the same message.
  std::bitset<kMaxHeld> planned;
  for (const InFlight& m : in_flight) {
    const auto it = std::lower_bound(held.held.begin(), held.held.end(), m.target,
                                     [](const PartsHeld& p, uint16_t t) { return p.target < t; });
    if (it == held.held.end() || it->target != m.target || it->seq != m.seq) continue;  // received whole
    if (planned.test(m.target)) continue;
    planned.set(m.target);
    for (size_t part = 0; part < m.nparts && part < nqps && part < kMaxQps; ++part) {
      const uint64_t bit = uint64_t{1} << part;
      if ((it->parts & bit) != 0) continue;
      out.push_back(Replay{m.target, static_cast<uint8_t>(part), live[next++ % live.size()]});
    }
  }
  return out;
}

}  // namespace railscope::net::verbs::failover
