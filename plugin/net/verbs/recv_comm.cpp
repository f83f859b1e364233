// SPDX-License-Identifier: Apache-2.0
// What both protocols share on the receiving end, and the choice between them (recv_comm.h).
#include "plugin/net/verbs/recv_comm.h"

#include "plugin/net/verbs/eager/eager_protocol.h"
#include "plugin/net/verbs/gpu/gdr_flush_qp.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"

namespace railscope::net::verbs {

VerbsRecvComm::VerbsRecvComm() : Connection("recv", kFifoDepth * kMaxRecvs) {  // request slot: event_slot()
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].comm = this;
    slots_[i].index = static_cast<uint32_t>(i);
  }
  flusher = &VerbsRecvComm::flush_received;  // whichever protocol is agreed
}

VerbsRecvComm::~VerbsRecvComm() = default;

Status VerbsRecvComm::choose_protocol(uint32_t limit) {
  eager_max_ = limit;
  if (limit > 0)
    protocol_ = std::make_unique<EagerRecv>(*this);
  else
    protocol_ = std::make_unique<ReceiverDrivenRecv>(*this);
  return Status::success();
}

ncclResult_t VerbsRecvComm::flush_received(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out) {
  auto* c = static_cast<VerbsRecvComm*>(comm);
  if (!c->flush_) c->flush_ = std::make_unique<GdrFlush>();
  return reported_result("iflush", c->flush_->iflush(*c, bufs, out));
}

Status VerbsRecvComm::check_buffers(std::span<const RecvBuffer> bufs) {
  for (const RecvBuffer& b : bufs)
    if (b.size > 0 && b.mr == nullptr)
      return Status::fail(ncclInternalError, "internal.bad_argument", "irecv without a memory handle");
  return Status::success();
}

ncclResult_t VerbsRecvComm::finished_receive() {
  return tested_result(
      Status::fail(ncclInternalError, "internal.bad_argument", "test of a finished receive"));
}

Status VerbsRecvComm::post_recv(const QpLane& ql, uint64_t wr_id) {
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(ql.qp.get(), &wr, &bad); rc != 0)
    return Status::fail(ncclSystemError, post_finding("ibv_post_recv", rc, where()));
  return Status::success();
}

}  // namespace railscope::net::verbs
