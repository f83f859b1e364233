// SPDX-License-Identifier: Apache-2.0
// Fake ConnectX trees for the fabric-health tests (fabric_fixtures.h says where each layout comes from).
#include "fabric_fixtures.h"

#include <fcntl.h>
#include <unistd.h>

#include <sstream>

namespace fs = std::filesystem;

namespace railscope::testing_fixtures {
namespace {

// InfiniBand PortCounters as mlx5 publishes them under counters/ (sysfs-class-infiniband).
constexpr const char* kIbCounters[] = {"VL15_dropped",
                                       "excessive_buffer_overrun_errors",
                                       "link_downed",
                                       "link_error_recovery",
                                       "local_link_integrity_errors",
                                       "multicast_rcv_packets",
                                       "multicast_xmit_packets",
                                       "port_rcv_constraint_errors",
                                       "port_rcv_data",
                                       "port_rcv_errors",
                                       "port_rcv_packets",
                                       "port_rcv_remote_physical_errors",
                                       "port_rcv_switch_relay_errors",
                                       "port_xmit_constraint_errors",
                                       "port_xmit_data",
                                       "port_xmit_discards",
                                       "port_xmit_packets",
                                       "port_xmit_wait",
                                       "symbol_error",
                                       "unicast_rcv_packets",
                                       "unicast_xmit_packets"};

// mlx5 hw_counters (drivers/infiniband/hw/mlx5/counters.c: basic, out-of-sequence, retransmission,
// congestion sets).
constexpr const char* kMlx5Hw[] = {"duplicate_request",
                                   "implied_nak_seq_err",
                                   "lifespan",
                                   "local_ack_timeout_err",
                                   "np_cnp_sent",
                                   "np_ecn_marked_roce_packets",
                                   "out_of_buffer",
                                   "out_of_sequence",
                                   "packet_seq_err",
                                   "req_cqe_error",
                                   "req_cqe_flush_error",
                                   "req_remote_access_errors",
                                   "req_remote_invalid_request",
                                   "resp_cqe_error",
                                   "resp_cqe_flush_error",
                                   "resp_local_length_error",
                                   "resp_remote_access_errors",
                                   "rnr_nak_retry_err",
                                   "roce_adp_retrans",
                                   "roce_adp_retrans_to",
                                   "roce_slow_restart",
                                   "roce_slow_restart_cnps",
                                   "roce_slow_restart_trans",
                                   "rp_cnp_handled",
                                   "rp_cnp_ignored",
                                   "rx_atomic_requests",
                                   "rx_icrc_encapsulated",
                                   "rx_read_requests",
                                   "rx_write_requests"};

// `ethtool -S` of an mlx5e netdev (en_stats.c groups: software, vport, PHY, per-priority, PFC stall, and
// per-channel ring statistics), printed here sorted by name.
std::map<std::string, uint64_t> mlx5_ethtool_defaults() {
  std::map<std::string, uint64_t> m = {{"rx_packets", 9000},
                                       {"rx_bytes", 9000000},
                                       {"tx_packets", 8000},
                                       {"tx_bytes", 8000000},
                                       {"tx_queue_dropped", 0},
                                       {"rx_out_of_buffer", 0},
                                       {"rx_vport_rdma_unicast_packets", 123456789},
                                       {"rx_vport_rdma_unicast_bytes", 987654321012},
                                       {"tx_vport_rdma_unicast_packets", 123456700},
                                       {"tx_vport_rdma_unicast_bytes", 987654300000},
                                       {"rx_packets_phy", 123465789},
                                       {"tx_packets_phy", 123464700},
                                       {"rx_bytes_phy", 987663321012},
                                       {"tx_bytes_phy", 987663300000},
                                       {"rx_crc_errors_phy", 0},
                                       {"rx_symbol_err_phy", 0},
                                       {"rx_pcs_symbol_err_phy", 0},
                                       {"rx_corrected_bits_phy", 4711},
                                       {"rx_err_lane_0_phy", 12},
                                       {"link_down_events_phy", 0},
                                       {"rx_discards_phy", 0},
                                       {"tx_discards_phy", 0},
                                       {"tx_errors_phy", 0},
                                       {"rx_undersize_pkts_phy", 0},
                                       {"rx_oversize_pkts_phy", 0},
                                       {"rx_pause_ctrl_phy", 0},
                                       {"tx_pause_ctrl_phy", 0},
                                       {"rx_buffer_passed_thres_phy", 0},
                                       {"tx_pause_storm_warning_events", 0},
                                       {"tx_pause_storm_error_events", 0},
                                       {"rx_pci_signal_integrity", 0},
                                       {"tx_pci_signal_integrity", 0},
                                       {"module_unplug", 0},
                                       {"module_bus_stuck", 0},
                                       {"module_high_temp", 0},
                                       {"module_bad_shorted", 0},
                                       {"rx0_packets", 4500},
                                       {"rx0_bytes", 4500000},
                                       {"tx0_packets", 4000},
                                       {"tx0_xmit_more", 7},
                                       {"ch0_events", 99},
                                       {"ch0_arm", 98},
                                       {"rx1_packets", 4500},
                                       {"tx1_packets", 4000},
                                       {"ptp_cq0_abort", 0}};
  for (int prio = 0; prio < 8; ++prio) {
    const std::string p = "prio" + std::to_string(prio);
    for (const char* f : {"_bytes", "_packets", "_pause", "_pause_duration", "_pause_transition"}) {
      m["rx_" + p + f] = 0;
      m["tx_" + p + f] = 0;
    }
    m["rx_" + p + "_discards"] = 0;
    m["rx_" + p + "_buf_discard"] = 0;
    m["rx_" + p + "_cong_discard"] = 0;
    m["rx_" + p + "_marked"] = 0;
  }
  return m;
}

}  // namespace

FabricTree::FabricTree(const std::string& tag)
    : root_(fs::temp_directory_path() / ("railscope-fabric-" + tag + "-" + std::to_string(::getpid()))) {
  fs::remove_all(root_);
  fs::create_directories(root_);
}

FabricTree::~FabricTree() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void FabricTree::put(const std::string& rel, const std::string& content) const {
  const fs::path p = root_ / rel;
  fs::create_directories(p.parent_path());
  // Rewritten in place, as a sysfs attribute keeps its inode (PortSampler reads through kept
  // descriptors). Written first and cut after, so that a sampler reading meanwhile never finds the file
  // empty: a counter that grows is never unreadable.
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool whole = ::pwrite(fd, content.data(), content.size(), 0) == static_cast<ssize_t>(content.size());
  if (whole) (void)::ftruncate(fd, static_cast<off_t>(content.size()));
  ::close(fd);
}

void FabricTree::ib_port(const std::string& dev, const std::string& rate, bool down,
                         const std::string& model) const {
  const std::string b = "class/infiniband/" + dev;
  put(b + "/node_guid", "b83f:d203:00a1:0001\n");
  put(b + "/sys_image_guid", "b83f:d203:00a1:0001\n");
  put(b + "/fw_ver", "28.39.1002\n");
  put(b + "/device/vendor", "0x15b3\n");
  put(b + "/device/device", model + "\n");
  const std::string p = b + "/ports/1/";
  put(p + "state", down ? "1: DOWN\n" : "4: ACTIVE\n");
  put(p + "phys_state", down ? "2: Polling\n" : "5: LinkUp\n");
  put(p + "link_layer", "InfiniBand\n");
  put(p + "rate", rate + "\n");
  put(p + "lid", down ? "0xffff\n" : "0x12\n");
  for (const char* c : kIbCounters) put(p + "counters/" + c, "0\n");
  for (const char* c : kMlx5Hw) put(p + "hw_counters/" + c, "0\n");
}

void FabricTree::roce_port(const std::string& dev, const std::string& ifname, const std::string& rate,
                           int64_t supported_max_gbps) const {
  ib_port(dev, rate);
  const std::string p = "class/infiniband/" + dev + "/ports/1/";
  put(p + "link_layer", "Ethernet\n");
  put(p + "gids/0", "fe80:0000:0000:0000:ba3f:d2ff:fea1:0001\n");
  put(p + "gid_attrs/types/0", "RoCE v2\n");
  put(p + "gid_attrs/ndevs/0", ifname + "\n");
  put("class/net/" + ifname + "/mtu", "9000\n");
  ethtool_stats(ifname, {});
  std::string modes;
  for (int64_t g : {int64_t{100}, int64_t{200}, int64_t{400}})
    if (g <= supported_max_gbps)
      modes += "\n                                " + std::to_string(g * 1000) + "baseCR4/Full";
  put("railscope-fixture/ethtool/" + ifname + "/link",
      "Settings for " + ifname + ":\n\tSupported ports: [ FIBRE ]\n\tSupported link modes:" + modes +
          "\n\tSupported pause frame use: Symmetric\n\tSpeed: " + std::to_string(supported_max_gbps * 1000) +
          "Mb/s\n\tLanes: 4\n\tDuplex: Full\n");
}

void FabricTree::counter(const std::string& dev, const std::string& name, uint64_t value, bool hw) const {
  put("class/infiniband/" + dev + "/ports/1/" + (hw ? "hw_counters/" : "counters/") + name,
      std::to_string(value) + "\n");
}

void FabricTree::ethtool_stats(const std::string& ifname,
                               const std::map<std::string, uint64_t>& values) const {
  auto m = mlx5_ethtool_defaults();
  for (const auto& [k, v] : values) m[k] = v;
  std::string text = "NIC statistics:\n";
  for (const auto& [k, v] : m) text += "     " + k + ": " + std::to_string(v) + "\n";
  put("railscope-fixture/ethtool/" + ifname + "/stats", text);
}

void healthy_ndr8(const FabricTree& t) {
  for (int i = 0; i < 8; ++i) t.ib_port("mlx5_" + std::to_string(i), "400 Gb/sec (4X NDR)");
}

double prom_sample(const std::string& text, const std::vector<std::string>& parts) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    bool all = true;
    for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

}  // namespace railscope::testing_fixtures
