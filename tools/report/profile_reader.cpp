// SPDX-License-Identifier: Apache-2.0
#include "tools/report/profile_reader.h"

#include "tools/report/coll_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace railscope::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Per file: the first few skipped lines are listed one by one, the rest only counted.
constexpr size_t kLineProblemsShown = 5;

// A member whose number the record cannot hold (out of range, not finite, a fraction where an integer is
// due): the whole line is skipped and reported with its number, never converted with undefined behaviour.
struct BadValue : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An integer member as T; absent, null or not a number (e.g. a string): `def`, as before.
template <typename T>
T int_or(const json& j, const char* key, T def) {
  static_assert(std::is_integral_v<T>);
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return def;
  using L = std::numeric_limits<T>;
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if (v <= static_cast<uint64_t>(L::max())) return static_cast<T>(v);
  } else if (it->is_number_integer()) {
    const int64_t v = it->get<int64_t>();
    if (std::in_range<T>(v)) return static_cast<T>(v);
  } else {
    // A float: whole and strictly inside the type's range (2^digits is the first value above max).
    const double v = it->get<double>();
    const double above = std::ldexp(1.0, L::digits);
    const double below = L::is_signed ? -above : 0.0;
    if (std::isfinite(v) && v == std::trunc(v) && v >= below && v < above) return static_cast<T>(v);
  }
  throw BadValue(fmt::format("{} = {} is not an integer in [{}, {}]", key, it->dump(), L::min(), L::max()));
}

template <typename T>
std::optional<T> opt_int(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return int_or<T>(j, key, 0);
}

// A float member in [0, max]; absent, null or not a number: nullopt.
std::optional<double> opt_double(const json& j, const char* key, double max) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || v > max)
    throw BadValue(fmt::format("{} = {} is outside [0, {:g}]", key, it->dump(), max));
  return v;
}
double double_or(const json& j, const char* key, double max) { return opt_double(j, key, max).value_or(0.0); }

std::string string_or(const json& j, const char* key, const char* def) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string(def);
}
bool bool_or(const json& j, const char* key, bool def) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : def;
}

CollRow parse_coll(const json& j) {
  CollRow r;
  r.comm = string_or(j, "comm", "");
  r.rank = int_or<int>(j, "rank", -1);
  r.nranks = int_or<int>(j, "nranks", 0);
  r.seq = int_or<uint64_t>(j, "seq", 0);
  r.ord = opt_int<uint64_t>(j, "ord");
  r.op = string_or(j, "op", "Unknown");
  r.p2p = string_or(j, "type", "") == "p2p";
  r.peer = int_or<int>(j, "peer", -1);
  r.bytes = int_or<uint64_t>(j, "bytes", 0);
  r.count = int_or<uint64_t>(j, "count", 0);
  r.dtype = string_or(j, "dtype", "");
  r.redop = string_or(j, "redop", "");
  r.algo = string_or(j, "algo", "");
  r.proto = string_or(j, "proto", "");
  r.channels = int_or<int>(j, "channels", 0);
  r.nnodes = int_or<int>(j, "nnodes", 0);
  r.time_us = opt_double(j, "time_us", kMaxMicroseconds);
  r.busbw_gbs = opt_double(j, "busbw_gbs", kMaxGbs);
  r.algbw_gbs = opt_double(j, "algbw_gbs", kMaxGbs);
  r.start_unix_ns = int_or<uint64_t>(j, "start_unix_ns", 0);
  r.end_unix_ns = int_or<uint64_t>(j, "end_unix_ns", 0);
  r.complete = bool_or(j, "complete", true);
  r.timing = string_or(j, "timing", "");
  if (auto it = j.find("waits"); it != j.end() && it->is_array()) {
    for (const json& w : *it) {
      if (!w.is_object()) continue;
      WaitRow row;
      row.channel = int_or<int>(w, "ch", 0);
      row.peer = int_or<int>(w, "peer", -1);
      row.is_send = string_or(w, "dir", "") == "send";
      row.bytes = int_or<uint64_t>(w, "bytes", 0);
      row.peer_wait_us = double_or(w, "peer_wait_us", kMaxMicroseconds);
      row.net_us = double_or(w, "net_us", kMaxMicroseconds);
      row.gpu_wait_us = double_or(w, "gpu_wait_us", kMaxMicroseconds);
      r.waits.push_back(row);
    }
  }
  return r;
}

DiagRow parse_diag(const json& j, const std::string& host) {
  DiagRow d;
  d.id = string_or(j, "id", "?");
  d.severity = string_or(j, "severity", "");
  d.comm = string_or(j, "comm", "");
  d.rank = int_or<int>(j, "rank", -1);
  d.op = string_or(j, "op", "");
  d.seq = opt_int<uint64_t>(j, "seq");
  d.detail = string_or(j, "detail", "");
  d.fix = string_or(j, "fix", "");
  d.unix_ns = int_or<uint64_t>(j, "unix_ns", 0);
  d.host = host;
  d.ord = opt_int<uint64_t>(j, "ord");
  d.count = int_or<uint64_t>(j, "count", 0);
  d.dtype = string_or(j, "dtype", "");
  d.bytes = int_or<uint64_t>(j, "bytes", 0);
  d.start_unix_ns = int_or<uint64_t>(j, "start_unix_ns", 0);
  return d;
}

