// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/setup/mr_cache.h"

#include <fmt/format.h>

#include <cerrno>

#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {

Status MrCache::acquire(void* addr, size_t size, ibv_mr** mr, void** token, gpu::RegKind kind,
                        const gpu::PeerMemoryStatus* peer) {
  auto a = reinterpret_cast<uintptr_t>(addr);
  uintptr_t begin = Index::align_down(a);
  uintptr_t end = Index::align_up(a + (size == 0 ? 1 : size));
  std::lock_guard lock(mutex_);
  if (auto* e = index_.acquire(begin, end)) {
    *mr = e->payload.get();
    *token = e;
    return Status::success();
  }
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  ibv_mr* raw = ibv::api()->reg_mr(pd_.get(), reinterpret_cast<void*>(begin), end - begin, access);
  if (raw == nullptr) {
    int err = errno;
    if (kind != gpu::RegKind::Host)
      return Status::fail(ncclSystemError,
                          gpu::classify_registration_failure(kind, err, where_, end - begin, peer));
    return Status::fail(ncclSystemError, reg_mr_finding(err, end - begin, memlock_limit_kib(), where_));
  }
  auto* e = index_.insert(begin, end, MrPtr(raw));
  *mr = raw;
  *token = e;
  return Status::success();
}

void MrCache::release(void* token) {
  if (token == nullptr) return;
  MrPtr gone;
  std::lock_guard lock(mutex_);
  index_.release(static_cast<Index::Entry*>(token), &gone);
}

size_t MrCache::registrations() const {
  std::lock_guard lock(mutex_);
  return index_.size();
}

}  // namespace railscope::net::verbs
