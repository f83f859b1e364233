// SPDX-License-Identifier: Apache-2.0
// Node-wide GPUDirect report: facts → decisions → findings → text.
#include "railscope/gpu/gpudirect_report.h"

#include <fmt/format.h>
#include <algorithm>
#include <set>

namespace railscope::gpu {
namespace {

std::string numa_text(int numa) { return numa < 0 ? std::string("?") : std::to_string(numa); }

void trim_end(std::string& s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
}

void add_unique(std::vector<diag::Finding>& out, std::set<std::string>& seen, const diag::Finding& f) {
  if (seen.insert(std::string(f.id()) + "\n" + f.detail).second) out.push_back(f);
}

}  // namespace

ReportOptions ReportOptions::from_env() {
  ReportOptions o;
  o.fs = SysfsRoot::from_env();
  o.policy = GdrPolicy::from_env();
  return o;
}

const PairDecision* GpuDirectReport::pair(const std::string& gpu, const std::string& nic) const {
  for (const auto& p : pairs)
    if (p.gpu == gpu && p.nic == nic) return &p;
  return nullptr;
}

GpuDirectReport build_report(const ReportOptions& options) {
  GpuDirectReport r;
  std::vector<diag::Finding> node;
  r.policy = options.policy ? *options.policy : GdrPolicy::from_env();
  if (!r.policy.level.note.empty()) node.push_back(diag::make("config.bad_env", r.policy.level.note));

  r.platform.peer = detect_peer_memory(options.fs);
  r.platform.kernel_dmabuf = detect_kernel_dmabuf(options.fs);
  r.platform.iommu = detect_iommu(options.fs);

  if (options.query_cuda) {
    r.cuda_queried = true;
    r.cuda = query_cuda_driver(options.cuda_library);
    if (!r.cuda.loaded) node.push_back(diag::make("gdr.no_cuda_driver", r.cuda.error));
  }

  std::string file = topology_file_from(options.topo_file);
  std::string error;
  auto topo = PciTopology::load(file, options.nic_hints, &error);
  r.topology_source = file.empty() ? "system" : file;
  if (!topo) {
    r.topology_error = error;
    node.push_back(diag::make("gdr.topology", error));
  }

  if (topo) {
    for (const auto& dev : topo->gpus()) {
      GpuRow row;
      row.in_topology = true;
      row.numa = dev.numa;
      row.facts.bdf = dev.bdf;
      row.facts.label = fmt::format("GPU{}", r.gpus.size());
      for (const auto& cg : r.cuda.gpus) {
        if (cg.pci_bus_id != dev.bdf) continue;
        row.facts.label = fmt::format("GPU{}", cg.ordinal);
        row.facts.cc_major = cg.cc_major;
        row.facts.cc_minor = cg.cc_minor;
        row.facts.gdr_supported = cg.gdr_supported;
        row.facts.dmabuf_supported = cg.dmabuf_supported;
      }
      if (r.cuda.loaded && row.facts.cc_major < 0) row.facts.label = "GPU-" + dev.bdf;  // hidden from CUDA
      row.facts.iommu_domain = device_iommu_domain(options.fs, dev.bdf);
      r.gpus.push_back(row);
    }
    for (const auto& dev : topo->nics()) {
      NicRow row;
      row.facts.name = dev.name;
      row.facts.bdf = dev.bdf;
      row.numa = dev.numa;
      row.netdevs = dev.netdevs;
      if (auto it = options.verbs_dmabuf.find(dev.name); it != options.verbs_dmabuf.end())
        row.facts.verbs_dmabuf = it->second;
      r.nics.push_back(row);
    }
  }
  for (const auto& hint : options.nic_hints) {
    bool known =
        std::any_of(r.nics.begin(), r.nics.end(), [&](const NicRow& n) { return n.facts.name == hint.name; });
    if (known) continue;
    NicRow row;
    row.facts.name = hint.name;
    if (auto it = options.verbs_dmabuf.find(hint.name); it != options.verbs_dmabuf.end())
      row.facts.verbs_dmabuf = it->second;
    r.virtual_nics.push_back(row);
  }
  for (const auto& cg : r.cuda.gpus) {
    bool known = std::any_of(r.gpus.begin(), r.gpus.end(),
                             [&](const GpuRow& g) { return g.facts.bdf == cg.pci_bus_id; });
    if (known) continue;
    GpuRow row;
    row.facts.label = fmt::format("GPU{}", cg.ordinal);
    row.facts.bdf = cg.pci_bus_id;
    row.facts.cc_major = cg.cc_major;
    row.facts.cc_minor = cg.cc_minor;
    row.facts.gdr_supported = cg.gdr_supported;
    row.facts.dmabuf_supported = cg.dmabuf_supported;
    r.gpus.push_back(row);
    if (topo)
      node.push_back(diag::make("gdr.topology", diag::Severity::Info,
                                fmt::format("{} ({}) is not in the topology from {}", row.facts.label,
                                            cg.pci_bus_id, r.topology_source)));
  }
  if (r.gpus.empty())
    node.push_back(diag::make("gdr.no_gpu", "no NVIDIA GPU in the topology or the CUDA driver"));
  if (topo && r.nics.empty()) {
    std::string virt;
    for (const auto& n : r.virtual_nics) virt += (virt.empty() ? "" : ", ") + n.facts.name;
    node.push_back(diag::make(
        "gdr.no_rdma_nic",
        fmt::format("no RDMA NIC in the topology from {}{}: GPUDirect RDMA does not apply", r.topology_source,
                    virt.empty() ? std::string() : " (only virtual RDMA devices: " + virt + ")")));
  }

  if (topo) {
    const auto& tg = topo->gpus();
    const auto& tn = topo->nics();
    std::vector<std::vector<PciPath>> paths(tg.size());
    for (size_t g = 0; g < tg.size(); ++g)
      for (size_t n = 0; n < tn.size(); ++n) paths[g].push_back(topo->path(g, n));
    for (size_t g = 0; g < tg.size(); ++g) {
      for (size_t n = 0; n < tn.size(); ++n) {
        PairFacts pf;
        pf.path = paths[g][n];
        for (const auto& port : pf.path.switch_ports) pf.acs.push_back({port, read_acs(options.fs, port)});
        for (size_t other = 0; other < tg.size(); ++other) {
          if (other == g || static_cast<int>(paths[other][n].type) > static_cast<int>(r.policy.level.level))
            continue;
          pf.nearer_gpus += (pf.nearer_gpus.empty() ? "" : ", ") + r.gpus[other].facts.label;
        }
        r.pairs.push_back(decide_pair(r.policy, r.platform, r.gpus[g].facts, r.nics[n].facts, pf));
      }
    }
  }

  std::set<std::string> seen;
  for (const auto& f : node) add_unique(r.findings, seen, f);
  // A GPU far from some NICs is normal (NCCL picks the nearest); distance only matters for a GPU
  // with no NIC within the level, so only those distance findings reach the node's list.
  std::set<std::string> gpus_with_near_nic;
  int acs_unknown_pairs = 0;
  for (const auto& p : r.pairs)
    if (p.distance_ok) gpus_with_near_nic.insert(p.gpu);
  for (const auto& p : r.pairs)
    for (const auto& f : p.findings)
      if (f.id() == "gdr.acs_unknown")
        acs_unknown_pairs++;
      else if (f.id() != "gdr.distance" || !gpus_with_near_nic.count(p.gpu))
        add_unique(r.findings, seen, f);
  // Unreadable ACS is one fact about the node (not root), not one per pair.
  if (acs_unknown_pairs > 0) {
    r.findings.push_back(
        diag::make("gdr.acs_unknown",
                   fmt::format("ACS state of the switch ports between {} GPU/NIC pair(s) could not be read",
                               acs_unknown_pairs)));
  }
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const diag::Finding& a, const diag::Finding& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  return r;
}

diag::Severity worst_severity(const GpuDirectReport& report) {
  auto worst = diag::Severity::Ok;
  for (const auto& f : report.findings)
    if (static_cast<int>(f.severity) > static_cast<int>(worst)) worst = f.severity;
  return worst;
}

std::string render_text(const GpuDirectReport& r) {
  std::string out = fmt::format("GPUDirect RDMA (topology: {})\n", r.topology_source);
  if (!r.cuda_queried)
    out += "  CUDA driver : not queried\n";
  else if (r.cuda.loaded)
    out += fmt::format("  CUDA driver : {}.{} via {}, {} GPU(s)\n", r.cuda.driver_version / 1000,
                       (r.cuda.driver_version % 1000) / 10, r.cuda.library, r.cuda.gpus.size());
  else
    out += fmt::format("  CUDA driver : {}\n", r.cuda.error);
  out += fmt::format("  peer memory : {} ({})\n", r.platform.peer.loaded ? "loaded" : "not loaded",
                     r.platform.peer.evidence);
  out += fmt::format("  DMA-BUF     : kernel {} ({})\n", r.platform.kernel_dmabuf.supported ? "yes" : "no",
                     r.platform.kernel_dmabuf.evidence);
  out +=
      fmt::format("  IOMMU       : {} ({})\n", to_string(r.platform.iommu.mode), r.platform.iommu.evidence);
  out += fmt::format("  policy      : NCCL_NET_GDR_LEVEL={}{} NCCL_NET_GDR_READ={} NCCL_DMABUF_ENABLE={}\n",
                     to_string(r.policy.level.level), r.policy.level.from_env ? "" : " (default)",
                     r.policy.gdr_read, r.policy.dmabuf_enable ? 1 : 0);
  for (const auto& g : r.gpus) {
    std::string cuda = g.facts.cc_major < 0
                           ? std::string("no CUDA info")
                           : fmt::format("cc {}.{}, gdr attr {}, dma-buf attr {}", g.facts.cc_major,
                                         g.facts.cc_minor, g.facts.gdr_supported, g.facts.dmabuf_supported);
    out += fmt::format("  {:<6} {} NUMA {} {}{}\n", g.facts.label, g.facts.bdf, numa_text(g.numa), cuda,
                       g.in_topology ? "" : " (not in topology)");
  }
  for (const auto& n : r.nics)
    out += fmt::format("  {:<6} {} NUMA {} dma-buf probe {}\n", n.facts.name, n.facts.bdf, numa_text(n.numa),
                       to_string(n.facts.verbs_dmabuf));
  for (const auto& n : r.virtual_nics)
    out += fmt::format("  {:<6} not a PCI device (virtual): host memory only, dma-buf probe {}\n",
                       n.facts.name, to_string(n.facts.verbs_dmabuf));
  if (!r.topology_error.empty()) {
    out += "  no matrix: " + r.topology_error + "\n";
  } else if (r.nics.empty()) {
    out += "  no RDMA NIC: GPUDirect RDMA does not apply\n";
  } else if (!r.gpus.empty()) {
    size_t first = 6, width = 4;
    for (const auto& g : r.gpus) first = std::max(first, g.facts.label.size());
    for (const auto& n : r.nics) width = std::max(width, n.facts.name.size());
    for (const auto& p : r.pairs) width = std::max(width, p.cell().size());
    out += fmt::format("  {:<{}}", "", first);
    for (const auto& n : r.nics) out += fmt::format(" | {:<{}}", n.facts.name, width);
    trim_end(out);
    out += "\n";
    for (const auto& g : r.gpus) {
      out += fmt::format("  {:<{}}", g.facts.label, first);
      for (const auto& n : r.nics) {
        const auto* p = r.pair(g.facts.label, n.facts.name);
        out += fmt::format(" | {:<{}}", p ? p->cell() : std::string("-"), width);
      }
      trim_end(out);
      out += "\n";
    }
  }
  for (const auto& f : r.findings) out += "  " + diag::one_line(f) + "\n";
  return out;
}

}  // namespace railscope::gpu
