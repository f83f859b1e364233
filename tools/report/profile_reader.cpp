#include "tools/report/profile_reader.h"

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

// Plausible bounds of the float members (docs/profile-format.md): a duration of more than a million
// seconds or a bandwidth above 10 PB/s is not a measurement; sums of many of them stay finite.
constexpr double kMaxMicroseconds = 1e12;
constexpr double kMaxGbs = 1e7;

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
  r.op = string_or(j, "op", "Unknown");
  r.p2p = string_or(j, "type", "") == "p2p";
  r.peer = int_or<int>(j, "peer", -1);
  r.bytes = int_or<uint64_t>(j, "bytes", 0);
  r.count = int_or<uint64_t>(j, "count", 0);
  r.dtype = string_or(j, "dtype", "");
  r.redop = string_or(j, "redop", "");
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
  if (auto it = j.find("seq"); it != j.end() && it->is_number()) d.seq = int_or<uint64_t>(j, "seq", 0);
  d.detail = string_or(j, "detail", "");
  d.fix = string_or(j, "fix", "");
  d.unix_ns = int_or<uint64_t>(j, "unix_ns", 0);
  d.host = host;
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
void read_line(const json& j, const std::string& where, std::string& host, ProfileSet& out) {
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
    out.hosts.push_back(host);
    if (auto tag = string_or(j, "tag", ""); !tag.empty()) out.tags.push_back(tag);
    if (auto net = string_or(j, "net", ""); !net.empty()) out.nets.push_back(net);
    if (auto plugin = string_or(j, "net_plugin", ""); !plugin.empty()) out.net_plugins.push_back(plugin);
  } else if (type == "coll" || type == "p2p") {
    out.colls.push_back(parse_coll(j));
  } else if (type == "fabric") {
    parse_fabric(j, host, out.fabric);
  } else if (type == "diag") {
    out.diags.push_back(parse_diag(j, host));
  } else if (type.empty() && j.contains("engine")) {
    parse_net_stats(j, out.rail_rates);
  } else if (type == "summary") {
    const uint64_t dropped = dropped_events(j);
    if (__builtin_add_overflow(out.dropped_events, dropped, &out.dropped_events))
      throw BadValue("dropped: the counts of all files add up to more than 2^64");
  }
}

void read_file(const fs::path& path, ProfileSet& out) {
  std::ifstream in(path);
  if (!in) {
    out.problems.push_back(fmt::format("{}: cannot open", path.string()));
    return;
  }
  out.files.push_back(path.string());
  std::string host;
  std::string line;
  int number = 0;
  size_t skipped = 0;
  auto skip = [&](const std::string& why) {
    if (skipped++ < kLineProblemsShown) out.problems.push_back(why);
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", path.string(), number);
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      skip(fmt::format("{}: not a JSON object (skipped)", where));
      continue;
    }
    // A line's records are added only once the whole line has been read.
    ProfileSet one;
    std::string line_host = host;
    try {
      read_line(j, where, line_host, one);
    } catch (const BadValue& e) {
      skip(fmt::format("{}: {} (skipped)", where, e.what()));
      continue;
    }
    host = line_host;
    for (auto& p : one.problems) out.problems.push_back(std::move(p));
    for (auto& h : one.hosts) out.hosts.push_back(std::move(h));
    for (auto& t : one.tags) out.tags.push_back(std::move(t));
    for (auto& n : one.nets) out.nets.push_back(std::move(n));
    for (auto& n : one.net_plugins) out.net_plugins.push_back(std::move(n));
    for (auto& f : one.fabric) out.fabric.push_back(std::move(f));
    for (auto& c : one.colls) out.colls.push_back(std::move(c));
    for (auto& d : one.diags) out.diags.push_back(std::move(d));
    for (auto& r : one.rail_rates) out.rail_rates.push_back(std::move(r));
    if (__builtin_add_overflow(out.dropped_events, one.dropped_events, &out.dropped_events)) {
      out.dropped_events = UINT64_MAX;
      skip(fmt::format("{}: dropped: the counts of all files add up to more than 2^64 (skipped)", where));
    }
  }
  if (skipped > kLineProblemsShown)
    out.problems.push_back(fmt::format("{}: {} lines skipped in all ({} more than listed above)",
                                       path.string(), skipped, skipped - kLineProblemsShown));
}

}  // namespace

ProfileSet read_profiles(const std::vector<std::string>& paths) {
  ProfileSet out;
  out.paths = paths;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      read_file(p, out);
      continue;
    }
    if (!fs::is_directory(p, ec)) throw std::runtime_error(fmt::format("{}: no such file or directory", p));
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.is_regular_file() && e.path().extension() == ".jsonl") files.push_back(e.path());
    if (files.empty())
      throw std::runtime_error(fmt::format("{}: no railscope profile or net stats file (*.jsonl) in it", p));
    std::sort(files.begin(), files.end());
    for (const auto& f : files) read_file(f, out);
  }
  return out;
}

}  // namespace railscope::report
