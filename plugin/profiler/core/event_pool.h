// SPDX-License-Identifier: Apache-2.0
// A fixed-size pool of event slots, sized once at init: acquire/release are lock-free (a Treiber
// stack of slot indices with an ABA tag), never allocate, and acquire returns nullptr when the pool
// is exhausted so the caller can drop-and-count. Slots are never returned to the heap while the
// pool lives, so a stale pointer can still be read safely (it may just describe another event).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace railscope::profiler {

template <typename T>
class EventPool {
 public:
  explicit EventPool(uint32_t capacity)
      : capacity_(capacity), slots_(new T[capacity]), next_(new std::atomic<uint32_t>[capacity]) {
    for (uint32_t i = 0; i < capacity; ++i)  // 1-based links, 0 = end
      next_[i].store(i + 2 <= capacity ? i + 2 : 0, std::memory_order_relaxed);
    head_.store(capacity > 0 ? 1 : 0, std::memory_order_relaxed);
  }
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  T* acquire() {
    uint64_t head = head_.load(std::memory_order_acquire);
    for (;;) {
      const uint32_t index = static_cast<uint32_t>(head);
      if (index == 0) return nullptr;
      const uint64_t next = (head & kTagMask) + kTagStep + next_[index - 1].load(std::memory_order_relaxed);
      if (head_.compare_exchange_weak(head, next, std::memory_order_acq_rel, std::memory_order_acquire)) {
        in_use_.fetch_add(1, std::memory_order_relaxed);
        return &slots_[index - 1];
      }
    }
  }

  void release(T* slot) {
    const uint32_t index = static_cast<uint32_t>(slot - slots_.get()) + 1;
    uint64_t head = head_.load(std::memory_order_relaxed);
    for (;;) {
      next_[index - 1].store(static_cast<uint32_t>(head), std::memory_order_relaxed);
      const uint64_t desired = (head & kTagMask) + kTagStep + index;
      if (head_.compare_exchange_weak(head, desired, std::memory_order_release, std::memory_order_relaxed))
        break;
    }
    in_use_.fetch_sub(1, std::memory_order_relaxed);
  }

  bool owns(const void* p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    const auto base = reinterpret_cast<uintptr_t>(slots_.get());
    return a >= base && a < base + sizeof(T) * capacity_ && (a - base) % sizeof(T) == 0;
  }
  uint32_t capacity() const { return capacity_; }
  uint32_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  T& at(uint32_t i) { return slots_[i]; }

 private:
  static constexpr uint64_t kTagStep = uint64_t{1} << 32;
  static constexpr uint64_t kTagMask = ~uint64_t{0xFFFFFFFF};
  uint32_t capacity_;
  std::unique_ptr<T[]> slots_;
  std::unique_ptr<std::atomic<uint32_t>[]> next_;
  std::atomic<uint64_t> head_{0};
  std::atomic<uint32_t> in_use_{0};
};

}  // namespace railscope::profiler
