// SPDX-License-Identifier: Apache-2.0
#include "session.h"

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "plan_checks.h"
#include "protocol.h"

namespace railscope::netbench {

void check(ncclResult_t r, const char* call) {
  if (r != ncclSuccess)
    throw BenchError(std::string("plugin call ") + call + " failed: " + result_name(r) + " (" +
                     std::to_string(static_cast<int>(r)) + ")");
}

Region::Region(NetApi* api, void* comm, size_t bytes) : api_(api), comm_(comm), bytes_(bytes) {
  // Bounded before rounding up to whole pages, which would wrap for sizes near 2^64.
  if (bytes > kMaxBufferBytes)
    throw BenchError("a " + std::to_string(bytes) + "-byte buffer is over netbench's limit of " +
                     std::to_string(kMaxBufferBytes) + " bytes per direction");
  const size_t alloc = (bytes + 4095) / 4096 * 4096;
  data_ = static_cast<unsigned char*>(std::aligned_alloc(4096, alloc == 0 ? 4096 : alloc));
  if (data_ == nullptr)
    throw BenchError("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  std::memset(data_, 0, bytes);
  const ncclResult_t r = api_->reg_mr(comm_, data_, bytes_, &mh_);
  if (r != ncclSuccess) {
    std::free(data_);
    data_ = nullptr;
    throw BenchError("plugin call regMr(" + std::to_string(bytes) + " bytes, host) failed: " +
                     result_name(r) + " (" + std::to_string(static_cast<int>(r)) + ")");
  }
}

Region::Region(Region&& o) noexcept { *this = std::move(o); }
Region& Region::operator=(Region&& o) noexcept {
  if (this != &o) {
    reset();
    api_ = std::exchange(o.api_, nullptr);
    comm_ = std::exchange(o.comm_, nullptr);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    mh_ = std::exchange(o.mh_, nullptr);
  }
  return *this;
}
Region::~Region() { reset(); }

void Region::reset() {
  if (mh_ != nullptr && api_ != nullptr) {
    const ncclResult_t r = api_->dereg_mr(comm_, mh_);
    if (r != ncclSuccess) std::fprintf(stderr, "netbench: deregMr failed: %s\n", result_name(r));
  }
  std::free(data_);
  data_ = nullptr;
  mh_ = nullptr;
  bytes_ = 0;
}

Session::~Session() { close(); }

void Session::connect(OobSocket& oob) {
  unsigned char handle[kHandleBytes] = {};
  check(api_.listen(dev_, handle, &listen_comm_), "listen");
  if (listen_comm_ == nullptr) throw BenchError("plugin listen returned success but no listen comm");
  oob.send(kMsgHandle, {handle, sizeof handle});
  const auto peer = oob.receive(kMsgHandle, timeout_);
  if (peer.size() != kHandleBytes)
    throw BenchError("peer's connection handle has " + std::to_string(peer.size()) + " bytes, expected 128");
  unsigned char peer_handle[kHandleBytes];
  std::memcpy(peer_handle, peer.data(), kHandleBytes);

  // NCCL's proxy keeps calling connect/accept with the same arguments until they return a comm.
  const auto deadline = Clock::now() + timeout_;
  unsigned polls = 0;
  bool peer_connected = false;
  while (send_comm_ == nullptr || recv_comm_ == nullptr) {
    // The peer may have failed (its plugin refused the connection): it says so out of band.
    if ((++polls & 255) == 0 && oob.readable()) {
      auto [type, text] = oob.receive_any(timeout_);
      if (type == kMsgError) throw BenchError("the peer failed: " + peer_text(text.data(), text.size()));
      if (type != kMsgConnected) throw BenchError("unexpected out-of-band message while connecting");
      peer_connected = true;
    }
    bool progressed = false;
    if (send_comm_ == nullptr) {
      check(api_.connect(dev_, peer_handle, &send_comm_), "connect");
      progressed |= send_comm_ != nullptr;
    }
    if (recv_comm_ == nullptr) {
      check(api_.accept(listen_comm_, &recv_comm_), "accept");
      progressed |= recv_comm_ != nullptr;
    }
    if (Clock::now() > deadline)
      throw BenchError(std::string("connection not established within ") + std::to_string(timeout_.count()) +
                       " s (" + (send_comm_ ? "accept" : "connect") + " kept returning no comm)");
    if (!progressed) sched_yield();
  }
  oob.send(kMsgConnected, {});
  if (!peer_connected) (void)oob.receive(kMsgConnected, timeout_);
}

void Session::register_regions(size_t bytes) {
  send_region_ = Region(&api_, send_comm_, bytes);
  recv_region_ = Region(&api_, recv_comm_, bytes);
}

void Session::close() {
  send_region_ = Region();
  recv_region_ = Region();
  auto report = [](ncclResult_t r, const char* what) {
    if (r != ncclSuccess) std::fprintf(stderr, "netbench: %s failed: %s\n", what, result_name(r));
  };
  if (send_comm_) report(api_.close_send(std::exchange(send_comm_, nullptr)), "closeSend");
  if (recv_comm_) report(api_.close_recv(std::exchange(recv_comm_, nullptr)), "closeRecv");
  if (listen_comm_) report(api_.close_listen(std::exchange(listen_comm_, nullptr)), "closeListen");
}

}  // namespace railscope::netbench
