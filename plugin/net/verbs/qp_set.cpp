// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/qp_set.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>

#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/setup/handshake.h"
#include "plugin/net/verbs/setup/link_params.h"
#include "plugin/net/verbs/setup/mr_cache.h"
#include "plugin/net/verbs/setup/qp.h"
#include "plugin/net/verbs/watch/diagnosis_map.h"
#include "railscope/core/log.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {

namespace {
// Path warnings (mtu.mismatch) are about a pair of ports, not a connection: NCCL opens many connections
// between the same two ports, and each would repeat the line. Logged once per process, port pair and id
// (bounded by the ports of this node times the peers' ports it talks to).
void warn_once_per_port_pair(const node::PortRecord& local, const node::PortRecord& remote,
                             const std::string& remote_host, const diag::Finding& f) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::string key = fmt::format("{}:{}|{}|{}:{}|{}", local.dev_name, local.port, remote_host, remote.dev_name,
                                remote.port, f.id());
  {
    std::lock_guard lock(mutex);
    if (!seen.insert(std::move(key)).second) return;
  }
  RS_WARN("NET/railscope : {}", diag::one_line(f));
}
}  // namespace

QpSet::~QpSet() {
  // QPs before CQs: a CQ with QPs still on it cannot be destroyed.
  qps_.clear();
  solo_ = nullptr;
  lanes_.clear();
}

void QpSet::open(const std::vector<const NetPort*>& ports, const std::vector<PortHealth*>& health,
                 const std::vector<MrCache*>& caches) {
  for (size_t i = 0; i < ports.size(); ++i) {
    Lane lane;
    lane.port = ports[i];
    lane.health = health[i];
    lane.mr_cache = caches[i];
    lanes_.push_back(std::move(lane));
  }
  solo_ = lanes_.size() == 1 ? &lanes_[0] : nullptr;
}

Status QpSet::register_buffer(size_t size, int access, RegisteredBuffer* out) const {
  out->mrs.clear();  // a buffer registered before is replaced: deregistered, then freed
  out->mem.reset();
  size = (size + kPageSize - 1) & ~(kPageSize - 1);
  void* p = std::aligned_alloc(kPageSize, size);
  if (p == nullptr) return Status::fail(ncclSystemError, "internal.unknown_diagnosis", "out of memory");
  std::memset(p, 0, size);
  out->mem.reset(p);
  out->size = size;
  for (const auto& lane : lanes_) {
    ibv_mr* mr = ibv::api()->reg_mr(lane.port->pd.get(), p, size, access);
    if (mr == nullptr) {
      int err = errno;
      return Status::fail(ncclSystemError, reg_mr_finding(err, size, memlock_limit_kib(),
                                                          fmt::format("{}:{} (connection control buffer)",
                                                                      lane.port->dev_name, lane.port->port)));
    }
    out->mrs.emplace_back(mr);
  }
  return Status::success();
}

Status QpSet::create(int nqps, int remote_ndevs, const QpCaps& caps, int cqe, const std::string& where) {
  for (Lane& lane : lanes_)
    if (!lane.cq)
      if (Status st = create_cq(*lane.port, cqe, &lane.cq); !st.ok()) return st;
  for (int q = 0; q < nqps; ++q) {
    QpLane ql;
    ql.lane = q % static_cast<int>(lanes_.size());
    ql.remote_dev = q % remote_ndevs;
    const Lane& lane = lanes_[static_cast<size_t>(ql.lane)];
    if (Status st = create_rc_qp(*lane.port, lane.cq.get(), caps, &ql.qp, &ql.max_inline); !st.ok())
      return st;
    if (Status st = qp_to_init(ql.qp.get(), *lane.port, where); !st.ok()) return st;
    qps_.push_back(std::move(ql));
  }
  return Status::success();
}

