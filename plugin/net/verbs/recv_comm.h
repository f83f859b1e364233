// The receiving side of a verbs connection. irecv posts one zero-length receive on every QP (each QP
// ends every message with an RDMA write with immediate) and advertises the buffers by writing a
// clear-to-send slot into the sender's FIFO (inline when it fits, signalled every kCtsSignalEvery).
// A receive completes when every QP delivered its immediate; sizes come from the immediate (one
// buffer) or from the sizes record the sender wrote into this side's sizes area (grouped receives).
#pragma once

#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/gdr_flush_qp.h"

namespace railscope::net::verbs {

class VerbsRecvComm;

struct RecvSlot : Request {
  VerbsRecvComm* comm = nullptr;
  bool in_use = false;
  int n = 0;
  int pending = 0;
  uint32_t imm = 0;
  size_t sizes[kMaxRecvs] = {};
  void* events[kMaxRecvs] = {};
  ncclProfilerNetIbDescr_v1_t descr[kMaxRecvs] = {};
  Connection::Clock::time_point posted_at{};
};

class VerbsRecvComm final : public RecvComm, public Connection {
 public:
  static constexpr uint64_t kCtsSignalEvery = 16;

  // Allocates and registers the sizes area and the CTS staging buffer (after open_lanes).
  Status prepare();
  uint64_t sizes_addr() const { return reinterpret_cast<uint64_t>(sizes_.get()); }
  std::vector<uint32_t> sizes_rkeys() const;

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
  RegisteredBuffer sizes_;  // SizesSlot[kFifoDepth], written by the peer
  RegisteredBuffer cts_;    // CtsSlot[kFifoDepth], source of CTS writes
  std::array<RecvSlot, kFifoDepth> slots_{};
  uint64_t tail_ = 0;  // receives posted so far
};

}  // namespace railscope::net::verbs
