// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/gpu/gdr_support.h"

#include <fmt/format.h>

#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/gpu/sysfs_root.h"

namespace railscope::net::verbs {

GdrHost detect_gdr_host() {
  GdrHost h;
  const auto fs = gpu::SysfsRoot::from_env();
  h.platform.peer = gpu::detect_peer_memory(fs);
  h.platform.kernel_dmabuf = gpu::detect_kernel_dmabuf(fs);
  h.platform.iommu = gpu::detect_iommu(fs);
  h.policy = gpu::GdrPolicy::from_env();
  return h;
}

const diag::Finding* NicGdr::cuda_refusal() const {
  return no_cuda < 0 ? nullptr : &refusals[static_cast<size_t>(no_cuda)];
}
const diag::Finding* NicGdr::dmabuf_refusal() const {
  return no_dmabuf < 0 ? nullptr : &refusals[static_cast<size_t>(no_dmabuf)];
}

namespace {

int add(NicGdr* d, diag::Finding f) {
  for (size_t i = 0; i < d->refusals.size(); ++i)
    if (d->refusals[i].id() == f.id() && d->refusals[i].detail == f.detail) return static_cast<int>(i);
  d->refusals.push_back(std::move(f));
  return static_cast<int>(d->refusals.size() - 1);
}

}  // namespace

NicGdr decide_nic_gdr(const GdrHost& host, const std::string& nic, bool pci_device,
                      const gpu::DmabufProbeResult& probe) {
  NicGdr d;
  d.dmabuf_probe = probe.result;
  d.ptr_support = gpu::nic_ptr_support({}, nic, pci_device, host.platform, probe.result, host.policy);
  const auto& p = host.platform;
  int virt = -1;
  if (!pci_device)
    virt =
        add(&d, diag::make("gdr.nic_virtual",
                           fmt::format("{} is not a PCI device (soft-RoCE or another virtual RDMA device): "
                                       "it cannot reach GPU memory, so GPU buffers are staged through "
                                       "host memory",
                                       nic)));
  int peer = -1;
  if (!p.peer.loaded)
    peer = add(&d, diag::make("gdr.no_peermem",
                              fmt::format("no peer-memory client for {} ({}): ibv_reg_mr cannot pin GPU "
                                          "memory, NCCL_PTR_CUDA is not offered",
                                          nic, p.peer.evidence)));
  std::string dmabuf_why;
  if (!host.policy.dmabuf_enable)
    dmabuf_why = "disabled by NCCL_DMABUF_ENABLE=0";
  else if (!p.kernel_dmabuf.supported)
    dmabuf_why = fmt::format("the kernel lacks DMA-BUF MRs ({})", p.kernel_dmabuf.evidence);
  else if (probe.result != gpu::DmabufProbe::Supported)
    dmabuf_why = probe.detail.empty() ? std::string("the DMA-BUF probe gave no answer") : probe.detail;
  int dmabuf = -1;
  if (!dmabuf_why.empty())
    dmabuf = add(&d, diag::make("gdr.dmabuf_unsupported",
                                fmt::format("NCCL_PTR_DMABUF not offered on {}: {}", nic, dmabuf_why)));
  if ((d.ptr_support & gpu::kPtrCuda) == 0) d.no_cuda = virt >= 0 ? virt : peer;
  if ((d.ptr_support & gpu::kPtrDmabuf) == 0) d.no_dmabuf = virt >= 0 ? virt : dmabuf;
  return d;
}

NicGdr combine_nic_gdr(const std::vector<const NicGdr*>& members) {
  NicGdr d;
  if (members.empty()) return d;
  d.ptr_support = ~0;
  d.dmabuf_probe = members[0]->dmabuf_probe;
  for (const NicGdr* m : members) {
    d.ptr_support &= m->ptr_support;
    if (m->dmabuf_probe != gpu::DmabufProbe::Supported) d.dmabuf_probe = m->dmabuf_probe;
    for (const auto& f : m->refusals) add(&d, f);
    if (d.no_cuda < 0 && m->cuda_refusal() != nullptr) d.no_cuda = add(&d, *m->cuda_refusal());
    if (d.no_dmabuf < 0 && m->dmabuf_refusal() != nullptr) d.no_dmabuf = add(&d, *m->dmabuf_refusal());
  }
  return d;
}

std::string ptr_support_text(int bits) {
  std::string s = "HOST";
  if (bits & gpu::kPtrCuda) s += "|CUDA";
  if (bits & gpu::kPtrDmabuf) s += "|DMABUF";
  return s;
}

std::string gdr_decision_line(const GdrHost& host, const std::string& nic, const NicGdr& d) {
  const auto& p = host.platform;
  const auto& lvl = host.policy.level;
  std::string refused;
  for (const auto& f : d.refusals) refused += fmt::format("{}{}", refused.empty() ? "" : ", ", f.id());
  return fmt::format(
      "GPUDirect {}: ptrSupport={} (NCCL_NET_GDR_LEVEL={}{}, applied per GPU by NCCL's topology; "
      "NCCL_NET_GDR_READ={}; NCCL_DMABUF_ENABLE={}; peer memory {}; kernel dma-buf {}; dma-buf probe {}; "
      "IOMMU {}; flush {}){}",
      nic, ptr_support_text(d.ptr_support), gpu::to_string(lvl.level), lvl.from_env ? " set" : " default",
      host.policy.gdr_read, host.policy.dmabuf_enable ? 1 : 0, p.peer.loaded ? "loaded" : "absent",
      p.kernel_dmabuf.supported ? "yes" : "no", gpu::to_string(d.dmabuf_probe), gpu::to_string(p.iommu.mode),
      gpu::gdr_flush_policy(d.ptr_support).enabled ? "on" : "off",
      refused.empty() ? std::string() : fmt::format("; not offered because: {}", refused));
}

std::string_view to_string(FlushMode m) {
  switch (m) {
    case FlushMode::Auto: return "auto";
    case FlushMode::Force: return "force";
    case FlushMode::Off: break;
  }
  return "off";
}

std::optional<FlushMode> parse_flush_mode(std::string_view text) {
  if (text == "auto" || text.empty()) return FlushMode::Auto;
  if (text == "force") return FlushMode::Force;
  if (text == "off") return FlushMode::Off;
  return std::nullopt;
}

FlushMode flush_mode_from_env() {
  const std::string text = params::get_string("RAILSCOPE_NET_FLUSH");
  if (auto m = parse_flush_mode(text)) return *m;
  RS_WARN(
      "NET/railscope : {}",
      diag::one_line(diag::make(
          "config.bad_env", fmt::format("RAILSCOPE_NET_FLUSH={} (auto, force or off); using auto", text))));
  return FlushMode::Auto;
}

bool flush_wanted(FlushMode mode, const gpu::FlushPolicy& policy, bool gpu_memory) {
  switch (mode) {
    case FlushMode::Force: return true;
    case FlushMode::Off: return false;
    case FlushMode::Auto: break;
  }
  return policy.enabled && gpu_memory;
}

}  // namespace railscope::net::verbs
