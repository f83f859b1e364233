// The sending side of a verbs connection. The receiver advertises each posted receive (address,
// rkeys, size, tag) by writing a clear-to-send slot into this side's FIFO; isend matches a send to an
// entry of the oldest slot by tag and, when every entry of the slot is matched, posts RDMA writes
// (large messages split across the connection's QPs) ending on each QP with a signalled RDMA write
// with immediate that completes the receive. Only that last work request is signalled.
#pragma once

#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/request_pool.h"

namespace railscope::net::verbs {

class VerbsSendComm;

struct SendReq : Request {
  VerbsSendComm* comm = nullptr;
  int slot = 0;  // index into the slot array
  size_t size = 0;
  void* data = nullptr;
  VerbsMr* mr = nullptr;
  void* event = nullptr;  // profiler event handle
  ncclProfilerNetIbDescr_v1_t descr{};
};

struct SendSlot {
  uint64_t seq = 0;  // CTS sequence number this slot state belongs to (0 = never used)
  int nreqs = 0;
  int matched = 0;
  int live_reqs = 0;  // requests handed to NCCL and not yet reported done
  int pending = 0;    // signalled completions still expected
  bool posted = false;
  Connection::Clock::time_point posted_at{};
  CtsEntry cts[kMaxRecvs]{};
  SendReq* reqs[kMaxRecvs]{};
};

class VerbsSendComm final : public SendComm, public Connection {
 public:
  // Allocates and registers the FIFO and sizes staging (after open_lanes).
  Status prepare();
  uint64_t fifo_addr() const { return reinterpret_cast<uint64_t>(fifo_.get()); }
  std::vector<uint32_t> fifo_rkeys() const;

  Status isend(void* data, size_t size, int tag, VerbsMr* mr, void* phandle, Request** out);
  Status test(SendReq* req, int* done, int* sizes);
  bool owns(const Request* r) const { return pool_.owns(static_cast<const SendReq*>(r)); }

 protected:
  Status on_completion(const ibv_wc& wc) override;

 private:
  Status post(SendSlot& s, int slot_index);
  RegisteredBuffer fifo_;   // CtsSlot[kFifoDepth], written by the peer
  RegisteredBuffer sizes_;  // SizesSlot[kFifoDepth], source of the sizes record
  std::array<SendSlot, kFifoDepth> slots_{};
  RequestPool<SendReq, kFifoDepth * kMaxRecvs> pool_;
  uint64_t head_ = 0;  // slots fully matched so far
};

}  // namespace railscope::net::verbs
