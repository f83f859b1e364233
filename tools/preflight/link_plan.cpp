// SPDX-License-Identifier: Apache-2.0
// Planning the link steps and their wire forms (see link_plan.h).
#include "link_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "json_fields.h"
#include "schedule.h"

namespace railscope::preflight {
namespace {

using nlohmann::json;

bool usable(const NicSummary& n) { return n.state == "ACTIVE" && !n.ipv4.empty(); }

bool clean(const std::string& s, size_t max) {
  if (s.size() > max) return false;
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

LinkPlan plan_links(const std::vector<NodeReport>& nodes, bool full, bool latency, uint16_t base_port) {
  LinkPlan plan;
  plan.tasks.resize(nodes.size());
  const auto rounds = pairing_schedule(static_cast<int>(nodes.size()), full);
  const int per_round = latency ? 3 : 2;
  for (size_t r = 0; r < rounds.size(); ++r) {
    for (int phase = 0; phase < per_round; ++phase) {
      const int step = static_cast<int>(r) * per_round + phase;
      for (const auto& [ia, ib] : rounds[r]) {
        // phase 0: a sends to b; phase 1: b sends to a; phase 2: latency, a is the client.
        const size_t client = static_cast<size_t>(phase == 1 ? ib : ia);
        const size_t server = static_cast<size_t>(phase == 1 ? ia : ib);
        const size_t rails = std::min(nodes[client].nics.size(), nodes[server].nics.size());
        for (size_t i = 0; i < rails; ++i) {
          const NicSummary& cn = nodes[client].nics[i];
          const NicSummary& sn = nodes[server].nics[i];
          if (!usable(cn) || !usable(sn)) continue;
          const auto port = static_cast<uint16_t>(base_port + 1 + i);
          const Measure m = phase == 2 ? Measure::Latency : Measure::Bandwidth;
          const int rail = static_cast<int>(i);
          plan.tasks[server].push_back(
              {step, rail, true, sn.device, sn.port, sn.netdev, sn.ipv4, port, m, client});
          plan.tasks[client].push_back(
              {step, rail, false, cn.device, cn.port, cn.netdev, sn.ipv4, port, m, server});
          plan.links.push_back({step, rail, client, server, m});
        }
      }
    }
  }
  plan.steps = static_cast<int>(rounds.size()) * per_round;
  return plan;
}

json tasks_to_json(int step, const std::vector<LinkTask>& tasks) {
  json list = json::array();
  for (const auto& t : tasks)
    list.push_back({{"rail", t.rail},
                    {"server", t.server},
                    {"dev", t.dev},
                    {"port", t.port},
                    {"netdev", t.netdev},
                    {"oob_host", t.oob_host},
                    {"oob_port", t.oob_port},
                    {"measure", t.measure == Measure::Latency ? "latency" : "bandwidth"}});
  return {{"schema", "railscope.preflight.step/1"}, {"step", step}, {"tasks", list}};
}

std::optional<std::vector<LinkTask>> tasks_from_json(const json& j, int step, std::string* error) {
  const auto fail = [&](const std::string& e) {
    *error = e;
    return std::nullopt;
  };
  if (!has_schema(j, "railscope.preflight.step/1")) return fail("not a step");
  if (!j.contains("step") || !j["step"].is_number_integer() || j["step"].get<int64_t>() != step)
    return fail(fmt::format("expected step {}", step));
  if (!j.contains("tasks") || !j["tasks"].is_array() || j["tasks"].size() > kMaxNics)
    return fail("tasks missing or too many");
  std::vector<LinkTask> out;
  for (const auto& t : j["tasks"]) {
    if (!t.is_object()) return fail("a task is not an object");
    LinkTask lt;
    lt.step = step;
    const auto rail = t.find("rail");
    const auto server = t.find("server");
    const auto dev = t.find("dev");
    const auto host = t.find("oob_host");
    const auto port = t.find("oob_port");
    const auto measure = t.find("measure");
    if (rail == t.end() || !rail->is_number_integer() || rail->get<int64_t>() < 0 ||
        rail->get<int64_t>() >= int64_t(kMaxNics) || server == t.end() || !server->is_boolean() ||
        dev == t.end() || !dev->is_string() || host == t.end() || !host->is_string() || port == t.end() ||
        !port->is_number_unsigned() || port->get<uint64_t>() == 0 || port->get<uint64_t>() > 65535 ||
        measure == t.end() || !measure->is_string())
      return fail("a task has a missing or bad field");
    lt.rail = static_cast<int>(rail->get<int64_t>());
    lt.server = server->get<bool>();
    lt.dev = dev->get<std::string>();
    lt.oob_host = host->get<std::string>();
    lt.oob_port = static_cast<uint16_t>(port->get<uint64_t>());
    // The port and netdev whose counters are sampled (absent from an older rank 0: port 1, none).
    if (const auto p = t.find("port"); p != t.end()) {
      if (!p->is_number_integer() || p->get<int64_t>() < 1 || p->get<int64_t>() > 255)
        return fail("a task's port is not 1..255");
      lt.port = static_cast<int>(p->get<int64_t>());
    }
    if (const auto nd = t.find("netdev"); nd != t.end()) {
      if (!nd->is_string()) return fail("a task's netdev is not a string");
      lt.netdev = nd->get<std::string>();
    }
    const std::string m = measure->get<std::string>();
    if (m != "latency" && m != "bandwidth") return fail("unknown measure");
    lt.measure = m == "latency" ? Measure::Latency : Measure::Bandwidth;
    // Device names and addresses become arguments of a child process: plain characters only.
    const auto plain = [](const std::string& s) {
      return !s.empty() && s.size() <= 64 && s.front() != '-' && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '-';
      });
    };
    if (!plain(lt.dev) || !plain(lt.oob_host) || (!lt.netdev.empty() && !plain(lt.netdev)))
      return fail("a task's device, netdev or address has odd characters");
    out.push_back(std::move(lt));
  }
  return out;
}

json results_to_json(int step, const std::vector<TaskResult>& results) {
  json list = json::array();
  for (const auto& r : results) {
    json one = {{"rail", r.rail}, {"ok", r.ok}, {"gbs", r.gbs}, {"lat_us", r.lat_us}, {"error", r.error}};
    if (r.counters) one["counters"] = to_json(*r.counters);
    list.push_back(std::move(one));
  }
  return {{"schema", kResultsSchema}, {"step", step}, {"results", list}};
}

std::optional<std::vector<TaskResult>> results_from_json(const json& j, int step, size_t max,
                                                         std::string* error) {
  const auto fail = [&](const std::string& e) {
    *error = e;
    return std::nullopt;
  };
  // Version 1 (earlier builds, before every output named its units alike) called the bandwidth "GBps", in the
  // same unit: still read, so a rank of that version is measured rather than lost.
  const bool v1 = has_schema(j, kResultsSchemaV1);
  if (!v1 && !has_schema(j, kResultsSchema)) return fail("not step results");
  const char* const bw_key = v1 ? "GBps" : "gbs";
  if (!j.contains("step") || !j["step"].is_number_integer() || j["step"].get<int64_t>() != step)
    return fail(fmt::format("expected the results of step {}", step));
  if (!j.contains("results") || !j["results"].is_array() || j["results"].size() > max)
    return fail("results missing or more than the tasks sent");
  std::vector<TaskResult> out;
  for (const auto& r : j["results"]) {
    if (!r.is_object()) return fail("a result is not an object");
    TaskResult t;
    const auto rail = r.find("rail");
    const auto ok = r.find("ok");
    const auto bw = r.find(bw_key);
    const auto lat = r.find("lat_us");
    const auto err = r.find("error");
    if (rail == r.end() || !rail->is_number_integer() || ok == r.end() || !ok->is_boolean() ||
        bw == r.end() || !bw->is_number() || lat == r.end() || !lat->is_number() || err == r.end() ||
        !err->is_string())
      return fail(fmt::format("a result has a missing or bad field (rail, ok, {}, lat_us, error)", bw_key));
    t.rail = static_cast<int>(std::clamp<int64_t>(rail->get<int64_t>(), -1, int64_t(kMaxNics)));
    t.ok = ok->get<bool>();
    t.gbs = bw->get<double>();
    t.lat_us = lat->get<double>();
    t.error = err->get<std::string>();
    if (!std::isfinite(t.gbs) || !std::isfinite(t.lat_us) || t.gbs < 0 || t.lat_us < 0 || t.gbs > 1e6 ||
        t.lat_us > 1e9)
      return fail("a result's numbers are out of range");
    if (!clean(t.error, kMaxText)) return fail("a result's error text is too long or has control characters");
    if (const auto c = r.find("counters"); c != r.end() && !c->is_null()) {
      t.counters = end_counters_from_json(*c, error);
      if (!t.counters) return std::nullopt;
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace railscope::preflight
