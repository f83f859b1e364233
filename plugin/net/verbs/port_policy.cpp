// Interim implementation of the selection policy, written against libibverbs directly, until
// lib/node (the shared implementation used by `railscope doctor`) is merged; the interface in
// port_policy.h is what the engine uses either way.
#include "plugin/net/verbs/port_policy.h"

#include <fmt/format.h>
#include <net/if.h>

#include <cstdlib>
#include <cstring>

#include "railscope/core/params.h"

namespace railscope::net::verbs {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

WireGidType gid_type_of(uint32_t t) {
  switch (t) {
    case IBV_GID_TYPE_IB: return WireGidType::IB;
    case IBV_GID_TYPE_ROCE_V1: return WireGidType::RoceV1;
    case IBV_GID_TYPE_ROCE_V2: return WireGidType::RoceV2;
    default: return WireGidType::Unknown;
  }
}

}  // namespace

bool hca_selects(std::string_view device, int port) {
  std::string text = params::get_string("NCCL_IB_HCA");
  if (text.empty()) return true;
  std::string_view s = text;
  bool exclude = false, exact = false;
  if (!s.empty() && s[0] == '^') {
    exclude = true;
    s.remove_prefix(1);
  }
  if (!s.empty() && s[0] == '=') {
    exact = true;
    s.remove_prefix(1);
  }
  bool matched = false;
  for (auto item : split(s, ',')) {
    std::string_view name = item;
    int want_port = -1;
    if (auto colon = item.find(':'); colon != std::string_view::npos) {
      name = item.substr(0, colon);
      want_port = std::atoi(std::string(item.substr(colon + 1)).c_str());
    }
    bool name_ok = exact ? device == name : device.substr(0, name.size()) == name;
    if (name_ok && (want_port == -1 || want_port == port)) matched = true;
  }
  return exclude ? !matched : matched;
}

GidPick pick_gid(ibv_context* ctx, const std::string& device, int port, const ibv_port_attr& attr) {
  GidPick pick;
  std::vector<ibv_gid_entry> table(static_cast<size_t>(attr.gid_tbl_len > 0 ? attr.gid_tbl_len : 1));
  ssize_t n = ibv_query_gid_table(ctx, table.data(), table.size(), 0);
  if (n < 0) n = 0;
  std::vector<ibv_gid_entry> mine;
  for (ssize_t i = 0; i < n; ++i)
    if (static_cast<int>(table[static_cast<size_t>(i)].port_num) == port)
      mine.push_back(table[static_cast<size_t>(i)]);

  auto fill = [&](const ibv_gid_entry& e) {
    pick.index = static_cast<int>(e.gid_index);
    std::memcpy(pick.gid.data(), e.gid.raw, 16);
    pick.type = gid_type_of(e.gid_type);
    char name[IF_NAMESIZE] = {};
    if (e.ndev_ifindex != 0 && if_indextoname(e.ndev_ifindex, name) != nullptr) pick.netdev = name;
  };

  if (attr.link_layer != IBV_LINK_LAYER_ETHERNET) {  // InfiniBand: index 0
    for (const auto& e : mine)
      if (e.gid_index == 0) fill(e);
    return pick;
  }
  int forced = static_cast<int>(params::get_int("NCCL_IB_GID_INDEX"));
  if (forced >= 0) {
    for (const auto& e : mine)
      if (static_cast<int>(e.gid_index) == forced) {
        fill(e);
        return pick;
      }
    pick.index = forced;
    pick.usable = false;
    pick.findings.push_back(
        diag::make("gid.index_invalid",
                   fmt::format("NCCL_IB_GID_INDEX={} names an empty GID on {}:{}", forced, device, port)));
    return pick;
  }
  bool want_v4 = params::get_string("NCCL_IB_ADDR_FAMILY") != "AF_INET6";
  int want_version = static_cast<int>(params::get_int("NCCL_IB_ROCE_VERSION_NUM"));
  const ibv_gid_entry* best = nullptr;
  for (const auto& e : mine) {
    std::array<uint8_t, 16> g{};
    std::memcpy(g.data(), e.gid.raw, 16);
    bool valid = !gid_is_link_local(g) && gid_is_ipv4_mapped(g) == want_v4;
    int version = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? 2 : 1;
    if (valid && version == want_version && (best == nullptr || e.gid_index < best->gid_index)) best = &e;
  }
  if (best == nullptr)
    for (const auto& e : mine)
      if (e.gid_index == 0) best = &e;
  if (best == nullptr) {
    pick.usable = false;
    pick.findings.push_back(diag::make("gid.none_usable", fmt::format("no GID on {}:{}", device, port)));
    return pick;
  }
  fill(*best);
  return pick;
}

}  // namespace railscope::net::verbs
