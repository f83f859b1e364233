// SPDX-License-Identifier: Apache-2.0
// MSG_ZEROCOPY on the data sockets of a sending TCP connection. With SO_ZEROCOPY set, a send() with
// MSG_ZEROCOPY pins the caller's pages instead of copying them into the socket buffer; the kernel
// numbers every such send() that moved bytes (0, 1, 2, ... per socket) and, once it has released
// the pages, queues the numbers as ranges on the socket's error queue (SO_EE_ORIGIN_ZEROCOPY;
// SO_EE_CODE_ZEROCOPY_COPIED when it copied the bytes after all, as loopback and veth do). Until
// then the buffer must not change, so a chunk sent this way only counts as done once its last
// number is released.
#pragma once

#include <atomic>
#include <bitset>
#include <cstdint>
#include <string>

#include "plugin/net/tcp/options.h"
#include "plugin/net/transport.h"

namespace railscope::net::tcp {

// What the lanes of one connection share: the mode, whether zero-copy sends are still made, and the
// counters of the statistics line (written by the helper threads, read at close).
struct ZeroCopyShared {
  ZeroCopyMode mode = ZeroCopyMode::Auto;
  uint32_t min_bytes = 16 * 1024;
  std::string peer;                  // for the log line
  std::atomic<bool> active{false};   // new sends may use MSG_ZEROCOPY
  std::atomic<bool> told{false};     // the "kernel copied" line was logged
  std::atomic<uint64_t> sends{0};    // send() calls made with MSG_ZEROCOPY
  std::atomic<uint64_t> bytes{0};    // bytes they moved
  std::atomic<uint64_t> copied{0};   // of those calls, how many the kernel reported as copied
  std::atomic<uint64_t> enobufs{0};  // chunks sent by copy because MSG_ZEROCOPY gave ENOBUFS
  static void add(std::atomic<uint64_t>& c, uint64_t n) { c.fetch_add(n, std::memory_order_relaxed); }
  // The kernel copied a zero-copy send: auto turns zero-copy off for this connection; both modes
  // say so once at INFO.
  void kernel_copied(uint64_t n);
  // The statistics line's "zerocopy" object.
  std::string json() const;
};

// Sets SO_ZEROCOPY on a data socket; false (and errno) when the kernel refuses.
bool enable_zerocopy(int fd);

// The zero-copy send numbers of one socket and which of them the kernel has released. Releases may
// arrive out of order; a window of kWindow numbers beyond the oldest unreleased one is tracked, and
// no zero-copy send is made while the window is full (bounded memory).
class ZeroCopyIds {
 public:
  static constexpr uint32_t kWindow = 4096;
  ZeroCopyIds() = default;
  explicit ZeroCopyIds(uint32_t first) : next_(first), released_(first) {}  // the kernel starts at 0
  bool can_send() const { return next_ - released_ < kWindow; }
  uint32_t take() { return next_++; }  // the number the kernel gave the send() that just moved bytes
  bool outstanding() const { return next_ != released_; }
  // Whether number id and every one before it have been released.
  bool released(uint32_t id) const { return static_cast<int32_t>(id - released_) < 0; }
  // Reads every notification on fd's error queue. *drained: whether any was there. An error other
  // than an empty queue is returned.
  Status drain(int fd, ZeroCopyShared* shared, const std::string& peer, bool* drained);
  // Marks [lo, hi] released (numbers outside the window in flight are ignored).
  void release(uint32_t lo, uint32_t hi);

 private:
  uint32_t next_ = 0;
  uint32_t released_ = 0;      // every number below this one is released
  std::bitset<kWindow> done_;  // released numbers in [released_, next_), by id % kWindow
};

}  // namespace railscope::net::tcp
