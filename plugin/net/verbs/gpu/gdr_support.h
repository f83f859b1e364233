// SPDX-License-Identifier: Apache-2.0
// What the verbs engine offers NCCL for GPU memory, decided once per engine from lib/gpu's facts
// (peer-memory client, kernel DMA-BUF, IOMMU, NCCL_NET_GDR_* / NCCL_DMABUF_ENABLE) and once per port
// from the DMA-BUF probe on its PD. The plugin links the lean railscope_gpu (no hwloc): with no
// GPU×NIC pairs known, nic_ptr_support reports the platform's capability and NCCL's own topology
// check applies NCCL_NET_GDR_LEVEL per GPU, as NCCL's IB transport does.
// Also the flush rule (RAILSCOPE_NET_FLUSH over gdr_flush_policy) and its log texts. Pure except
// detect_gdr_host() and flush_mode_from_env().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/net/verbs/gpu/nic_gdr.h"
#include "railscope/core/diagnosis.h"
#include "railscope/gpu/gdr_decision.h"
#include "railscope/gpu/gdr_flush.h"
#include "railscope/gpu/verbs_gdr.h"

namespace railscope::net::verbs {

// Facts shared by every port of the engine.
struct GdrHost {
  gpu::PlatformFacts platform;
  gpu::GdrPolicy policy;
};
// SysfsRoot::from_env() (RAILSCOPE_SYSFS_ROOT) and GdrPolicy::from_env().
GdrHost detect_gdr_host();

NicGdr decide_nic_gdr(const GdrHost& host, const std::string& nic, bool pci_device,
                      const gpu::DmabufProbeResult& probe);
// A device fused from several ports (makeVDevice) offers what every member offers.
NicGdr combine_nic_gdr(const std::vector<const NicGdr*>& members);

// "HOST", "HOST|CUDA", "HOST|CUDA|DMABUF".
std::string ptr_support_text(int bits);
// The decision line getProperties logs once per device:
// "GPUDirect rxe0: ptrSupport=HOST (NCCL_NET_GDR_LEVEL=PHB (set); peer memory absent; dma-buf ...)".
std::string gdr_decision_line(const GdrHost& host, const std::string& nic, const NicGdr& d);

// RAILSCOPE_NET_FLUSH: auto (flush GPUDirect receives when gdr_flush_policy says so), force (flush
// every receive, host memory too: rules flush in or out when chasing corruption), off (never).
enum class FlushMode { Auto, Force, Off };
std::string_view to_string(FlushMode m);
// nullopt for an unknown value.
std::optional<FlushMode> parse_flush_mode(std::string_view text);
// Reads RAILSCOPE_NET_FLUSH; an unknown value is logged (config.bad_env) and means auto.
FlushMode flush_mode_from_env();
// Whether iflush posts the loopback read for a receive into memory of this kind. Force wins over
// NCCL_GDR_FLUSH_DISABLE (it is railscope's explicit debugging switch); auto follows the policy.
bool flush_wanted(FlushMode mode, const gpu::FlushPolicy& policy, bool gpu_memory);

}  // namespace railscope::net::verbs
