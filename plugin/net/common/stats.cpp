// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/common/stats.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>

#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/core/safe_file.h"

namespace railscope::net {
namespace {

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

uint64_t LatencyHistogram::total() const {
  uint64_t t = 0;
  for (auto c : counts_) t += c;
  return t;
}

uint64_t LatencyHistogram::quantile_upper_us(double q) const {
  uint64_t t = total();
  if (t == 0) return 0;
  auto want = static_cast<uint64_t>(q * static_cast<double>(t));
  if (want >= t) want = t - 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen > want) return uint64_t{1} << i;
  }
  return uint64_t{1} << (kBuckets - 1);
}

void ConnStats::error(std::string_view id) {
  for (size_t i = 0; i < error_ids.size(); ++i) {
    if (error_ids[i] == id || error_ids[i].empty()) {
      error_ids[i] = id;
      ++error_counts[i];
      return;
    }
  }
}

std::string stats_json(const ConnIdentity& who, const ConnStats& s) {
  std::string hist;
  for (size_t i = 0; i < s.latency.counts().size(); ++i)
    hist += fmt::format("{}{}", i ? "," : "", s.latency.counts()[i]);
  std::string errors;
  for (size_t i = 0; i < s.error_ids.size() && !s.error_ids[i].empty(); ++i)
    errors += fmt::format("{}\"{}\":{}", errors.empty() ? "" : ",", s.error_ids[i], s.error_counts[i]);
  std::string fabric;
  for (const auto& [category, delta] : who.fabric)
    fabric += fmt::format("{}\"{}\":{}", fabric.empty() ? "" : ",", category, delta);
  if (!who.fabric.empty()) fabric = fmt::format(",\"fabric\":{{{}}}", fabric);
  return fmt::format(
      "{{\"engine\":\"{}\",\"role\":\"{}\",\"final\":{},\"pid\":{},\"local\":{{\"host\":\"{}\",\"dev\":\"{}"
      "\",\"gid\":"
      "\"{}\"}},"
      "\"peer\":{{\"host\":\"{}\",\"dev\":\"{}\",\"gid\":\"{}\",\"addr\":\"{}\"}},\"qps\":{},\"path_mtu\":{},"
      "\"seconds\":{:.6f},\"bytes\":{},\"messages\":{},\"max_inflight\":{},\"not_ready\":{},"
      "\"eager\":{},\"rts\":{},\"ahead\":{},\"cts_writes\":{},"
      "\"latency_us\":{{\"bucket_upper_bounds\":\"2^i\",\"counts\":[{}],\"p50_le\":{},\"p99_le\":{}}},"
      "\"errors\":{{{}}}{}{}}}",
      who.engine, who.role, who.final, getpid(), json_escape(who.local_host), json_escape(who.local_dev),
      who.local_gid, json_escape(who.peer_host), json_escape(who.peer_dev), who.peer_gid,
      json_escape(who.peer_addr), who.qps, who.path_mtu, who.seconds, s.bytes, s.messages, s.max_inflight,
      s.not_ready, s.eager, s.rts, s.ahead, s.cts_writes, hist, s.latency.quantile_upper_us(0.5),
      s.latency.quantile_upper_us(0.99), errors, fabric, who.extra_json);
}

bool stats_enabled() { return params::raw("RAILSCOPE_NET_STATS").has_value(); }

void emit_stats_line(const std::string& line) {
  auto target = params::raw("RAILSCOPE_NET_STATS");
  if (!target) return;
  static std::mutex mutex;
  static bool warned = false;
  std::lock_guard lock(mutex);
  std::string path = *target;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    path = fmt::format("{}/railscope-net-{}-{}.jsonl", path, host, getpid());
  }
  std::string why;
  const int fd = core::open_for_append(path, &why);
  if (fd < 0) {
    if (!warned) RS_WARN("NET/railscope : cannot write the RAILSCOPE_NET_STATS file: {}", why);
    warned = true;
    return;
  }
  std::string out = line + "\n";
  ssize_t n = ::write(fd, out.data(), out.size());
  (void)n;
  ::close(fd);
}

}  // namespace railscope::net
