// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/lanes.h"

#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace railscope::net::tcp {

void ErrorState::set(const Status& st) {
  std::lock_guard lock(mutex_);
  if (failed_.load(std::memory_order_relaxed)) return;
  status_ = st;
  failed_.store(true, std::memory_order_release);
}

Status ErrorState::get() const {
  std::lock_guard lock(mutex_);
  return status_;
}

LaneWorker::LaneWorker(std::vector<Lane*> lanes, bool sending, ErrorState* error, std::string peer,
                       int timeout_s, ZeroCopyShared* zc)
    : lanes_(std::move(lanes)),
      sending_(sending),
      error_(error),
      peer_(std::move(peer)),
      timeout_s_(timeout_s),
      zc_(zc) {
  want_.reserve(lanes_.size() + 1);
  polled_.reserve(lanes_.size());
  assist_want_.reserve(lanes_.size());
  assist_polled_.reserve(lanes_.size());
}

LaneWorker::~LaneWorker() { stop(); }

Status LaneWorker::start(const char* thread_name) {
  wake_fd_ = Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd_)
    return Status::fail(ncclSystemError, "internal.unknown_diagnosis",
                        fmt::format("eventfd failed: {}", std::strerror(errno)));
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    return Status::fail(ncclSystemError, "internal.unknown_diagnosis",
                        fmt::format("cannot start a TCP helper thread: {}", e.what()));
  }
  pthread_setname_np(thread_.native_handle(), thread_name);
  return Status::success();
}

void LaneWorker::wake() {
  uint64_t one = 1;
  ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
  (void)n;  // EAGAIN: the counter is already non-zero, the thread wakes anyway
}

void LaneWorker::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  wake();
  thread_.join();
}

// One send() of the rest of a chunk: MSG_ZEROCOPY while the connection uses it and the rest is
// large enough, a copy otherwise (and for the rest of a chunk whose zero-copy send got ENOBUFS: the
// kernel's optmem or locked-memory limit).
ssize_t LaneWorker::send_some(Lane* lane, Task* t) {
  const int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
  size_t left = t->len - t->done;
  LaneZeroCopy* z = lane->zc.get();
  if (z != nullptr && !t->copy_only && left >= zc_->min_bytes &&
      zc_->active.load(std::memory_order_relaxed) && z->ids.can_send()) {
    ssize_t n = ::send(lane->fd.get(), t->ptr + t->done, left, flags | MSG_ZEROCOPY);
    if (n > 0) {
      t->zc_last = z->ids.take();
      t->zc_used = true;
      ZeroCopyShared::add(zc_->sends, 1);
      ZeroCopyShared::add(zc_->bytes, static_cast<uint64_t>(n));
      return n;
    }
    if (n == 0 || errno != ENOBUFS) return n;
    t->copy_only = true;
    ZeroCopyShared::add(zc_->enobufs, 1);
  }
  return ::send(lane->fd.get(), t->ptr + t->done, left, flags);
}

// A chunk whose bytes are all with the kernel: done now, or parked until the kernel releases the
// pages of its zero-copy sends.
bool LaneWorker::retire(Lane* lane, Task* t) {
  LaneZeroCopy* z = lane->zc.get();
  if (z == nullptr || !t->zc_used || z->ids.released(t->zc_last)) {
    t->pending->fetch_sub(1, std::memory_order_acq_rel);
    return true;
  }
  if (z->count == z->parked.size()) return false;  // cannot happen: the request pool bounds chunks in flight
  z->parked[(z->head + z->count) % z->parked.size()] = *t;
  ++z->count;
  return true;
}

bool LaneWorker::reap(Lane* lane) {
  LaneZeroCopy* z = lane->zc.get();
  if (z == nullptr || !z->ids.outstanding()) return false;
  bool drained = false;
  if (Status st = z->ids.drain(lane->fd.get(), zc_, peer_, &drained); !st.ok()) {
    error_->set(st);
    dead_ = true;
    return false;
  }
  bool moved = false;
  while (z->count > 0 && z->ids.released(z->parked[z->head].zc_last)) {
    z->parked[z->head].pending->fetch_sub(1, std::memory_order_acq_rel);
    z->head = static_cast<uint32_t>((z->head + 1) % z->parked.size());
    --z->count;
    moved = true;
  }
  return moved;
}

// A connection that failed (on any lane, or on the control stream) moves no more bytes: its requests
// fail, and another lane's socket may still hold data that would otherwise be read into a buffer whose
// receive already failed.
bool LaneWorker::stopped() {
  if (!dead_ && error_->failed()) dead_ = true;
  return dead_;
}

