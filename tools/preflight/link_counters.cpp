// SPDX-License-Identifier: Apache-2.0
// Counter deltas of a link test's ports and what they say (see link_counters.h).
#include "link_counters.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "railscope/node/fabric_findings.h"

namespace railscope::preflight {
namespace {

using nlohmann::json;
using node::CounterCategory;

// Loss, congestion, pause, link, discard first (what is judged), then traffic, then the rest.
int rank_of(CounterCategory c) {
  return c == CounterCategory::Traffic ? 1 : c == CounterCategory::Other ? 2 : 0;
}

bool plain_name(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '-' ||
           c == '[' || c == ']';
  });
}

constexpr CounterCategory kJudged[] = {CounterCategory::Loss, CounterCategory::Congestion,
                                       CounterCategory::Pause, CounterCategory::Link,
                                       CounterCategory::Discard};

}  // namespace

EndCounters end_counters(const node::PortCounters& before, const node::PortCounters& after, bool readable,
                         bool infiniband, double seconds) {
  EndCounters c;
  c.port = fmt::format("{}:{}", after.device, after.port);
  c.readable = readable;
  c.infiniband = infiniband;
  c.seconds = seconds;
  for (auto& d : node::counter_deltas(before, after))
    if (d.delta > 0) c.deltas.push_back(std::move(d));
  std::stable_sort(c.deltas.begin(), c.deltas.end(),
                   [](const auto& a, const auto& b) { return rank_of(a.category) < rank_of(b.category); });
  if (c.deltas.size() > kMaxDeltas) c.deltas.resize(kMaxDeltas);
  return c;
}

json to_json(const EndCounters& c) {
  json deltas = json::array();
  for (const auto& d : c.deltas)
    deltas.push_back({{"name", d.name}, {"source", node::to_string(d.source)}, {"delta", d.delta}});
  return {{"port", c.port},
          {"readable", c.readable},
          {"infiniband", c.infiniband},
          {"seconds", c.seconds},
          {"deltas", deltas}};
}

std::optional<EndCounters> end_counters_from_json(const json& j, std::string* error) {
  const auto fail = [&](const std::string& e) {
    *error = "counters: " + e;
    return std::nullopt;
  };
  if (!j.is_object()) return fail("not an object");
  const auto port = j.find("port");
  const auto readable = j.find("readable");
  const auto ib = j.find("infiniband");
  const auto seconds = j.find("seconds");
  const auto deltas = j.find("deltas");
  if (port == j.end() || !port->is_string() || readable == j.end() || !readable->is_boolean() ||
      ib == j.end() || !ib->is_boolean() || seconds == j.end() || !seconds->is_number() ||
      deltas == j.end() || !deltas->is_array())
    return fail("a missing or bad field");
  EndCounters c;
  c.port = port->get<std::string>();
  c.readable = readable->get<bool>();
  c.infiniband = ib->get<bool>();
  c.seconds = seconds->get<double>();
  if (!plain_name(c.port)) return fail("odd port name");
  if (!std::isfinite(c.seconds) || c.seconds < 0 || c.seconds > 1e6) return fail("seconds out of range");
  if (deltas->size() > kMaxDeltas) return fail("too many deltas");
  for (const auto& d : *deltas) {
    if (!d.is_object()) return fail("a delta is not an object");
    const auto name = d.find("name");
    const auto source = d.find("source");
    const auto delta = d.find("delta");
    if (name == d.end() || !name->is_string() || source == d.end() || !source->is_string() ||
        delta == d.end() || !delta->is_number_unsigned())
      return fail("a delta has a missing or bad field");
    node::CounterDelta cd;
    cd.name = name->get<std::string>();
    if (!plain_name(cd.name)) return fail("a counter name is empty, too long or has odd characters");
    const std::string src = source->get<std::string>();
    if (src == "counters")
      cd.source = node::CounterSource::Port;
    else if (src == "hw_counters")
      cd.source = node::CounterSource::Hw;
    else if (src == "ethtool")
      cd.source = node::CounterSource::Ethtool;
    else
      return fail("unknown counter source");
    cd.category = node::counter_category(cd.name);
    cd.delta = delta->get<uint64_t>();
    c.deltas.push_back(std::move(cd));
  }
  return c;
}

json category_totals(const EndCounters& c) {
  json out = json::object();
  for (const auto& d : c.deltas) {
    const std::string k(node::to_string(d.category));
    out[k] = out.value(k, uint64_t(0)) + d.delta;
  }
  return out;
}

std::string counters_note(const std::string& sender_name, const std::optional<EndCounters>& sender,
                          const std::string& receiver_name, const std::optional<EndCounters>& receiver) {
  struct End {
    std::string who;
    const std::optional<EndCounters>* c;
  };
  const End ends[] = {{sender_name + " (sender)", &sender}, {receiver_name + " (receiver)", &receiver}};
  std::vector<std::string> said, unreadable;
  double seconds = 0;
  uint64_t below = 0;  // events in the judged categories that stayed under the thresholds
  for (const End& e : ends) {
    if (!e.c->has_value() || !(*e.c)->readable) {
      unreadable.push_back(e.who);
      continue;
    }
    const EndCounters& c = **e.c;
    seconds = std::max(seconds, c.seconds);
    const node::FabricWindow w{e.who, c.infiniband ? node::LinkLayer::InfiniBand : node::LinkLayer::Ethernet,
                               c.seconds, c.deltas};
    const auto findings = node::fabric_findings(w);
    for (const auto& f : findings) said.push_back(fmt::format("{} [{}]", f.detail, f.id()));
    if (findings.empty())
      for (CounterCategory cat : kJudged) below += node::category_total(c.deltas, cat);
  }
  if (unreadable.size() == 2) return "no counters readable on either end";
  std::string out;
  if (!said.empty()) {
    out = "counters: ";
    for (size_t i = 0; i < said.size(); ++i) out += (i ? "; " : "") + said[i];
  } else {
    out = fmt::format(
        "counters clean on {} in {:.1f} s (no loss, congestion, pause, link error or discard above the net "
        "plugin's thresholds{}): a rate limit or congestion outside the NIC",
        unreadable.empty() ? std::string("both ends") : "the other end", seconds,
        below > 0 ? fmt::format("; {} event(s) below them", below) : std::string());
  }
  if (unreadable.size() == 1) out += fmt::format(" ({}: no counters readable)", unreadable[0]);
  return out;
}

}  // namespace railscope::preflight
