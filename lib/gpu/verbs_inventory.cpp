// SPDX-License-Identifier: Apache-2.0
// The DMA-BUF probe on a short-lived PD per RDMA device; the devices and their PCI paths are
// lib/node's (node::discover), the one reader of the node.
#include "railscope/gpu/verbs_inventory.h"

#include "railscope/ibv/handles.h"

namespace railscope::gpu {

std::vector<VerbsNic> probe_verbs_nics(const node::Inventory& inventory) {
  std::vector<VerbsNic> out;
  if (ibv::api() == nullptr) return out;  // no libibverbs: no NIC to pair with a GPU
  for (const node::Device& dev : inventory.devices) {
    VerbsNic& nic = out.emplace_back();
    nic.name = dev.name;
    if (!dev.is_virtual) nic.pci_path = dev.pci_path;
    std::string error;
    ibv::UniqueContext ctx = ibv::open_device(dev.name, &error);
    if (!ctx) {
      nic.error = "ibv_open_device failed: " + error;
    } else if (ibv::UniquePd pd(ibv::api()->alloc_pd(ctx.get())); !pd) {
      nic.error = "ibv_alloc_pd failed";
    } else {
      nic.dmabuf = probe_verbs_dmabuf(pd.get());
    }
  }
  return out;
}

std::vector<VerbsNic> probe_verbs_nics(const SysfsRoot& fs) {
  return probe_verbs_nics(node::discover({fs.root(), /*use_verbs=*/true}));
}

void add_verbs_nics(ReportOptions& options, const std::vector<VerbsNic>& nics) {
  for (const auto& nic : nics) {
    options.nic_hints.push_back({nic.name, nic.pci_path});
    options.verbs_dmabuf[nic.name] = nic.dmabuf.result;
  }
}

}  // namespace railscope::gpu
