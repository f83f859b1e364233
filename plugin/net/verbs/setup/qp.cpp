// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/setup/qp.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "railscope/ibv/ibv.h"
#include "railscope/node/mtu.h"

namespace railscope::net::verbs {

Status create_cq(const NetPort& port, int cqe, CqPtr* out) {
  if (port.max_cqe > 0 && cqe > port.max_cqe) cqe = port.max_cqe;
  ibv_cq* cq = ibv::api()->create_cq(port.ctx.get(), cqe, nullptr, nullptr, 0);
  if (cq == nullptr) {
    int err = errno;
    auto where = fmt::format("{}:{} (completion queue of {} entries)", port.dev_name, port.port, cqe);
    if (err == ENOMEM)
      return Status::fail(ncclSystemError, reg_mr_finding(err, 0, memlock_limit_kib(), where));
    return Status::fail(ncclSystemError, "qp.create_failed",
                        fmt::format("ibv_create_cq on {} failed: {} ({})", where, std::strerror(err), err));
  }
  out->reset(cq);
  return Status::success();
}

Status create_rc_qp(const NetPort& port, ibv_cq* cq, const QpCaps& caps, QpPtr* out, uint32_t* inline_out) {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 0;
  attr.cap.max_send_wr = caps.max_send_wr;
  attr.cap.max_recv_wr = caps.max_recv_wr;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = caps.max_inline;
  ibv_qp* qp = ibv::api()->create_qp(port.pd.get(), &attr);
  if (qp == nullptr && caps.max_inline > 0) {  // some devices refuse inline: retry without
    attr.cap.max_inline_data = 0;
    qp = ibv::api()->create_qp(port.pd.get(), &attr);
  }
  if (qp == nullptr) {
    int err = errno;
    return Status::fail(
        ncclSystemError, "qp.create_failed",
        fmt::format("ibv_create_qp on {}:{} (send {} / recv {} WRs) failed: {} ({})", port.dev_name,
                    port.port, caps.max_send_wr, caps.max_recv_wr, std::strerror(err), err));
  }
  out->reset(qp);
  *inline_out = attr.cap.max_inline_data;
  return Status::success();
}

Status qp_to_init(ibv_qp* qp, const NetPort& port, const std::string& where) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = static_cast<uint8_t>(port.port);
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  int rc =
      ibv::api()->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc != 0) return Status::fail(ncclSystemError, modify_qp_finding(rc, "INIT", where));
  return Status::success();
}

Status qp_to_rtr(ibv_qp* qp, const NetPort& port, const node::PortRecord& remote, uint32_t remote_qpn,
                 int path_mtu, const LinkParams& lp, const std::string& where) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = static_cast<ibv_mtu>(node::ib_mtu_enum(path_mtu));
  a.dest_qp_num = remote_qpn;
  a.rq_psn = 0;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.port_num = static_cast<uint8_t>(port.port);
  a.ah_attr.sl = static_cast<uint8_t>(lp.service_level);
  if (port.link_layer == node::LinkLayer::Ethernet) {
    a.ah_attr.is_global = 1;
    std::memcpy(a.ah_attr.grh.dgid.raw, remote.gid.raw.data(), 16);
    a.ah_attr.grh.sgid_index = port.gid_index;
    a.ah_attr.grh.hop_limit = 255;
    a.ah_attr.grh.flow_label = 0;
    a.ah_attr.grh.traffic_class = static_cast<uint8_t>(lp.traffic_class);
  } else {
    a.ah_attr.is_global = 0;
    a.ah_attr.dlid = remote.lid;
  }
  int rc = ibv::api()->modify_qp(qp, &a,
                                 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc != 0) return Status::fail(ncclSystemError, modify_qp_finding(rc, "RTR", where));
  return Status::success();
}

Status qp_to_rts(ibv_qp* qp, const LinkParams& lp, const std::string& where) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = static_cast<uint8_t>(lp.timeout);
  a.retry_cnt = static_cast<uint8_t>(lp.retry_cnt);
  a.rnr_retry = 7;
  a.sq_psn = 0;
  a.max_rd_atomic = 1;
  int rc = ibv::api()->modify_qp(qp, &a,
                                 IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc != 0) return Status::fail(ncclSystemError, modify_qp_finding(rc, "RTS", where));
  return Status::success();
}

}  // namespace railscope::net::verbs
