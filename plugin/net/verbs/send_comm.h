// The sending side of a verbs connection. The receiver advertises each posted receive (address,
// rkeys, size, tag) by writing a clear-to-send slot into this side's FIFO; isend matches a send to an
// entry of the oldest slot by tag and, when every entry of the slot is matched, posts RDMA writes
// (large messages split across the connection's QPs) ending on each QP with a signalled RDMA write
// with immediate that completes the receive. Only that last work request is signalled.
// Between two host-memory ends the eager protocol (eager.h, send_comm_eager.cpp) replaces this.
#pragma once

#include <algorithm>

#include "plugin/net/common/request_pool.h"
#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/eager.h"

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
  SendReq() { kind = kSendRequest; }
  VerbsSendComm* comm = nullptr;
  int slot = 0;  // index into the slot array
  size_t size = 0;
  void* data = nullptr;
  VerbsMr* mr = nullptr;
  void* event = nullptr;  // profiler event handle
  ncclProfilerNetIbDescr_v1_t descr{};
  void start(VerbsSendComm* c, void* d, size_t n, VerbsMr* m) {
    comm = c;
    data = d;
    size = n;
    mr = m;
    event = nullptr;
  }
  // Eager protocol only.
  bool eager = false;    // the payload went whole into the ring: done once posted
  uint64_t rts_seq = 0;  // request-to-send: ring sequence its clear-to-send will echo
  int pending = 0;       // data parts still to complete
  bool posted = false;   // data parts posted
  Connection::Clock::time_point posted_at{};
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

  // Eager protocol (eager.h): the limit agreed in the handshake (0 = receiver-driven protocol) and its
  // staging ring, allocated once the limit is known.
  uint32_t eager_max = 0;
  Status prepare_eager();

  Status isend(void* data, size_t size, int tag, VerbsMr* mr, void* phandle, Request** out);
  Status test(SendReq* req, int* done, int* sizes);
  // Before close: eager sends were reported done once posted, so wait (bounded) until the ring writes
  // still in flight have reached the receiver.
  void drain();
  bool owns(const Request* r) const { return pool_.owns(static_cast<const SendReq*>(r)); }

 protected:
  Status on_completion(const ibv_wc& wc) override;

 private:
  Status post(SendSlot& s, int slot_index);
  Status stall_check(const SendReq& req, Clock::time_point posted_at);
  // Both protocols: a finished send reported and its request returned to the pool.
  void finish(SendReq* req, Clock::duration elapsed, int* done, int* sizes);

  // send_comm_eager.cpp
  Status eager_isend(void* data, size_t size, int tag, VerbsMr* mr, void* phandle, Request** out);
  Status eager_test(SendReq* req, int* done, int* sizes);
  Status eager_completion(const ibv_wc& wc);
  Status eager_post_data(SendReq* req);  // once its clear-to-send arrived
  Status eager_progress();               // posts every waiting request whose clear-to-send arrived
  uint64_t eager_credits() const;        // leading ring slots the receiver released
  RegisteredBuffer stage_;               // ring slots as sent: header + payload
  uint64_t ring_posted_ = 0;             // ring messages posted
  uint64_t ring_retired_ = 0;            // ring messages whose send completed locally
  std::array<uint16_t, eager::kMaxTargets> waiting_{};  // requests-to-send awaiting their clear-to-send
  size_t nwaiting_ = 0;

  RegisteredBuffer fifo_;   // CtsSlot[kFifoDepth] + mailbox + credit word (eager.h), written by the peer
  RegisteredBuffer sizes_;  // SizesSlot[kFifoDepth], source of the sizes record
  std::array<SendSlot, kFifoDepth> slots_{};
  RequestPool<SendReq, kFifoDepth * kMaxRecvs> pool_;
  static_assert(kFifoDepth * kMaxRecvs == eager::kMaxTargets, "one mailbox entry per request");
  uint64_t head_ = 0;  // slots fully matched so far
};

}  // namespace railscope::net::verbs
