#include "plugin/net/verbs/connection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include "plugin/net/verbs/async_events.h"
#include "plugin/net/verbs/diagnosis_map.h"
#include "plugin/net/verbs/discovery.h"
#include "plugin/net/verbs/mr_cache.h"
#include "plugin/net/verbs/qp.h"
#include "plugin/net/verbs/send_comm.h"  // chunk_of
#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/ibv/ibv.h"
#include "railscope/nccl/net_descriptors.h"
#include "railscope/node/mtu.h"
#include "railscope/node/port_counters.h"
#include "railscope/node/rail_skew.h"

namespace railscope::net::verbs {

VerbsMr::~VerbsMr() {
  for (int i = 0; i < ndevs; ++i)
    if (cache[i] != nullptr) cache[i]->release(token[i]);
}

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

Connection::~Connection() {
  for (auto& lane : lanes)
    if (lane.attached) lane.health->detach();
  // QPs before CQs before buffers: members are destroyed in reverse order, but be explicit.
  qps.clear();
  solo_ = nullptr;
  lanes.clear();
}

Status Connection::open_lanes(const std::vector<const NetPort*>& ports,
                              const std::vector<PortHealth*>& health, const std::vector<MrCache*>& caches) {
  for (size_t i = 0; i < ports.size(); ++i) {
    Lane lane;
    lane.port = ports[i];
    lane.health = health[i];
    lane.health_generation = health[i]->generation();
    lane.mr_cache = caches[i];
    lanes.push_back(std::move(lane));
  }
  solo_ = lanes.size() == 1 ? &lanes[0] : nullptr;
  return Status::success();
}

Status Connection::register_buffer(size_t size, int access, RegisteredBuffer* out) {
  out->mrs.clear();  // a buffer registered before is replaced: deregistered, then freed
  out->mem.reset();
  size = (size + kPageSize - 1) & ~(kPageSize - 1);
  void* p = std::aligned_alloc(kPageSize, size);
  if (p == nullptr) return Status::fail(ncclSystemError, "internal.unknown_diagnosis", "out of memory");
  std::memset(p, 0, size);
  out->mem.reset(p);
  out->size = size;
  for (auto& lane : lanes) {
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

Status Connection::create_qps(int nqps, int remote_ndevs, const QpCaps& caps, int cqe) {
  for (Lane& lane : lanes)
    if (!lane.cq)
      if (Status st = create_cq(*lane.port, cqe, &lane.cq); !st.ok()) return st;
  for (int q = 0; q < nqps; ++q) {
    QpLane ql;
    ql.lane = q % static_cast<int>(lanes.size());
    ql.remote_dev = q % remote_ndevs;
    const Lane& lane = lanes[static_cast<size_t>(ql.lane)];
    if (Status st = create_rc_qp(*lane.port, lane.cq.get(), caps, &ql.qp, &ql.max_inline); !st.ok())
      return st;
    if (Status st = qp_to_init(ql.qp.get(), *lane.port, where()); !st.ok()) return st;
    qps.push_back(std::move(ql));
  }
  return Status::success();
}

Status Connection::connect_qps(const std::vector<uint32_t>& remote_qpns) {
  if (remote_qpns.size() != qps.size())
    return Status::fail(
        ncclRemoteError, "peer.bad_handshake",
        fmt::format("peer {} announced {} QPs, {} expected", oob.peer(), remote_qpns.size(), qps.size()));
  path_mtu = 0;
  for (size_t q = 0; q < qps.size(); ++q) {
    const Lane& lane = lanes[static_cast<size_t>(qps[q].lane)];
    const node::PortRecord& rdev = remote.devs[static_cast<size_t>(qps[q].remote_dev)].record;
    const node::PortRecord& ldev = local.devs[static_cast<size_t>(qps[q].lane)].record;
    PathChoice path;
    if (Status st = check_link(ldev, local.host, rdev, remote.host, &path); !st.ok()) return st;
    for (const auto& w : path.warnings) warn_once_per_port_pair(ldev, rdev, remote.host, w);
    if (path_mtu == 0 || path.path_mtu < path_mtu) path_mtu = path.path_mtu;
    std::string at =
        fmt::format("{} (QP {} -> remote QPN {:#x})", where(), qps[q].qp->qp_num, remote_qpns[q]);
    if (Status st = qp_to_rtr(qps[q].qp.get(), *lane.port, rdev, remote_qpns[q], path.path_mtu, link, at);
        !st.ok())
      return st;
    if (Status st = qp_to_rts(qps[q].qp.get(), link, at); !st.ok()) return st;
    uint8_t& lane_mtu = lanes[static_cast<size_t>(qps[q].lane)].path_mtu;
    if (path.path_mtu > lane_mtu) lane_mtu = path.path_mtu;
  }
  stall_budget = retry_budget(link.timeout, link.retry_cnt);
  // The ports now carry this connection: the fabric sampler watches them (counters, active MTU
  // against the path MTU of these QPs) and a link going down is weighed against this budget.
  for (auto& lane : lanes) {
    if (lane.path_mtu == 0) continue;  // no QP on this lane
    lane.totals_at_attach = lane.health->totals();
    lane.rate_at_line = lane.health->rail_rate().totals();
    lane.health->attach(lane.path_mtu, link.timeout, link.retry_cnt, stall_budget);
    lane.attached = true;
  }
  if (stats_enabled()) {
    stats_on = true;
    stats_period_ = std::chrono::seconds(params::get_int("RAILSCOPE_NET_STATS_INTERVAL"));
    if (stats_period_.count() > 0) next_stats_ = Clock::now() + stats_period_;
  }
  return Status::success();
}

std::vector<uint32_t> Connection::qpns() const {
  std::vector<uint32_t> out;
  for (const auto& q : qps) out.push_back(q.qp->qp_num);
  return out;
}

EndInfo Connection::local_end(const std::vector<uint32_t>& rkeys_per_lane, uint64_t addr) const {
  EndInfo e = local;
  for (size_t i = 0; i < e.devs.size() && i < rkeys_per_lane.size(); ++i) e.devs[i].rkey = rkeys_per_lane[i];
  e.addr = addr;
  e.qpns = qpns();
  return e;
}

bool Connection::drain_all_cqs() {
  if (!error_.ok()) return false;
  ibv_wc wcs[kPollBatch];
  bool timed = false;
  for (size_t l = 0; l < lanes.size(); ++l) {
    ibv_cq* cq = lanes[l].cq.get();
    if (cq == nullptr) continue;  // the handshake did not get as far as creating it
    for (;;) {
      const int n = ibv_poll_cq(cq, kPollBatch, wcs);
      if (n == 0) break;
      if (!take_completions(l, wcs, n, &timed)) return false;
      if (n < kPollBatch) break;
    }
  }
  return true;
}

bool Connection::take_completions(size_t lane, const ibv_wc* wcs, int n, bool* timed) {
  if (n < 0) return poll_failed();
  poll_lane_ = lane;
  // A striped connection times its parts per lane (record_parts): one clock read per poll.
  if (!*timed && striped()) {
    poll_time_ = Clock::now();
    *timed = true;
  }
  for (int i = 0; i < n; ++i)
    if (Status st = on_completion(wcs[i]); !st.ok()) return completion_failed(lane, wcs[i], std::move(st));
  return true;
}

bool Connection::poll_failed() {
  fail(Status::fail(ncclSystemError, "wc.error", fmt::format("ibv_poll_cq failed on {}", where())));
  return false;
}

bool Connection::completion_failed(size_t lane, const ibv_wc& wc, Status st) {
  note_failed_completion(lane, wc);
  fail(explain(std::move(st)));
  return false;
}

void Connection::note_failed_completion(size_t lane, const ibv_wc& wc) {
  if (!error_.ok() || wc.status == IBV_WC_SUCCESS) return;
  failed_status_ = static_cast<int>(wc.status);
  failed_vendor_err_ = wc.vendor_err;
  failed_qpn_ = wc.qp_num;
  failed_lane_ = lane;
}

namespace {
// Completion errors a peer that died (and took its registrations and QPs with it) causes on our side.
bool peer_death_can_cause(std::string_view id) {
  return id == "wc.remote_access" || id == "wc.remote_invalid" || id == "wc.retry_exceeded" ||
         id == "wc.rnr_retry_exceeded" || id == "wc.error";
}
}  // namespace

std::optional<Status> Connection::port_cause(const Status& st) const {
  // A port failure already recorded: the completion error is its consequence.
  for (const auto& lane : lanes)
    if (lane.health->generation() != lane.health_generation) {
      auto f = lane.health->last();
      f.detail += fmt::format("; then {}", st.finding().detail);
      return Status::fail(ncclSystemError, std::move(f));
    }
  // The link went down during this connection (IBV_EVENT_PORT_ERR): still down, it is the cause;
  // back up, the completion error keeps its id and says when the link went down.
  for (const auto& lane : lanes) {
    const auto down_at = lane.health->last_down();
    if (down_at < opened) continue;
    const double ago = std::chrono::duration<double>(Clock::now() - down_at).count();
    const std::string port = fmt::format("{}:{}", lane.port->dev_name, lane.port->port);
    if (lane.health->is_down())
      return Status::fail(
          ncclSystemError, "async.port_error",
          fmt::format("{} went down at {} ({:.1f} s ago, IBV_EVENT_PORT_ERR) and is still down; "
                      "then {}",
                      port, lane.health->last_down_text(), ago, st.finding().detail));
    Status out = st;
    out.finding().detail += fmt::format("; the link {} went down at {} ({:.1f} s before this error)", port,
                                        lane.health->last_down_text(), ago);
    return out;
  }
  // The port may have gone down before its async event was read: ask the device directly.
  for (const auto& lane : lanes) {
    ibv_port_attr attr{};
    if (ibv::query_port(*ibv::api(), lane.port->ctx.get(), static_cast<uint8_t>(lane.port->port), &attr) ==
            0 &&
        attr.state != IBV_PORT_ACTIVE)
      return Status::fail(
          ncclSystemError, "async.port_error",
          fmt::format("{}:{} is {} (link down); then {}", lane.port->dev_name, lane.port->port,
                      ibv::port_state_text(attr.state), st.finding().detail));
  }
  return std::nullopt;
}

Status Connection::explain(Status st) {
  // Causes show up a moment after their consequences. A netdev going down fails the QP's sends
  // ("local QP operation error") before the port turns DOWN and its async event arrives; a peer
  // process that dies releases its registrations and QPs as its files close, so our next write can
  // fail (remote access error, retries) before its out-of-band socket reads as closed. Give the
  // cause that moment (error path only, once per connection: at most 500 ms) and name it first.
  const bool peer_may_cause = peer_death_can_cause(st.finding().id());
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  for (;;) {
    if (auto cause = port_cause(st)) return std::move(*cause);
    if (peer_may_cause) {
      if (Status closed = oob.alive(); !closed.ok()) {
        closed.finding().detail += fmt::format("; then {}", st.finding().detail);
        return closed;
      }
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return st;
}

Status Connection::health_failure() {
  if (!error_.ok()) return error_;
  for (auto& lane : lanes)
    if (lane.health->generation() != lane.health_generation) {
      auto f = lane.health->last();
      f.detail += fmt::format("; connection {}", where());
      return fail(Status::fail(ncclSystemError, std::move(f)));
    }
  return Status::success();
}

Status Connection::watch(Clock::time_point now) {
  if (Status st = health(); !st.ok()) return st;
  if (now >= next_stats_) {  // periodic statistics: one comparison while they are not due
    next_stats_ = now + stats_period_;
    if (stats_seen_.moved(stats)) emit_stats(role, false);  // idle connections write nothing
  }
  if (now >= next_liveness_) {
    next_liveness_ = now + std::chrono::milliseconds(100);
    if (Status st = oob.alive(); !st.ok()) {
      if (Status p = poll(); !p.ok()) return p;  // a completion error explains more than the close
      st.finding().detail += fmt::format("; connection {}", where());
      return fail(std::move(st));
    }
  }
  return Status::success();
}

Status Connection::fail(Status st) {
  if (error_.ok()) {
    error_ = std::move(st);
    stats.error(error_.finding().id());
    if (profiler != nullptr) profile_in_flight_failure();
  }
  return error_;
}

std::string Connection::where() const {
  std::string l, r;
  for (const auto& [d, rkey] : local.devs)
    l += fmt::format("{}{}:{} GID[{}] {}", l.empty() ? "" : "+", d.dev_name, d.port, d.gid_index,
                     d.gid.to_string());
  for (const auto& [d, rkey] : remote.devs)
    r += fmt::format("{}{}:{} GID[{}] {}", r.empty() ? "" : "+", d.dev_name, d.port, d.gid_index,
                     d.gid.to_string());
  return fmt::format("{} {} -> peer {} {} ({})", local.host, l, remote.host.empty() ? "?" : remote.host,
                     r.empty() ? "?" : r, oob.peer());
}

void Connection::profile_start_events(size_t request, void* phandle, int opcode, uint64_t seq, size_t size,
                                      bool whole) {
  if (qps.empty()) return;
  if (!ports_announced_) announce_ports(phandle);
  const std::span<void*> events = qp_events.of(request, qps.size());
  if (events.empty()) return;
  const int64_t id = static_cast<int64_t>(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER);
  const size_t nqps = whole ? 1 : qps.size();
  for (size_t q = 0; q < nqps; ++q) {
    size_t off = 0, len = size;
    if (!whole) chunk_of(size, q, nqps, &off, &len);
    if (len == 0 && q > 0) break;  // chunk_of: the parts with bytes come first
    const QpLane& ql = qps[q];
    // Read by the profiler during the call only (NCCL's profiler API), so a local copy will do.
    ncclProfilerNetIbDescr_v1_t descr{};
    descr.type = ncclProfileQp;
    descr.qp = {ql.lane, seq, opcode, static_cast<int>(ql.qp->qp_num), len};
    profiler(&events[q], ncclProfilerNetEventStart, phandle, id, &descr);
  }
}

void Connection::announce_ports(void* phandle) {
  ports_announced_ = true;
  for (const Lane& lane : lanes) {
    if (lane.port == nullptr) continue;
    const NetPort& p = *lane.port;
    nccl::RailscopeNetPort_v1 d{};
    d.type = nccl::kRailscopeNetPort;
    d.port = p.port;
    d.speedMbps = static_cast<int>(p.speed_mbps);
    const size_t n = std::min(p.dev_name.size(), nccl::kRailscopeNetPortNameLen - 1);
    std::memcpy(d.device, p.dev_name.data(), n);
    // No NCCL_PTR_CUDA and no DMA-BUF: NCCL copies GPU buffers through host memory for this port.
    if ((p.gdr.ptr_support & (NCCL_PTR_CUDA | NCCL_PTR_DMABUF)) == 0) {
      d.hostStaged = 1;
      const diag::Finding* why = p.gdr.cuda_refusal();
      d.reason = why != nullptr ? why->id().data() : "gdr.no_peermem";
    }
    // The profiler reads the descriptor during the call only and keeps no handle for it.
    void* eh = nullptr;
    profiler(&eh, ncclProfilerNetEventStart, phandle, nccl::kNetRailscopePluginId, &d);
    if (eh != nullptr) profiler(&eh, ncclProfilerNetEventStop, nullptr, 0, nullptr);
  }
}

void Connection::profile_stop_events(size_t request) {
  if (!qp_events.live(request)) return;
  for (void*& event : qp_events.of(request, qps.size()))
    if (event != nullptr) {
      profiler(&event, ncclProfilerNetEventStop, nullptr, 0, nullptr);
      event = nullptr;
    }
}

const QpLane* Connection::failed_qp() const {
  // A completion error: the QP it names, on the lane whose CQ it came from.
  if (failed_status_ != 0)
    for (const auto& q : qps)
      if (static_cast<size_t>(q.lane) == failed_lane_ && q.qp->qp_num == failed_qpn_) return &q;
  // A port that went down under the connection: its first QP.
  for (const auto& q : qps) {
    const Lane& lane = lanes[static_cast<size_t>(q.lane)];
    if (lane.health != nullptr &&
        (lane.health->generation() != lane.health_generation || lane.health->is_down()))
      return &q;
  }
  return &qps[0];  // a stall, a dead peer, a bad peer message: the connection's first QP
}

void Connection::profile_failure(size_t request, void* phandle, size_t bytes) {
  if (profiler == nullptr || phandle == nullptr || qps.empty()) return;
  profile_stop(request);
  const QpLane* failed = failed_qp();
  const int64_t id = nccl::kNetRailscopePluginId;
  nccl::RailscopeNetQp_v1 qp{
      ncclProfileQp, failed->lane, static_cast<int>(failed->qp->qp_num), IBV_WR_RDMA_WRITE_WITH_IMM, 0,
      bytes};
  void* eh = nullptr;
  profiler(&eh, ncclProfilerNetEventStart, phandle, id, &qp);
  if (eh == nullptr) return;
  // A failure that is not a completion's (a stall, a dead peer, a port down, a peer's bad message)
  // still needs a non-zero status to count as an error: IBV_WC_GENERAL_ERR, with the diagnosis id.
  nccl::RailscopeNetCompletion_v1 done{
      failed_status_ != 0 ? failed_status_ : static_cast<int>(IBV_WC_GENERAL_ERR),
      static_cast<int>(failed_vendor_err_), 0, error_.finding().id().data(), -1};
  profiler(&eh, ncclProfilerNetEventUpdateAndStop, nullptr, id, &done);
}

void Connection::emit_stats(const char* stats_role, bool final) {
  if (!stats_enabled()) return;
  ConnIdentity who;
  who.role = stats_role;
  who.final = final;
  // The counter deltas of this connection's ports since it connected, by category (fabric_watch.h).
  CategoryTotals fabric{};
  bool sampled = false;
  for (const auto& lane : lanes) {
    if (!lane.attached) continue;
    const CategoryTotals now = lane.health->totals();
    for (size_t i = 0; i < kCounterCategories; ++i) fabric[i] += now[i] - lane.totals_at_attach[i];
    sampled = true;
  }
  if (sampled)
    for (size_t i = 0; i < kCounterCategories; ++i)
      who.fabric.emplace_back(node::to_string(static_cast<node::CounterCategory>(i)), fabric[i]);
  // Each port's large-transfer rate since this connection's previous line (the whole port's, shared
  // with every connection on it): what fabric.rail_skew compares across rails.
  std::string rates;
  for (auto& lane : lanes) {
    if (!lane.attached) continue;
    const RailRateAccumulator::Totals now = lane.health->rail_rate().totals();
    const RailRateAccumulator::Totals d = now.since(lane.rate_at_line);
    lane.rate_at_line = now;
    const node::RailRate r{"", d.bytes, d.busy_ns, d.transfers};
    rates += fmt::format(
        "{}{{\"port\":\"{}:{}\",\"GBps\":{:.6g},\"bytes\":{},\"busy_s\":{:.6f},\"transfers\":{}}}",
        rates.empty() ? "" : ",", lane.port->dev_name, lane.port->port, r.bytes_per_second() / 1e9, d.bytes,
        static_cast<double>(d.busy_ns) / 1e9, d.transfers);
  }
  if (sampled) who.extra_json = fmt::format(",\"rail_rate\":[{}]", rates);
  who.local_host = local.host;
  for (const auto& d : local.devs) who.local_dev += (who.local_dev.empty() ? "" : "+") + d.record.dev_name;
  if (!local.devs.empty()) who.local_gid = local.devs[0].record.gid.to_string();
  who.peer_host = remote.host;
  for (const auto& d : remote.devs) who.peer_dev += (who.peer_dev.empty() ? "" : "+") + d.record.dev_name;
  if (!remote.devs.empty()) who.peer_gid = remote.devs[0].record.gid.to_string();
  who.peer_addr = oob.peer();
  who.qps = static_cast<int>(qps.size());
  who.path_mtu = node::ib_mtu_bytes(path_mtu);
  who.seconds = std::chrono::duration<double>(Clock::now() - opened).count();
  emit_stats_line(stats_json(who, stats));
}

void Connection::record_transfer(size_t bytes, Clock::time_point start_at, Clock::time_point end_at) {
  if (bytes < node::kRailRateMinMessageBytes || end_at <= start_at || lanes.empty()) return;
  const auto ns = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  const int64_t start = ns(start_at), end = ns(end_at);
  // The QPs are striped over the lanes and a message is split evenly over the QPs (chunk_of): each
  // lane carries about its share. Used where the parts' completions are not timed per lane (the
  // protocols time them on striped connections: record_parts).
  const uint64_t share = bytes / lanes.size();
  for (auto& lane : lanes)
    if (lane.attached) lane.health->rail_rate().add(share, start, end);
}

void Connection::record_parts(size_t bytes, Clock::time_point posted_at, const Clock::time_point* lane_done) {
  if (bytes < node::kRailRateMinMessageBytes || lanes.empty() || qps.empty()) return;
  // Each lane's parts: QP q carries chunk_of's part q and sits on lane qps[q].lane.
  uint64_t lane_bytes[kMaxDevsPerEnd] = {};
  const size_t nqps = qps.size();
  for (size_t q = 0; q < nqps; ++q) {
    size_t off = 0, len = 0;
    chunk_of(bytes, q, nqps, &off, &len);
    const auto l = static_cast<size_t>(qps[q].lane);
    if (l < kMaxDevsPerEnd) lane_bytes[l] += len;
  }
  const auto ns = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  for (size_t l = 0; l < lanes.size() && l < kMaxDevsPerEnd; ++l)
    if (lanes[l].attached && lane_bytes[l] > 0 && lane_done[l] > posted_at)
      lanes[l].health->rail_rate().add(lane_bytes[l], ns(posted_at), ns(lane_done[l]));
}

Status register_on_lanes(Connection& c, void* data, size_t size, int type, VerbsMr** out) {
  if (type != NCCL_PTR_HOST)
    return Status::fail(
        ncclInvalidArgument, "reg.failed",
        fmt::format("regMr of {} bytes with pointer type {:#x}: not host memory (NCCL_PTR_HOST); GPU memory "
                    "is registered as NCCL_PTR_CUDA or through regMrDmaBuf",
                    size, type),
        "Pass NCCL_PTR_HOST or NCCL_PTR_CUDA as the pointer type");
  auto mr = std::make_unique<VerbsMr>();
  for (auto& lane : c.lanes) {
    int i = mr->ndevs;
    if (Status st = lane.mr_cache->acquire(data, size, &mr->mr[i], &mr->token[i]); !st.ok()) return st;
    mr->cache[i] = lane.mr_cache;
    mr->ndevs = i + 1;
  }
  *out = mr.release();
  return Status::success();
}

}  // namespace railscope::net::verbs
