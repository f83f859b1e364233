// The receiver-driven protocol (NCCL's own for IB): the receiver advertises each posted receive
// (address, rkeys, size, tag) by RDMA-writing a clear-to-send slot into the sender's FIFO; the sender
// matches a send to an entry of the oldest slot by tag and, when every entry of the slot is matched,
// RDMA-writes the data (large messages split across the connection's QPs), each QP's part ending with
// a signalled RDMA write with immediate that completes the receive. Sizes travel in the immediate
// (one buffer) or in a sizes record written into the receiver's sizes area (grouped receives).
// Used whenever one end carries GPU memory, or RAILSCOPE_NET_EAGER_MAX=0.
#pragma once

#include <array>

#include "plugin/net/verbs/recv_comm.h"
#include "plugin/net/verbs/send_comm.h"

namespace railscope::net::verbs {

inline constexpr uint32_t kSizesInArea = 0x80000000u;  // immediate flag: sizes are in the sizes area

// One clear-to-send entry the receiver writes into the sender's FIFO (64 bytes, so one entry never
// straddles a cache line). seq is the slot's sequence number + 1 and is checked in every entry.
struct alignas(64) CtsEntry {
  uint64_t addr;
  uint64_t size;
  uint32_t rkey[kMaxDevsPerEnd];
  uint32_t nreqs;
  int32_t tag;
  uint64_t seq;
  uint64_t reserved;
};
static_assert(sizeof(CtsEntry) == 64);
struct CtsSlot {
  CtsEntry e[kMaxRecvs];
};
using SizesSlot = std::array<int32_t, kMaxRecvs>;
// The FIFO opens the sender's region (send_comm.h); the eager mailbox follows it.
inline constexpr size_t kFifoBytes = sizeof(CtsSlot) * kFifoDepth;

class ReceiverDrivenSend final : public SendProtocol {
 public:
  explicit ReceiverDrivenSend(VerbsSendComm& c) : c_(c) {}
  Status prepare() override;
  Status isend(void* data, size_t size, int tag, VerbsMr* mr, void* phandle, Request** out) override;
  Status test(SendReq* req, int* done, int* sizes) override;
  Status on_completion(const ibv_wc& wc) override;

 private:
  // The sender's copy of one clear-to-send slot (the FIFO is read once per slot, then only this).
  struct Slot {
    uint64_t seq = 0;  // CTS sequence number this slot state belongs to (0 = never used)
    int nreqs = 0;
    int matched = 0;
    int live_reqs = 0;  // requests handed to NCCL and not yet reported done
    int pending = 0;    // signalled completions still expected
    bool posted = false;
    Connection::Clock::time_point posted_at{};
    // Striped connections: when each lane's parts completed (Connection::record_parts).
    Connection::Clock::time_point lane_done[kMaxDevsPerEnd]{};
    CtsEntry cts[kMaxRecvs]{};
    SendReq* reqs[kMaxRecvs]{};
  };
  Status post(Slot& s, int slot_index);
  VerbsSendComm& c_;
  RegisteredBuffer sizes_;  // SizesSlot[kFifoDepth], source of the sizes record
  std::array<Slot, kFifoDepth> slots_{};
  uint64_t head_ = 0;  // slots fully matched so far
};

class ReceiverDrivenRecv final : public RecvProtocol {
 public:
  static constexpr uint64_t kCtsSignalEvery = 16;

  explicit ReceiverDrivenRecv(VerbsRecvComm& c) : c_(c) {}
  Status prepare() override;
  uint64_t advertised_addr() const override { return reinterpret_cast<uint64_t>(sizes_.get()); }
  std::vector<uint32_t> advertised_rkeys() const override;
  Status irecv(std::span<const RecvBuffer> bufs, Request** out) override;
  Status test(RecvSlot* slot, int* done, int* sizes) override;
  Status on_completion(const ibv_wc& wc) override;

 private:
  struct Progress {
    int pending = 0;   // QPs whose immediate has not arrived yet
    uint32_t imm = 0;  // the last immediate: the size, or kSizesInArea
  };
  VerbsRecvComm& c_;
  RegisteredBuffer sizes_;  // SizesSlot[kFifoDepth], written by the peer
  RegisteredBuffer cts_;    // CtsSlot[kFifoDepth], source of CTS writes
  std::array<Progress, kFifoDepth> progress_{};
  uint64_t tail_ = 0;  // receives posted so far
};

}  // namespace railscope::net::verbs
