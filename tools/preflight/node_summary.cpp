// SPDX-License-Identifier: Apache-2.0
// Building this node's report from the doctor's facts (see node_summary.h).
#include "node_summary.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cstring>

#include "railscope/core/utf8.h"

extern char** environ;

namespace railscope::preflight {
namespace {

std::string subnet_of(const std::string& ipv4, int prefix) {
  in_addr a{};
  if (prefix < 0 || prefix > 32 || ::inet_pton(AF_INET, ipv4.c_str(), &a) != 1) return {};
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t(0) << (32 - prefix);
  in_addr net{htonl(ntohl(a.s_addr) & mask)};
  char text[INET_ADDRSTRLEN];
  ::inet_ntop(AF_INET, &net, text, sizeof text);
  return std::string(text) + "/" + std::to_string(prefix);
}

int popcount(uint32_t v) {
  int n = 0;
  for (; v; v &= v - 1) ++n;
  return n;
}

}  // namespace

PrefixLookup system_prefixes() {
  return [](const std::string& netdev, const std::string& ipv4) {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return -1;
    int prefix = -1;
    for (ifaddrs* i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || !i->ifa_netmask || i->ifa_addr->sa_family != AF_INET || netdev != i->ifa_name)
        continue;
      sockaddr_in a{};
      sockaddr_in m{};
      std::memcpy(&a, i->ifa_addr, sizeof a);
      std::memcpy(&m, i->ifa_netmask, sizeof m);
      char text[INET_ADDRSTRLEN];
      ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
      if (ipv4 == text) prefix = popcount(ntohl(m.sin_addr.s_addr));
    }
    ::freeifaddrs(list);
    return prefix;
  };
}

std::map<std::string, std::string> process_nccl_env() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos || kv.rfind("NCCL_", 0) != 0 || eq > 64) continue;
    if (out.size() >= kMaxEnv) break;
    // Well-formed UTF-8 within the caps, as every rank's report must be to travel as JSON: a value in
    // another encoding, or cut inside a character, made rank 0's own verdict fail to print (nlohmann's
    // dump() throws) and differ from the same value another rank sent (node_report.h).
    std::string value = utf8::well_formed(kv.substr(eq + 1), kMaxField);
    for (char& c : value)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    out.emplace(utf8::well_formed(kv.substr(0, eq), kMaxField), std::move(value));
  }
  return out;
}

NodeReport summarize(const doctor::NodeFacts& facts, const doctor::Report& report, int rank,
                     const std::string& host, const std::map<std::string, std::string>& nccl_env,
                     const PrefixLookup& prefixes) {
  NodeReport r;
  r.rank = rank;
  r.host = utf8::well_formed(host, kMaxField);
  r.nccl_env = nccl_env;
  r.doctor_exit = report.exit_code;
  for (const auto& d : facts.inventory.devices)
    for (const auto& p : d.ports) {
      if (!doctor::port_selected(facts, d, p) || r.nics.size() >= kMaxNics) continue;
      NicSummary n;
      n.device = utf8::well_formed(d.name, 64);
      n.port = p.number;
      n.state = std::string(node::to_string(p.state));
      n.link_layer = std::string(node::to_string(p.link_layer));
      n.netdev = utf8::well_formed(p.netdev, 64);
      n.active_mtu = p.active_mtu;
      n.speed_mbps = p.speed_mbps;
      n.fw_ver = utf8::well_formed(d.fw_ver, 64);
      const node::GidChoice c =
          node::select_gid(p.link_layer, p.gid_tbl_len, p.gids, facts.gid_policy, doctor::port_name(d, p));
      if (c.entry) {
        n.gid_type = std::string(node::to_string(c.entry->type));
        n.gid_family = std::string(node::to_string(c.entry->gid.family()));
        n.ipv4 = node::ipv4_text(c.entry->gid);
        if (!n.ipv4.empty() && !n.netdev.empty()) n.subnet = subnet_of(n.ipv4, prefixes(n.netdev, n.ipv4));
      }
      r.nics.push_back(std::move(n));
    }
  std::stable_sort(r.nics.begin(), r.nics.end(),
                   [](const NicSummary& a, const NicSummary& b) { return natural_less(a.name(), b.name()); });
  for (const auto& s : report.sections)
    for (const auto& f : s.findings) {
      if (f.severity != diag::Severity::Warning && f.severity != diag::Severity::Error) continue;
      if (r.findings.size() >= kMaxFindings) break;
      r.findings.push_back({std::string(f.id()), std::string(diag::to_string(f.severity)),
                            utf8::well_formed(f.detail, kMaxText)});
    }
  return r;
}

}  // namespace railscope::preflight
