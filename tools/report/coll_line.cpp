// SPDX-License-Identifier: Apache-2.0
#include "tools/report/coll_line.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

namespace railscope::report {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// A member as the general reader sees it: absent (nullptr), or its value (the last one when a key
// repeats, as nlohmann keeps it).
using Member = std::optional<element>;

bool is_number(const element& e) {
  const element_type t = e.type();
  return t == element_type::INT64 || t == element_type::UINT64 || t == element_type::DOUBLE;
}

// profile_reader.cpp's int_or: absent or not a number gives `def`; a number T cannot hold is left to
// the general reader (false), which reports it.
template <typename T>
bool int_or(const Member& m, T def, T& out) {
  static_assert(std::is_integral_v<T>);
  if (!m || !is_number(*m)) {
    out = def;
    return true;
  }
  using L = std::numeric_limits<T>;
  switch (m->type()) {
    case element_type::UINT64: {
      const uint64_t v = m->get_uint64().value_unsafe();
      if (v > static_cast<uint64_t>(L::max())) return false;
      out = static_cast<T>(v);
      return true;
    }
    case element_type::INT64: {
      const int64_t v = m->get_int64().value_unsafe();
      if (!std::in_range<T>(v)) return false;
      out = static_cast<T>(v);
      return true;
    }
    default: {
      const double v = m->get_double().value_unsafe();
      const double above = std::ldexp(1.0, L::digits);
      const double below = L::is_signed ? -above : 0.0;
      if (!(std::isfinite(v) && v == std::trunc(v) && v >= below && v < above)) return false;
      out = static_cast<T>(v);
      return true;
    }
  }
}

template <typename T>
bool opt_int(const Member& m, std::optional<T>& out) {
  if (!m || !is_number(*m)) {
    out.reset();
    return true;
  }
  T v{};
  if (!int_or<T>(m, T{}, v)) return false;
  out = v;
  return true;
}

double as_double(const element& e) {
  switch (e.type()) {
    case element_type::UINT64: return static_cast<double>(e.get_uint64().value_unsafe());
    case element_type::INT64: return static_cast<double>(e.get_int64().value_unsafe());
    default: return e.get_double().value_unsafe();
  }
}

// profile_reader.cpp's opt_double: a float in [0, max]; absent or not a number: nullopt.
bool opt_double(const Member& m, double max, std::optional<double>& out) {
  if (!m || !is_number(*m)) {
    out.reset();
    return true;
  }
  const double v = as_double(*m);
  if (!std::isfinite(v) || v < 0 || v > max) return false;
  out = v;
  return true;
}
bool double_or(const Member& m, double max, double& out) {
  std::optional<double> v;
  if (!opt_double(m, max, v)) return false;
  out = v.value_or(0.0);
  return true;
}

void string_or(const Member& m, const char* def, std::string& out) {
  if (m && m->type() == element_type::STRING)
    out.assign(m->get_string().value_unsafe());
  else
    out.assign(def);
}
bool bool_or(const Member& m, bool def) {
  return m && m->type() == element_type::BOOL ? m->get_bool().value_unsafe() : def;
}

// The members of a `coll`/`p2p` record the reader takes (profile_reader.cpp's parse_coll).
enum Key : size_t {
  kType,
  kComm,
  kRank,
  kNranks,
  kSeq,
  kOrd,
  kOp,
  kPeer,
  kBytes,
  kCount,
  kDtype,
  kRedop,
  kTimeUs,
  kBusbw,
  kAlgbw,
  kStart,
  kEnd,
  kComplete,
  kTiming,
  kWaits,
  kAlgo,
  kProto,
  kChannels,
  kNnodes,
  kKeys
};
constexpr std::array<std::string_view, kKeys> kNames = {
    "type",        "comm",     "rank",   "nranks", "seq",     "ord",       "op",        "peer",
    "bytes",       "count",    "dtype",  "redop",  "time_us", "busbw_gbs", "algbw_gbs", "start_unix_ns",
    "end_unix_ns", "complete", "timing", "waits",  "algo",    "proto",     "channels",  "nnodes"};

enum WaitKey : size_t { kCh, kWPeer, kDir, kWBytes, kPeerWait, kNet, kGpuWait, kWaitKeys };
constexpr std::array<std::string_view, kWaitKeys> kWaitNames = {
    "ch", "peer", "dir", "bytes", "peer_wait_us", "net_us", "gpu_wait_us"};

template <size_t N>
void collect(const simdjson::dom::object& obj, const std::array<std::string_view, N>& names,
             std::array<Member, N>& out) {
  for (Member& m : out) m.reset();
  for (const auto field : obj)
    for (size_t k = 0; k < N; ++k)
      if (field.key == names[k]) {
        out[k] = field.value;  // the last of a repeated key wins, as in the general reader
        break;
      }
}

bool read_wait(const simdjson::dom::object& obj, WaitRow& w) {
  std::array<Member, kWaitKeys> m;
  collect(obj, kWaitNames, m);
  std::string dir;
  string_or(m[kDir], "", dir);
  w.is_send = dir == "send";
  return int_or<int>(m[kCh], 0, w.channel) && int_or<int>(m[kWPeer], -1, w.peer) &&
         int_or<uint64_t>(m[kWBytes], 0, w.bytes) &&
         double_or(m[kPeerWait], kMaxMicroseconds, w.peer_wait_us) &&
         double_or(m[kNet], kMaxMicroseconds, w.net_us) &&
         double_or(m[kGpuWait], kMaxMicroseconds, w.gpu_wait_us);
}

}  // namespace

