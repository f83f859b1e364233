// Port counters from sysfs and the one table of counter names by category (port_counters.h).
#include "railscope/node/port_counters.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

struct Entry {
  std::string_view name;
  CounterCategory category;
};

// Exact names. InfiniBand PortCounters (counters/), then provider hw_counters/ (mlx5, rxe, efa, bnxt_re,
// irdma); a name several providers share appears once.
constexpr std::array kExact = {
    // counters/: the InfiniBand PortCounters and PortCountersExtended attributes.
    Entry{"symbol_error", CounterCategory::Link},
    Entry{"link_error_recovery", CounterCategory::Link},
    Entry{"link_downed", CounterCategory::Link},
    Entry{"local_link_integrity_errors", CounterCategory::Link},
    Entry{"excessive_buffer_overrun_errors", CounterCategory::Link},
    Entry{"port_rcv_errors", CounterCategory::Link},
    Entry{"port_rcv_remote_physical_errors", CounterCategory::Link},
    Entry{"port_rcv_switch_relay_errors", CounterCategory::Discard},
    Entry{"port_xmit_discards", CounterCategory::Discard},
    Entry{"port_xmit_constraint_errors", CounterCategory::Discard},
    Entry{"port_rcv_constraint_errors", CounterCategory::Discard},
    Entry{"VL15_dropped", CounterCategory::Discard},
    Entry{"port_xmit_wait", CounterCategory::Congestion},
    Entry{"port_xmit_data", CounterCategory::Traffic},
    Entry{"port_rcv_data", CounterCategory::Traffic},
    Entry{"port_xmit_packets", CounterCategory::Traffic},
    Entry{"port_rcv_packets", CounterCategory::Traffic},
    Entry{"unicast_xmit_packets", CounterCategory::Traffic},
    Entry{"unicast_rcv_packets", CounterCategory::Traffic},
    Entry{"multicast_xmit_packets", CounterCategory::Traffic},
    Entry{"multicast_rcv_packets", CounterCategory::Traffic},
    // mlx5 hw_counters: transport retries and sequence errors (the fabric lost packets).
    Entry{"out_of_sequence", CounterCategory::Loss},
    Entry{"packet_seq_err", CounterCategory::Loss},
    Entry{"implied_nak_seq_err", CounterCategory::Loss},
    Entry{"local_ack_timeout_err", CounterCategory::Loss},
    Entry{"rnr_nak_retry_err", CounterCategory::Loss},
    Entry{"duplicate_request", CounterCategory::Loss},
    Entry{"roce_adp_retrans", CounterCategory::Loss},
    Entry{"roce_adp_retrans_to", CounterCategory::Loss},
    Entry{"roce_slow_restart", CounterCategory::Loss},
    Entry{"roce_slow_restart_trans", CounterCategory::Loss},
    Entry{"out_of_buffer", CounterCategory::Discard},
    Entry{"rx_icrc_encapsulated", CounterCategory::Discard},
    // mlx5: RoCE congestion control (ECN marks seen, CNPs sent and handled).
    Entry{"np_ecn_marked_roce_packets", CounterCategory::Congestion},
    Entry{"np_cnp_sent", CounterCategory::Congestion},
    Entry{"rp_cnp_handled", CounterCategory::Congestion},
    Entry{"rp_cnp_ignored", CounterCategory::Congestion},
    Entry{"roce_slow_restart_cnps", CounterCategory::Congestion},
    // rxe hw_counters.
    Entry{"rcvd_seq_err", CounterCategory::Loss},
    Entry{"out_of_seq_request", CounterCategory::Loss},
    Entry{"retry_exceeded_err", CounterCategory::Loss},
    Entry{"retry_rnr_exceeded_err", CounterCategory::Loss},
    Entry{"completer_retry_err", CounterCategory::Loss},
    Entry{"rcvd_rnr_err", CounterCategory::Loss},
    Entry{"send_rnr_err", CounterCategory::Loss},
    Entry{"sent_pkts", CounterCategory::Traffic},
    Entry{"rcvd_pkts", CounterCategory::Traffic},
    Entry{"rdma_sends", CounterCategory::Traffic},
    Entry{"rdma_recvs", CounterCategory::Traffic},
    // efa hw_counters.
    Entry{"rdm_retrans_pkts", CounterCategory::Loss},
    Entry{"tx_pkts", CounterCategory::Traffic},
    Entry{"rx_pkts", CounterCategory::Traffic},
    Entry{"tx_bytes", CounterCategory::Traffic},
    Entry{"rx_bytes", CounterCategory::Traffic},
    Entry{"rx_drops", CounterCategory::Discard},
    // bnxt_re hw_counters.
    Entry{"seq_err_naks_rcvd", CounterCategory::Loss},
    Entry{"max_retry_exceeded", CounterCategory::Loss},
    Entry{"to_retransmits", CounterCategory::Loss},
    Entry{"rnr_naks_rcvd", CounterCategory::Loss},
    Entry{"missing_resp", CounterCategory::Loss},
    Entry{"dup_req", CounterCategory::Loss},
    Entry{"rx_ecn_marked_pkts", CounterCategory::Congestion},
    Entry{"tx_cnp_pkts", CounterCategory::Congestion},
    Entry{"rx_cnp_pkts", CounterCategory::Congestion},
    // irdma hw_counters.
    Entry{"RetransSegs", CounterCategory::Loss},
    Entry{"iwRdmaRetrans", CounterCategory::Loss},
    Entry{"cnpHandled", CounterCategory::Congestion},
    Entry{"cnpIgnored", CounterCategory::Congestion},
    Entry{"cnpSent", CounterCategory::Congestion},
    Entry{"RxECNMrkd", CounterCategory::Congestion},
    Entry{"ip4InDiscards", CounterCategory::Discard},
    Entry{"ip6InDiscards", CounterCategory::Discard},
};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