void parse_fabric(const json& j, const std::string& host, std::vector<FabricRow>& out) {
  const uint64_t start = int_or<uint64_t>(j, "start_unix_ns", 0), end = int_or<uint64_t>(j, "end_unix_ns", 0);
  auto it = j.find("ports");
  if (it == j.end() || !it->is_array()) return;
  for (const json& p : *it) {
    if (!p.is_object()) continue;
    FabricRow row;
    row.host = host;
    row.port = string_or(p, "port", "?");
    row.state = string_or(p, "state", "");
    row.start_unix_ns = start;
    row.end_unix_ns = end;
    for (size_t k = 0; k < row.counts.size(); ++k)
      row.counts[k] = int_or<uint64_t>(p, kFabricCategories[k], 0);
    out.push_back(std::move(row));
  }
}

// A net stats line (no "type"; "engine" and "local" instead): each "rail_rate" entry with a port name.
void parse_net_stats(const json& j, std::vector<RailRateSample>& out) {
  auto rates = j.find("rail_rate");
  if (rates == j.end() || !rates->is_array()) return;
  std::string host = "?", dev, peer;
  if (auto l = j.find("local"); l != j.end() && l->is_object()) {
    host = string_or(*l, "host", "?");
    dev = string_or(*l, "dev", "");
  }
  if (auto p = j.find("peer"); p != j.end() && p->is_object()) peer = string_or(*p, "addr", "");
  const auto pid = int_or<int64_t>(j, "pid", 0);
  const std::string connection = fmt::format("{} {} {}", string_or(j, "role", ""), dev, peer);
  for (const json& r : *rates) {
    if (!r.is_object()) continue;
    RailRateSample s;
    s.host = host;
    s.pid = pid;
    s.connection = connection;
    s.port = string_or(r, "port", "");
    s.bytes = int_or<uint64_t>(r, "bytes", 0);
    s.busy_s = double_or(r, "busy_s", kMaxMicroseconds / 1e6);
    s.transfers = int_or<uint64_t>(r, "transfers", 0);
    if (!s.port.empty()) out.push_back(std::move(s));
  }
}

uint64_t dropped_events(const json& j) {
  uint64_t sum = 0;
  if (auto it = j.find("dropped"); it != j.end() && it->is_object())
    for (const auto& [kind, v] : it->items())
      if (v.is_number() && __builtin_add_overflow(sum, int_or<uint64_t>(it.value(), kind.c_str(), 0), &sum))
        throw BadValue("dropped: the counts add up to more than 2^64");
  return sum;
}

// What one line adds to `out`; throws BadValue (nothing added) for a number out of range.
void read_line(const json& j, const std::string& where, FileCursor& cur, ProfileSet& out) {
  std::string& host = cur.host;
  const std::string type = string_or(j, "type", "");
  if (type == "header") {
    const int version = int_or<int>(j, "version", 0);
    if (string_or(j, "schema", "") != "railscope.profile")
      out.problems.push_back(fmt::format("{}: not a railscope profile header", where));
    else if (version > 1)
      out.problems.push_back(
          fmt::format("{}: schema version {} is newer than this reader (1); reading the members it knows",
                      where, version));
    host = string_or(j, "hostname", "");
    cur.pid = int_or<int64_t>(j, "pid", 0);
    out.hosts.push_back(host);
    if (auto tag = string_or(j, "tag", ""); !tag.empty()) out.tags.push_back(tag);
    if (auto net = string_or(j, "net", ""); !net.empty()) out.nets.push_back(net);
    if (auto plugin = string_or(j, "net_plugin", ""); !plugin.empty()) out.net_plugins.push_back(plugin);
  } else if (type == "coll" || type == "p2p") {
    out.colls.push_back(parse_coll(j));
    out.colls.back().file = cur.index;
  } else if (type == "fabric") {
    parse_fabric(j, host, out.fabric);
  } else if (type == "diag") {
    out.diags.push_back(parse_diag(j, host));
    out.diags.back().file = cur.index;
  } else if (type.empty() && j.contains("engine")) {
    parse_net_stats(j, out.rail_rates);
  } else if (type == "summary") {
    out.finished.push_back({string_or(j, "comm", ""), int_or<int>(j, "rank", -1)});
    const uint64_t dropped = dropped_events(j);
    if (__builtin_add_overflow(out.dropped_events, dropped, &out.dropped_events))
      throw BadValue("dropped: the counts of all files add up to more than 2^64");
  }
}

