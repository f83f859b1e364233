// SPDX-License-Identifier: Apache-2.0
// The receiving side of a TCP connection and its request lifecycle. irecv posts up to kMaxRecvs
// buffers (a grouped receive) from a fixed pool; the control socket is read only while some posted
// buffer waits for a message: each header is matched by tag to the oldest request's free buffers,
// checked against its size, and then either its bytes are read from the control socket (small
// messages) or its chunks are queued on the lanes. A request is done when every buffer has its
// message and all chunks have landed.
#pragma once

#include <array>
#include <atomic>
#include <span>

#include "plugin/net/common/request_pool.h"
#include "plugin/net/tcp/connection.h"
#include "plugin/net/tcp/profiler_events.h"

namespace railscope::net::tcp {

class TcpRecvComm;

struct TcpRecvSlot {
  std::byte* data = nullptr;
  size_t capacity = 0;
  int tag = 0;
  size_t size = 0;
  bool matched = false;  // a message has been assigned to it
};

struct TcpRecvReq : Request {
  TcpRecvComm* comm = nullptr;
  int n = 0;
  int nmatched = 0;
  std::array<TcpRecvSlot, kMaxRecvs> slots{};
  std::atomic<int> pending{0};
  bool in_use = false;
  TcpConnection::Clock::time_point posted;
  std::array<void*, kMaxRecvs> events{};  // NCCL profiler events, one per buffer
  std::array<SocketEventDescr, kMaxRecvs> descr{};
};

class TcpRecvComm : public RecvComm, public TcpConnection {
 public:
  // Its data path is set here: a TCP comm is handed to NCCL only once connected.
  TcpRecvComm(Fd ctrl, std::vector<Fd> data, ConnParams params)
      : TcpConnection(std::move(ctrl), std::move(data), std::move(params), false) {
    receiver = &TcpRecvComm::receive;
    flusher = &TcpRecvComm::flush;
  }
  Status irecv(std::span<const RecvBuffer> buffers, Request** out);
  // Its receiver (transport.h RecvFn): irecv, its failure logged.
  static ncclResult_t receive(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out);
  // Its flusher (transport.h FlushFn): host memory, whose received bytes are visible once test()
  // reported them done; never a request.
  static ncclResult_t flush(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out);
  Status test(TcpRecvReq* r, int* done, int* sizes);
  static ncclResult_t test_request(Request* r, int* done, int* sizes);  // TcpRecvReq's tester (transport.h)
  bool owns(const TcpRecvReq* r) const { return pool_.owns(r); }

 private:
  Status progress_ctrl();
  Status on_header(TcpRecvReq* r, const MsgHeader& h);
  void slot_filled(TcpRecvReq* r);
  RequestPool<TcpRecvReq, kPoolSize> pool_;
  std::array<TcpRecvReq*, kPoolSize> unmatched_{};  // requests still waiting for messages, in order
  size_t head_ = 0, count_ = 0;
  uint64_t seq_ = 0;
  // The control message being read.
  std::array<std::byte, kHeaderSize> header_{};
  size_t header_got_ = 0;
  TcpRecvSlot* inline_slot_ = nullptr;  // reading a small message's bytes into this slot
  TcpRecvReq* inline_req_ = nullptr;
  size_t inline_got_ = 0;
};

}  // namespace railscope::net::tcp
