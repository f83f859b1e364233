// SPDX-License-Identifier: Apache-2.0
// DMA-BUF probe (NCCL's method) and the mapping of registration errors to the diagnosis catalogue.
#include "railscope/gpu/verbs_gdr.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "railscope/ibv/ibv.h"
#include "railscope/node/memlock.h"

namespace railscope::gpu {

std::string_view to_string(DmabufProbe p) {
  switch (p) {
    case DmabufProbe::Supported: return "supported";
    case DmabufProbe::Unsupported: return "unsupported";
    case DmabufProbe::Unknown: break;
  }
  return "unknown";
}

DmabufProbe classify_dmabuf_probe_errno(int err) {
  if (err == EOPNOTSUPP || err == EPROTONOSUPPORT) return DmabufProbe::Unsupported;
  return DmabufProbe::Supported;
}

DmabufProbeResult probe_verbs_dmabuf(ibv_pd* pd) {
  DmabufProbeResult r;
  if (!pd) {
    r.detail = "no protection domain to probe with";
    return r;
  }
  const ibv::Api* v = ibv::api();
  if (v == nullptr || v->reg_dmabuf_mr == nullptr) {
    r.result = DmabufProbe::Unsupported;
    r.detail = v == nullptr ? ibv::load_error()
                            : "the installed libibverbs has no ibv_reg_dmabuf_mr (rdma-core < 34)";
    return r;
  }
  errno = 0;
  ibv_mr* mr = v->reg_dmabuf_mr(pd, 0, 64, 0, -1, 0);
  if (mr) {
    v->dereg_mr(mr);
    r.result = DmabufProbe::Supported;
    r.detail = "ibv_reg_dmabuf_mr(fd=-1) unexpectedly succeeded";
    return r;
  }
  r.err = errno;
  r.result = classify_dmabuf_probe_errno(r.err);
  r.detail = fmt::format("ibv_reg_dmabuf_mr(fd=-1) failed with {} ({}): dma-buf MRs {}", std::strerror(r.err),
                         r.err, r.result == DmabufProbe::Supported ? "supported" : "not supported");
  return r;
}

diag::Finding classify_registration_failure(RegKind kind, int err, const std::string& device, size_t size,
                                            const PeerMemoryStatus* peer) {
  const char* what = kind == RegKind::Host ? "host" : kind == RegKind::Dmabuf ? "DMA-BUF GPU" : "GPU";
  std::string base = fmt::format("registering {} bytes of {} memory on {} failed with {} ({})", size, what,
                                 device, std::strerror(err), err);
  if (err == ENOMEM) {
    const node::MemlockState m = node::read_memlock_limits();
    std::string limit = "unknown";
    if (m.error.empty())
      limit = m.soft_bytes == node::kMemlockUnlimited ? std::string("unlimited")
                                                      : fmt::format("{} KiB", m.soft_bytes / 1024);
    return diag::make("memlock.too_low", base + "; RLIMIT_MEMLOCK is " + limit);
  }
  if (kind == RegKind::CudaPeerMemory && err == EFAULT) {
    std::string facts = peer ? peer->evidence : std::string("peer-memory client state unknown");
    return diag::make("gdr.cuda_reg_efault", base + "; the kernel could not pin GPU pages: " + facts);
  }
  if (kind == RegKind::Dmabuf && (err == EOPNOTSUPP || err == EPROTONOSUPPORT)) {
    return diag::make(
        "gdr.dmabuf_unsupported", base,
        "Upgrade the kernel (>= 5.12) / rdma-core (>= 34) / NIC driver, or set NCCL_DMABUF_ENABLE=0 "
        "and load nvidia-peermem");
  }
  return diag::make("reg.failed", base);
}

}  // namespace railscope::gpu
