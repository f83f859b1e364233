// The selection policy through lib/node, the same code `railscope doctor` runs: NCCL_IB_HCA parsing
// and matching, and NCCL's GID index selection over the port's GID table (read here through
// ibv_query_gid_table, which also gives each entry's type and netdev).
#include "plugin/net/verbs/port_policy.h"

#include <fmt/format.h>
#include <net/if.h>

#include <cstring>
#include <mutex>

#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/ibv/ibv.h"
#include "railscope/node/gid_selection.h"
#include "railscope/node/hca_filter.h"

namespace railscope::net::verbs {
namespace {

node::GidType node_type(uint32_t t) {
  switch (t) {
    case IBV_GID_TYPE_IB: return node::GidType::IB;
    case IBV_GID_TYPE_ROCE_V1: return node::GidType::RoceV1;
    case IBV_GID_TYPE_ROCE_V2: return node::GidType::RoceV2;
    default: return node::GidType::Unknown;
  }
}

WireGidType wire_type(node::GidType t) {
  switch (t) {
    case node::GidType::IB: return WireGidType::IB;
    case node::GidType::RoceV1: return WireGidType::RoceV1;
    case node::GidType::RoceV2: return WireGidType::RoceV2;
    case node::GidType::Unknown: break;
  }
  return WireGidType::Unknown;
}

const node::HcaFilter& hca_filter() {
  static const node::HcaFilter filter = [] {
    auto f = node::parse_hca_filter(params::get_string("NCCL_IB_HCA"));
    for (const auto& w : f.warnings) RS_WARN("NET/railscope : NCCL_IB_HCA: {}", w);
    return f;
  }();
  return filter;
}

}  // namespace

bool hca_selects(std::string_view device, int port) { return hca_filter().selects(device, port); }

GidPick pick_gid(ibv_context* ctx, const std::string& device, int port, const ibv_port_attr& attr) {
  GidPick pick;
  std::vector<ibv_gid_entry> raw(static_cast<size_t>(attr.gid_tbl_len > 0 ? attr.gid_tbl_len : 1));
  ssize_t n = ibv::api()->query_gid_table(ctx, raw.data(), raw.size(), 0, sizeof(ibv_gid_entry));
  std::vector<node::GidEntry> table;
  for (ssize_t i = 0; i < n; ++i) {
    const ibv_gid_entry& e = raw[static_cast<size_t>(i)];
    if (static_cast<int>(e.port_num) != port) continue;
    node::GidEntry g;
    g.index = static_cast<int>(e.gid_index);
    std::memcpy(g.gid.raw.data(), e.gid.raw, 16);
    g.type = node_type(e.gid_type);
    char name[IF_NAMESIZE] = {};
    if (e.ndev_ifindex != 0 && if_indextoname(e.ndev_ifindex, name) != nullptr) g.netdev = name;
    table.push_back(std::move(g));
  }
  std::vector<diag::Finding> problems;
  node::GidPolicy policy = node::gid_policy_from_env(&problems);
  for (auto& f : problems) pick.findings.push_back(std::move(f));
  auto ll =
      attr.link_layer == IBV_LINK_LAYER_ETHERNET ? node::LinkLayer::Ethernet : node::LinkLayer::InfiniBand;
  node::GidChoice choice =
      node::select_gid(ll, attr.gid_tbl_len, table, policy, fmt::format("{}:{}", device, port));
  for (auto& f : choice.findings) pick.findings.push_back(std::move(f));
  pick.index = choice.index;
  if (!choice.entry) {
    pick.usable = false;
    if (choice.findings.empty())
      pick.findings.push_back(diag::make(
          "gid.none_usable", fmt::format("no GID at index {} on {}:{}", choice.index, device, port)));
    return pick;
  }
  std::memcpy(pick.gid.data(), choice.entry->gid.raw.data(), 16);
  pick.type = wire_type(choice.entry->type);
  pick.netdev = choice.entry->netdev;
  return pick;
}

}  // namespace railscope::net::verbs
