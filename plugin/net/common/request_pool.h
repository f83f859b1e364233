// SPDX-License-Identifier: Apache-2.0
// Fixed-size pool of request objects, allocated once per connection: the data path takes and returns
// requests without touching the heap. A full pool answers "try again" (nullptr), which NCCL's
// contract allows (isend/irecv may return a null request).
#pragma once

#include <array>
#include <cstddef>

namespace railscope::net {

template <class T, size_t N>
class RequestPool {
 public:
  RequestPool() {
    for (size_t i = 0; i < N; ++i) free_[i] = N - 1 - i;
    nfree_ = N;
  }
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;

  T* get() {
    if (nfree_ == 0) return nullptr;
    return &items_[free_[--nfree_]];
  }
  void put(T* t) { free_[nfree_++] = index_of(t); }
  // Whether t is one of this pool's objects (validates pointers handed back by the caller).
  bool owns(const T* t) const { return t >= items_.data() && t < items_.data() + N; }
  size_t index_of(const T* t) const { return static_cast<size_t>(t - items_.data()); }
  T& at(size_t i) { return items_[i]; }
  size_t available() const { return nfree_; }
  static constexpr size_t capacity() { return N; }

 private:
  std::array<T, N> items_{};
  std::array<size_t, N> free_{};
  size_t nfree_ = 0;
};

}  // namespace railscope::net
