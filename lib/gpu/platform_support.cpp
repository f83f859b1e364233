// SPDX-License-Identifier: Apache-2.0
// Host-wide GPUDirect facts from sysfs/procfs: peer-memory client, kernel DMA-BUF, IOMMU mode.
#include "railscope/gpu/platform_support.h"

#include <charconv>
#include <sstream>

namespace railscope::gpu {
namespace {

void append(std::string& s, std::string_view part) {
  if (!s.empty()) s += "; ";
  s += part;
}

}  // namespace

PeerMemoryStatus detect_peer_memory(const SysfsRoot& fs) {
  PeerMemoryStatus st;
  st.nvidia_peermem_module = fs.exists("/sys/module/nvidia_peermem");
  st.nv_peer_mem_module = fs.exists("/sys/module/nv_peer_mem");
  st.memory_peers_nv_mem = fs.exists("/sys/kernel/mm/memory_peers/nv_mem/version");
  st.memory_peers_nv_mem_nc = fs.exists("/sys/kernel/mm/memory_peers/nv_mem_nc/version");
  for (const char* v : {"/sys/module/nvidia_peermem/version", "/sys/kernel/mm/memory_peers/nv_mem/version",
                        "/sys/kernel/mm/memory_peers/nv_mem_nc/version", "/sys/module/nv_peer_mem/version"}) {
    if (auto text = fs.read_text(v)) {
      st.version = *text;
      break;
    }
  }
  // NCCL 2.28's test, kept identical so railscope never claims what NCCL would not use.
  bool peermem_version = fs.exists("/sys/module/nvidia_peermem/version");
  st.loaded = st.memory_peers_nv_mem || st.memory_peers_nv_mem_nc || peermem_version;
  if (st.nvidia_peermem_module && !st.loaded)
    append(st.evidence,
           "nvidia_peermem directory present but no version file and no memory_peers entry "
           "(module not initialised?)");
  if (st.nvidia_peermem_module) append(st.evidence, "nvidia_peermem loaded");
  if (st.nv_peer_mem_module) append(st.evidence, "nv_peer_mem loaded");
  if (st.memory_peers_nv_mem) append(st.evidence, "memory_peers/nv_mem registered");
  if (st.memory_peers_nv_mem_nc) append(st.evidence, "memory_peers/nv_mem_nc registered");
  if (!st.version.empty()) append(st.evidence, "version " + st.version);
  if (st.evidence.empty())
    st.evidence =
        "no /sys/module/nvidia_peermem, /sys/module/nv_peer_mem or /sys/kernel/mm/memory_peers/nv_mem*";
  return st;
}

KernelDmabufStatus detect_kernel_dmabuf(const SysfsRoot& fs) {
  KernelDmabufStatus st;
  if (auto rel = fs.read_text("/proc/sys/kernel/osrelease")) {
    st.release = *rel;
    const char* p = st.release.data();
    const char* end = p + st.release.size();
    auto r1 = std::from_chars(p, end, st.major);
    if (r1.ec == std::errc() && r1.ptr < end && *r1.ptr == '.') std::from_chars(r1.ptr + 1, end, st.minor);
    st.release_ok = st.major > 5 || (st.major == 5 && st.minor >= 12);
    append(st.evidence,
           "kernel " + st.release + (st.release_ok ? " (>= 5.12)" : " (< 5.12: no dma-buf MRs)"));
  } else {
    append(st.evidence, "kernel release unreadable");
  }
  if (!st.release.empty()) {
    if (auto config = fs.read_text("/boot/config-" + st.release)) {
      st.config_dma_shared_buffer = config->find("\nCONFIG_DMA_SHARED_BUFFER=y") != std::string::npos ||
                                            config->rfind("CONFIG_DMA_SHARED_BUFFER=y", 0) == 0
                                        ? 1
                                        : 0;
      append(st.evidence,
             st.config_dma_shared_buffer ? "CONFIG_DMA_SHARED_BUFFER=y" : "CONFIG_DMA_SHARED_BUFFER not set");
    }
  }
  st.supported = st.release_ok && st.config_dma_shared_buffer != 0;
  return st;
}

std::string_view to_string(IommuMode m) {
  switch (m) {
    case IommuMode::None: return "off";
    case IommuMode::Passthrough: return "passthrough";
    case IommuMode::Translated: return "translated";
    case IommuMode::Unknown: break;
  }
  return "unknown";
}

IommuStatus detect_iommu(const SysfsRoot& fs) {
  IommuStatus st;
  st.units = fs.list_dir("/sys/class/iommu");
  auto groups = fs.list_dir("/sys/kernel/iommu_groups");
  st.groups = static_cast<int>(groups.size());
  if (auto cmdline = fs.read_text("/proc/cmdline")) {
    std::istringstream words(*cmdline);
    std::string w;
    while (words >> w) {
      if (w.rfind("iommu=", 0) == 0 || w.rfind("intel_iommu=", 0) == 0 || w.rfind("amd_iommu=", 0) == 0 ||
          w.rfind("iommu.passthrough=", 0) == 0) {
        if (!st.cmdline_flags.empty()) st.cmdline_flags += ' ';
        st.cmdline_flags += w;
      }
    }
  }
  int identity = 0, translated = 0;
  for (const auto& g : groups) {
    auto type = fs.read_text("/sys/kernel/iommu_groups/" + g + "/type");
    if (!type) continue;
    if (*type == "identity")
      ++identity;
    else if (type->rfind("DMA", 0) == 0)
      ++translated;
  }
  bool pt_flag = st.cmdline_flags.find("iommu=pt") != std::string::npos ||
                 st.cmdline_flags.find("iommu.passthrough=1") != std::string::npos;
  if (st.units.empty() && st.groups == 0) {
    st.mode = IommuMode::None;
    st.evidence = "no /sys/class/iommu units and no iommu groups";
  } else if (translated > 0) {
    st.mode = IommuMode::Translated;
    st.evidence = std::to_string(translated) + " iommu group(s) with a translating (DMA) domain";
  } else if (identity > 0 || pt_flag) {
    st.mode = IommuMode::Passthrough;
    st.evidence = identity > 0 ? std::to_string(identity) + " iommu group(s) in identity (passthrough) mode"
                               : "kernel command line " + st.cmdline_flags;
  } else {
    st.mode = IommuMode::Unknown;
    st.evidence = "iommu present, domain type unreadable";
  }
  if (!st.cmdline_flags.empty() && st.evidence.find(st.cmdline_flags) == std::string::npos)
    st.evidence += " (cmdline: " + st.cmdline_flags + ")";
  return st;
}

std::string device_iommu_domain(const SysfsRoot& fs, const std::string& bdf) {
  return fs.read_text("/sys/bus/pci/devices/" + bdf + "/iommu_group/type").value_or(std::string());
}

}  // namespace railscope::gpu