Status QpSet::connect(const std::vector<uint32_t>& remote_qpns, const EndInfo& local, const EndInfo& remote,
                      const LinkParams& link, const std::string& peer, const std::string& where,
                      int* path_mtu) {
  if (remote_qpns.size() != qps_.size())
    return Status::fail(
        ncclRemoteError, "peer.bad_handshake",
        fmt::format("peer {} announced {} QPs, {} expected", peer, remote_qpns.size(), qps_.size()));
  *path_mtu = 0;
  for (size_t q = 0; q < qps_.size(); ++q) {
    int mtu = 0;
    if (Status st = connect_one(q, remote_qpns[q], local, remote, link, where, true, &mtu); !st.ok())
      return st;
    if (*path_mtu == 0 || mtu < *path_mtu) *path_mtu = mtu;
    int& lane_mtu = lanes_[static_cast<size_t>(qps_[q].lane)].path_mtu;
    if (mtu > lane_mtu) lane_mtu = mtu;
  }
  return Status::success();
}

Status QpSet::reconnect(uint64_t mask, const std::vector<uint32_t>& remote_qpns, const EndInfo& local,
                        const EndInfo& remote, const LinkParams& link, const std::string& where) {
  for (size_t q = 0; q < qps_.size() && q < 64; ++q) {
    if ((mask >> q & 1) == 0) continue;
    if (q >= remote_qpns.size())
      return Status::fail(ncclInternalError, "internal.bad_argument",
                          fmt::format("QP {} has no remote QP number on {}", q, where));
    // Any state may go to RESET: what the QP held is dropped without completions, and it keeps its number,
    // so the peer's record of it stays right.
    if (Status st = move_to(q, IBV_QPS_RESET, where); !st.ok()) return st;
    const Lane& lane = lanes_[static_cast<size_t>(qps_[q].lane)];
    if (Status st = qp_to_init(qps_[q].qp.get(), *lane.port, where); !st.ok()) return st;
    int mtu = 0;
    if (Status st = connect_one(q, remote_qpns[q], local, remote, link, where, false, &mtu); !st.ok())
      return st;
  }
  return Status::success();
}

Status QpSet::move_to(size_t q, ibv_qp_state state, const std::string& where) {
  ibv_qp_attr attr{};
  attr.qp_state = state;
  if (int rc = ibv::api()->modify_qp(qps_[q].qp.get(), &attr, IBV_QP_STATE); rc != 0)
    return Status::fail(ncclSystemError, "wc.error",
                        fmt::format("ibv_modify_qp(QP {} to {}) failed ({}) on {}", q,
                                    state == IBV_QPS_ERR     ? "ERR"
                                    : state == IBV_QPS_RESET ? "RESET"
                                                             : "?",
                                    rc, where));
  return Status::success();
}

Status QpSet::connect_one(size_t q, uint32_t remote_qpn, const EndInfo& local, const EndInfo& remote,
                          const LinkParams& link, const std::string& where, bool warn, int* path_mtu) {
  const auto l = static_cast<size_t>(qps_[q].lane);
  const Lane& lane = lanes_[l];
  const node::PortRecord& rdev = remote.devs[static_cast<size_t>(qps_[q].remote_dev)].record;
  const node::PortRecord& ldev = local.devs[l].record;
  PathChoice path;
  if (Status st = check_link(ldev, local.host, rdev, remote.host, &path); !st.ok()) return st;
  if (warn)
    for (const auto& w : path.warnings) warn_once_per_port_pair(ldev, rdev, remote.host, w);
  std::string at = fmt::format("{} (QP {} -> remote QPN {:#x})", where, qps_[q].qp->qp_num, remote_qpn);
  if (Status st = qp_to_rtr(qps_[q].qp.get(), *lane.port, rdev, remote_qpn, path.path_mtu, link, at);
      !st.ok())
    return st;
  if (Status st = qp_to_rts(qps_[q].qp.get(), link, at); !st.ok()) return st;
  *path_mtu = path.path_mtu;
  return Status::success();
}

std::vector<uint32_t> QpSet::qpns() const {
  std::vector<uint32_t> out;
  for (const auto& q : qps_) out.push_back(q.qp->qp_num);
  return out;
}

}  // namespace railscope::net::verbs
