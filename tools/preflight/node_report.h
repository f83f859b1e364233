// SPDX-License-Identifier: Apache-2.0
// What each rank sends to rank 0: its host, its selected RDMA ports (the rails, in natural name order)
// with the facts rank 0 compares across nodes, its NCCL_* environment and its doctor findings.
// Rank 0 reads these from the network: from_json() checks every field (type, range, length, characters)
// and refuses the whole report on the first bad one.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace railscope::preflight {

struct NicSummary {
  std::string device;  // "mlx5_3"
  int port = 1;
  std::string state;       // "ACTIVE", "DOWN", ...
  std::string link_layer;  // "Ethernet" / "InfiniBand" / "unknown"
  std::string netdev;      // RoCE; empty when none
  int active_mtu = 0;      // 0 = unknown
  int64_t speed_mbps = 0;  // 0 = unknown
  std::string fw_ver;      // empty = unknown
  std::string gid_type;    // of the GID NCCL would select: "RoCE v2", "IB", ...; empty = none
  std::string gid_family;  // "AF_INET" / "AF_INET6"; empty = none
  std::string ipv4;        // the selected GID's IPv4 address; empty for IPv6 / IB
  std::string subnet;      // "10.0.1.0/24" (netdev's prefix length); empty = unknown

  std::string name() const { return device + ":" + std::to_string(port); }
};

struct RemoteFinding {
  std::string id;        // a catalogue id
  std::string severity;  // "info" / "warning" / "error"
  std::string detail;
};

struct NodeReport {
  int rank = 0;
  std::string host;
  std::vector<NicSummary> nics;                 // the rails, in order
  std::map<std::string, std::string> nccl_env;  // NCCL_* variables that are set
  std::vector<RemoteFinding> findings;          // the node's doctor findings above "ok"
  int doctor_exit = 0;
};

constexpr size_t kMaxNics = 64;
constexpr size_t kMaxEnv = 128;
constexpr size_t kMaxFindings = 128;
constexpr size_t kMaxText = 1024;  // a finding's detail
constexpr size_t kMaxField = 255;  // any other string

nlohmann::json to_json(const NodeReport& r);
// nullopt with *error naming the field when anything is missing, of the wrong type, out of range or too
// long. Strings may hold printable ASCII and UTF-8 only; control characters are refused.
std::optional<NodeReport> node_report_from_json(const nlohmann::json& j, std::string* error);

// Natural order ("mlx5_2" before "mlx5_10"), the order rails are numbered in.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace railscope::preflight
