// SPDX-License-Identifier: Apache-2.0
// What one window of a port's counter deltas says about the fabric, as findings (at most one per
// kind): fabric.packet_loss, fabric.congestion, fabric.pause, fabric.link_errors, fabric.discards,
// each with the figures and the fix that fits the link layer. Pure: the net plugin's sampler
// (plugin/net/verbs/watch/fabric_watch.h) and `railscope doctor --watch` (tools/doctor/watch.cpp)
// feed it deltas from port_counters.h, so a window is judged the same way in a job and at the
// prompt; unit-tested on mlx5- and rxe-shaped deltas (tests/unit/net_fabric).
//
// The thresholds keep a healthy run silent. Measured on the soft-RoCE test bed (rxe on a veth pair,
// three healthy 64 MiB transfers, tests/testbed/netfabric/fabric_health.sh): sent_pkts, rcvd_pkts and
// rdma_recvs move; and because the emulated guest is slow, an ACK timeout now and then retransmits a
// whole window: completer_retry_err +1, rcvd_seq_err +1 on the sender, out_of_seq_request +1 and
// duplicate_request +65 on the receiver. With 2 % netem loss on the same path the sender sees ~1.5
// lost-packet events a second (rcvd_seq_err, completer_retry_err) and the receiver ~1 (out_of_seq_request).
// So loss is counted in events, not in retransmitted packets: duplicates (one per packet a go-back-N
// retransmission repeats) are shown, never counted, and receiver-not-ready NAKs (*rnr*: the receiver
// posted late, nothing was lost) are left out. InfiniBand's port_xmit_wait counts ticks with data
// waiting, which a busy healthy port accumulates by the million: it is shown, never judged.
#pragma once

#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/node/link.h"
#include "railscope/node/port_counters.h"

namespace railscope::node {

struct FabricWindow {
  std::string port;  // "rxe1:1"
  node::LinkLayer link_layer = node::LinkLayer::Unknown;
  double seconds = 0;
  std::vector<node::CounterDelta> deltas;  // node::counter_deltas over the window
  // The ACK timeout of the QPs on this port (4.096 us x 2^timeout, NCCL_IB_TIMEOUT), 0 when unknown:
  // what each retransmission timeout costs the sender, for the loss-by-cost rule below.
  double ack_timeout_s = 0;
};

// Loss judged by what it costs: a lost packet that no later packet reveals (the last of a message, or a
// window whose every packet is lost) is retransmitted only when the sender's ACK timer expires, and the
// QP sends nothing new until then. With NCCL's default timeout (20: ~4.3 s) two such timeouts stall a
// 10 s window for most of its length while the event count stays far below kLossMinEvents. So loss is
// also named when the window's retransmission timeouts, each costing ack_timeout_s, add up to at least
// kLossStallShare of the window, from kLossMinTimeouts timeouts.
inline constexpr double kLossStallShare = 0.2;
inline constexpr uint64_t kLossMinTimeouts = 2;
// Retransmission timeouts in a window's deltas: mlx5's local_ack_timeout_err and bnxt_re's to_retransmits
// count them; rxe's completer_retry_err counts every retry the completer starts, a sequence-error NAK's
// (also counted in rcvd_seq_err) as well as a timer's, so the timer's are the difference.
uint64_t retransmission_timeouts(const std::vector<node::CounterDelta>& deltas);
// The IB ACK timeout of a QP whose timeout attribute is `timeout`: 4.096 us x 2^timeout (IBA 9.7.6.1.3).
inline double ack_timeout_seconds(int timeout) {
  return timeout <= 0 || timeout > 31 ? 0.0 : 4.096e-6 * static_cast<double>(uint64_t{1} << timeout);
}

// Lost-packet events (sequence errors, NAKs, retransmission timeouts) before fabric.packet_loss: at
// least this many in a window (a healthy test-bed transfer shows 1-2), and at least one per
// kLossPerPackets packets the port moved when it counts them (a 400 Gb/s port moves ~3e8 packets in
// a window: 300 losses there are a loss rate of 1e-6, which RoCE still notices).
inline constexpr uint64_t kLossMinEvents = 8;
inline constexpr uint64_t kLossPerPackets = 1000000;
// Link errors: one link_downed / link_error_recovery / integrity error is news; symbol and receive
// errors, which a healthy link shows rarely, from this many in a window.
inline constexpr uint64_t kLinkNoiseMin = 10;
// Congestion (ECN marks, CNPs): at least this many, and at least 1 % of the packets moved.
inline constexpr uint64_t kCongestionMinEvents = 1000;
// PFC pause frames in a window.
inline constexpr uint64_t kPauseMinFrames = 1000;
// Discards: at least this many, and one per kLossPerPackets packets.
inline constexpr uint64_t kDiscardMinEvents = 16;

std::vector<diag::Finding> fabric_findings(const FabricWindow& w);

// Packets and bytes the port moved in the window, from its traffic counters (bytes: 0 when the port
// counts none; InfiniBand's port_*_data count 4-byte words).
struct Traffic {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint64_t received_packets = 0;
};
Traffic traffic_of(const std::vector<node::CounterDelta>& deltas);

}  // namespace railscope::node
