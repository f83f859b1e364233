// SPDX-License-Identifier: Apache-2.0
// The RDMA devices lib/node found, each with its PCI path and its DMA-BUF probe (a PD is opened
// briefly per device). For tools (doctor, gpudirect_probe); the net plugin probes with its own PD.
#pragma once

#include <string>
#include <vector>

#include "railscope/gpu/gpudirect_report.h"
#include "railscope/gpu/verbs_gdr.h"
#include "railscope/node/inventory.h"

namespace railscope::gpu {

struct VerbsNic {
  std::string name;
  std::string pci_path;  // node::Device::pci_path; "" = virtual (rxe)
  DmabufProbeResult dmabuf;
  std::string error;  // open/alloc_pd failure
};

std::vector<VerbsNic> probe_verbs_nics(const node::Inventory& inventory);
// The same for node::discover's inventory below fs's root.
std::vector<VerbsNic> probe_verbs_nics(const SysfsRoot& fs);
// Adds the devices as NIC hints and their DMA-BUF verdicts to the report options.
void add_verbs_nics(ReportOptions& options, const std::vector<VerbsNic>& nics);

}  // namespace railscope::gpu
