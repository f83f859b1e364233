// SPDX-License-Identifier: Apache-2.0
// GPUDirect RDMA: the GPU×NIC matrix (lib/gpu) with NCCL's distance classes, peer memory, DMA-BUF,
// ACS and IOMMU, for every GPU and every RDMA NIC lib/node found. The topology comes from
// RAILSCOPE_TOPO_FILE (an `lstopo --of xml` export) or this system.
#include <fmt/format.h>

#include "doctor.h"
#include "railscope/gpu/gpudirect_json.h"
#include "railscope/gpu/gpudirect_report.h"
#include "railscope/gpu/verbs_inventory.h"

namespace railscope::doctor {

Section section_gpudirect(const NodeFacts& facts) {
  Section s;
  s.name = "gpudirect";
  auto options = gpu::ReportOptions::from_env();
  options.topo_file = facts.topo_file;
  if (!facts.inventory.sysfs_root.empty()) options.fs = gpu::SysfsRoot(facts.inventory.sysfs_root);
  for (const auto& d : facts.inventory.devices)
    options.nic_hints.push_back({d.name, d.is_virtual ? std::string() : d.pci_path});
  // Probing DMA-BUF opens each device: only on the real node, and only when doctor uses verbs.
  if (facts.inventory.used_verbs && options.fs.is_real())
    for (const auto& nic : gpu::probe_verbs_nics(facts.inventory))
      options.verbs_dmabuf[nic.name] = nic.dmabuf.result;
  const auto report = gpu::build_report(options);
  s.findings = report.findings;
  s.json = gpu::to_json(report);
  std::string text = gpu::render_text(report);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    // The report indents its lines by two and lists its findings; doctor prints findings itself.
    if (line.rfind("  [", 0) != 0) s.text.push_back(line.rfind("  ", 0) == 0 ? line.substr(2) : line);
    start = end + 1;
  }
  return s;
}

}  // namespace railscope::doctor
