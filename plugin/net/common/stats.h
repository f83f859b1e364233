// SPDX-License-Identifier: Apache-2.0
// Per-connection instrumentation: bytes and messages, requests in flight, post-to-completion time
// as a log2-spaced histogram, errors by diagnosis id. Updated on the data path without allocation or
// locks (a connection is driven by one proxy thread); written as JSON lines to RAILSCOPE_NET_STATS (a
// file, or a folder that receives railscope-net-<host>-<pid>.jsonl): one at close ("final":true) and,
// while the connection lives and moves data, one every RAILSCOPE_NET_STATS_INTERVAL seconds
// ("final":false; StatsChange), so a job that hangs or is killed leaves its figures behind. The verbs engine
// adds its ports' counter deltas since the connection was made, by category
// ("fabric":{"loss":..,"congestion":..,...}).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railscope::net {

// Bucket i counts samples in [2^(i-1), 2^i) µs; bucket 0 counts samples under 1 µs.
class LatencyHistogram {
 public:
  static constexpr int kBuckets = 32;
  static int bucket_of(uint64_t us) {
    if (us == 0) return 0;
    int b = 64 - __builtin_clzll(us);
    return b < kBuckets ? b : kBuckets - 1;
  }
  void add(uint64_t us) { ++counts_[static_cast<size_t>(bucket_of(us))]; }
  const std::array<uint64_t, kBuckets>& counts() const { return counts_; }
  uint64_t total() const;
  // Upper bound (µs) of the bucket holding quantile q in [0,1]; 0 when empty.
  uint64_t quantile_upper_us(double q) const;

 private:
  std::array<uint64_t, kBuckets> counts_{};
};

struct ConnStats {
  uint64_t bytes = 0;
  uint64_t messages = 0;
  uint64_t inflight = 0;
  uint64_t max_inflight = 0;
  uint64_t not_ready = 0;   // isend/irecv answered "call again"
  uint64_t eager = 0;       // verbs eager protocol: messages carried whole through the ring
  uint64_t rts = 0;         // ... and messages that asked first (request-to-send)
  uint64_t ahead = 0;       // ... and messages written into a clear-to-send the receiver wrote ahead
  uint64_t cts_writes = 0;  // ... the receiver's RDMA writes of clear-to-sends (ahead or answering)
  LatencyHistogram latency;
  std::array<std::string_view, 8> error_ids{};
  std::array<uint64_t, 8> error_counts{};

  void posted() {
    if (++inflight > max_inflight) max_inflight = inflight;
  }
  void completed(uint64_t nbytes, uint64_t us) {
    --inflight;
    bytes += nbytes;
    ++messages;
    latency.add(us);
  }
  void error(std::string_view id);
};

struct ConnIdentity {
  std::string engine = "verbs";  // or "tcp": both engines write these statistics
  std::string role;              // "send" / "recv"
  std::string local_host, local_dev, local_gid;
  std::string peer_host, peer_dev, peer_gid, peer_addr;
  int qps = 0;
  int path_mtu = 0;
  double seconds = 0;
  bool final = true;  // at close; false: a periodic line of a live connection
  // Port counter deltas by category (verbs engine); empty: no "fabric" object.
  std::vector<std::pair<std::string_view, uint64_t>> fabric;
  // Engine-specific members, already JSON, each with its leading comma (verbs: "rail_rate"); "" = none.
  std::string extra_json;
};

// Whether a periodic line is worth writing: only a connection that moved something since the last
// line (a message completed, or the number in flight changed) writes one. Idle connections stay silent
// (a rank of an all-to-all holds thousands of comms, most idle at any time), and a hung one has already
// written the state it hangs in: the line after it last changed.
class StatsChange {
 public:
  // True when `s` differs from what the previous call saw (the first call compares with zero).
  bool moved(const ConnStats& s) {
    if (s.messages == messages_ && s.inflight == inflight_) return false;
    messages_ = s.messages;
    inflight_ = s.inflight;
    return true;
  }

 private:
  uint64_t messages_ = 0, inflight_ = 0;
};

std::string stats_json(const ConnIdentity& who, const ConnStats& s);
// Whether RAILSCOPE_NET_STATS is set.
bool stats_enabled();
// Appends one line to RAILSCOPE_NET_STATS when it is set; failures are logged once, never fatal.
void emit_stats_line(const std::string& line);

}  // namespace railscope::net
