// The receiving side of a verbs connection. irecv posts one zero-length receive on every QP (each QP
// ends every message with an RDMA write with immediate) and advertises the buffers by writing a
// clear-to-send slot into the sender's FIFO (inline when it fits, signalled every kCtsSignalEvery).
// A receive completes when every QP delivered its immediate; sizes come from the immediate (one
// buffer) or from the sizes record the sender wrote into this side's sizes area (grouped receives).
// Between two host-memory ends the eager protocol (eager.h, recv_comm_eager.cpp) replaces this.
#pragma once

#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/eager.h"
#include "plugin/net/verbs/gdr_flush_qp.h"

namespace railscope::net::verbs {

class VerbsRecvComm;

struct RecvSlot : Request {
  RecvSlot() { kind = kRecvRequest; }
  VerbsRecvComm* comm = nullptr;
  bool in_use = false;
  int n = 0;
  int pending = 0;
  uint32_t imm = 0;
  size_t sizes[kMaxRecvs] = {};
  void* events[kMaxRecvs] = {};
  ncclProfilerNetIbDescr_v1_t descr[kMaxRecvs] = {};
  Connection::Clock::time_point posted_at{};
  // Eager protocol only: per buffer where it stands, matched by tag in posting order.
  enum : uint8_t { kWaiting = 0, kIncoming = 1, kDone = 2 };
  uint64_t seq = 0;  // 1, 2, 3 ... receives posted on the connection
  int unfinished = 0;
  void* data[kMaxRecvs] = {};
  int tags[kMaxRecvs] = {};
  VerbsMr* mrs[kMaxRecvs] = {};
  size_t got[kMaxRecvs] = {};
  int parts[kMaxRecvs] = {};  // data parts (one per QP) still to arrive
  uint8_t state[kMaxRecvs] = {};
};

class VerbsRecvComm final : public RecvComm, public Connection {
 public:
  static constexpr uint64_t kCtsSignalEvery = 16;

  // The eager limit agreed in the handshake (0 = receiver-driven protocol); set before prepare().
  uint32_t eager_max = 0;
  // Allocates and registers what the peer writes into (the sizes area, or the eager ring) and the
  // staging of what this side writes (after open_lanes).
  Status prepare();
  // Eager protocol: the standing receives every QP needs (after create_qps).
  Status post_receive_pool();
  // What the peer writes into: the sizes area or the eager ring.
  uint64_t advertised_addr() const;
  std::vector<uint32_t> advertised_rkeys() const;

  Status irecv(std::span<const RecvBuffer> bufs, Request** out);
  Status test(RecvSlot* slot, int* done, int* sizes);
  GdrFlush flush;  // iflush: loopback RDMA reads (gdr_flush_qp.h)
  bool owns(const Request* r) const {
    auto* s = static_cast<const RecvSlot*>(r);
    return s >= slots_.data() && s < slots_.data() + slots_.size();
  }

 protected:
  Status on_completion(const ibv_wc& wc) override;

 private:
  // Both protocols: one zero-length receive on a QP; a finished receive reported (sizes from got[]).
  Status post_recv(const QpLane& ql, uint64_t wr_id);
  void complete(RecvSlot* r, int* done, int* sizes);
  // recv_comm_eager.cpp
  Status eager_irecv(std::span<const RecvBuffer> bufs, Request** out);
  Status eager_test(RecvSlot* slot, int* done, int* sizes);
  Status eager_completion(const ibv_wc& wc);
  Status on_ring_message(uint32_t imm);
  Status on_data_part(uint32_t target);
  bool find_waiting(int tag, RecvSlot** slot, int* buffer);
  Status deliver(RecvSlot& r, int buffer, uint64_t seq);
  Status post_control(const void* src, uint32_t bytes, uint64_t remote_offset);
  Status return_credits();
  Status repost_receives();
  const eager::Header& header(uint64_t seq) const;
  RegisteredBuffer ring_;     // eager ring, written by the peer
  RegisteredBuffer replies_;  // ClearToSend[kMaxTargets] + credit word, source of control writes
  uint64_t ring_arrived_ = 0;
  uint64_t credits_returned_ = 0;
  uint64_t match_from_ = 0;  // receives before this one have every buffer matched
  uint64_t control_posted_ = 0;
  eager::ReleasedPrefix released_;
  std::array<uint64_t, eager::kRingSlots> unexpected_{};  // ring messages no receive matched yet, in order
  size_t nunexpected_ = 0;
  // Per QP (at most kMaxQpsPerConn x kMaxDevsPerEnd): standing receives consumed, not yet given back.
  std::array<int, kMaxQpsPerConn * kMaxDevsPerEnd> reposts_due_{};
  int reposts_pending_ = 0;  // their sum

  RegisteredBuffer sizes_;  // SizesSlot[kFifoDepth], written by the peer
  RegisteredBuffer cts_;    // CtsSlot[kFifoDepth], source of CTS writes
  std::array<RecvSlot, kFifoDepth> slots_{};
  uint64_t tail_ = 0;  // receives posted so far
};

}  // namespace railscope::net::verbs
