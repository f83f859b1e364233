// SPDX-License-Identifier: Apache-2.0
// The verdict at rank 0 and its renderings (see verdict.h).
#include "verdict.h"

#include <fmt/format.h>

#include <algorithm>

#include "consistency.h"
#include "json_fields.h"
#include "railscope/cli/json_figure.h"

namespace railscope::preflight {
namespace {

int exit_for(diag::Severity s) {
  return s == diag::Severity::Error ? 2 : s == diag::Severity::Warning ? 1 : 0;
}

diag::Severity severity_of(const std::string& s) {
  return s == "error"     ? diag::Severity::Error
         : s == "warning" ? diag::Severity::Warning
                          : diag::Severity::Info;
}

// A port's counters over a link test in the verdict: whether readable, and the totals per category.
nlohmann::json counters_json(const EndCounters& c) {
  return {{"port", c.port}, {"readable", c.readable}, {"seconds", c.seconds}, {"moved", category_totals(c)}};
}

std::string printable(const std::string& s) {
  std::string out;
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return out;
}

}  // namespace

std::string_view status_word(int code) { return code == 2 ? "error" : code == 1 ? "warning" : "ok"; }

Verdict decide(int world, std::string launcher, std::vector<NodeReport> nodes, std::vector<int> missing,
               std::vector<diag::Finding> extra, int timeout_s) {
  Verdict v;
  v.world = world;
  v.launcher = std::move(launcher);
  std::sort(nodes.begin(), nodes.end(),
            [](const NodeReport& a, const NodeReport& b) { return a.rank < b.rank; });
  v.nodes = std::move(nodes);
  v.missing = std::move(missing);
  for (int r : v.missing) {
    v.concerns.push_back({r});
    v.findings.push_back(
        diag::make("preflight.node_missing",
                   fmt::format("rank {} of {} never joined within --timeout {} s; the {} other "
                               "rank(s) are reported",
                               r, world, timeout_s, v.nodes.size())));
  }
  for (auto& f : extra) {
    v.concerns.emplace_back();
    v.findings.push_back(std::move(f));
  }
  // Each node's own findings, named by host (a peer's id is looked up in this build's catalogue).
  for (const auto& n : v.nodes)
    for (const auto& f : n.findings) {
      const diag::Severity s = severity_of(f.severity);
      if (s != diag::Severity::Warning && s != diag::Severity::Error) continue;
      v.concerns.push_back({n.rank});
      v.findings.push_back(diag::make(f.id, s, fmt::format("{}: {}", n.host, printable(f.detail))));
    }
  std::vector<std::vector<int>> ranks;
  for (auto& f : check_consistency(v.nodes, &ranks)) v.findings.push_back(std::move(f));
  for (auto& r : ranks) v.concerns.push_back(std::move(r));
  for (const auto& f : v.findings) v.exit_code = std::max(v.exit_code, exit_for(f.severity));
  return v;
}

void add_links(Verdict* v, std::vector<LinkMeasurement> links, const LinkPolicy& policy) {
  LinkVerdict lv = judge_links(links, policy);
  for (size_t i : lv.slow) links[i].slow = true;
  for (size_t i : lv.high_latency) links[i].high_latency = true;
  v->links_measured = true;
  v->links = std::move(links);
  v->rails = std::move(lv.rails);
  for (size_t i = 0; i < lv.findings.size(); ++i) {
    const LinkMeasurement& l = v->links[lv.finding_link[i]];
    v->concerns.push_back({l.src_rank, l.dst_rank});
    v->exit_code = std::max(v->exit_code, exit_for(lv.findings[i].severity));
    v->findings.push_back(std::move(lv.findings[i]));
  }
}

void add_findings(Verdict* v, std::vector<diag::Finding> findings, std::vector<std::vector<int>> about) {
  for (size_t i = 0; i < findings.size(); ++i) {
    v->concerns.push_back(i < about.size() ? std::move(about[i]) : std::vector<int>{});
    v->exit_code = std::max(v->exit_code, exit_for(findings[i].severity));
    v->findings.push_back(std::move(findings[i]));
  }
}

nlohmann::json to_json(const Verdict& v) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : v.findings)
    findings.push_back({{"id", f.id()},
                        {"severity", diag::to_string(f.severity)},
                        {"title", f.entry->title},
                        {"detail", f.detail},
                        {"fix", f.effective_fix()},
                        {"line", diag::one_line(f)}});
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : v.nodes) nodes.push_back(to_json(n));
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : v.links)
    links.push_back(
        {{"rail", l.rail},
         {"from", l.src_node + "/" + l.src_nic},
         {"to", l.dst_node + "/" + l.dst_nic},
         {"gbs", l.error.empty() ? nlohmann::json(cli::json_figure(l.GBps)) : nlohmann::json(nullptr)},
         {"line_gbs",
          l.line_GBps > 0 ? nlohmann::json(cli::json_figure(l.line_GBps)) : nlohmann::json(nullptr)},
         {"lat_us", l.lat_us > 0 ? nlohmann::json(cli::json_figure(l.lat_us)) : nlohmann::json(nullptr)},
         {"slow", l.slow},
         {"counters",
          {{"from", l.src_counters ? counters_json(*l.src_counters) : nlohmann::json(nullptr)},
           {"to", l.dst_counters ? counters_json(*l.dst_counters) : nlohmann::json(nullptr)}}},
         {"high_latency", l.high_latency},
         {"error", l.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.error)}});
  nlohmann::json rails = nlohmann::json::array();
  for (const auto& r : v.rails)
    rails.push_back({{"rail", r.rail},
                     {"links", r.links},
                     {"median_gbs", cli::json_figure(r.median_GBps)},
                     {"reference_gbs", cli::json_figure(r.reference_GBps)},
                     {"reference", r.reference},
                     {"line_gbs", cli::json_figure(r.line_GBps)},
                     {"median_lat_us", cli::json_figure(r.median_lat_us)}});
  return {{"schema", "railscope.preflight/2"},
          {"status", status_word(v.exit_code)},
          {"exit_code", v.exit_code},
          {"world", v.world},
          {"launcher", v.launcher},
          {"authenticated", v.authenticated},
          {"authentication", v.authentication},
          {"joined", v.nodes.size()},
          {"missing", v.missing},
          {"findings", findings},
          {"nodes", nodes},
          {"links_measured", v.links_measured},
          {"links", links},
          {"rails", rails}};
}