bool CollLineParser::parse(const std::string& line, CollRow& row) {
  padded_.assign(line);
  padded_.append(simdjson::SIMDJSON_PADDING, ' ');
  element root;
  if (parser_.parse(padded_.data(), line.size(), false).get(root) != simdjson::SUCCESS) return false;
  simdjson::dom::object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) return false;
  std::array<Member, kKeys> m;
  collect(obj, kNames, m);
  if (!m[kType] || m[kType]->type() != element_type::STRING) return false;
  const std::string_view type = m[kType]->get_string().value_unsafe();
  if (type != "coll" && type != "p2p") return false;
  row.p2p = type == "p2p";
  string_or(m[kComm], "", row.comm);
  string_or(m[kOp], "Unknown", row.op);
  string_or(m[kDtype], "", row.dtype);
  string_or(m[kRedop], "", row.redop);
  string_or(m[kTiming], "", row.timing);
  string_or(m[kAlgo], "", row.algo);
  string_or(m[kProto], "", row.proto);
  row.complete = bool_or(m[kComplete], true);
  if (!(int_or<int>(m[kRank], -1, row.rank) && int_or<int>(m[kNranks], 0, row.nranks) &&
        int_or<uint64_t>(m[kSeq], 0, row.seq) && opt_int<uint64_t>(m[kOrd], row.ord) &&
        int_or<int>(m[kPeer], -1, row.peer) && int_or<uint64_t>(m[kBytes], 0, row.bytes) &&
        int_or<uint64_t>(m[kCount], 0, row.count) && opt_double(m[kTimeUs], kMaxMicroseconds, row.time_us) &&
        opt_double(m[kBusbw], kMaxGbs, row.busbw_gbs) && opt_double(m[kAlgbw], kMaxGbs, row.algbw_gbs) &&
        int_or<uint64_t>(m[kStart], 0, row.start_unix_ns) && int_or<uint64_t>(m[kEnd], 0, row.end_unix_ns) &&
        int_or<int>(m[kChannels], 0, row.channels) && int_or<int>(m[kNnodes], 0, row.nnodes)))
    return false;
  row.waits.clear();
  simdjson::dom::array waits;
  if (m[kWaits] && m[kWaits]->get_array().get(waits) == simdjson::SUCCESS)
    for (const element w : waits) {
      simdjson::dom::object wait;
      if (w.get_object().get(wait) != simdjson::SUCCESS) continue;
      if (!read_wait(wait, row.waits.emplace_back())) return false;
    }
  return true;
}

}  // namespace railscope::report
