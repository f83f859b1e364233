// SPDX-License-Identifier: Apache-2.0
// The receiving end of a verbs connection: what both protocols share — the receive requests handed to
// NCCL, posting a zero-length receive, reporting a finished receive, the GPUDirect flush — and the
// protocol agreed in the handshake, chosen once per connection: receiver-driven (receiver_driven.h) or,
// between two host-memory ends, eager (eager_protocol.h). The protocol object does everything per
// message, reached through the comm's receiver (protocol_receiver, below) and its slots' tester.
#pragma once

#include <algorithm>
#include <climits>
#include <memory>

#include "plugin/net/verbs/connection.h"

namespace railscope::net::verbs {

class VerbsRecvComm;
class GdrFlush;  // gpu/gdr_flush_qp.h

// One irecv (up to kMaxRecvs buffers) as NCCL sees it. What a protocol tracks per buffer beyond this
// lives in the protocol, indexed like the slot.
struct RecvSlot : Request {
  // Its tester (transport.h) is its protocol's, set by irecv.
  VerbsRecvComm* comm = nullptr;
  uint32_t index = 0;  // in comm->slots() (index_of): no division by the slot's size on the data path
  bool in_use = false;
  int n = 0;
  size_t sizes[kMaxRecvs] = {};               // capacities
  size_t got[kMaxRecvs] = {};                 // bytes received
  void* phandles[kMaxRecvs] = {};             // NCCL's parent handles of the buffers' QP events
  Connection::Clock::time_point posted_at{};  // when stats_on() (the latency histogram only)
};

// What one protocol does on the receiving end. Each call runs on the thread NCCL drives the comm from.
class RecvProtocol {
 public:
  virtual ~RecvProtocol() = default;
  // Registers what the peer writes into and what this side stages (after the lanes are open).
  virtual Status prepare() = 0;
  // What the peer writes into: its address and rkeys (one per lane), sent in the handshake's REPLY.
  virtual uint64_t advertised_addr() const = 0;
  virtual std::vector<uint32_t> advertised_rkeys() const = 0;
  // Once the QPs are connected, before the READY message.
  virtual Status start() { return Status::success(); }
  // irecv and test() are not virtual here: prepare() sets the comm's receiver
  // (protocol_receiver<Protocol>), and each slot gets its protocol's tester.
  virtual Status on_completion(const ibv_wc& wc) = 0;
  // Before close: tell the sender what it needs to know (bounded wait).
  virtual void close() {}
  // Failover (Connection::on_port_lost, poll_notices): nothing where the protocol does not fail over.
  virtual bool on_port_lost(size_t /*lane*/) { return false; }
  virtual Status poll_notices() { return Status::success(); }
};

class VerbsRecvComm final : public RecvComm, public Connection {
 public:
  VerbsRecvComm();
  ~VerbsRecvComm() override;

  // The protocol agreed in the handshake: eager messages up to eager_max bytes, receiver-driven when
  // 0. Called once, after open_lanes; then prepare() registers what it needs.
  Status choose_protocol(uint32_t limit);
  uint32_t eager_max() const { return eager_max_; }
  Status prepare() { return protocol_->prepare(); }
  uint64_t advertised_addr() const { return protocol_->advertised_addr(); }
  std::vector<uint32_t> advertised_rkeys() const { return protocol_->advertised_rkeys(); }
  Status start() { return protocol_->start(); }

  RecvProtocol* protocol() const { return protocol_.get(); }
  void close() {
    if (protocol_) protocol_->close();
  }
  // Called by a protocol's prepare(): NCCL's irecv goes straight to that protocol (protocol_receiver).
  void set_receiver(RecvFn fn) { receiver = fn; }
  // Its flusher (transport.h FlushFn): GdrFlush::iflush (gdr_flush_qp.h: loopback RDMA reads, made
  // at the first iflush, so a comm that never flushes holds none), its failure logged.
  static ncclResult_t flush_received(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out);

  // Shared by both protocols.
  std::array<RecvSlot, kFifoDepth>& slots() { return slots_; }
  size_t index_of(const RecvSlot& r) const { return r.index; }
  // The QP events' request slot of buffer i of r.
  size_t event_slot(const RecvSlot& r, int i) const {
    return index_of(r) * kMaxRecvs + static_cast<size_t>(i);
  }
  // internal.bad_argument when a buffer with bytes has no memory handle.
  static Status check_buffers(std::span<const RecvBuffer> bufs);
  // A tester's answer to a test() of a receive already reported done (NCCL misused the API).
  static ncclResult_t finished_receive();
  // One zero-length receive on a QP.
  Status post_recv(const QpLane& ql, uint64_t wr_id);
  // A finished receive reported (sizes from got[]) and its slot freed (the protocols' testers).
  inline void complete(RecvSlot* r, int* done, int* sizes);

 protected:
  Status on_completion(const ibv_wc& wc) override { return protocol_->on_completion(wc); }
  bool on_port_lost(size_t lane) override { return protocol_->on_port_lost(lane); }
  Status poll_notices() override { return protocol_->poll_notices(); }
  void profile_in_flight_failure() override {
    for (auto& r : slots_)
      if (r.in_use)
        for (int i = 0; i < r.n; ++i)
          if (profiling(event_slot(r, i))) profile_failure(event_slot(r, i), r.phandles[i], r.sizes[i]);
  }

 private:
  std::unique_ptr<RecvProtocol> protocol_;
  uint32_t eager_max_ = 0;
  std::array<RecvSlot, kFifoDepth> slots_{};
  std::unique_ptr<GdrFlush> flush_;
};

inline void VerbsRecvComm::complete(RecvSlot* r, int* done, int* sizes) {
  uint64_t total = 0;
  for (int i = 0; i < r->n; ++i) {
    if (sizes != nullptr) sizes[i] = static_cast<int>(std::min<size_t>(r->got[i], INT_MAX));
    total += r->got[i];
    profile_stop(event_slot(*r, i));
  }
  const auto us = stats_on()
                      ? std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - r->posted_at)
                      : std::chrono::microseconds::zero();
  stats().completed(total, static_cast<uint64_t>(us.count()));
  r->in_use = false;
  *done = 1;
}

// The receiver (transport.h RecvFn) of a connection whose protocol is Protocol, as protocol_sender
// (send_comm.h) is for isend.
template <class Protocol>
ncclResult_t protocol_receiver(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out) {
  auto* c = static_cast<VerbsRecvComm*>(comm);
  const Status st = static_cast<Protocol*>(c->protocol())->irecv(bufs, out);
  return reported_result("irecv", st);
}

}  // namespace railscope::net::verbs
