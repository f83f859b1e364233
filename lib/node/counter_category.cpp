// SPDX-License-Identifier: Apache-2.0
// The one table of counter names by category (port_counters.h): InfiniBand PortCounters, the providers'
// hw_counters and the RoCE netdev's ethtool statistics.
// Sources for the names:
//  - counters/: the kernel's InfiniBand sysfs ABI (Documentation/ABI/stable/sysfs-class-infiniband) and the
//    IBTA PortCounters / PortCountersExtended attributes;
//  - hw_counters/: drivers/infiniband/hw/mlx5/counters.c, drivers/infiniband/sw/rxe/rxe_hw_counters.c,
//    drivers/infiniband/hw/efa/efa_verbs.c, drivers/infiniband/hw/bnxt_re/hw_counters.c,
//    drivers/infiniband/hw/irdma/utils.c;
//  - ethtool: drivers/net/ethernet/mellanox/mlx5/core/en_stats.c and the kernel's mlx5 counters page
//    (Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst), NVIDIA's
//    "Understanding mlx5 ethtool counters" notes.
#include <array>

#include "railscope/node/port_counters.h"

namespace railscope::node {
namespace {

struct Entry {
  std::string_view name;
  CounterCategory category;
};

using C = CounterCategory;

// Exact names; a name several providers share appears once.
constexpr std::array kExact = {
    // counters/: the InfiniBand PortCounters and PortCountersExtended attributes.
    Entry{"symbol_error", C::Link},
    Entry{"link_error_recovery", C::Link},
    Entry{"link_downed", C::Link},
    Entry{"local_link_integrity_errors", C::Link},
    Entry{"excessive_buffer_overrun_errors", C::Link},
    Entry{"port_rcv_errors", C::Link},
    Entry{"port_rcv_remote_physical_errors", C::Link},
    Entry{"port_rcv_switch_relay_errors", C::Discard},
    Entry{"port_xmit_discards", C::Discard},
    Entry{"port_xmit_constraint_errors", C::Discard},
    Entry{"port_rcv_constraint_errors", C::Discard},
    Entry{"VL15_dropped", C::Discard},
    Entry{"port_xmit_wait", C::Congestion},
    Entry{"port_xmit_data", C::Traffic},
    Entry{"port_rcv_data", C::Traffic},
    Entry{"port_xmit_packets", C::Traffic},
    Entry{"port_rcv_packets", C::Traffic},
    Entry{"unicast_xmit_packets", C::Traffic},
    Entry{"unicast_rcv_packets", C::Traffic},
    Entry{"multicast_xmit_packets", C::Traffic},
    Entry{"multicast_rcv_packets", C::Traffic},
    // mlx5 hw_counters: transport retries and sequence errors (the fabric lost packets).
    Entry{"out_of_sequence", C::Loss},
    Entry{"packet_seq_err", C::Loss},
    Entry{"implied_nak_seq_err", C::Loss},
    Entry{"local_ack_timeout_err", C::Loss},
    Entry{"rnr_nak_retry_err", C::Loss},
    Entry{"duplicate_request", C::Loss},
    Entry{"req_transport_retries_exceeded", C::Loss},
    Entry{"req_rnr_retries_exceeded", C::Loss},
    Entry{"roce_adp_retrans", C::Loss},
    Entry{"roce_adp_retrans_to", C::Loss},
    Entry{"roce_slow_restart", C::Loss},
    Entry{"roce_slow_restart_trans", C::Loss},
    Entry{"out_of_buffer", C::Discard},
    Entry{"rx_icrc_encapsulated", C::Discard},
    Entry{"rx_write_requests", C::Traffic},
    Entry{"rx_read_requests", C::Traffic},
    Entry{"rx_atomic_requests", C::Traffic},
    // mlx5: RoCE congestion control (ECN marks seen, CNPs sent and handled).
    Entry{"np_ecn_marked_roce_packets", C::Congestion},
    Entry{"np_cnp_sent", C::Congestion},
    Entry{"rp_cnp_handled", C::Congestion},
    Entry{"rp_cnp_ignored", C::Congestion},
    Entry{"roce_slow_restart_cnps", C::Congestion},
    // rxe hw_counters.
    Entry{"rcvd_seq_err", C::Loss},
    Entry{"out_of_seq_request", C::Loss},
    Entry{"retry_exceeded_err", C::Loss},
    Entry{"retry_rnr_exceeded_err", C::Loss},
    Entry{"completer_retry_err", C::Loss},
    Entry{"rcvd_rnr_err", C::Loss},
    Entry{"send_rnr_err", C::Loss},
    Entry{"send_err", C::Discard},  // the netdev refused a packet (rxe_xmit_packet)
    Entry{"sent_pkts", C::Traffic},
    Entry{"rcvd_pkts", C::Traffic},
    Entry{"rdma_sends", C::Traffic},
    Entry{"rdma_recvs", C::Traffic},
    // efa hw_counters.
    Entry{"rdm_retrans_pkts", C::Loss},
    Entry{"tx_pkts", C::Traffic},
    Entry{"rx_pkts", C::Traffic},
    Entry{"tx_bytes", C::Traffic},
    Entry{"rx_bytes", C::Traffic},
    Entry{"rx_drops", C::Discard},
    // bnxt_re hw_counters.
    Entry{"seq_err_naks_rcvd", C::Loss},
    Entry{"max_retry_exceeded", C::Loss},
    Entry{"to_retransmits", C::Loss},
    Entry{"rnr_naks_rcvd", C::Loss},
    Entry{"missing_resp", C::Loss},
    Entry{"dup_req", C::Loss},
    Entry{"rx_ecn_marked_pkts", C::Congestion},
    Entry{"tx_cnp_pkts", C::Congestion},
    Entry{"rx_cnp_pkts", C::Congestion},
    // irdma hw_counters.
    Entry{"RetransSegs", C::Loss},
    Entry{"iwRdmaRetrans", C::Loss},
    Entry{"cnpHandled", C::Congestion},
    Entry{"cnpIgnored", C::Congestion},
    Entry{"cnpSent", C::Congestion},
    Entry{"RxECNMrkd", C::Congestion},
    Entry{"ip4InDiscards", C::Discard},
    Entry{"ip6InDiscards", C::Discard},
    // mlx5 ethtool, physical port (PPCNT): errors the link itself makes. The names end in _phy.
    Entry{"rx_crc_errors_phy", C::Link},
    Entry{"rx_symbol_err_phy", C::Link},
    Entry{"rx_pcs_symbol_err_phy", C::Link},
    Entry{"link_down_events_phy", C::Link},
    Entry{"tx_errors_phy", C::Link},
    Entry{"rx_undersize_pkts_phy", C::Link},
    Entry{"rx_fragments_phy", C::Link},
    Entry{"rx_jabbers_phy", C::Link},
    Entry{"rx_in_range_len_errors_phy", C::Link},
    Entry{"rx_out_of_range_len_phy", C::Link},
    Entry{"module_unplug", C::Link},
    Entry{"module_bus_stuck", C::Link},
    Entry{"module_high_temp", C::Link},
    Entry{"module_bad_shorted", C::Link},
    // Errors FEC corrected, and the pre-FEC lane errors, rise on every healthy PAM4 (HDR/NDR, 50G+ lanes)
    // link: shown, but not counted as link trouble.
    Entry{"rx_corrected_bits_phy", C::Other},
    // mlx5 ethtool: what the port or the host had to drop.
    Entry{"rx_oversize_pkts_phy", C::Discard},
    Entry{"rx_unsupported_op_phy", C::Discard},
    Entry{"rx_out_of_buffer", C::Discard},
    Entry{"rx_if_down_packets", C::Discard},
    Entry{"rx_steer_missed_packets", C::Discard},
    // mlx5 ethtool: the receive buffer filled past its threshold (congestion building up at this NIC).
    Entry{"rx_buffer_passed_thres_phy", C::Congestion},
    // PCIe, not the fabric.
    Entry{"rx_pci_signal_integrity", C::Other},
    Entry{"tx_pci_signal_integrity", C::Other},
    Entry{"outbound_pci_stalled_rd", C::Other},
    Entry{"outbound_pci_stalled_wr", C::Other},
};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// "rx_prio3_marked": mlx5's per-priority ECN marks of the receive buffer (en_stats.c,
// pport_per_tc_congest_prio_stats_desc).
bool is_prio_marked(std::string_view name) {
  return name.starts_with("rx_prio") && name.ends_with("_marked");
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
  // Families by pattern: PFC pause counters (rx_prioN_pause, tx_pause_ctrl_phy, *_pause_duration,
  // *_pause_transition, tx_pause_storm_*_events ...), discards (rx_discards_phy, rx_prioN_buf_discard,
  // rx_prioN_cong_discard ...), ECN/CNP, then errors and retransmissions that name themselves.
  if (contains(name, "pause")) return C::Pause;
  if (contains(name, "discard") || contains(name, "drop")) return C::Discard;
  if (contains(name, "ecn") || contains(name, "cnp") || is_prio_marked(name)) return C::Congestion;
  if (contains(name, "retrans") || contains(name, "retry") || contains(name, "retries") ||
      contains(name, "seq_err") || contains(name, "timeout"))
    return C::Loss;
  if (contains(name, "_err_lane_")) return C::Other;  // rx_err_lane_N_phy: pre-FEC, see above
  if (contains(name, "_packets") || contains(name, "_pkts") || contains(name, "_bytes") ||
      contains(name, "_data"))
    return C::Traffic;
  return C::Other;
}

std::string_view to_string(CounterSource s) {
  switch (s) {
    case CounterSource::Port: return "counters";
    case CounterSource::Hw: return "hw_counters";
    case CounterSource::Ethtool: return "ethtool";
  }
  return "counters";
}

}  // namespace railscope::node