// Moves bytes for the lane's queued tasks until the socket would block (then asks to poll it) or
// the queue is empty. Returns whether any byte moved or any chunk was released.
bool LaneWorker::serve(Lane* lane, std::vector<pollfd>& want, std::vector<Lane*>& polled, size_t* budget) {
  if (stopped()) return false;
  bool moved = reap(lane);
  if (dead_) return moved;
  while (Task* t = lane->ring.front()) {
    if (budget != nullptr && *budget == 0) return moved;  // assist(): this call's share is moved
    if (t->done == t->len) {
      if (!retire(lane, t)) break;
      lane->ring.pop();
      moved = true;
      continue;
    }
    const size_t want_bytes = budget != nullptr ? std::min(t->len - t->done, *budget) : t->len - t->done;
    ssize_t n =
        sending_ ? send_some(lane, t) : ::recv(lane->fd.get(), t->ptr + t->done, want_bytes, MSG_DONTWAIT);
    if (n > 0) {
      moved = true;
      t->done += static_cast<size_t>(n);
      if (budget != nullptr) *budget -= std::min(*budget, static_cast<size_t>(n));
      continue;
    }
    int err = errno;
    if (n < 0 && err == EINTR) continue;
    if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
      want.push_back(pollfd{lane->fd.get(), static_cast<short>(sending_ ? POLLOUT : POLLIN), 0});
      polled.push_back(lane);
      return moved;
    }
    error_->set(io_failure(sending_ ? "send" : "recv", n, err, peer_, timeout_s_));
    dead_ = true;
    return moved;
  }
  // Nothing to send, chunks waiting for their pages: the error queue raises POLLERR.
  if (lane->zc && lane->zc->count > 0 && !dead_) {
    want.push_back(pollfd{lane->fd.get(), 0, 0});
    polled.push_back(lane);
  }
  return moved;
}

// POLLERR/POLLHUP on a zero-copy lane with nothing on its error queue: a socket error (or a closed
// socket) that no send() will report, since none is pending.
void LaneWorker::check_hangup(Lane* lane, short revents) {
  if (lane->zc == nullptr || (revents & (POLLERR | POLLHUP)) == 0) return;
  if (reap(lane) || dead_) return;
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(lane->fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0) {
    error_->set(io_failure("send", -1, err, peer_, timeout_s_));
    dead_ = true;
  } else if ((revents & POLLHUP) != 0) {
    error_->set(io_failure("send", 0, 0, peer_, timeout_s_));
    dead_ = true;
  }
}

bool LaneWorker::serve_all() {
  want_.clear();
  polled_.clear();
  bool moved = false;
  if (!dead_)
    for (Lane* lane : lanes_) moved = serve(lane, want_, polled_) || moved;
  return moved;
}

// After a poll of want_: each polled zero-copy lane's revents.
void LaneWorker::check_hangups() {
  for (size_t i = 0; i < polled_.size(); ++i) check_hangup(polled_[i], want_[i].revents);
}

bool LaneWorker::pass() {
  bool moved = serve_all();
  if (moved || zc_ == nullptr || want_.empty()) return moved;
  // Zero-copy lanes with chunks parked: a socket error that no send() will report shows only in
  // poll (check_hangup). Copy lanes report every error from send()/recv() themselves.
  if (::poll(want_.data(), want_.size(), 0) > 0) check_hangups();
  return false;
}

// NCCL's proxy thread calls test() in a loop with sched_yield() between passes; with helper threads
// that spinning took CPU time the helpers needed (2 vCPUs: 64 MiB messages at 0.81x iperf3 -P 4 -l 1M
// against 1.27x when the same loop sleeps instead). Serving the lanes from those calls turns the
// spinning into moved bytes; the helper keeps the lanes whenever it is awake.
bool LaneWorker::assist() {
  std::unique_lock lock(serving_, std::try_to_lock);
  if (!lock.owns_lock() || dead_) return false;
  assist_want_.clear();
  assist_polled_.clear();
  bool moved = false;
  size_t budget = assist_budget_;
  for (Lane* lane : lanes_) moved = serve(lane, assist_want_, assist_polled_, &budget) || moved;
  return moved;
}

void LaneWorker::run() {
  while (!stop_.load(std::memory_order_acquire)) {
    bool moved = false;
    {
      std::lock_guard lock(serving_);
      moved = serve_all();
    }
    if (moved) continue;
    want_.push_back(pollfd{wake_fd_.get(), POLLIN, 0});
    int rc = ::poll(want_.data(), want_.size(), 1000);
    if (rc > 0 && (want_.back().revents & POLLIN) != 0) {
      uint64_t v = 0;
      ssize_t n = ::read(wake_fd_.get(), &v, sizeof v);
      (void)n;
    }
    if (rc > 0 && zc_ != nullptr) {
      std::lock_guard lock(serving_);
      check_hangups();
    }
  }
}

}  // namespace railscope::net::tcp
