// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/connection_telemetry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "plugin/net/verbs/send_comm.h"  // chunk_of
#include "plugin/net/verbs/setup/discovery.h"
#include "railscope/core/params.h"
#include "railscope/nccl/net_descriptors.h"
#include "railscope/node/port_counters.h"
#include "railscope/node/rail_skew.h"

namespace railscope::net::verbs {

namespace {
int64_t ns_of(ConnectionTelemetry::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
}  // namespace

void ConnectionTelemetry::start(const std::vector<Lane>& lanes) {
  marks_.clear();
  for (const Lane& lane : lanes) marks_.push_back({lane.health->totals(), lane.health->rail_rate().totals()});
  if (stats_enabled()) {
    stats_on_ = true;
    stats_period_ = std::chrono::seconds(params::get_int("RAILSCOPE_NET_STATS_INTERVAL"));
    if (stats_period_.count() > 0) next_stats_ = Clock::now() + stats_period_;
  }
}

void ConnectionTelemetry::emit(ConnIdentity who, const std::vector<Lane>& lanes) {
  // The counter deltas of this connection's ports since it connected, by category (fabric_watch.h).
  CategoryTotals fabric{};
  bool sampled = false;
  for (size_t l = 0; l < lanes.size() && l < marks_.size(); ++l) {
    if (!lanes[l].attached) continue;
    const CategoryTotals now = lanes[l].health->totals();
    for (size_t i = 0; i < kCounterCategories; ++i) fabric[i] += now[i] - marks_[l].totals_at_start[i];
    sampled = true;
  }
  if (sampled)
    for (size_t i = 0; i < kCounterCategories; ++i)
      who.fabric.emplace_back(node::to_string(static_cast<node::CounterCategory>(i)), fabric[i]);
  // Each port's large-transfer rate since this connection's previous line (the whole port's, shared
  // with every connection on it): what fabric.rail_skew compares across rails.
  std::string rates;
  for (size_t l = 0; l < lanes.size() && l < marks_.size(); ++l) {
    const Lane& lane = lanes[l];
    if (!lane.attached) continue;
    const RailRateAccumulator::Totals now = lane.health->rail_rate().totals();
    const RailRateAccumulator::Totals d = now.since(marks_[l].rate_at_line);
    marks_[l].rate_at_line = now;
    const node::RailRate r{"", d.bytes, d.busy_ns, d.transfers};
    rates +=
        fmt::format("{}{{\"port\":\"{}:{}\",\"gbs\":{:.6g},\"bytes\":{},\"busy_s\":{:.6f},\"transfers\":{}}}",
                    rates.empty() ? "" : ",", lane.port->dev_name, lane.port->port,
                    r.bytes_per_second() / 1e9, d.bytes, static_cast<double>(d.busy_ns) / 1e9, d.transfers);
  }
  if (sampled) who.extra_json = fmt::format(",\"rail_rate\":[{}]", rates);
  emit_stats_line(stats_json(who, stats_));
}

void ConnectionTelemetry::record_transfer(const std::vector<Lane>& lanes, size_t bytes,
                                          Clock::time_point start, Clock::time_point end) {
  if (bytes < node::kRailRateMinMessageBytes || end <= start || lanes.empty()) return;
  // The QPs are striped over the lanes and a message is split evenly over the QPs (chunk_of): each
  // lane carries about its share. Used where the parts' completions are not timed per lane (the
  // protocols time them on striped connections: record_parts).
  const uint64_t share = bytes / lanes.size();
  for (const auto& lane : lanes)
    if (lane.attached) lane.health->rail_rate().add(share, ns_of(start), ns_of(end));
}

void ConnectionTelemetry::record_parts(const std::vector<Lane>& lanes, const std::vector<QpLane>& qps,
                                       size_t bytes, Clock::time_point posted_at,
                                       const Clock::time_point* lane_done) {
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
  for (size_t l = 0; l < lanes.size() && l < kMaxDevsPerEnd; ++l)
    if (lanes[l].attached && lane_bytes[l] > 0 && lane_done[l] > posted_at)
      lanes[l].health->rail_rate().add(lane_bytes[l], ns_of(posted_at), ns_of(lane_done[l]));
}

void ConnectionTelemetry::profile_start_events(const std::vector<Lane>& lanes, const std::vector<QpLane>& qps,
                                               size_t request, void* phandle, int opcode, uint64_t seq,
                                               size_t size, bool whole) {
  if (qps.empty()) return;
  if (!ports_announced_) announce_ports(lanes, phandle);
  const std::span<void*> events = qp_events_.of(request, qps.size());
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
    profiler_(&events[q], ncclProfilerNetEventStart, phandle, id, &descr);
  }
}

void ConnectionTelemetry::announce_ports(const std::vector<Lane>& lanes, void* phandle) {
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
    profiler_(&eh, ncclProfilerNetEventStart, phandle, nccl::kNetRailscopePluginId, &d);
    if (eh != nullptr) profiler_(&eh, ncclProfilerNetEventStop, nullptr, 0, nullptr);
  }
}

void ConnectionTelemetry::profile_stop_events(size_t request, size_t nqps) {
  if (!qp_events_.live(request)) return;
  for (void*& event : qp_events_.of(request, nqps))
    if (event != nullptr) {
      profiler_(&event, ncclProfilerNetEventStop, nullptr, 0, nullptr);
      event = nullptr;
    }
}

void ConnectionTelemetry::failure_event(void* phandle, const QpLane& failed, size_t bytes, int status,
                                        uint32_t vendor_err, const char* diag_id) {
  const int64_t id = nccl::kNetRailscopePluginId;
  nccl::RailscopeNetQp_v1 qp{
      ncclProfileQp, failed.lane, static_cast<int>(failed.qp->qp_num), IBV_WR_RDMA_WRITE_WITH_IMM, 0, bytes};
  void* eh = nullptr;
  profiler_(&eh, ncclProfilerNetEventStart, phandle, id, &qp);
  if (eh == nullptr) return;
  // A failure that is not a completion's (a stall, a dead peer, a port down, a peer's bad message)
  // still needs a non-zero status to count as an error: IBV_WC_GENERAL_ERR, with the diagnosis id.
  nccl::RailscopeNetCompletion_v1 done{status != 0 ? status : static_cast<int>(IBV_WC_GENERAL_ERR),
                                       static_cast<int>(vendor_err), 0, diag_id, -1};
  profiler_(&eh, ncclProfilerNetEventUpdateAndStop, nullptr, id, &done);
}

}  // namespace railscope::net::verbs
