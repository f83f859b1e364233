// SPDX-License-Identifier: Apache-2.0
// NIC facts from lib/node (branch `node`): active RDMA ports NCCL_IB_HCA selects, their speed and link
// layer, read from sysfs, and the GPUs on the PCI bus that share them. Built only when the
// railscope_node library exists in the tree; otherwise NIC facts come from overrides (CLI,
// RAILSCOPE_TUNER_NICS / RAILSCOPE_TUNER_NIC_GBIT, the config file's `node` line).
#include <map>

#include "plugin/tuner/engine.h"
#include "railscope/core/params.h"

#if RAILSCOPE_TUNER_HAVE_NODE
#include "railscope/node/gpu_count.h"
#include "railscope/node/hca_filter.h"
#include "railscope/node/inventory.h"
#include "railscope/node/sysfs.h"
#endif

namespace railscope::tuner {
namespace {

#if RAILSCOPE_TUNER_HAVE_NODE
NicFacts select_node_nics(const node::Inventory& inv, const node::HcaFilter& hca) {
  NicFacts facts;
  std::map<int64_t, int> ports_by_speed;
  LinkLayer layer = LinkLayer::Unknown;
  for (const auto& dev : inv.devices)
    for (const auto& port : dev.ports) {
      if (!port.active() || port.speed_mbps <= 0 || !hca.selects(dev.name, port.number)) continue;
      ++ports_by_speed[port.speed_mbps];
      if (port.link_layer == node::LinkLayer::InfiniBand) layer = LinkLayer::InfiniBand;
      if (port.link_layer == node::LinkLayer::Ethernet && layer == LinkLayer::Unknown)
        layer = LinkLayer::Ethernet;
    }
  // Rails run at the speed most ports have; slower odd ports (management NICs) are not rails.
  int64_t speed = 0;
  int count = 0;
  for (const auto& [mbps, n] : ports_by_speed)
    if (n > count || (n == count && mbps > speed)) {
      speed = mbps;
      count = n;
    }
  if (count > 0) {
    facts.count = count;
    facts.gbps = static_cast<double>(speed) / 1000.0;
    facts.layer = layer;
    facts.source = hca.unset() ? "node" : "node, NCCL_IB_HCA=" + hca.text;
  }
  return facts;
}
#endif

}  // namespace

NicFacts discover_node_nics() {
  NicFacts facts;
#if RAILSCOPE_TUNER_HAVE_NODE
  // sysfs has rate, state and link layer; no device needs opening (nor libibverbs installed).
  facts = select_node_nics(node::discover_sysfs(), node::parse_hca_filter(params::get_string("NCCL_IB_HCA")));
  facts.node_gpus = discover_node_gpus();
#endif
  return facts;
}

int discover_node_gpus() {
#if RAILSCOPE_TUNER_HAVE_NODE
  return node::count_nvidia_gpus(node::Sysfs(node::Sysfs::default_root()));
#else
  return 0;
#endif
}

}  // namespace railscope::tuner
