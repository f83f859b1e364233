// SPDX-License-Identifier: Apache-2.0
#include "railscope/node/port_prom.h"

#include <fmt/format.h>

#include <optional>

#include "railscope/core/prom_textfile.h"
#include "railscope/node/sysfs.h"

namespace railscope::node {
namespace {

constexpr std::array<std::string_view, 5> kCategories = {"loss", "congestion", "pause", "link", "discard"};
static_assert(static_cast<size_t>(CounterCategory::Discard) == 4, "the categories above, in order");

}  // namespace

void add_port_interval(PromPortSeries& p, const CategoryCounts& by_category,
                       const std::vector<CounterDelta>& deltas, const std::string& state,
                       int64_t speed_mbps) {
  if (!p.state.empty() && state != p.state) ++p.state_changes;
  p.state = state;
  p.speed_mbps = speed_mbps;
  for (size_t i = 0; i < kCounterCategoryCount; ++i) p.by_category[i] += by_category[i];
  for (const CounterDelta& d : deltas) {
    if (d.source != CounterSource::Port) continue;
    if (d.name == "port_xmit_data") p.transmit_bytes += d.delta * 4;  // counted in 4-byte words
    if (d.name == "port_rcv_data") p.receive_bytes += d.delta * 4;
  }
}

void append_port_series(std::string& out, std::string_view prefix, const std::vector<PromPortSeries>& ports,
                        const std::string& identity_labels) {
  if (ports.empty()) return;
  auto labels = [&](const PromPortSeries& p) {
    return fmt::format("{},device=\"{}\",port=\"{}\",netdev=\"{}\"", identity_labels,
                       core::prom_label_value(p.device), p.port, core::prom_label_value(p.netdev));
  };
  auto family = [&](std::string_view suffix, const char* type, const char* help, auto&& samples) {
    std::string body;
    samples(body, fmt::format("{}_{}", prefix, suffix));
    if (body.empty()) return;
    out += fmt::format("# HELP {0}_{1} {2}\n# TYPE {0}_{1} {3}\n", prefix, suffix, help, type);
    out += body;
  };
  family("events_total", "counter",
         "Increase of the port's error and congestion counters since this process began sampling, by "
         "category (loss, congestion, pause, link, discard).",
         [&](std::string& s, const std::string& name) {
           for (const PromPortSeries& p : ports)
             for (size_t i = 0; i < kCategories.size(); ++i)
               s += fmt::format("{}{{{},category=\"{}\"}} {}\n", name, labels(p), kCategories[i],
                                p.by_category[i]);
         });
  // One sample per port: `value` gives it, or nullopt where the port has none.
  auto port_family = [&](std::string_view suffix, const char* type, const char* help, auto&& value) {
    family(suffix, type, help, [&](std::string& s, const std::string& name) {
      for (const PromPortSeries& p : ports)
        if (const std::optional<uint64_t> v = value(p))
          s += fmt::format("{}{{{}}} {}\n", name, labels(p), *v);
    });
  };
  port_family("transmit_bytes_total", "counter",
              "Bytes the port sent since this process began sampling (port_xmit_data).",
              [](const PromPortSeries& p) -> std::optional<uint64_t> { return p.transmit_bytes; });
  port_family("receive_bytes_total", "counter",
              "Bytes the port received since this process began sampling (port_rcv_data).",
              [](const PromPortSeries& p) -> std::optional<uint64_t> { return p.receive_bytes; });
  port_family("up", "gauge", "1 when the port's state is ACTIVE, else 0.",
              [](const PromPortSeries& p) -> std::optional<uint64_t> { return p.state == "ACTIVE" ? 1 : 0; });
  port_family(
      "state_changes_total", "counter",
      "Sampling windows that ended with the port in another state than the window before (link flaps).",
      [](const PromPortSeries& p) -> std::optional<uint64_t> { return p.state_changes; });
  port_family("rate_bytes_per_second", "gauge", "The port's link rate, bytes per second.",
              [](const PromPortSeries& p) -> std::optional<uint64_t> {
                if (p.speed_mbps <= 0) return std::nullopt;
                return static_cast<uint64_t>(p.speed_mbps) * 125000;
              });
}

void add_port_interval(PromPortSeries& p, const std::vector<CounterDelta>& deltas, const std::string& state,
                       int64_t speed_mbps) {
  CategoryCounts by_category{};
  for (const CounterDelta& d : deltas) by_category[static_cast<size_t>(d.category)] += d.delta;
  add_port_interval(p, by_category, deltas, state, speed_mbps);
}

std::string read_port_state(const Sysfs& sysfs, const std::string& device, int port) {
  const auto text = sysfs.read(fmt::format("class/infiniband/{}/ports/{}/state", device, port));
  if (!text) return "unknown";
  const size_t colon = text->find(':');
  std::string s = colon == std::string::npos ? *text : text->substr(colon + 1);
  s.erase(0, s.find_first_not_of(' '));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "unknown" : s;
}

}  // namespace railscope::node
