// SPDX-License-Identifier: Apache-2.0
// Memory-registration cache keyed by address range, one per protection domain (registrations are
// global: regIsGlobal=1). A regMr of a range already covered by a cached registration only takes a
// reference; the MR is deregistered when the last reference goes. Ranges are page-aligned, as the
// kernel pins whole pages anyway.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "plugin/net/transport.h"
#include "railscope/gpu/verbs_gdr.h"
#include "railscope/ibv/handles.h"

namespace railscope::net::verbs {

using ibv::MrPtr;  // lib/ibv handles (railscope/ibv/handles.h) by their short names
using ibv::PdPtr;

inline constexpr uintptr_t kPageSize = 4096;

// The pure part: which cached range covers [begin, end), with reference counts. Payload is what the
// cache keeps per range (an MR; an int in tests).
template <class Payload>
class RangeIndex {
 public:
  struct Entry {
    uintptr_t begin = 0, end = 0;
    int refs = 0;
    Payload payload{};
  };

  static uintptr_t align_down(uintptr_t a) { return a & ~(kPageSize - 1); }
  static uintptr_t align_up(uintptr_t a) { return (a + kPageSize - 1) & ~(kPageSize - 1); }

  // The entry covering [begin, end) with a new reference, or nullptr.
  Entry* acquire(uintptr_t begin, uintptr_t end) {
    auto it = entries_.upper_bound(Key{begin, UINTPTR_MAX});
    while (it != entries_.begin()) {
      --it;
      if (begin - it->second.begin > kMaxScan) break;
      if (it->second.end >= end) {
        ++it->second.refs;
        return &it->second;
      }
    }
    return nullptr;
  }
  // Adds [begin, end) with one reference (call only after acquire() found nothing).
  Entry* insert(uintptr_t begin, uintptr_t end, Payload p) {
    auto [it, ok] = entries_.try_emplace(Key{begin, end});
    it->second = Entry{begin, end, 1, std::move(p)};
    return &it->second;
  }
  // Drops a reference; true (and the entry removed, payload moved to *out) when it was the last.
  bool release(Entry* e, Payload* out) {
    if (--e->refs > 0) return false;
    auto it = entries_.find(Key{e->begin, e->end});
    if (out != nullptr) *out = std::move(it->second.payload);
    entries_.erase(it);
    return true;
  }
  size_t size() const { return entries_.size(); }

 private:
  using Key = std::pair<uintptr_t, uintptr_t>;
  // Registrations larger than this are rare; bounding the backwards scan keeps lookups cheap.
  static constexpr uintptr_t kMaxScan = uintptr_t{1} << 36;
  std::map<Key, Entry> entries_;
};

class MrCache {
 public:
  MrCache(PdPtr pd, std::string where) : pd_(std::move(pd)), where_(std::move(where)) {}
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // A registration covering [addr, addr+size); *token identifies the reference for release().
  // kind CudaPeerMemory (GPU memory through a peer-memory client) maps a failure with
  // classify_registration_failure; `peer` describes the client for that diagnosis.
  Status acquire(void* addr, size_t size, ibv_mr** mr, void** token, gpu::RegKind kind = gpu::RegKind::Host,
                 const gpu::PeerMemoryStatus* peer = nullptr);
  void release(void* token);
  size_t registrations() const;

 private:
  using Index = RangeIndex<MrPtr>;
  PdPtr pd_;
  std::string where_;
  mutable std::mutex mutex_;
  Index index_;
};

}  // namespace railscope::net::verbs
