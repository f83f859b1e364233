// SPDX-License-Identifier: Apache-2.0
// The data sockets of a connection ("lanes") and the helper threads that move bytes on them. The
// thread that calls isend/irecv/test (NCCL's proxy thread) cuts a message into chunks and queues one
// task per chunk on the lane that carries it; each helper thread serves a fixed set of lanes with
// non-blocking send/recv and poll, and counts a request's chunks down when they are done (with
// NCCL_SOCKET_NTHREADS=0 one worker is never started and the proxy thread runs its pass()). Queues are
// single-producer/single-consumer rings sized so the request pools can never overflow them: the data
// path allocates nothing (the consumer is whichever thread holds the worker's mutex, below). A socket
// error is kept (first error wins) for the proxy thread to report, and from then on no thread moves
// a byte on any lane of the connection (LaneWorker::stopped). A sending lane may use MSG_ZEROCOPY
// (zerocopy.h): a chunk sent that way is parked until the kernel releases its pages, and only then
// counted down. While a helper thread sleeps in poll, the proxy thread's own isend/test
// calls serve its lanes too (assist): NCCL's proxy loop spins on sched_yield() between calls, and on a host
// with few CPUs that spinning otherwise takes the CPU from the helpers (docs/tcp.md, "Performance vs
// iperf3"). A mutex per worker keeps one thread at a time on its lanes; the proxy thread only
// try-locks it, so it never waits for a helper.
#pragma once

#include <poll.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugin/net/common/socket.h"
#include "plugin/net/tcp/options.h"
#include "plugin/net/tcp/wire.h"
#include "plugin/net/tcp/zerocopy.h"
#include "plugin/net/transport.h"

namespace railscope::net::tcp {

struct Task {
  std::byte* ptr = nullptr;
  size_t len = 0;
  size_t done = 0;
  std::atomic<int>* pending = nullptr;  // the request's outstanding chunk count
  uint32_t zc_last = 0;                 // number of the last MSG_ZEROCOPY send() of this chunk
  bool zc_used = false;                 // some of its bytes went MSG_ZEROCOPY
  bool copy_only = false;               // MSG_ZEROCOPY gave ENOBUFS: copy the rest
};

class TaskRing {
 public:
  static constexpr uint32_t kSize = 512;  // >= request pool size x max grouped receives
  bool push(const Task& t) {
    uint32_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) == kSize) return false;
    slots_[tail & (kSize - 1)] = t;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  Task* front() {
    uint32_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return nullptr;
    return &slots_[head & (kSize - 1)];
  }
  void pop() { head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

 private:
  std::array<Task, kSize> slots_{};
  alignas(64) std::atomic<uint32_t> head_{0};
  alignas(64) std::atomic<uint32_t> tail_{0};
};

// A sending lane's zero-copy state: the send numbers and the chunks whose bytes are all handed to
// the kernel but whose pages it still holds (in send order; owned by the lane's helper thread).
struct LaneZeroCopy {
  ZeroCopyIds ids;
  std::array<Task, TaskRing::kSize> parked{};
  uint32_t head = 0, count = 0;
};

struct Lane {
  Fd fd;
  TaskRing ring;
  std::unique_ptr<LaneZeroCopy> zc;  // null: copy sends only
};

// The first failure of a connection, set by any thread, read by the proxy thread.
class ErrorState {
 public:
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  void set(const Status& st);
  Status get() const;

 private:
  std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;
  Status status_;
};

class LaneWorker {
 public:
  // zc: the connection's zero-copy state when its lanes use MSG_ZEROCOPY, else null.
  LaneWorker(std::vector<Lane*> lanes, bool sending, ErrorState* error, std::string peer, int timeout_s,
             ZeroCopyShared* zc = nullptr);
  ~LaneWorker();
  LaneWorker(const LaneWorker&) = delete;
  LaneWorker& operator=(const LaneWorker&) = delete;

  Status start(const char* thread_name);
  void wake();  // tasks were queued on one of this worker's lanes
  void stop();  // joins; pending tasks are abandoned
  // One non-blocking pass over the lanes on the caller's thread, for a worker that was never
  // started (NCCL_SOCKET_NTHREADS=0: the proxy thread moves the bytes itself). Returns whether any
  // byte moved or any chunk was released.
  bool pass();
  // For a started worker, on NCCL's proxy thread: one non-blocking pass over the lanes (send/recv
  // until each would block or has nothing queued) if the helper thread is not serving them right now
  // (it sleeps in poll, or has not been scheduled since its wake-up); false at once if it is.
  // Returns whether any byte moved or any chunk was released.
  bool assist();
  // What one assist() moves at most (plus what its last send/recv took beyond it): NCCL's proxy thread
  // serves every connection of the GPU, so a call must not copy whole socket buffers (several MiB,
  // milliseconds) while other connections wait; at ~5 GB/s this is ~0.1 ms per call.
  // A receive reads no more than what is left of it; a send may take one send() beyond it.
  static constexpr size_t kAssistBytesPerCall = 512 * 1024;
  void set_assist_budget(size_t bytes) { assist_budget_ = bytes; }  // tests; before the worker starts

 private:
  void run();
  bool serve_all();  // serves every lane once; fills want_ / polled_ with the lanes that would block
  // `budget` (assist() only; null = none): bytes this call may still move; serve stops once it is spent.
  bool serve(Lane* lane, std::vector<pollfd>& want, std::vector<Lane*>& polled, size_t* budget = nullptr);
  ssize_t send_some(Lane* lane, Task* t);
  bool retire(Lane* lane, Task* t);  // false: no room to park it yet
  bool reap(Lane* lane);             // reads completions, counts released chunks down
  bool stopped();                    // this worker's lanes are done with: the connection failed
  void check_hangup(Lane* lane, short revents);
  void check_hangups();  // check_hangup for every lane of the last poll of want_
  std::vector<Lane*> lanes_;
  bool sending_;
  ErrorState* error_;
  std::string peer_;
  int timeout_s_;
  ZeroCopyShared* zc_;
  std::vector<pollfd> want_;         // the lanes to poll (and, in run(), wake_fd_ last)
  std::vector<Lane*> polled_;        // the lane of each poll entry but wake_fd_
  std::vector<pollfd> assist_want_;  // assist()'s would-block lanes (the helper polls its own)
  std::vector<Lane*> assist_polled_;
  // Held by whichever thread serves the lanes (the helper, or the proxy in assist()): the rings'
  // consumer side, the zero-copy state and dead_ are touched only under it.
  std::mutex serving_;
  size_t assist_budget_ = kAssistBytesPerCall;
  Fd wake_fd_;  // eventfd
  std::atomic<bool> stop_{false};
  bool dead_ = false;
  std::thread thread_;
};

}  // namespace railscope::net::tcp
