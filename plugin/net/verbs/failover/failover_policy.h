// SPDX-License-Identifier: Apache-2.0
// Whether a verbs connection may move its traffic off a failed port (docs/failover.md), decided once at
// connect, and which of its QPs a port's failure takes down. Pure: unit-tested directly.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/net/verbs/failover/failover_message.h"

namespace railscope::net::verbs::failover {

struct Eligibility {
  bool enabled = true;     // RAILSCOPE_NET_FAILOVER
  bool offered = false;    // the connection's protocol moves traffic (both do; a test may say not)
  size_t nqps = 0;         // the connection's QPs
  size_t nlanes = 0;       // its local ports
  size_t remote_devs = 0;  // the peer's ports
};

// True when the connection can fail over; otherwise *why says why not (a connection of one port on
// both ends has nowhere to move, and *why stays empty: nothing to say).
inline bool eligible(const Eligibility& e, std::string* why) {
  why->clear();
  if (e.nlanes < 2 && e.remote_devs < 2) return false;
  if (!e.enabled) {
    *why = "RAILSCOPE_NET_FAILOVER=0";
  } else if (!e.offered) {
    *why = "its protocol does not move traffic off a failed port";
  } else if (e.nqps > kMaxQps) {
    *why = "the connection has " + std::to_string(e.nqps) + " QPs; a failover notice names at most " +
           std::to_string(kMaxQps);
  }
  return why->empty();
}

// The QPs of a connection of `nqps` QPs over `nlanes` local ports that use local port `lane`: QP q is on
// lane q % nlanes (qp_set.h).
inline uint64_t lane_qps(size_t lane, size_t nlanes, size_t nqps) {
  uint64_t m = 0;
  for (size_t q = lane; nlanes > 0 && q < nqps && q < kMaxQps; q += nlanes) m |= uint64_t{1} << q;
  return m;
}

// The QPs of the connection that reach the peer's device `dev` of `remote_devs`: QP q goes to q %
// remote_devs.
inline uint64_t remote_dev_qps(size_t dev, size_t remote_devs, size_t nqps) {
  return lane_qps(dev, remote_devs, nqps);
}

// The QP that carries the ring and the receiver's control writes: QP 0, on the virtual NIC's first port,
// whose address the out-of-band socket uses too. A failure of its port is not moved (no control path is
// left to agree on it by): the connection fails as before, naming the port.
inline constexpr uint64_t kRingQp = 1;

// The live QP (of nqps, not in `failed`) that carries part `part` of a message once QPs failed: the live
// ones round robin. 0 when none is live (a failover always leaves the ring's QP).
inline size_t live_qp_for(size_t part, uint64_t failed, size_t nqps) {
  const uint64_t live = all_qps(nqps) & ~failed;
  if (live == 0) return 0;
  size_t k = part % static_cast<size_t>(std::popcount(live));
  for (size_t q = 0; q < nqps && q < kMaxQps; ++q)
    if ((live >> q & 1) != 0 && k-- == 0) return q;
  return 0;
}

// Whether a failure of `failed` (all QPs failed so far) leaves the connection something to move to.
inline bool movable(uint64_t failed, size_t nqps) {
  const uint64_t all = all_qps(nqps);
  return failed != 0 && (failed & kRingQp) == 0 && (failed & all) != all && (failed & ~all) == 0;
}

}  // namespace railscope::net::verbs::failover
