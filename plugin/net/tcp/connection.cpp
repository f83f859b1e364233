// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/connection.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "railscope/core/log.h"
#include "railscope/core/params.h"

namespace railscope::net::tcp {

TcpConnection::TcpConnection(Fd ctrl, std::vector<Fd> data, ConnParams params, bool sending)
    : ctrl_(std::move(ctrl)), params_(std::move(params)), sending_(sending) {
  for (Fd& fd : data) {
    auto lane = std::make_unique<Lane>();
    lane->fd = std::move(fd);
    lanes_.push_back(std::move(lane));
  }
  params_.nsocks = static_cast<int>(lanes_.size());
  if (params_.nthreads > params_.nsocks) params_.nthreads = params_.nsocks;
  if (params_.nthreads < 0) params_.nthreads = 0;
  if (stats_enabled()) {
    stats_period_ = std::chrono::seconds(params::get_int("RAILSCOPE_NET_STATS_INTERVAL"));
    next_stats_ = opened_ + stats_period_;
  }
}

TcpConnection::~TcpConnection() {
  for (auto& w : workers_) w->stop();  // before the lanes' sockets close
  inline_.reset();
}

Status TcpConnection::start() {
  allow_slow_reader(ctrl_.get());
  for (auto& lane : lanes_) allow_slow_reader(lane->fd.get());
  if (sending_ && params_.zerocopy != ZeroCopyMode::Off) setup_zerocopy();
  if (params_.nthreads == 0) {  // the caller's thread serves every lane (progress_lanes)
    std::vector<Lane*> all;
    for (auto& lane : lanes_) all.push_back(lane.get());
    inline_ = std::make_unique<LaneWorker>(std::move(all), sending_, &error_, where(), params_.timeout_s,
                                           zc_.get());
    return Status::success();
  }
  for (int t = 0; t < params_.nthreads; ++t) {
    std::vector<Lane*> mine;
    for (int j = t; j < params_.nsocks; j += params_.nthreads)
      mine.push_back(lanes_[static_cast<size_t>(j)].get());
    workers_.push_back(std::make_unique<LaneWorker>(std::move(mine), sending_, &error_, where(),
                                                    params_.timeout_s, zc_.get()));
    if (Status st = workers_.back()->start(sending_ ? "rs-tcp-send" : "rs-tcp-recv"); !st.ok()) return st;
  }
  return Status::success();
}

// SO_ZEROCOPY on every data socket, or on none: a kernel that refuses it (before 4.14, or a
// socket type without support) leaves the connection with copy sends.
void TcpConnection::setup_zerocopy() {
  for (auto& lane : lanes_) {
    if (enable_zerocopy(lane->fd.get())) continue;
    int err = errno;
    if (params_.zerocopy == ZeroCopyMode::On)
      RS_WARN(
          "NET/railscope : RAILSCOPE_TCP_ZEROCOPY=on but SO_ZEROCOPY failed on the connection with {}: {}; "
          "using copy sends",
          where(), std::strerror(err));
    else
      RS_INFO(NCCL_NET, "NET/railscope : SO_ZEROCOPY failed on the connection with {}: {}; using copy sends",
              where(), std::strerror(err));
    return;
  }
  zc_ = std::make_unique<ZeroCopyShared>();
  zc_->mode = params_.zerocopy;
  zc_->min_bytes = params_.zerocopy_min;
  zc_->peer = where();
  zc_->active.store(true, std::memory_order_relaxed);
  for (auto& lane : lanes_) lane->zc = std::make_unique<LaneZeroCopy>();
}

std::string TcpConnection::where() const {
  return fmt::format("{} ({}) over {}", params_.peer_host, params_.peer_addr, params_.local_dev);
}

void TcpConnection::watch_acknowledgements_due() {
  const Clock::time_point now = Clock::now();
  if (now < next_watch_ || failed()) return;
  next_watch_ = now + std::chrono::seconds(1);
  auto unresponsive = [&](const Fd& fd) {
    const std::optional<AckState> a = ack_state(fd.get());
    return a && peer_unresponsive(*a, params_.timeout_s);
  };
  bool silent = unresponsive(ctrl_);
  for (size_t i = 0; i < lanes_.size() && !silent; ++i) silent = unresponsive(lanes_[i]->fd);
  if (silent) error_.set(io_failure("send", -1, ETIMEDOUT, where(), params_.timeout_s));
}

Status TcpConnection::fail(const Status& st) {
  error_.set(st);
  return failure();
}

Status TcpConnection::failure() {
  Status st = error_.get();
  if (!error_counted_) {
    stats_.error(st.finding().id());
    error_counted_ = true;
  }
  return st;
}

void TcpConnection::queue_chunks(std::byte* base, size_t size, uint64_t seq, std::atomic<int>* pending) {
  ChunkPlan plan = plan_chunks(size, params_.nsocks, params_.min_chunk, seq);
  pending->fetch_add(plan.count, std::memory_order_relaxed);
  uint32_t woken = 0;  // bit per worker
  for (int i = 0; i < plan.count; ++i) {
    int s = plan.socket(i, params_.nsocks);
    // Capacity: one task per lane per request and at most kPoolSize * kMaxRecvs requests' messages.
    lanes_[static_cast<size_t>(s)]->ring.push(Task{base + plan.offset(i), plan.length(i, size), 0, pending});
    if (params_.nthreads > 0) woken |= 1u << (s % params_.nthreads);
  }
  if (inline_ != nullptr) return;
  for (int t = 0; t < params_.nthreads; ++t)
    if ((woken & (1u << t)) != 0) workers_[static_cast<size_t>(t)]->wake();
}

void TcpConnection::progress_lanes() {
  if (inline_ != nullptr) {
    inline_->pass();
    return;
  }
  for (auto& w : workers_) w->assist();
}

uint64_t TcpConnection::micros_since(Clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
}

void TcpConnection::periodic_stats_due() {
  const auto now = Clock::now();
  if (now < next_stats_) return;
  next_stats_ = now + stats_period_;
  if (!stats_seen_.moved(stats_)) return;  // idle since the last line
  emit_stats(sending_ ? "send" : "recv", false);
}

void TcpConnection::emit_stats(const char* role, bool final) const {
  if (!stats_enabled()) return;
  ConnIdentity who;
  who.engine = "tcp";
  who.role = role;
  who.final = final;
  who.local_host = params_.local_host;
  who.local_dev = params_.local_dev;
  who.local_gid = params_.local_addr;
  who.peer_host = params_.peer_host;
  who.peer_dev = "";
  who.peer_gid = params_.peer_addr;
  who.peer_addr = params_.peer_addr;
  who.qps = params_.nsocks;
  who.path_mtu = params_.mtu;
  who.seconds = std::chrono::duration<double>(Clock::now() - opened_).count();
  std::string line = stats_json(who, stats_);
  // The TCP engine's own counters ride in the same JSON object.
  if (zc_ != nullptr && !line.empty() && line.back() == '}')
    line.insert(line.size() - 1, ",\"zerocopy\":" + zc_->json());
  emit_stats_line(line);
}

}  // namespace railscope::net::tcp
