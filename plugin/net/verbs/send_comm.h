// SPDX-License-Identifier: Apache-2.0
// The sending end of a verbs connection: what both protocols share — the region the receiver writes
// into, the request pool, how a finished send is reported and when a posted one has stalled — and the
// protocol agreed in the handshake, chosen once per connection: receiver-driven (receiver_driven.h) or,
// between two host-memory ends, eager (eager_protocol.h). The protocol object does everything per
// message, reached through the comm's sender (protocol_sender, below) and its requests' tester.
#pragma once

#include <algorithm>
#include <climits>
#include <memory>

#include "plugin/net/common/request_pool.h"
#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/eager/eager.h"

namespace railscope::net::verbs {

class VerbsSendComm;

// Part of a `size`-byte message carried by QP q of nqps: equal parts aligned to 128 bytes (keeps
// NCCL's LL/LL128 flag lines whole within one QP's part); trailing QPs may carry nothing.
inline void chunk_of(size_t size, size_t q, size_t nqps, size_t* off, size_t* len) {
  constexpr size_t kSplitAlign = 128;
  size_t per = (size + nqps - 1) / nqps;
  per = (per + kSplitAlign - 1) / kSplitAlign * kSplitAlign;
  *off = q * per;
  *len = *off < size ? std::min(per, size - *off) : 0;
  if (*off > size) *off = size;
}

struct SendReq : Request {
  // Its tester (transport.h) is its protocol's, set by isend.
  VerbsSendComm* comm = nullptr;
  size_t size = 0;
  void* data = nullptr;
  VerbsMr* mr = nullptr;
  void* phandle = nullptr;  // NCCL's parent handle of its QP events (Connection::profile_start)
  void start(VerbsSendComm* c, void* d, size_t n, VerbsMr* m) {
    comm = c;
    data = d;
    size = n;
    mr = m;
    phandle = nullptr;
  }
  // Receiver-driven protocol: the clear-to-send slot the request was matched to.
  int slot = 0;
  // Eager protocol.
  bool eager = false;    // the payload went whole into the ring: done once posted
  uint64_t rts_seq = 0;  // request-to-send: ring sequence its clear-to-send will echo
  uint32_t mailbox = 0;  // request-to-send: the mailbox entry its clear-to-send is written to
  int pending = 0;       // data parts still to complete
  bool posted = false;   // data parts posted
  // Eager, data posted and not yet reported done: what its clear-to-send said, for a failover's
  // replays (docs/failover.md).
  bool data_live = false;
  uint32_t target = 0;   // the receive target its parts' immediates name
  uint32_t cts_seq = 0;  // low 32 bits of its clear-to-send's seq
  uint64_t dest = 0;     // the receive buffer
  uint32_t dest_rkey[kMaxDevsPerEnd] = {};
  // Read before its first part is posted: soft-RoCE transmits much of a part inside ibv_post_send, and
  // a clock read after the last post would leave that out of the first QP's time, rating its port
  // (fabric.rail_skew) many times its sibling.
  Connection::Clock::time_point posted_at{};
  // Striped connections: when each lane's last data part completed (Connection::record_parts).
  Connection::Clock::time_point lane_done[kMaxDevsPerEnd]{};
};

// What one protocol does on the sending end. Each call runs on the thread NCCL drives the comm from.
class SendProtocol {
 public:
  virtual ~SendProtocol() = default;
  // Registers what the protocol stages locally (after the lanes are open).
  // Sets the comm's sender (protocol_sender<Protocol>): isend and test() are not virtual here, NCCL
  // calls each protocol's own (Protocol::isend through its sender, Protocol::test through its
  // requests' tester).
  virtual Status prepare() = 0;
  virtual Status on_completion(const ibv_wc& wc) = 0;
  // Before close: what was reported done but may still be in flight (bounded wait).
  virtual void drain() {}
  // Failover (Connection::on_port_lost, poll_notices): nothing where the protocol does not fail over.
  virtual bool on_port_lost(size_t /*lane*/) { return false; }
  virtual Status poll_notices() { return Status::success(); }
};

// Send requests per connection, from isend until test() reports them done. NCCL keeps at most
// NCCL_NET_MAX_REQUESTS (32) per comm, and NCCL's own IB transport has exactly that many; this pool has
// four times as many, so harnesses that post far ahead still run. A full pool answers "call again"
// (receiver-driven: 16 whole slots of 8 buffers matched, test bed send_window.h; eager: a caller that
// holds 128 sends untested, past the 64 ring messages and 32 large ones the protocol itself bounds).
// Each request is resident: 256 (one per buffer of all 32 clear-to-send slots) made a 36 KiB send comm.
inline constexpr size_t kSendRequests = 128;

class VerbsSendComm final : public SendComm, public Connection {
 public:
  VerbsSendComm() : Connection("send", kSendRequests) {}  // request slot = pool index
  // Allocates and registers the region the receiver writes into (after open_lanes), before the
  // protocol is agreed: where this end offers eager, the eager protocol's mailbox and credit word (the
  // receiver will almost always agree), else the receiver-driven protocol's clear-to-send FIFO.
  Status prepare();
  uint64_t region_addr() const { return reinterpret_cast<uint64_t>(region_.get()); }
  std::vector<uint32_t> region_rkeys() const;

