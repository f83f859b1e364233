// NIC facts from lib/node (branch `node`): active RDMA ports, their speed and link layer, read from
// sysfs. Built only when the railscope_node library exists in the tree; otherwise NIC facts come
// from overrides (CLI, RAILSCOPE_TUNER_NICS / RAILSCOPE_TUNER_NIC_GBIT, the config file's `node` line).
#include <map>

#include "plugin/tuner/engine.h"

#if RAILSCOPE_TUNER_HAVE_NODE
#include "railscope/node/inventory.h"
#endif

namespace railscope::tuner {

NicFacts discover_node_nics() {
  NicFacts facts;
#if RAILSCOPE_TUNER_HAVE_NODE
  // sysfs has rate, state and link layer; no device needs opening (nor libibverbs installed).
  const node::Inventory inv = node::discover_sysfs();
  std::map<int64_t, int> ports_by_speed;
  LinkLayer layer = LinkLayer::Unknown;
  for (const auto& dev : inv.devices)
    for (const auto& port : dev.ports) {
      if (!port.active() || port.speed_mbps <= 0) continue;
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
    facts.source = "node";
  }
#endif
  return facts;
}

}  // namespace railscope::tuner
