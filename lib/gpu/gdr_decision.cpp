// SPDX-License-Identifier: Apache-2.0
// The per-pair GPUDirect rules. Order of findings: distance, ACS, GPU capability, peer memory,
// DMA-BUF, read side, IOMMU — the first one is what the user should fix first.
#include "railscope/gpu/gdr_decision.h"

#include <fmt/format.h>

#include "railscope/core/params.h"

namespace railscope::gpu {

GdrPolicy GdrPolicy::from_env() {
  GdrPolicy p;
  p.level = gdr_level_from_env();
  p.gdr_read = static_cast<int>(params::get_int("NCCL_NET_GDR_READ"));
  p.dmabuf_enable = params::get_bool("NCCL_DMABUF_ENABLE");
  return p;
}

std::string PairDecision::cell() const {
  std::string p(to_string(path));
  if (gdr) {
    std::string kinds = cuda_ptr && dmabuf_ptr ? "cuda+dmabuf" : cuda_ptr ? "cuda" : "dmabuf";
    return fmt::format("{} gdr {}{}", p, kinds, gdr_read ? "" : " (recv only)");
  }
  std::string why = "off";
  if (!findings.empty()) {
    auto id = findings.front().id();
    auto dot = id.find('.');
    why = fmt::format("off ({})", dot == std::string_view::npos ? id : id.substr(dot + 1));
  }
  return p + " " + why;
}

namespace {

std::string dmabuf_blocker(const GdrPolicy& policy, const PlatformFacts& platform, const GpuFacts& gpu,
                           const NicFacts& nic) {
  if (!policy.dmabuf_enable) return "disabled by NCCL_DMABUF_ENABLE=0";
  if (!platform.kernel_dmabuf.supported) return "kernel: " + platform.kernel_dmabuf.evidence;
  if (gpu.dmabuf_supported == 0)
    return fmt::format("the CUDA driver reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=0 for {}", gpu.label);
  if (gpu.dmabuf_supported < 0) return "no CUDA driver to confirm CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED";
  if (nic.verbs_dmabuf == DmabufProbe::Unsupported)
    return fmt::format("{} refuses dma-buf MRs (ibv_reg_dmabuf_mr: EOPNOTSUPP)", nic.name);
  if (nic.verbs_dmabuf == DmabufProbe::Unknown)
    return fmt::format("{} was not probed with ibv_reg_dmabuf_mr", nic.name);
  return {};
}

}  // namespace

PairDecision decide_pair(const GdrPolicy& policy, const PlatformFacts& platform, const GpuFacts& gpu,
                         const NicFacts& nic, const PairFacts& pair) {
  PairDecision d;
  d.gpu = gpu.label;
  d.nic = nic.name;
  d.path = pair.path.type;
  d.via = pair.path.via;
  d.distance_ok = static_cast<int>(d.path) <= static_cast<int>(policy.level.level);
  std::string pair_name = fmt::format("{} ({}) and {} ({})", gpu.label, gpu.bdf, nic.name, nic.bdf);

  if (!d.distance_ok) {
    std::string fix =
        pair.nearer_gpus.empty()
            ? fmt::format(
                  "No GPU is within {} of {}: raise NCCL_NET_GDR_LEVEL to {} only if this platform is "
                  "known to sustain GPUDirect across it, or use a NIC closer to {}",
                  to_string(policy.level.level), nic.name, to_string(d.path), gpu.label)
            : fmt::format(
                  "Bind this rank to {} (within {} of {}), or to a NIC next to {}; NCCL_NET_GDR_LEVEL={} "
                  "would allow it if the platform sustains it",
                  pair.nearer_gpus, to_string(policy.level.level), nic.name, gpu.label, to_string(d.path));
    d.findings.push_back(diag::make(
        "gdr.distance",
        fmt::format("{} are {} apart ({}), beyond NCCL_NET_GDR_LEVEL={}{}", pair_name, to_string(d.path),
                    d.via, to_string(policy.level.level), policy.level.from_env ? "" : " (NCCL's default)"),
        fix));
  }

  std::string redirected, unknown;
  for (const auto& port : pair.acs) {
    if (port.acs.state == AcsState::Redirect) {
      d.acs_redirect = true;
      redirected += fmt::format("{}{} ({})", redirected.empty() ? "" : ", ", port.bdf, port.acs.describe());
    } else if (port.acs.state == AcsState::NeedsRoot || port.acs.state == AcsState::Unreadable) {
      unknown += (unknown.empty() ? "" : ", ") + port.bdf;
    }
  }
  if (d.acs_redirect) {
    std::string ports;
    for (const auto& port : pair.acs)
      if (port.acs.state == AcsState::Redirect) ports += " " + port.bdf;
    d.findings.push_back(diag::make(
        "gdr.acs",
        fmt::format(
            "ACS P2P redirect is on between {}: {}; NIC writes to GPU memory go up to the root complex",
            pair_name, redirected),
        fmt::format(
            "As root, clear ACS control on the ports (for p in{}; do setpci -s $p ECAP_ACS+0x6.w=0000; "
            "done), or disable ACS in the BIOS; in a VM keep ACS and enable ATS on the NIC",
            ports)));
  }

  bool gpu_ok = gpu.gdr_supported != 0;
  if (!gpu_ok)
    d.findings.push_back(diag::make(
        "gdr.gpu_unsupported",
        fmt::format("the CUDA driver reports CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED=0 for {}",
                    gpu.label)));

  std::string dmabuf_why = dmabuf_blocker(policy, platform, gpu, nic);
  bool dmabuf_ok = dmabuf_why.empty();
  bool allowed = d.distance_ok && !d.acs_redirect && gpu_ok;
  d.cuda_ptr = allowed && platform.peer.loaded;
  d.dmabuf_ptr = allowed && dmabuf_ok;
  if (!platform.peer.loaded && !dmabuf_ok)
    d.findings.push_back(diag::make(
        "gdr.no_peermem",
        fmt::format("no peer-memory client ({}) and DMA-BUF is unusable (see gdr.dmabuf_unsupported)",
                    platform.peer.evidence)));
  // Information after the refusals: the cell shows the first finding of a refused pair.
  if (!unknown.empty() && d.distance_ok)
    d.findings.push_back(diag::make(
        "gdr.acs_unknown",
        fmt::format("ACS state of {} on the path between {} could not be read", unknown, pair_name)));
  if (!dmabuf_ok)
    d.findings.push_back(
        diag::make("gdr.dmabuf_unsupported", diag::Severity::Info, "DMA-BUF off: " + dmabuf_why));
  d.ptr_support = kPtrHost | (d.cuda_ptr ? kPtrCuda : 0) | (d.dmabuf_ptr ? kPtrDmabuf : 0);
  d.gdr = d.cuda_ptr || d.dmabuf_ptr;

  d.gdr_read = d.gdr;
  if (d.gdr && policy.gdr_read == 0) {
    d.gdr_read = false;
    d.findings.push_back(diag::make(
        "gdr.read_off", "NCCL_NET_GDR_READ=0: sends from " + gpu.label + " are staged through host memory"));
  } else if (d.gdr && policy.gdr_read < 0 && gpu.cc_major >= 0 && gpu.cc_major < 8) {
    // NCCL keeps reads on pre-Ampere GPUs only when the GPU has NVLink peers or is alone; railscope
    // cannot see NVLink, so it states the rule.
    d.gdr_read = false;
    d.findings.push_back(diag::make(
        "gdr.read_off",
        fmt::format("{} has compute capability {}.{} (< 8.0): NCCL uses GPUDirect reads for sends only "
                    "when the GPU has NVLink peers or is the only GPU",
                    gpu.label, gpu.cc_major, gpu.cc_minor)));
  }

  bool translated = gpu.iommu_domain.rfind("DMA", 0) == 0 ||
                    (gpu.iommu_domain.empty() && platform.iommu.mode == IommuMode::Translated);
  if (d.gdr && translated)
    d.findings.push_back(diag::make(
        "gdr.iommu_translated",
        fmt::format(
            "the IOMMU translates DMA for {} ({}); peer-to-peer writes from {} need ATS or go through the "
            "root complex",
            gpu.label, gpu.iommu_domain.empty() ? platform.iommu.evidence : "domain " + gpu.iommu_domain,
            nic.name)));
  return d;
}

int nic_ptr_support(const std::vector<PairDecision>& pairs, const std::string& nic, bool pci_device,
                    const PlatformFacts& platform, DmabufProbe verbs_dmabuf, const GdrPolicy& policy) {
  int bits = kPtrHost;
  if (!pci_device) return bits;
  bool any = false;
  for (const auto& p : pairs) {
    if (p.nic != nic) continue;
    any = true;
    bits |= p.ptr_support;
  }
  if (any) return bits;
  if (platform.peer.loaded) bits |= kPtrCuda;
  if (policy.dmabuf_enable && platform.kernel_dmabuf.supported && verbs_dmabuf == DmabufProbe::Supported)
    bits |= kPtrDmabuf;
  return bits;
}

}  // namespace railscope::gpu
