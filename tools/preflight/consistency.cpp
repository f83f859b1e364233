// SPDX-License-Identifier: Apache-2.0
// Consistency across nodes (see consistency.h).
#include "consistency.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace railscope::preflight {
namespace {

struct Sample {
  const NodeReport* node;
  const NicSummary* nic;  // null for node-level properties
  std::string value;
};

std::string where(const Sample& s) { return s.nic ? s.node->host + "/" + s.nic->name() : s.node->host; }

// One property across nodes: nothing when every value agrees; otherwise the odd ones against the
// majority, or every value when no single value is the most frequent.
void compare(std::string_view id, const std::string& what, const std::vector<Sample>& samples,
             std::vector<diag::Finding>* out, std::vector<std::vector<int>>* ranks) {
  if (samples.size() < 2) return;
  std::unordered_map<std::string_view, size_t> count;
  for (const auto& s : samples) ++count[s.value];
  if (count.size() == 1) return;
  std::string_view top;
  size_t top_n = 0;
  for (const auto& [v, n] : count)
    if (n > top_n || (n == top_n && v < top)) top = v, top_n = n;
  const bool tie =
      std::count_if(count.begin(), count.end(), [&](const auto& c) { return c.second == top_n; }) > 1;
  if (tie) {
    std::string list;
    size_t named = 0;
    std::vector<int> all;
    for (const auto& s : samples) all.push_back(s.node->rank);
    ranks->push_back(std::move(all));
    for (const auto& s : samples) {
      if (named++ == kMaxNamedPerProperty) {
        list += fmt::format(", … {} more", samples.size() - kMaxNamedPerProperty);
        break;
      }
      list += fmt::format("{}{} {}", list.empty() ? "" : ", ", where(s), s.value);
    }
    out->push_back(diag::make(id, fmt::format("{} differs with no majority: {}", what, list)));
    return;
  }
  size_t odd = 0;
  std::vector<int> unnamed;
  for (const auto& s : samples) {
    if (s.value == top) continue;
    if (++odd > kMaxNamedPerProperty) {
      unnamed.push_back(s.node->rank);
      continue;
    }
    ranks->push_back({s.node->rank});
    out->push_back(diag::make(id, fmt::format("{} of {} is {}, the other {} of {} nodes have {}", what,
                                              where(s), s.value, top_n, samples.size(), top)));
  }
  if (odd > kMaxNamedPerProperty) {
    ranks->push_back(std::move(unnamed));
    out->push_back(diag::make(id, fmt::format("{}: {} more nodes differ from the majority {} (not named)",
                                              what, odd - kMaxNamedPerProperty, top)));
  }
}

}  // namespace

bool env_compared(const std::string& name) {
  // NCCL_IB_HCA names each node's own devices; NCCL_HOSTID is per host by definition.
  return name != "NCCL_IB_HCA" && name != "NCCL_HOSTID";
}

std::vector<diag::Finding> check_consistency(const std::vector<NodeReport>& nodes,
                                             std::vector<std::vector<int>>* ranks) {
  std::vector<diag::Finding> out;
  std::vector<std::vector<int>> own;
  if (!ranks) ranks = &own;
  ranks->clear();
  if (nodes.size() < 2) return out;

  std::vector<Sample> rails;
  for (const auto& n : nodes) rails.push_back({&n, nullptr, std::to_string(n.nics.size())});
  compare("preflight.rail_count", "the number of selected RDMA ports", rails, &out, ranks);

  size_t max_rails = 0;
  for (const auto& n : nodes) max_rails = std::max(max_rails, n.nics.size());
  using Field = std::string (*)(const NicSummary&);
  struct Property {
    std::string_view id;
    const char* what;
    Field get;  // empty result = unknown, not compared
  };
  static const Property kProps[] = {
      {"preflight.rail_link_layer", "link layer",
       [](const NicSummary& n) { return n.link_layer == "unknown" ? "" : n.link_layer; }},
      {"preflight.rail_mtu", "active MTU",
       [](const NicSummary& n) { return n.active_mtu ? std::to_string(n.active_mtu) : ""; }},
      {"preflight.rail_gid_type", "GID type", [](const NicSummary& n) { return n.gid_type; }},
      {"preflight.rail_gid_family", "GID family", [](const NicSummary& n) { return n.gid_family; }},
      {"preflight.rail_rate", "link rate (Mb/s)",
       [](const NicSummary& n) { return n.speed_mbps ? std::to_string(n.speed_mbps) : ""; }},
      {"preflight.rail_firmware", "firmware", [](const NicSummary& n) { return n.fw_ver; }},
      {"preflight.rail_misaligned", "subnet", [](const NicSummary& n) { return n.subnet; }},
  };
  for (size_t i = 0; i < max_rails; ++i) {
    for (const auto& p : kProps) {
      std::vector<Sample> samples;
      for (const auto& n : nodes) {
        if (i >= n.nics.size()) continue;
        std::string v = p.get(n.nics[i]);
        if (!v.empty()) samples.push_back({&n, &n.nics[i], std::move(v)});
      }
      compare(p.id, fmt::format("rail {}: {}", i, p.what), samples, &out, ranks);
    }
  }

  // NCCL_* variables: the union of the names, "(unset)" where a node lacks one.
  std::vector<std::string> names;
  for (const auto& n : nodes)
    for (const auto& [k, v] : n.nccl_env)
      if (env_compared(k)) names.push_back(k);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& name : names) {
    std::vector<Sample> samples;
    for (const auto& n : nodes) {
      const auto it = n.nccl_env.find(name);
      samples.push_back({&n, nullptr, it == n.nccl_env.end() ? "(unset)" : it->second});
    }
    compare(name == "NCCL_IB_TC" ? "preflight.nccl_ib_tc" : "preflight.nccl_env", name, samples, &out, ranks);
  }
  return out;
}

}  // namespace railscope::preflight
