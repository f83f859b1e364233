// What both protocols share on the sending end, and the choice between them (send_comm.h).
#include "plugin/net/verbs/send_comm.h"

#include <fmt/format.h>

#include "plugin/net/verbs/eager_protocol.h"
#include "plugin/net/verbs/receiver_driven.h"

namespace railscope::net::verbs {

namespace {
constexpr int kRemoteWrite = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
}  // namespace

// An eager pair never pins a FIFO it does not use (16 KiB per send comm): the sender registers the
// FIFO only when the receiver refused eager (docs/net-protocol.md, "Memory per connection").
Status VerbsSendComm::prepare() {
  if (local.eager_max > 0) return register_buffer(eager::kSenderRegionBytes, kRemoteWrite, &region);
  return register_buffer(kFifoBytes, kRemoteWrite, &region);
}

std::vector<uint32_t> VerbsSendComm::region_rkeys() const {
  std::vector<uint32_t> out;
  for (const auto& mr : region.mrs) out.push_back(mr->rkey);
  return out;
}

Status VerbsSendComm::choose_protocol(uint32_t limit) {
  eager_max = limit;
  if (limit > 0) {
    protocol_ = std::make_unique<EagerSend>(*this);
  } else {
    if (local.eager_max > 0)  // offered eager, refused: the mailbox gives way to the FIFO
      if (Status st = register_buffer(kFifoBytes, kRemoteWrite, &region); !st.ok()) return st;
    protocol_ = std::make_unique<ReceiverDrivenSend>(*this);
  }
  return protocol_->prepare();
}

// A send whose data is posted but not acknowledged within the QP's retry budget is an error, before
// the hardware's own retries end (rxe at NCCL_IB_RETRY_CNT=7 never gives up).
Status VerbsSendComm::stall_check(const SendReq& req, Clock::time_point posted_at) {
  const auto now = Clock::now();
  if (now - posted_at > stall_budget)
    return fail(Status::fail(
        ncclRemoteError, "progress.stalled",
        fmt::format(
            "a {}-byte send posted {:.1f} s ago has not completed (budget {:.1f} s: 4.096 us x 2^{} x "
            "{} tries, at least {} s) on {}",
            req.size, std::chrono::duration<double>(now - posted_at).count(),
            std::chrono::duration<double>(stall_budget).count(), link.timeout, link.retry_cnt + 1,
            std::chrono::duration_cast<std::chrono::seconds>(kMinStallBudget).count(), where()),
        "The peer stopped acknowledging: check that the peer process is alive, the link is up on both ends "
        "and the "
        "netdev MTUs match (`railscope doctor` on both nodes)"));
  return watch(now);
}

}  // namespace railscope::net::verbs
