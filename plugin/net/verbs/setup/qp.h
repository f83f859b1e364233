// SPDX-License-Identifier: Apache-2.0
// RC queue pairs and their state machine RESET → INIT → RTR → RTS, with every ibv_modify_qp
// failure mapped to a diagnosis (qp.rtr_einval / qp.rtr_enodata / qp.rtr_timeout ...).
#pragma once

#include <string>

#include "plugin/net/transport.h"
#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/setup/handshake.h"
#include "plugin/net/verbs/setup/link_params.h"
#include "railscope/ibv/handles.h"

namespace railscope::net::verbs {

using ibv::CqPtr;  // lib/ibv handles (railscope/ibv/handles.h) by their short names
using ibv::QpPtr;

struct QpCaps {
  uint32_t max_send_wr = 64;
  uint32_t max_recv_wr = 64;
  uint32_t max_inline = 64;
};

// Creates an RC QP on `port` using `cq` for both queues; *inline_out receives the inline size the
// device granted (0 if it refused inline).
Status create_rc_qp(const NetPort& port, ibv_cq* cq, const QpCaps& caps, QpPtr* out, uint32_t* inline_out);
// Creates a completion queue of at least `cqe` entries on the port's device.
Status create_cq(const NetPort& port, int cqe, CqPtr* out);

Status qp_to_init(ibv_qp* qp, const NetPort& port, const std::string& where);
// path_mtu is the negotiated MTU in bytes; remote is the peer's port record.
Status qp_to_rtr(ibv_qp* qp, const NetPort& port, const node::PortRecord& remote, uint32_t remote_qpn,
                 int path_mtu, const LinkParams& lp, const std::string& where);
Status qp_to_rts(ibv_qp* qp, const LinkParams& lp, const std::string& where);

}  // namespace railscope::net::verbs
