// SPDX-License-Identifier: Apache-2.0
#include "railscope/node/fabric_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace railscope::node {
namespace {

using node::CounterCategory;
using node::CounterDelta;

bool mentions(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_rnr(std::string_view name) { return mentions(name, "rnr"); }

// Duplicates count every packet a go-back-N retransmission sent again: one timeout makes dozens, so
// they are shown with the loss, never counted as separate losses.
bool is_duplicate(std::string_view name) { return mentions(name, "dup"); }

// Counters that say a link event happened at all (one is news), as opposed to error noise.
bool is_link_event(std::string_view name) {
  return name == "link_downed" || name == "link_error_recovery" || name == "local_link_integrity_errors" ||
         name == "excessive_buffer_overrun_errors";
}

bool is_pause_duration(std::string_view name) {
  return mentions(name, "duration") || mentions(name, "transition");
}

struct Selected {
  uint64_t total = 0;
  std::vector<const CounterDelta*> parts;
};

template <typename Pred>
Selected select(const std::vector<CounterDelta>& deltas, CounterCategory cat, Pred keep) {
  Selected s;
  for (const auto& d : deltas)
    if (d.category == cat && d.delta > 0 && keep(d.name)) {
      s.total += d.delta;
      s.parts.push_back(&d);
    }
  std::stable_sort(s.parts.begin(), s.parts.end(),
                   [](const CounterDelta* a, const CounterDelta* b) { return a->delta > b->delta; });
  return s;
}

// "rcvd_seq_err +380, out_of_seq_request +32" (the four largest; "reset" when a counter restarted).
std::string parts_text(const Selected& s) {
  std::string out;
  for (size_t i = 0; i < s.parts.size() && i < 4; ++i)
    out += fmt::format("{}{} +{}{}", i ? ", " : "", s.parts[i]->name, s.parts[i]->delta,
                       s.parts[i]->reset ? " (counter reset)" : "");
  if (s.parts.size() > 4) out += fmt::format(", {} more", s.parts.size() - 4);
  return out;
}

std::string moved_text(const Traffic& t) {
  if (t.bytes > 0)
    return fmt::format("while the port moved {:.0f} MiB", static_cast<double>(t.bytes) / 1048576.0);
  if (t.packets > 0) return fmt::format("while the port moved {} packets", t.packets);
  return "(the port counts no traffic)";
}

bool roce(node::LinkLayer l) { return l == node::LinkLayer::Ethernet; }

// At least `min` events and, when the port counts packets, at least one per `per` packets.
bool above(uint64_t events, uint64_t min, uint64_t packets, uint64_t per) {
  if (events < min) return false;
  return packets == 0 || events * per >= packets;
}

}  // namespace

Traffic traffic_of(const std::vector<CounterDelta>& deltas) {
  Traffic t;
  for (const auto& d : deltas) {
    if (d.category != CounterCategory::Traffic) continue;
    // The netdev's ethtool byte and packet counters count all of its traffic, RDMA or not, and would
    // count the port's RDMA traffic a second time: what the port moved is its own counters'.
    if (d.source == node::CounterSource::Ethtool) continue;
    const std::string_view n = d.name;
    const bool rx = mentions(n, "rcv") || mentions(n, "rx") || mentions(n, "recv");
    if (n == "port_xmit_data" || n == "port_rcv_data") {
      t.bytes += 4 * d.delta;  // 4-byte words (IBA PortCounters)
    } else if (mentions(n, "bytes")) {
      t.bytes += d.delta;
    } else if (n == "port_xmit_packets" || n == "port_rcv_packets" || n == "sent_pkts" || n == "rcvd_pkts" ||
               n == "tx_pkts" || n == "rx_pkts") {
      t.packets += d.delta;
      if (rx) t.received_packets += d.delta;
    }
  }
  return t;
}

uint64_t retransmission_timeouts(const std::vector<CounterDelta>& deltas) {
  uint64_t exact = 0, retries = 0, naks = 0;
  for (const auto& d : deltas) {
    if (d.source == node::CounterSource::Ethtool) continue;
    if (d.name == "local_ack_timeout_err" || d.name == "to_retransmits") exact += d.delta;
    if (d.name == "completer_retry_err") retries += d.delta;
    if (d.name == "rcvd_seq_err") naks += d.delta;
  }
  return exact + (retries > naks ? retries - naks : 0);
}

std::vector<diag::Finding> fabric_findings(const FabricWindow& w) {
  std::vector<diag::Finding> out;
  const Traffic t = traffic_of(w.deltas);
  const std::string in = fmt::format("in {:.1f} s {}", w.seconds, moved_text(t));

  const Selected loss = select(w.deltas, CounterCategory::Loss,
                               [](std::string_view n) { return !is_rnr(n) && !is_duplicate(n); });
  const Selected dups = select(w.deltas, CounterCategory::Loss, is_duplicate);
  const uint64_t timeouts = w.ack_timeout_s > 0 ? retransmission_timeouts(w.deltas) : 0;
  const double stalled_s = static_cast<double>(timeouts) * w.ack_timeout_s;
  const bool costly =
      timeouts >= kLossMinTimeouts && w.seconds > 0 && stalled_s >= kLossStallShare * w.seconds;
  if (above(loss.total, kLossMinEvents, t.packets, kLossPerPackets) || costly)
    out.push_back(diag::make(
        "fabric.packet_loss",
        fmt::format("{}: {} lost-packet events ({}{}) {}{}: the fabric drops {} packets", w.port, loss.total,
                    parts_text(loss),
                    dups.total > 0 ? fmt::format("; then {} retransmitted ({})", dups.total, parts_text(dups))
                                   : std::string(),
                    in,
                    timeouts > 0
                        ? fmt::format("; {} retransmission timeouts of {:.2f} s stalled the sender for "
                                      "about {:.1f} s ({:.0f}% of the window)",
                                      timeouts, w.ack_timeout_s, stalled_s,
                                      100.0 * std::min(1.0, stalled_s / w.seconds))
                        : std::string(),
                    roce(w.link_layer) ? "RoCE" : "InfiniBand"),
        roce(w.link_layer)
            ? "RoCE needs a path that does not drop: enable PFC on the RoCE priority on every NIC and switch "
              "port end to end (and ECN/DCQCN so congestion is signalled before drops), check that "
              "NCCL_IB_TC "
              "maps to that priority (`railscope doctor`), then look for a bad cable/optic or a congested "
              "link on the path (switch port counters)"
            : "Find the link that drops (ibqueryerrors / perfquery on the path): a port with symbol or "
              "receive "
              "errors has a bad cable or optic; re-seat or replace it"));

  const Selected events = select(w.deltas, CounterCategory::Link, is_link_event);
  const Selected noise =
      select(w.deltas, CounterCategory::Link, [](std::string_view n) { return !is_link_event(n); });
  if (events.total >= 1 || noise.total >= kLinkNoiseMin) {
    Selected all = events;
    all.total += noise.total;
    all.parts.insert(all.parts.end(), noise.parts.begin(), noise.parts.end());
    out.push_back(diag::make(
        "fabric.link_errors",
        fmt::format("{}: {} link errors ({}) {}: the physical link is unstable{}", w.port, all.total,
                    parts_text(all), in, events.total > 0 ? " (it went down or retrained)" : ""),
        roce(w.link_layer)
            ? "Check the Ethernet link of this port: re-seat or replace the cable/optic, check FEC and the "
              "switch port's error counters; a port whose link_downed rises flaps"
            : "Symbol and integrity errors come from the physical layer: re-seat or replace this port's "
              "cable "
              "or optic and check the switch side (ibqueryerrors); a port whose link_downed rises flaps"));
  }

  const Selected cong =
      select(w.deltas, CounterCategory::Congestion, [](std::string_view n) { return n != "port_xmit_wait"; });
  if (above(cong.total, kCongestionMinEvents, t.packets, 100))
    out.push_back(diag::make(
        "fabric.congestion",
        fmt::format("{}: {} congestion notifications ({}) {}: the fabric is congested on this port's path",
                    w.port, cong.total, parts_text(cong), in),
        "ECN marks and CNPs mean switch queues fill: look for an oversubscribed uplink, incast, or a slower "
        "rail; check that RoCE traffic has its own priority and that ECN thresholds suit the link speed"));

  const Selected pause =
      select(w.deltas, CounterCategory::Pause, [](std::string_view n) { return !is_pause_duration(n); });
  if (pause.total >= kPauseMinFrames)
    out.push_back(diag::make(
        "fabric.pause",
        fmt::format("{}: {} PFC pause frames ({}) {}: a receiver or switch on the path cannot keep up",
                    w.port, pause.total, parts_text(pause), in),
        "Find where the pauses start (switch pause counters per priority): a congested switch port, a slow "
        "receiver (PCIe, host memory) or a pause storm; enable ECN so DCQCN slows senders before PFC stops "
        "them"));

  const Selected discard = select(w.deltas, CounterCategory::Discard, [](std::string_view) { return true; });
  if (above(discard.total, kDiscardMinEvents, t.packets, kLossPerPackets))
    out.push_back(diag::make(
        "fabric.discards",
        fmt::format("{}: {} packets discarded ({}) {}", w.port, discard.total, parts_text(discard), in),
        "out_of_buffer: the receiver ran out of posted receives or buffers; *_discards(_phy): the port or "
        "the "
        "switch dropped for lack of buffer or a closed priority — check PFC on the RoCE priority and the "
        "switch's drop counters"));
  return out;
}

}  // namespace railscope::node
