// SPDX-License-Identifier: Apache-2.0
// Gathering the node's facts once for every section.
#include <spdlog/spdlog.h>

#include "doctor.h"
#include "railscope/core/params.h"
#include "railscope/node/ethtool_stats.h"
#include "railscope/node/gpu_count.h"
#include "railscope/node/sysfs.h"

namespace railscope::doctor {

NodeFacts gather(const GatherOptions& options) {
  NodeFacts f;
  f.inventory = node::discover({options.sysfs_root, options.use_verbs});
  spdlog::debug("doctor: {} RDMA device(s) from sysfs {}{}", f.inventory.devices.size(),
                f.inventory.sysfs_root, f.inventory.used_verbs ? " and libibverbs" : "");
  f.gid_policy = node::gid_policy_from_env(&f.config_problems);
  f.hca = node::parse_hca_filter(params::get_string("NCCL_IB_HCA"));
  f.memlock = node::read_memlock();
  f.env = node::process_env();
  f.topo_file = options.topo_file;
  const node::Sysfs sysfs(f.inventory.sysfs_root);
  f.qos = node::read_qos(f.inventory, sysfs, *node::make_dcb_source(sysfs));
  const auto ethtool = node::ethtool_source_for(sysfs);
  f.link = node::check_link_health(
      f.inventory, sysfs, ethtool.get(),
      [&f](const node::Device& d, const node::Port& p) { return port_selected(f, d, p); });
  for (const std::string& gpu : node::nvidia_gpu_addresses(sysfs))
    f.gpu_links.push_back({gpu, node::read_pcie_link(sysfs, "bus/pci/devices/" + gpu)});
  spdlog::debug("doctor: read memlock, environment, RoCE QoS of {} port(s), link health, {} GPU PCIe link(s)",
                f.qos.size(), f.gpu_links.size());
  return f;
}

bool port_selected(const NodeFacts& facts, const node::Device& d, const node::Port& p) {
  return facts.hca.selects(d.name, p.number);
}

std::string port_name(const node::Device& d, const node::Port& p) {
  return d.name + ":" + std::to_string(p.number);
}

nlohmann::json known(int64_t v) { return v == 0 ? nlohmann::json(nullptr) : nlohmann::json(v); }
nlohmann::json known(const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); }

}  // namespace railscope::doctor
