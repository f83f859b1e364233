// SPDX-License-Identifier: Apache-2.0
// What both protocols share on the sending end, and the choice between them (send_comm.h).
#include "plugin/net/verbs/send_comm.h"

#include "plugin/net/verbs/eager/eager_protocol.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven.h"

namespace railscope::net::verbs {

namespace {
constexpr int kRemoteWrite = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
}  // namespace

// An eager pair never pins a FIFO it does not use (16 KiB per send comm): the sender registers the
// FIFO only when the receiver refused eager (docs/net-protocol.md, "Memory per connection").
Status VerbsSendComm::prepare() {
  if (local().eager_max > 0) return register_buffer(eager::kSenderRegionBytes, kRemoteWrite, &region_);
  return register_buffer(kFifoBytes, kRemoteWrite, &region_);
}

std::vector<uint32_t> VerbsSendComm::region_rkeys() const {
  std::vector<uint32_t> out;
  for (const auto& mr : region_.mrs) out.push_back(mr->rkey);
  return out;
}

Status VerbsSendComm::choose_protocol(uint32_t limit) {
  eager_max_ = limit;
  if (limit > 0) {
    protocol_ = std::make_unique<EagerSend>(*this);
  } else {
    if (local().eager_max > 0)  // offered eager, refused: the mailbox gives way to the FIFO
      if (Status st = register_buffer(kFifoBytes, kRemoteWrite, &region_); !st.ok()) return st;
    protocol_ = std::make_unique<ReceiverDrivenSend>(*this);
  }
  return protocol_->prepare();
}

}  // namespace railscope::net::verbs
