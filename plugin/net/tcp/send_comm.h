// SPDX-License-Identifier: Apache-2.0
// The sending side of a TCP connection and its request lifecycle: isend takes a request from a
// fixed pool, writes the message header (and a small message's bytes) to the control socket and
// queues a large message's chunks on the lanes; test reports done once the control bytes are out
// and every chunk has been handed to the kernel (and, for MSG_ZEROCOPY chunks, released by it).
#pragma once

#include <array>
#include <atomic>

#include "plugin/net/common/request_pool.h"
#include "plugin/net/tcp/connection.h"
#include "plugin/net/tcp/profiler_events.h"

namespace railscope::net::tcp {

class TcpSendComm;

struct TcpSendReq : Request {
  TcpSendComm* comm = nullptr;
  std::byte* data = nullptr;
  size_t size = 0;
  std::array<std::byte, kHeaderSize> header{};
  size_t ctrl_total = 0;  // header + inline bytes
  size_t ctrl_done = 0;
  std::atomic<int> pending{0};  // chunks not yet handed to the kernel (or their pages not released)
  bool in_use = false;
  TcpConnection::Clock::time_point posted;
  void* event = nullptr;  // NCCL profiler event
  SocketEventDescr descr;
};

class TcpSendComm : public SendComm, public TcpConnection {
 public:
  // Its data path is set here: a TCP comm is handed to NCCL only once connected.
  TcpSendComm(Fd ctrl, std::vector<Fd> data, ConnParams params)
      : TcpConnection(std::move(ctrl), std::move(data), std::move(params), true) {
    sender = &TcpSendComm::send;
  }
  Status isend(void* data, size_t size, int tag, void* phandle, Request** out);
  // Its sender (transport.h SendFn): isend, its failure logged.
  static ncclResult_t send(SendComm* comm, void* data, size_t size, int tag, MemHandle* mhandle,
                           void* phandle, Request** out);
  Status test(TcpSendReq* r, int* done, int* sizes);
  static ncclResult_t test_request(Request* r, int* done, int* sizes);  // TcpSendReq's tester (transport.h)
  bool owns(const TcpSendReq* r) const { return pool_.owns(r); }

 private:
  Status flush_ctrl();
  RequestPool<TcpSendReq, kPoolSize> pool_;
  std::array<TcpSendReq*, kPoolSize> ctrl_queue_{};  // requests whose control bytes are not all out
  size_t ctrl_head_ = 0, ctrl_count_ = 0;
  uint64_t seq_ = 0;
};

}  // namespace railscope::net::tcp
