// SPDX-License-Identifier: Apache-2.0
// Port counters from sysfs, deltas between snapshots (port_counters.h). The category table is
// counter_category.cpp; repeated snapshots through kept file descriptors are port_sampler.cpp.
#include "railscope/node/port_counters.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <utility>

#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

void read_folder(const Sysfs& sysfs, const std::string& folder, bool hw, std::vector<Counter>* out) {
  for (const auto& name : sysfs.list(folder)) {
    const auto text = sysfs.read(folder + "/" + name);
    if (!text) continue;  // unreadable (some need privileges)
    const auto v = parse_counter_value(*text);
    if (!v) continue;  // not a counter
    out->push_back(
        Counter{name, counter_category(name), *v, hw, hw ? CounterSource::Hw : CounterSource::Port});
  }
}

}  // namespace

std::optional<uint64_t> parse_counter_value(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

PortCounters read_port_counters(const Sysfs& sysfs, const std::string& device, int port) {
  PortCounters pc;
  pc.device = device;
  pc.port = port;
  const std::string base = fmt::format("class/infiniband/{}/ports/{}", device, port);
  read_folder(sysfs, base + "/counters", false, &pc.counters);
  read_folder(sysfs, base + "/hw_counters", true, &pc.counters);
  sort_counters(&pc.counters);
  return pc;
}

void sort_counters(std::vector<Counter>* counters) {
  std::sort(counters->begin(), counters->end(), [](const Counter& a, const Counter& b) {
    return std::tie(a.hw, a.source, a.name) < std::tie(b.hw, b.source, b.name);
  });
}

std::vector<CounterDelta> counter_deltas(const PortCounters& before, const PortCounters& after) {
  std::map<std::tuple<bool, CounterSource, std::string_view>, uint64_t> old;
  for (const auto& c : before.counters) old[{c.hw, c.source, c.name}] = c.value;
  std::vector<CounterDelta> out;
  for (const auto& c : after.counters) {
    const auto it = old.find({c.hw, c.source, c.name});
    if (it == old.end() || it->second == c.value) continue;
    CounterDelta d{c.name, c.category, 0, false, c.source, c.value};
    if (c.value > it->second) {
      d.delta = c.value - it->second;
    } else {
      d.delta = c.value;
      d.reset = true;
    }
    out.push_back(std::move(d));
  }
  return out;
}

uint64_t category_total(const std::vector<CounterDelta>& deltas, CounterCategory category) {
  uint64_t sum = 0;
  for (const auto& d : deltas)
    if (d.category == category) sum += d.delta;
  return sum;
}

}  // namespace railscope::node
