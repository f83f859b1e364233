// SPDX-License-Identifier: Apache-2.0
// What the cost model knows about the communicator and the node: ranks, nodes, NVLink domains (v5+),
// the intra-node link, and the node's NICs. Every fact says where it came from so `explain` and the
// init log can show it; a fact that is unknown stays unknown (the model then defers to NCCL).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace railscope::tuner {

enum class LinkLayer { Unknown, InfiniBand, Ethernet };
enum class IntraLink { NvLink, Pcie };

std::string_view to_string(LinkLayer l);
std::string_view to_string(IntraLink l);

// The node's NICs NCCL may use (NCCL_IB_HCA applied): `count` rails of `gbps` Gbit/s each.
struct NicFacts {
  int count = 0;
  double gbps = 0;  // per NIC, Gbit/s
  LinkLayer layer = LinkLayer::Unknown;
  std::string source;  // "cli", "env", "config", "node", or "" when unknown
  int node_gpus = 0;   // GPUs on the node's PCI bus, sharing these NICs; 0 = unknown

  bool known() const { return count > 0 && gbps > 0; }
};

// Facts NCCL hands to init (v5+ adds the NVLink domains).
struct CommShape {
  int n_ranks = 1;
  int n_nodes = 1;
  int nvl_domains = 0;  // 0 = not given (v2-v4)
  int min_ranks_per_nvl_domain = 0;
  int max_ranks_per_nvl_domain = 0;
};

// Optional overrides of node facts (CLI flags, env, config `node` line), each unset by default.
struct NodeOverrides {
  std::optional<int> nics;
  std::optional<double> nic_gbps;
  std::optional<LinkLayer> layer;
  std::optional<IntraLink> intra;
  std::optional<double> intra_gbps;       // per-GPU bus bandwidth inside an island, GB/s
  std::optional<int> node_gpus;           // GPUs per node sharing the NICs
  std::string nic_source = "override";    // where the NIC fields came from: "cli", "env", "config"
  std::string intra_source = "override";  // where the intra fields came from
};

// Field-by-field merge: a field set in `high` wins over the same field in `low`.
NodeOverrides merge(const NodeOverrides& high, const NodeOverrides& low);

struct Topology {
  CommShape shape;
  // Groups of ranks joined by NVLink/PCIe; traffic between islands crosses the NICs. Equal to the node
  // count, or to the NVLink domain count when NCCL says the domains span nodes (multi-node NVLink).
  int islands = 1;
  int ranks_per_island = 1;
  IntraLink intra = IntraLink::NvLink;
  double intra_gbps = 0;  // GB/s
  std::string intra_source;
  NicFacts nics;
  // The NICs of one node this communicator's ranks drive (rails_driven), and how that was derived.
  int rails = 0;
  std::string rails_basis;
};

// The NICs `ranks_per_node` ranks of one communicator drive on a node with `nics` NICs (after
// NCCL_IB_HCA) and `gpus` GPUs. NCCL gives each GPU its nearest NICs; on rail-optimised nodes they are
// spread evenly, so G GPUs on P NICs give each GPU P/G NICs (P >= G) or share one among ceil(G/P)
// (G > P). Unknown G counts as one GPU per NIC. Never more than `nics`, at least 1.
int rails_driven(int ranks_per_node, int nics, int gpus);

// Combines NCCL's shape with the node's NICs and the overrides (overrides win field by field).
Topology resolve_topology(const CommShape& shape, const NicFacts& discovered, const NodeOverrides& overrides);

// Standard per-GPU bus bandwidth of the intra-node link, GB/s (NVLink 4 effective, PCIe Gen4 x16).
inline constexpr double kNvlinkGbytes = 360.0;
inline constexpr double kPcieGbytes = 24.0;

}  // namespace railscope::tuner