void read_folder(const Sysfs& sysfs, const std::string& folder, bool hw, std::vector<Counter>* out) {
  for (const auto& name : sysfs.list(folder)) {
    const auto v = sysfs.read_int(folder + "/" + name);
    if (!v || *v < 0) continue;  // unreadable (some need privileges) or not a counter
    out->push_back(Counter{name, counter_category(name), static_cast<uint64_t>(*v), hw});
  }
}

}  // namespace

std::string_view to_string(CounterCategory c) {
  switch (c) {
    case CounterCategory::Loss: return "loss";
    case CounterCategory::Congestion: return "congestion";
    case CounterCategory::Pause: return "pause";
    case CounterCategory::Link: return "link";
    case CounterCategory::Discard: return "discard";
    case CounterCategory::Traffic: return "traffic";
    case CounterCategory::Other: break;
  }
  return "other";
}

CounterCategory counter_category(std::string_view name) {
  for (const Entry& e : kExact)
    if (e.name == name) return e.category;
  // Families by pattern: PFC pause counters (rx_prioN_pause, tx_pause_ctrl_phy, *_pause_duration ...),
  // discards (rx_discards_phy ...), then errors and retransmissions that name themselves.
  if (contains(name, "pause")) return CounterCategory::Pause;
  if (contains(name, "discard") || contains(name, "drop")) return CounterCategory::Discard;
  if (contains(name, "ecn") || contains(name, "cnp")) return CounterCategory::Congestion;
  if (contains(name, "retrans") || contains(name, "retry") || contains(name, "seq_err") ||
      contains(name, "timeout"))
    return CounterCategory::Loss;
  if (contains(name, "_packets") || contains(name, "_pkts") || contains(name, "_bytes") ||
      contains(name, "_data"))
    return CounterCategory::Traffic;
  return CounterCategory::Other;
}

PortCounters read_port_counters(const Sysfs& sysfs, const std::string& device, int port) {
  PortCounters pc;
  pc.device = device;
  pc.port = port;
  const std::string base = fmt::format("class/infiniband/{}/ports/{}", device, port);
  read_folder(sysfs, base + "/counters", false, &pc.counters);
  read_folder(sysfs, base + "/hw_counters", true, &pc.counters);
  std::sort(pc.counters.begin(), pc.counters.end(), [](const Counter& a, const Counter& b) {
    return std::tie(a.hw, a.name) < std::tie(b.hw, b.name);
  });
  return pc;
}

std::vector<CounterDelta> counter_deltas(const PortCounters& before, const PortCounters& after) {
  std::map<std::pair<bool, std::string_view>, uint64_t> old;
  for (const auto& c : before.counters) old[{c.hw, c.name}] = c.value;
  std::vector<CounterDelta> out;
  for (const auto& c : after.counters) {
    const auto it = old.find({c.hw, c.name});
    if (it == old.end() || it->second == c.value) continue;
    CounterDelta d{c.name, c.category, 0, false};
    if (c.value > it->second) {
      d.delta = c.value - it->second;
    } else {
      d.delta = c.value;
      d.reset = true;
    }
    if (d.delta > 0 || d.reset) out.push_back(std::move(d));
  }
  return out;
}

uint64_t category_total(const std::vector<CounterDelta>& deltas, CounterCategory category) {
  uint64_t sum = 0;
  for (const auto& d : deltas)
    if (d.category == category) sum += d.delta;
  return sum;
}

}  // namespace railscope::node
