// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/gpu/gpu_registration.h"

#include <fmt/format.h>

#include <cerrno>
#include <memory>

#include "plugin/net/verbs/gpu/gdr_support.h"
#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/setup/mr_cache.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {
namespace {

std::string lane_name(const Lane& lane) { return fmt::format("{}:{}", lane.port->dev_name, lane.port->port); }

const gpu::PeerMemoryStatus* peer_of(const Lane& lane) {
  return lane.port->gdr_host ? &lane.port->gdr_host->platform.peer : nullptr;
}

}  // namespace

Status register_cuda_on_lanes(Connection& c, void* data, size_t size, VerbsMr** out) {
  for (const auto& lane : c.lanes())
    if ((lane.port->gdr.ptr_support & NCCL_PTR_CUDA) == 0) {
      const diag::Finding* why = lane.port->gdr.cuda_refusal();
      diag::Finding f =
          why != nullptr
              ? *why
              : diag::make("gdr.no_peermem", fmt::format("{} does not offer NCCL_PTR_CUDA", lane_name(lane)));
      f.detail =
          fmt::format("regMr of {} bytes of GPU memory (NCCL_PTR_CUDA) refused on {} (ptrSupport={}{}): {}",
                      size, lane_name(lane), ptr_support_text(lane.port->gdr.ptr_support),
                      lane.port->gdr.ptr_support == NCCL_PTR_HOST ? ", host memory only" : "", f.detail);
      return Status::fail(ncclInvalidArgument, std::move(f));
    }
  auto mr = std::make_unique<VerbsMr>();
  mr->type = NCCL_PTR_CUDA;
  for (auto& lane : c.lanes()) {
    int i = mr->ndevs;
    if (Status st = lane.mr_cache->acquire(data, size, &mr->mr[i], &mr->token[i],
                                           gpu::RegKind::CudaPeerMemory, peer_of(lane));
        !st.ok())
      return st;
    mr->cache[i] = lane.mr_cache;
    mr->ndevs = i + 1;
  }
  *out = mr.release();
  return Status::success();
}

Status register_dmabuf_on_lanes(Connection& c, void* data, size_t size, int type, uint64_t offset, int fd,
                                VerbsMr** out) {
  if (fd < 0) {
    if (type == NCCL_PTR_CUDA) return register_cuda_on_lanes(c, data, size, out);
    return register_on_lanes(c, data, size, type, out);
  }
  if (ibv::api()->reg_dmabuf_mr == nullptr)
    return Status::fail(ncclSystemError, "gdr.dmabuf_unsupported",
                        fmt::format("regMrDmaBuf (fd {}) of {} bytes: the installed libibverbs has no "
                                    "ibv_reg_dmabuf_mr (rdma-core < 34)",
                                    fd, size));
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  auto mr = std::make_unique<VerbsMr>();
  mr->type = NCCL_PTR_DMABUF;
  for (auto& lane : c.lanes()) {
    int i = mr->ndevs;
    errno = 0;
    ibv_mr* raw = ibv::api()->reg_dmabuf_mr(lane.port->pd.get(), offset, size,
                                            reinterpret_cast<uint64_t>(data), fd, access);
    if (raw == nullptr) {
      int err = errno;
      diag::Finding f =
          gpu::classify_registration_failure(gpu::RegKind::Dmabuf, err, lane_name(lane), size, peer_of(lane));
      f.detail = fmt::format("regMrDmaBuf (fd {}, offset {}): {}", fd, offset, f.detail);
      if (const diag::Finding* why = lane.port->gdr.dmabuf_refusal())
        f.detail += fmt::format("; {} does not offer NCCL_PTR_DMABUF ({})", lane_name(lane), why->id());
      return Status::fail(ncclSystemError, std::move(f));
    }
    mr->owned[i].reset(raw);
    mr->mr[i] = raw;
    mr->ndevs = i + 1;
  }
  *out = mr.release();
  return Status::success();
}

}  // namespace railscope::net::verbs
