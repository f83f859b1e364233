// SPDX-License-Identifier: Apache-2.0
#include "tools/report/clock_offsets.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace railscope::report {
namespace {

int64_t median(std::vector<int64_t>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

ClockAlignment align_clocks(const ProfileSet& set) {
  ClockAlignment out;
  out.per_file.assign(set.files.size(), 0);
  std::map<std::string, size_t> records;
  for (const CollRow& c : set.colls)
    if (c.file < set.file_hosts.size()) ++records[set.file_hosts[c.file]];
  records.erase("");
  if (records.size() < 2) return out;
  out.reference = std::max_element(records.begin(), records.end(), [](const auto& a, const auto& b) {
                    return a.second < b.second;
                  })->first;
  // Per collective (communicator, op, seq: NCCL's seq counts each op on its own), each host's
  // earliest end: hosts' ranks end within microseconds of each other.
  std::vector<std::string> host_names;
  std::map<std::string, uint32_t> host_ids;
  std::vector<uint32_t> file_host(set.files.size(), UINT32_MAX);
  for (size_t f = 0; f < set.files.size() && f < set.file_hosts.size(); ++f) {
    const std::string& h = set.file_hosts[f];
    if (h.empty()) continue;
    auto [it, added] = host_ids.emplace(h, static_cast<uint32_t>(host_names.size()));
    if (added) host_names.push_back(h);
    file_host[f] = it->second;
  }
  const uint32_t ref = host_ids.at(out.reference);
  std::map<std::tuple<const std::string*, const std::string*, uint64_t>, std::map<uint32_t, uint64_t>> ends;
  std::set<std::string> names;  // one key string per communicator and op
  auto intern = [&](const std::string& s) { return &*names.insert(s).first; };
  for (const CollRow& c : set.colls) {
    if (c.p2p || !c.complete || c.end_unix_ns <= c.start_unix_ns || c.file >= file_host.size()) continue;
    const uint32_t h = file_host[c.file];
    if (h == UINT32_MAX) continue;
    auto comm = intern(c.comm), op = intern(c.op);
    uint64_t& e = ends[{comm, op, c.seq}].try_emplace(h, UINT64_MAX).first->second;
    e = std::min(e, c.end_unix_ns);
  }
  std::vector<std::vector<int64_t>> diffs(host_names.size());
  for (const auto& [key, by_host] : ends) {
    const auto r = by_host.find(ref);
    if (r == by_host.end()) continue;
    for (const auto& [h, end] : by_host)
      if (h != ref) diffs[h].push_back(static_cast<int64_t>(end - r->second));
  }
  std::vector<int64_t> by_host(host_names.size(), 0);
  for (uint32_t h = 0; h < host_names.size(); ++h) {
    if (h == ref) continue;
    HostOffset o;
    o.host = host_names[h];
    o.collectives = diffs[h].size();
    if (!diffs[h].empty()) {
      o.offset_ns = median(diffs[h]);
      for (int64_t& d : diffs[h]) d = d > o.offset_ns ? d - o.offset_ns : o.offset_ns - d;
      o.spread_ns = median(diffs[h]);
      out.max_spread_ns = std::max(out.max_spread_ns, o.spread_ns);
    }
    by_host[h] = o.offset_ns;
    out.offsets.push_back(std::move(o));
  }
  std::sort(out.offsets.begin(), out.offsets.end(),
            [](const HostOffset& a, const HostOffset& b) { return a.host < b.host; });
  for (size_t f = 0; f < file_host.size(); ++f)
    if (file_host[f] != UINT32_MAX) out.per_file[f] = by_host[file_host[f]];
  return out;
}

}  // namespace railscope::report
