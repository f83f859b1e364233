// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/node_ceiling.h"

#include "railscope/core/params.h"
#include "railscope/node/gpu_count.h"

namespace railscope::profiler {

std::optional<NodeCeiling> node_ceiling(const node::Inventory& inventory, const node::HcaFilter& hca) {
  NodeCeiling c;
  int64_t mbps = 0;
  for (const node::Device& d : inventory.devices) {
    for (const node::Port& p : d.ports) {
      if (!p.active() || p.speed_mbps <= 0 || !hca.selects(d.name, p.number)) continue;
      mbps += p.speed_mbps;
      c.rates.push_back({d.name + ":" + std::to_string(p.number), p.speed_mbps});
      ++c.rails;
      if (!c.ports.empty()) c.ports += ',';
      c.ports += c.rates.back().name;
    }
  }
  if (c.rails == 0) return std::nullopt;
  c.gbs = static_cast<double>(mbps) / 8000.0;  // Mb/s → GB/s
  return c;
}

std::optional<NodeCeiling> node_ceiling_from_system() {
  const node::Inventory inventory = node::discover_sysfs();
  auto c = node_ceiling(inventory, node::parse_hca_filter(params::get_string("NCCL_IB_HCA")));
  if (c) c->gpus = node::count_nvidia_gpus(node::Sysfs(node::Sysfs::default_root()));
  return c;
}

}  // namespace railscope::profiler