void add_coll(ProfileSet& out, CollRow& c) {
  if (!out.fold_waits) {
    out.colls.push_back(c);
    return;
  }
  for (const WaitRow& w : c.waits) {
    WaitSum& sum = out.folded_waits[{c.rank, w.peer}];
    sum.peer_wait_us += w.peer_wait_us;
    sum.net_us += w.net_us;
  }
  std::vector<WaitRow> waits = std::move(c.waits);  // stays with `c`, whose buffer the caller reuses
  c.waits.clear();
  out.colls.push_back(c);
  c.waits = std::move(waits);
}

void skip_line(FileCursor& cur, ProfileSet& out, const std::string& why) {
  if (cur.skipped++ < kLineProblemsShown) out.problems.push_back(why);
}

void read_file(const fs::path& path, ProfileSet& out) {
  std::ifstream in(path);
  if (!in) {
    out.problems.push_back(fmt::format("{}: cannot open", path.string()));
    return;
  }
  FileCursor cur;
  cur.index = static_cast<uint32_t>(out.files.size());
  cur.path = path.string();
  out.files.push_back(cur.path);
  out.file_hosts.emplace_back();
  out.file_pids.push_back(0);
  std::string line;
  while (std::getline(in, line)) {
    // getline stops at the end of the file without a newline only on the last line.
    if (in.eof())
      report_torn_line(line, cur, out);
    else
      read_profile_line(line, cur, out);
  }
  if (cur.skipped > kLineProblemsShown)
    out.problems.push_back(fmt::format("{}: {} lines skipped in all ({} more than listed above)", cur.path,
                                       cur.skipped, cur.skipped - kLineProblemsShown));
}

}  // namespace

void read_profile_line(const std::string& line, FileCursor& cur, ProfileSet& out) {
  ++cur.line;
  if (line.empty()) return;
  // Nearly every line is a collective's: the fast path, without a DOM or a ProfileSet per line.
  thread_local CollLineParser fast;
  thread_local CollRow row;
  if (fast.parse(line, row)) {
    row.file = cur.index;
    add_coll(out, row);
    return;
  }
  const std::string where = fmt::format("{}:{}", cur.path, cur.line);
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    skip_line(cur, out, fmt::format("{}: not a JSON object (skipped)", where));
    return;
  }
  // A line's records are added only once the whole line has been read.
  ProfileSet one;
  FileCursor line_cur = cur;
  try {
    read_line(j, where, line_cur, one);
  } catch (const BadValue& e) {
    skip_line(cur, out, fmt::format("{}: {} (skipped)", where, e.what()));
    return;
  }
  cur.host = std::move(line_cur.host);
  cur.pid = line_cur.pid;
  if (cur.index < out.files.size()) {
    out.file_hosts[cur.index] = cur.host;
    out.file_pids[cur.index] = cur.pid;
  }
  for (auto& p : one.problems) out.problems.push_back(std::move(p));
  for (auto& h : one.hosts) out.hosts.push_back(std::move(h));
  for (auto& t : one.tags) out.tags.push_back(std::move(t));
  for (auto& n : one.nets) out.nets.push_back(std::move(n));
  for (auto& n : one.net_plugins) out.net_plugins.push_back(std::move(n));
  for (auto& f : one.fabric) out.fabric.push_back(std::move(f));
  for (auto& c : one.colls) add_coll(out, c);
  for (auto& d : one.diags) out.diags.push_back(std::move(d));
  for (auto& r : one.rail_rates) out.rail_rates.push_back(std::move(r));
  for (auto& f : one.finished) out.finished.push_back(std::move(f));
  if (__builtin_add_overflow(out.dropped_events, one.dropped_events, &out.dropped_events)) {
    out.dropped_events = UINT64_MAX;
    skip_line(cur, out,
              fmt::format("{}: dropped: the counts of all files add up to more than 2^64 (skipped)", where));
  }
}

void report_torn_line(const std::string& line, FileCursor& cur, ProfileSet& out) {
  // The writer ends every record with a newline: a last line without one was cut short, unless the
  // record itself is whole (then only the newline is missing).
  if (line.empty()) return;
  if (const json j = json::parse(line, nullptr, false); !j.is_discarded() && j.is_object()) {
    read_profile_line(line, cur, out);
    return;
  }
  ++cur.line;
  out.problems.push_back(
      fmt::format("{}:{}: the last line ends mid-record (the process was stopped while writing it); ignored",
                  cur.path, cur.line));
}

ProfileSet read_profiles(const std::vector<std::string>& paths, bool fold_waits) {
  ProfileSet out;
  out.paths = paths;
  out.fold_waits = fold_waits;
  for (const std::string& p : paths) {
    const std::vector<std::string> files = profile_files(p);
    if (files.empty())
      throw std::runtime_error(fmt::format("{}: no railscope profile or net stats file (*.jsonl) in it", p));
    for (const auto& f : files) read_file(f, out);
  }
  return out;
}

std::vector<std::string> profile_files(const std::string& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return {p};
  if (!fs::is_directory(p, ec)) throw std::runtime_error(fmt::format("{}: no such file or directory", p));
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(p, ec))
    if (e.is_regular_file() && e.path().extension() == ".jsonl") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace railscope::report
