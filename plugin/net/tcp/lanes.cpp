#include "plugin/net/tcp/lanes.h"

#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

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
                       int timeout_s)
    : lanes_(std::move(lanes)),
      sending_(sending),
      error_(error),
      peer_(std::move(peer)),
      timeout_s_(timeout_s) {}

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

// Moves bytes for the lane's queued tasks until the socket would block (then asks to poll it) or
// the queue is empty. Returns whether any byte moved.
bool LaneWorker::serve(Lane* lane, std::vector<pollfd>* want) {
  bool moved = false;
  while (Task* t = lane->ring.front()) {
    ssize_t n = sending_
                    ? ::send(lane->fd.get(), t->ptr + t->done, t->len - t->done, MSG_DONTWAIT | MSG_NOSIGNAL)
                    : ::recv(lane->fd.get(), t->ptr + t->done, t->len - t->done, MSG_DONTWAIT);
    if (n > 0) {
      moved = true;
      t->done += static_cast<size_t>(n);
      if (t->done == t->len) {
        t->pending->fetch_sub(1, std::memory_order_acq_rel);
        lane->ring.pop();
      }
      continue;
    }
    int err = errno;
    if (n < 0 && err == EINTR) continue;
    if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
      want->push_back(pollfd{lane->fd.get(), static_cast<short>(sending_ ? POLLOUT : POLLIN), 0});
      return moved;
    }
    error_->set(io_failure(sending_ ? "send" : "recv", n, err, peer_, timeout_s_));
    dead_ = true;
    return moved;
  }
  return moved;
}

void LaneWorker::run() {
  std::vector<pollfd> want;
  want.reserve(lanes_.size() + 1);
  while (!stop_.load(std::memory_order_acquire)) {
    want.clear();
    bool moved = false;
    if (!dead_)
      for (Lane* lane : lanes_) moved = serve(lane, &want) || moved;
    if (moved) continue;
    want.push_back(pollfd{wake_fd_.get(), POLLIN, 0});
    int rc = ::poll(want.data(), want.size(), 1000);
    if (rc > 0 && (want.back().revents & POLLIN) != 0) {
      uint64_t v = 0;
      ssize_t n = ::read(wake_fd_.get(), &v, sizeof v);
      (void)n;
    }
  }
}

}  // namespace railscope::net::tcp
