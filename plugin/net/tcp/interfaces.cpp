// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/interfaces.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/node/inventory.h"
#include "railscope/node/name_list.h"
#include "railscope/node/sysfs.h"

namespace railscope::net::tcp {
namespace {

std::vector<IfAddr> filter_by(const std::vector<IfAddr>& all, const IfNameFilter& f, int family,
                              bool allow_loopback) {
  std::vector<IfAddr> out;
  for (const IfAddr& a : all) {
    if (!a.up || a.link_local) continue;
    if (family != 0 && a.family != family) continue;
    if (!f.matches(a.name)) continue;
    if (a.loopback && !allow_loopback && !f.names_explicitly(a.name)) continue;
    bool seen = false;
    for (const IfAddr& o : out) seen = seen || o.name == a.name;
    if (seen) continue;
    out.push_back(a);
    if (out.size() == kMaxInterfaces) break;
  }
  return out;
}

}  // namespace

bool IfNameFilter::matches(std::string_view ifname) const {
  if (names.empty()) return true;
  bool listed = false;
  for (const std::string& n : names) listed = listed || node::name_matches(ifname, n, exact);
  return exclude ? !listed : listed;
}

bool IfNameFilter::names_explicitly(std::string_view ifname) const {
  return !exclude && !names.empty() && matches(ifname);
}

IfNameFilter parse_ifname_filter(std::string_view spec) {
  node::NameList list = node::parse_name_list(spec);
  return IfNameFilter{list.exclude, list.exact, std::move(list.items)};
}

std::optional<int> parse_family(std::string_view value, std::string* why) {
  if (value.empty()) return 0;
  if (value == "AF_INET" || value == "4") return 4;
  if (value == "AF_INET6" || value == "6") return 6;
  if (why != nullptr) *why = fmt::format("NCCL_SOCKET_FAMILY={} (expected AF_INET or AF_INET6)", value);
  return std::nullopt;
}

std::vector<IfAddr> select_interfaces(const std::vector<IfAddr>& all,
                                      const std::optional<std::string>& ifname, int family) {
  if (ifname && !ifname->empty()) {
    IfNameFilter f = parse_ifname_filter(*ifname);
    auto out = filter_by(all, f, family, false);
    if (out.empty() && f.exclude) out = filter_by(all, f, family, true);  // nothing but loopback left
    return out;
  }
  for (const char* spec : {"ib", "^docker,lo,virbr", "docker", "lo"}) {
    auto out = filter_by(all, parse_ifname_filter(spec), family, std::string_view(spec) == "lo");
    if (!out.empty()) return out;
  }
  return {};
}

std::vector<IfAddr> list_addresses() {
  std::vector<IfAddr> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_name == nullptr) continue;
    IfAddr a;
    a.name = i->ifa_name;
    a.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    a.up = (i->ifa_flags & IFF_UP) != 0;
    if (i->ifa_addr->sa_family == AF_INET) {
      sockaddr_in sin{};
      std::memcpy(&sin, i->ifa_addr, sizeof sin);
      a.family = 4;
      std::memcpy(a.addr.data(), &sin.sin_addr, 4);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      sockaddr_in6 sin6{};
      std::memcpy(&sin6, i->ifa_addr, sizeof sin6);
      a.family = 6;
      std::memcpy(a.addr.data(), &sin6.sin6_addr, 16);
      a.link_local = a.addr[0] == 0xfe && (a.addr[1] & 0xc0) == 0x80;
    } else {
      continue;
    }
    out.push_back(std::move(a));
  }
  freeifaddrs(list);
  return out;
}

NetInterface describe_interface(const IfAddr& ip) {
  NetInterface n;
  n.ip = ip;
  if (ip.name.empty() || ip.name.find('/') != std::string::npos) return n;
  const node::Sysfs sysfs(node::Sysfs::default_root());
  const std::string base = "class/net/" + ip.name;
  if (auto v = sysfs.read_int(base + "/speed"); v && *v > 0 && *v < INT_MAX)
    n.speed_mbps = static_cast<int>(*v);
  n.mtu = node::read_netdev_mtu(sysfs, ip.name);
  char real[PATH_MAX] = {};  // the fake tree's own path under a test root, as before
  if (::realpath(sysfs.path(base + "/device").c_str(), real) != nullptr) n.pci_path = real;
  return n;
}

std::string address_text(const IfAddr& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ip.family == 6 ? AF_INET6 : AF_INET, ip.addr.data(), buf, sizeof buf);
  return buf;
}

Status discover_interfaces(std::vector<NetInterface>* out) {
  out->clear();
  std::string why;
  auto family = parse_family(params::get_string("NCCL_SOCKET_FAMILY"), &why);
  if (!family) {
    RS_WARN("NET/railscope : {}", diag::one_line(diag::make("config.bad_env", why)));
    family = 0;
  }
  auto ifname = params::raw("NCCL_SOCKET_IFNAME");
  for (const IfAddr& a : select_interfaces(list_addresses(), ifname, *family))
    out->push_back(describe_interface(a));
  if (out->empty())
    return Status::fail(
        ncclSystemError, "tcp.no_interface",
        fmt::format("no network interface matches NCCL_SOCKET_IFNAME={} NCCL_SOCKET_FAMILY={} (up, with an "
                    "address)",
                    ifname.value_or("<unset>"), params::raw("NCCL_SOCKET_FAMILY").value_or("<unset>")),
        "Set NCCL_SOCKET_IFNAME to an interface that is up and has an address (`ip -br addr`)");
  return Status::success();
}

}  // namespace railscope::net::tcp
