// SPDX-License-Identifier: Apache-2.0
// What a TCP send or receive comm shares: the control socket (message headers and small messages,
// driven by NCCL's proxy thread), the data lanes and their helper threads, the first error, and the
// per-connection statistics (plugin/net/common/stats.h, as the verbs engine's).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "plugin/net/common/stats.h"
#include "plugin/net/tcp/lanes.h"
#include "plugin/net/tcp/options.h"
#include "plugin/net/tcp/wire.h"
#include "plugin/net/tcp/zerocopy.h"

namespace railscope::net::tcp {

inline constexpr size_t kPoolSize = 64;  // requests in flight per comm
inline constexpr int kMaxRecvs = 8;      // grouped receive width (== the ABI layer's)

// Agreed at the handshake (the sender's values; both ends use the same).
struct ConnParams {
  int nsocks = 1;
  int nthreads = 1;  // this side's helper threads (<= nsocks); 0: the caller's thread moves the bytes
  uint32_t min_chunk = 512 * 1024;
  uint32_t inline_max = 8 * 1024;
  int timeout_s = 60;
  int sockbuf = 0;
  ZeroCopyMode zerocopy = ZeroCopyMode::Off;  // this side's (sending only)
  uint32_t zerocopy_min = 16 * 1024;
  std::string local_host, local_dev, local_addr;
  std::string peer_host, peer_addr;
  int mtu = 0;
  ncclProfilerCallback_t profiler = nullptr;  // NCCL's (v10+), may be null
};

class TcpConnection {
 public:
  using Clock = std::chrono::steady_clock;
  TcpConnection(Fd ctrl, std::vector<Fd> data, ConnParams params, bool sending);
  virtual ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  Status start();  // helper threads
  const ConnParams& params() const { return params_; }
  std::string where() const;  // "to host (addr) over dev"
  // One JSON stats line (RAILSCOPE_NET_STATS): `final` at close, otherwise a periodic one.
  void emit_stats(const char* role, bool final = true) const;

 protected:
  // Records a failure and returns the connection's first one (later calls keep returning it).
  Status fail(const Status& st);
  // The first failure (set here or by a helper thread), counted once in the statistics.
  Status failure();
  bool failed() const { return error_.failed(); }
  // Whether this sending connection's lanes use MSG_ZEROCOPY (RAILSCOPE_TCP_ZEROCOPY, kernel support).
  bool zerocopy_enabled() const { return zc_ != nullptr; }
  // Queues a message's chunks on the lanes (pending is raised first) and wakes their threads.
  void queue_chunks(std::byte* base, size_t size, uint64_t seq, std::atomic<int>* pending);
  // On the thread that calls isend/irecv/test: with no helper threads (nthreads 0), one non-blocking
  // pass over the lanes; otherwise the same pass over the lanes of each helper that is not serving
  // them right now (LaneWorker::assist).
  void progress_lanes();
  static uint64_t micros_since(Clock::time_point t0);
  void setup_zerocopy();
  // The periodic stats line (RAILSCOPE_NET_STATS_INTERVAL), from test() on the thread that drives the
  // connection, as the verbs engine writes its own: a counter per call, a clock read one call in
  // kStatsClockEvery, a line when the interval is over and the connection posted or completed a
  // message since the last one (an idle connection writes nothing). Stats off: one comparison.
  void periodic_stats() {
    if (stats_period_.count() > 0 && ++stats_calls_ % kStatsClockEvery == 0) periodic_stats_due();
  }
  void periodic_stats_due();
  // Whether the peer still acknowledges what this end sent (peer_unresponsive, plugin/net/common/
  // socket.h), from test(): the sockets drop TCP_USER_TIMEOUT at start() so that a receiver that does
  // not read is no failure, and this takes over its other half. A counter per call, a clock read one
  // call in kWatchClockEvery, the sockets' TCP_INFO once a second.
  void watch_acknowledgements() {
    if (++watch_calls_ % kWatchClockEvery == 0) watch_acknowledgements_due();
  }
  void watch_acknowledgements_due();

  Fd ctrl_;
  ConnParams params_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unique_ptr<ZeroCopyShared> zc_;  // before workers_: they use it until they stop
  std::vector<std::unique_ptr<LaneWorker>> workers_;
  std::unique_ptr<LaneWorker> inline_;  // nthreads 0: never started, driven by progress_lanes()
  ErrorState error_;
  bool error_counted_ = false;
  ConnStats stats_;
  Clock::time_point opened_ = Clock::now();
  bool sending_;

 private:
  static constexpr uint32_t kStatsClockEvery = 16;
  static constexpr uint32_t kWatchClockEvery = 64;
  uint32_t watch_calls_ = 0;
  Clock::time_point next_watch_{};
  std::chrono::seconds stats_period_{0};  // 0: no periodic line
  Clock::time_point next_stats_{};
  uint32_t stats_calls_ = 0;
  StatsChange stats_seen_;  // what the last periodic line showed
};

}  // namespace railscope::net::tcp
