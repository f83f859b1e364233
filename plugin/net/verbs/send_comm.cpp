// What both protocols share on the sending end, and the choice between them (send_comm.h).
#include "plugin/net/verbs/send_comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

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

void VerbsSendComm::finish(SendReq* req, Clock::time_point end, int* done, int* sizes,
                           const Clock::time_point* lane_done) {
  const bool timed = end != Clock::time_point{};
  Clock::duration elapsed = timed ? end - req->posted_at : Clock::duration::zero();
  // Striped: the send ended when its last part's completion was polled (the caller read no clock).
  if (lane_done != nullptr && striped()) {
    Clock::time_point last = req->posted_at;
    for (size_t l = 0; l < lanes.size() && l < kMaxDevsPerEnd; ++l) last = std::max(last, lane_done[l]);
    elapsed = last - req->posted_at;
  }
  *done = 1;
  if (sizes != nullptr) *sizes = static_cast<int>(std::min<size_t>(req->size, INT_MAX));
  stats.completed(req->size, static_cast<uint64_t>(
                                 std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count()));
  // The ports' rates (fabric.rail_skew): per lane when the parts were timed per lane.
  if (lane_done != nullptr && striped())
    record_parts(req->size, req->posted_at, lane_done);
  else if (timed)
    record_transfer(req->size, req->posted_at, end);
  profile_stop(pool.index_of(req));
  pool.put(req);
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