std::string to_text(const Verdict& v) {
  size_t rails = 0;
  for (const auto& n : v.nodes) rails = std::max(rails, n.nics.size());
  std::string out = fmt::format("railscope preflight — {} of {} rank(s) joined ({}), {} rail(s){}\n",
                                v.nodes.size(), v.world, v.launcher, rails,
                                v.authenticated || v.world == 1 ? "" : " — unauthenticated: no job secret");
  for (const auto& n : v.nodes) {
    std::string nics;
    for (const auto& c : n.nics)
      nics += fmt::format("{}{} {} MTU {}{}", nics.empty() ? "" : ", ", c.name(), c.state, c.active_mtu,
                          c.subnet.empty() ? "" : " " + c.subnet);
    out +=
        fmt::format("  rank {:>4} {:<20} doctor {}  {}\n", n.rank, n.host, status_word(n.doctor_exit), nics);
  }
  for (int r : v.missing) out += fmt::format("  rank {:>4} {:<20} never joined\n", r, "?");
  if (v.links_measured) {
    out += fmt::format("\nLinks ({} measured)\n", v.links.size());
    for (const auto& r : v.rails)
      out += fmt::format(
          "  rail {}: {} link(s), median {:.3g} GB/s, line rate {:.3g} GB/s, median latency {:.1f} us\n",
          r.rail, r.links, r.median_GBps, r.line_GBps, r.median_lat_us);
  }
  out += fmt::format("\nFindings ({})\n", v.findings.size());
  for (const auto& f : v.findings)
    out += fmt::format("  {:<7} {}\n", diag::to_string(f.severity), diag::one_line(f));
  out += fmt::format("\nStatus: {} (exit {})\n", status_word(v.exit_code), v.exit_code);
  return out;
}

nlohmann::json rank_verdict(const Verdict& v, int rank) {
  nlohmann::json mine = nlohmann::json::array();
  for (size_t i = 0; i < v.findings.size() && mine.size() < 64; ++i)
    if (i < v.concerns.size() &&
        std::find(v.concerns[i].begin(), v.concerns[i].end(), rank) != v.concerns[i].end())
      mine.push_back(diag::one_line(v.findings[i]));
  return {{"schema", "railscope.preflight.verdict/1"},
          {"exit_code", v.exit_code},
          {"findings", v.findings.size()},
          {"joined", v.nodes.size()},
          {"world", v.world},
          {"mine", mine}};
}

bool rank_summary(const nlohmann::json& j, int rank, const std::string& host, std::string* line,
                  int* exit_code) {
  if (!has_schema(j, "railscope.preflight.verdict/1")) return false;
  const auto code = j.find("exit_code");
  const auto n = j.find("findings");
  const auto joined = j.find("joined");
  const auto world = j.find("world");
  const auto mine = j.find("mine");
  if (code == j.end() || !code->is_number_integer() || n == j.end() || !n->is_number_unsigned() ||
      joined == j.end() || !joined->is_number_unsigned() || world == j.end() ||
      !world->is_number_unsigned() || mine == j.end() || !mine->is_array() || mine->size() > 64)
    return false;
  const int64_t c = code->get<int64_t>();
  if (c < 0 || c > 2) return false;
  *exit_code = static_cast<int>(c);
  *line = fmt::format(
      "railscope preflight: rank {} ({}): cluster {} (exit {}), {} finding(s), {} of {} rank(s) "
      "joined; the full report is rank 0's",
      rank, host, status_word(*exit_code), *exit_code, n->get<uint64_t>(), joined->get<uint64_t>(),
      world->get<uint64_t>());
  for (const auto& m : *mine) {
    if (!m.is_string()) return false;
    *line += "\n  " + printable(m.get<std::string>().substr(0, 2048));
  }
  return true;
}

}  // namespace railscope::preflight