  // The protocol agreed in the handshake: eager messages up to eager_max bytes, receiver-driven when
  // 0. Called once, after prepare(). Receiver-driven after an eager offer: the mailbox gives way to
  // the FIFO, whose address the sender's QPNS message carries (handshake.h).
  Status choose_protocol(uint32_t limit);
  uint32_t eager_max() const { return eager_max_; }

  SendProtocol* protocol() const { return protocol_.get(); }
  void drain() {
    if (protocol_) protocol_->drain();
  }
  // Called by a protocol's prepare(): NCCL's isend goes straight to that protocol (protocol_sender).
  void set_sender(SendFn fn) { sender = fn; }

  // Shared by both protocols: the send requests, and the region the peer writes into (the FIFO,
  // receiver-driven, or the mailbox and credit word, eager).
  RequestPool<SendReq, kSendRequests>& pool() { return pool_; }
  const RegisteredBuffer& region() const { return region_; }
  // A finished send reported and its request returned to the pool. `end`: when it was seen done (the
  // clock read of the test() that found it; a default time_point: not timed, as an eager ring message,
  // done when posted). `lane_done`: when each lane's parts completed, on a striped connection: its rate
  // is then accounted per port (record_parts) and its time taken from the last of them (callers pass
  // no end then, reading no clock).
  inline void finish(SendReq* req, Clock::time_point end, int* done, int* sizes,
                     const Clock::time_point* lane_done = nullptr);

 protected:
  Status on_completion(const ibv_wc& wc) override { return protocol_->on_completion(wc); }
  bool on_port_lost(size_t lane) override { return protocol_->on_port_lost(lane); }
  Status poll_notices() override { return protocol_->poll_notices(); }
  void profile_in_flight_failure() override {
    for (size_t i = 0; i < pool_.capacity(); ++i)
      if (profiling(i)) profile_failure(i, pool_.at(i).phandle, pool_.at(i).size);
  }

 private:
  std::unique_ptr<SendProtocol> protocol_;
  uint32_t eager_max_ = 0;
  RequestPool<SendReq, kSendRequests> pool_;
  RegisteredBuffer region_;
};

inline void VerbsSendComm::finish(SendReq* req, Clock::time_point end, int* done, int* sizes,
                                  const Clock::time_point* lane_done) {
  const bool timed = end != Clock::time_point{};
  Clock::duration elapsed = timed ? end - req->posted_at : Clock::duration::zero();
  // Striped: the send ended when its last part's completion was polled (the caller read no clock).
  if (lane_done != nullptr && striped()) {
    Clock::time_point last = req->posted_at;
    for (size_t l = 0; l < lanes().size() && l < kMaxDevsPerEnd; ++l) last = std::max(last, lane_done[l]);
    elapsed = last - req->posted_at;
  }
  *done = 1;
  if (sizes != nullptr) *sizes = static_cast<int>(std::min<size_t>(req->size, INT_MAX));
  stats().completed(req->size, static_cast<uint64_t>(
                                   std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count()));
  // The ports' rates (fabric.rail_skew): per lane when the parts were timed per lane.
  if (lane_done != nullptr && striped())
    record_parts(req->size, req->posted_at, lane_done);
  else if (timed)
    record_transfer(req->size, req->posted_at, end);
  profile_stop(pool_.index_of(req));
  pool_.put(req);
}

// The sender (transport.h SendFn) of a connection whose protocol is Protocol: the ABI adapter's isend
// calls it for the comm, with no engine lookup and no virtual dispatch (Protocol is final). Set by
// Protocol::prepare(), instantiated in the file that defines Protocol::isend, which is inlined into it.
template <class Protocol>
ncclResult_t protocol_sender(SendComm* comm, void* data, size_t size, int tag, MemHandle* mhandle,
                             void* phandle, Request** out) {
  auto* c = static_cast<VerbsSendComm*>(comm);
  const Status st = static_cast<Protocol*>(c->protocol())
                        ->isend(data, size, tag, static_cast<VerbsMr*>(mhandle), phandle, out);
  return reported_result("isend", st);
}

}  // namespace railscope::net::verbs
