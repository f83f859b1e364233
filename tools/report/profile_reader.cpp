#include "tools/report/profile_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace railscope::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<double> opt_double(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
template <typename T>
T get_or(const json& j, const char* key, T def) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return def;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return def;
  }
}

CollRow parse_coll(const json& j) {
  CollRow r;
  r.comm = get_or<std::string>(j, "comm", "");
  r.rank = get_or<int>(j, "rank", -1);
  r.nranks = get_or<int>(j, "nranks", 0);
  r.seq = get_or<uint64_t>(j, "seq", 0);
  r.op = get_or<std::string>(j, "op", "Unknown");
  r.p2p = get_or<std::string>(j, "type", "") == "p2p";
  r.peer = get_or<int>(j, "peer", -1);
  r.bytes = get_or<uint64_t>(j, "bytes", 0);
  r.time_us = opt_double(j, "time_us");
  r.busbw_gbs = opt_double(j, "busbw_gbs");
  r.algbw_gbs = opt_double(j, "algbw_gbs");
  r.start_unix_ns = get_or<uint64_t>(j, "start_unix_ns", 0);
  r.end_unix_ns = get_or<uint64_t>(j, "end_unix_ns", 0);
  r.complete = get_or<bool>(j, "complete", true);
  r.timing = get_or<std::string>(j, "timing", "");
  if (auto it = j.find("waits"); it != j.end() && it->is_array()) {
    for (const json& w : *it) {
      if (!w.is_object()) continue;
      WaitRow row;
      row.channel = get_or<int>(w, "ch", 0);
      row.peer = get_or<int>(w, "peer", -1);
      row.is_send = get_or<std::string>(w, "dir", "") == "send";
      row.bytes = get_or<uint64_t>(w, "bytes", 0);
      row.peer_wait_us = get_or<double>(w, "peer_wait_us", 0.0);
      row.net_us = get_or<double>(w, "net_us", 0.0);
      row.gpu_wait_us = get_or<double>(w, "gpu_wait_us", 0.0);
      r.waits.push_back(row);
    }
  }
  return r;
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
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      out.problems.push_back(fmt::format("{}:{}: not a JSON object (skipped)", path.string(), number));
      continue;
    }
    const std::string type = get_or<std::string>(j, "type", "");
    if (type == "header") {
      if (get_or<std::string>(j, "schema", "") != "railscope.profile")
        out.problems.push_back(fmt::format("{}:{}: not a railscope profile header", path.string(), number));
      else if (get_or<int>(j, "version", 0) > 1)
        out.problems.push_back(
            fmt::format("{}:{}: schema version {} is newer than this reader (1); reading the "
                        "members it knows",
                        path.string(), number, get_or<int>(j, "version", 0)));
      host = get_or<std::string>(j, "hostname", "");
      out.hosts.push_back(host);
      if (auto tag = get_or<std::string>(j, "tag", ""); !tag.empty()) out.tags.push_back(tag);
    } else if (type == "coll" || type == "p2p") {
      out.colls.push_back(parse_coll(j));
    } else if (type == "diag") {
      DiagRow d;
      d.id = get_or<std::string>(j, "id", "?");
      d.severity = get_or<std::string>(j, "severity", "");
      d.comm = get_or<std::string>(j, "comm", "");
      d.rank = get_or<int>(j, "rank", -1);
      d.op = get_or<std::string>(j, "op", "");
      if (j.contains("seq") && j["seq"].is_number_unsigned()) d.seq = j["seq"].get<uint64_t>();
      d.detail = get_or<std::string>(j, "detail", "");
      d.fix = get_or<std::string>(j, "fix", "");
      d.unix_ns = get_or<uint64_t>(j, "unix_ns", 0);
      d.host = host;
      out.diags.push_back(std::move(d));
    } else if (type == "summary") {
      if (auto it = j.find("dropped"); it != j.end() && it->is_object())
        for (const auto& [k, v] : it->items())
          if (v.is_number_unsigned()) out.dropped_events += v.get<uint64_t>();
    }
  }
}

}  // namespace

ProfileSet read_profiles(const std::vector<std::string>& paths) {
  ProfileSet out;
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
    if (files.empty()) throw std::runtime_error(fmt::format("{}: no railscope profile (*.jsonl) in it", p));
    std::sort(files.begin(), files.end());
    for (const auto& f : files) read_file(f, out);
  }
  return out;
}

}  // namespace railscope::report
