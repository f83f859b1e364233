// SPDX-License-Identifier: Apache-2.0
// GPU PCIe links: each NVIDIA GPU's trained link against its capability, from sysfs alone (no CUDA).
// Only the width is judged. A GPU lowers its link speed when idle (power saving, down to 2.5 GT/s) and
// raises it under load, and doctor runs between jobs, so a speed below capability is the normal idle
// state: it is shown, never a finding. The lanes do not change with the power state: fewer than the
// GPU can use is a finding (pcie.link_degraded), as for the NICs in the devices section.
#include <fmt/format.h>

#include "doctor.h"

namespace railscope::doctor {
namespace {

nlohmann::json gts_or_null(double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

Section section_gpu_pcie(const NodeFacts& facts) {
  Section s;
  s.name = "gpu_pcie";
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuLink& g : facts.gpu_links) {
    if (!g.link) {
      s.text.push_back(
          fmt::format("GPU {}  PCIe link not readable (no link attributes in sysfs)", g.pci_address));
      gpus.push_back({{"pci_address", g.pci_address}, {"pcie", nullptr}});
      continue;
    }
    const node::PcieLink& l = *g.link;
    const bool idle_speed = l.slower();
    s.text.push_back(fmt::format(
        "GPU {}  PCIe link {} (capable of {}){}{}", g.pci_address, l.text(), l.max_text(),
        l.reported_by == "device" ? "" : ", read at upstream port " + l.reported_by,
        idle_speed ? "; speed below capability: GPUs lower it when idle, so it is not judged" : ""));
    gpus.push_back({{"pci_address", g.pci_address},
                    {"pcie",
                     {{"width", known(l.width)},
                      {"speed_gts", gts_or_null(l.speed_gts)},
                      {"max_width", known(l.max_width)},
                      {"max_speed_gts", gts_or_null(l.max_speed_gts)},
                      {"reported_by", l.reported_by},
                      {"narrower", l.narrower()},
                      {"speed_below_max", idle_speed}}}});
    if (l.narrower())
      s.findings.push_back(diag::make(
          "pcie.link_degraded", fmt::format("GPU {}: PCIe link trained {}, capable of {}: {} of {} lanes",
                                            g.pci_address, l.text(), l.max_text(), l.width, l.max_width)));
  }
  if (facts.gpu_links.empty()) s.text.push_back("No NVIDIA GPU on the PCI bus.");
  s.json = {{"gpus", gpus}, {"count", facts.gpu_links.size()}};
  return s;
}

}  // namespace railscope::doctor
