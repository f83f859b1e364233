// SPDX-License-Identifier: Apache-2.0
#include "plugin/tuner/model/topology.h"

#include <fmt/format.h>

#include <algorithm>

namespace railscope::tuner {

std::string_view to_string(LinkLayer l) {
  switch (l) {
    case LinkLayer::InfiniBand: return "infiniband";
    case LinkLayer::Ethernet: return "ethernet";
    case LinkLayer::Unknown: break;
  }
  return "unknown";
}

std::string_view to_string(IntraLink l) { return l == IntraLink::NvLink ? "nvlink" : "pcie"; }

NodeOverrides merge(const NodeOverrides& high, const NodeOverrides& low) {
  NodeOverrides m = low;
  const bool high_nic = high.nics || high.nic_gbps || high.layer;
  const bool high_intra = high.intra || high.intra_gbps;
  if (high.nics) m.nics = high.nics;
  if (high.nic_gbps) m.nic_gbps = high.nic_gbps;
  if (high.layer) m.layer = high.layer;
  if (high.intra) m.intra = high.intra;
  if (high.intra_gbps) m.intra_gbps = high.intra_gbps;
  if (high.node_gpus) m.node_gpus = high.node_gpus;
  if (high_nic)
    m.nic_source = (low.nics || low.nic_gbps) && !(high.nics && high.nic_gbps)
                       ? high.nic_source + "+" + low.nic_source
                       : high.nic_source;
  if (high_intra) m.intra_source = high.intra_source;
  return m;
}

Topology resolve_topology(const CommShape& shape, const NicFacts& discovered, const NodeOverrides& ov) {
  Topology t;
  t.shape = shape;
  t.shape.n_ranks = std::max(1, shape.n_ranks);
  t.shape.n_nodes = std::clamp(shape.n_nodes, 1, t.shape.n_ranks);
  t.islands = t.shape.n_nodes;
  // Multi-node NVLink: fewer NVLink domains than nodes means the domains span nodes.
  if (shape.nvl_domains > 0 && shape.nvl_domains < t.islands) t.islands = shape.nvl_domains;
  t.ranks_per_island = (t.shape.n_ranks + t.islands - 1) / t.islands;

  // Intra-island link: NVLink unless NCCL's domain info says every rank sits alone in its domain.
  t.intra = IntraLink::NvLink;
  t.intra_source = "default";
  if (shape.nvl_domains > 0 && shape.max_ranks_per_nvl_domain == 1 && t.ranks_per_island > 1) {
    t.intra = IntraLink::Pcie;
    t.intra_source = "nvl-domains";
  }
  if (ov.intra) {
    t.intra = *ov.intra;
    t.intra_source = ov.intra_source;
  }
  t.intra_gbps = t.intra == IntraLink::NvLink ? kNvlinkGbytes : kPcieGbytes;
  if (ov.intra_gbps && *ov.intra_gbps > 0) {
    t.intra_gbps = *ov.intra_gbps;
    t.intra_source = ov.intra_source;
  }

  t.nics = discovered;
  if (ov.nics) {
    t.nics.count = *ov.nics;
    t.nics.source = ov.nic_source;
  }
  if (ov.nic_gbps) {
    t.nics.gbps = *ov.nic_gbps;
    t.nics.source = ov.nic_source;
  }
  if (ov.layer) t.nics.layer = *ov.layer;
  if (ov.node_gpus) t.nics.node_gpus = *ov.node_gpus;
  if (!t.nics.known()) {
    t.nics.source.clear();
    return t;
  }
  // Ranks of this communicator on one node: with multi-node NVLink the islands span nodes, but each
  // node's ranks still leave it through that node's NICs.
  const int per_node = (t.shape.n_ranks + t.shape.n_nodes - 1) / t.shape.n_nodes;
  t.rails = rails_driven(per_node, t.nics.count, t.nics.node_gpus);
  t.rails_basis = fmt::format("{} of {} NICs: {} rank{} per node, {}", t.rails, t.nics.count, per_node,
                              per_node == 1 ? "" : "s",
                              t.nics.node_gpus > 0 ? fmt::format("{} GPUs per node", t.nics.node_gpus)
                                                   : std::string("one GPU per NIC assumed"));
  return t;
}

int rails_driven(int ranks_per_node, int nics, int gpus) {
  if (nics <= 0) return 0;
  const int ranks = std::max(1, ranks_per_node);
  const int g = gpus > 0 ? gpus : std::max(nics, ranks);
  const int driven =
      g >= nics ? (ranks + (g + nics - 1) / nics - 1) / ((g + nics - 1) / nics) : ranks * (nics / g);
  return std::clamp(driven, 1, nics);
}

}  // namespace railscope::tuner
