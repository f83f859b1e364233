// SPDX-License-Identifier: Apache-2.0
// NCCL's GID index selection, replayed step by step so every decision can be explained.
#include "railscope/node/gid_selection.h"

#include <fmt/format.h>

#include "railscope/core/params.h"

namespace railscope::node {
namespace {

std::string describe(int index, const GidEntry* e) {
  if (e == nullptr) return fmt::format("index {} (empty)", index);
  std::string s = fmt::format("index {} {} ({}, {}", index, e->gid.to_string(), to_string(e->type),
                              to_string(e->gid.family()));
  if (e->gid.is_link_local()) s += ", link-local";
  if (!e->netdev.empty()) s += ", " + e->netdev;
  return s + ")";
}

std::string range_text(const GidPolicy& p) { return p.range ? " in " + p.range->text : std::string(); }

std::string why_invalid(const Gid& g) {
  if (g.is_link_local()) return "link-local (fe80::/64), not routable";
  return "not a configured address";
}

GidChoice select_infiniband(int tbl_len, const std::vector<const GidEntry*>& at, const GidPolicy& policy,
                            std::string_view where) {
  GidChoice c;
  const int flid_index = policy.routable_flid_index;
  const GidEntry* routable =
      (flid_index >= 0 && flid_index < tbl_len) ? at[static_cast<size_t>(flid_index)] : nullptr;
  if (routable != nullptr && routable->gid.flid() != 0) {
    c.index = flid_index;
    c.reason =
        fmt::format("InfiniBand: index {} carries the routable FLID {:#x} (NCCL_IB_ROUTABLE_FLID_GID_INDEX)",
                    flid_index, routable->gid.flid());
  } else {
    c.index = 0;
    c.reason = fmt::format("InfiniBand: index 0 (index {} carries no FLID)", flid_index);
  }
  if (c.index < tbl_len && at[static_cast<size_t>(c.index)] != nullptr)
    c.entry = *at[static_cast<size_t>(c.index)];
  for (int i = 0; i < tbl_len; ++i)
    if (i != c.index && at[static_cast<size_t>(i)] != nullptr)
      c.rejected.push_back({static_cast<GidIndex>(i), "InfiniBand uses index 0 or the routable-FLID index"});
  if (policy.forced_index >= 0)
    c.findings.push_back(diag::make(
        "gid.forced_on_ib",
        fmt::format("{}: NCCL_IB_GID_INDEX={} is ignored on InfiniBand", where, policy.forced_index)));
  return c;
}

// Findings about the GID that ends up selected on a RoCE port.
void judge_selected(GidChoice& c, int tbl_len, const GidPolicy& policy, std::string_view where) {
  if (!c.entry) {
    if (c.forced)
      c.findings.push_back(
          diag::make("gid.index_invalid",
                     c.index >= tbl_len
                         ? fmt::format("{}: NCCL_IB_GID_INDEX={} but the GID table has {} entries", where,
                                       c.index, tbl_len)
                         : fmt::format("{}: NCCL_IB_GID_INDEX={} names an empty GID entry", where, c.index)));
    else
      c.findings.push_back(diag::make(
          "gid.none_usable", fmt::format("{}: no GID qualifies and index {} is empty", where, c.index)));
    return;
  }
  const GidEntry& e = *c.entry;
  if (e.gid.is_link_local()) {
    std::string fix;
    if (!c.forced)
      fix = "Assign a routable address to the netdev, or set NCCL_IB_ADDR_FAMILY to the family it has";
    c.findings.push_back(diag::make("gid.link_local",
                                    fmt::format("{}: selected {}{}", where, describe(c.index, &e),
                                                c.forced ? " forced by NCCL_IB_GID_INDEX"
                                                         : ": no routable GID of the wanted kind exists"),
                                    fix));
    return;
  }
  if (!e.gid.is_configured()) {
    c.findings.push_back(
        diag::make("gid.none_usable",
                   fmt::format("{}: selected {} is not a configured address", where, describe(c.index, &e))));
    return;
  }
  if (roce_version(e.type) == 1 && policy.roce_version != 1) {
    c.findings.push_back(
        diag::make("gid.roce_v1", fmt::format("{}: selected {}", where, describe(c.index, &e))));
    return;
  }
  if (!c.forced && (e.gid.family() != policy.family || (policy.range && !policy.range->contains(e.gid))))
    c.findings.push_back(diag::make(
        "gid.none_usable", fmt::format("{}: no {} GID{} exists; NCCL falls back to {}", where,
                                       to_string(policy.family), range_text(policy), describe(c.index, &e))));
}

}  // namespace

GidPolicy gid_policy_from_env(std::vector<diag::Finding>* problems) {
  GidPolicy p;
  p.forced_index = static_cast<int>(params::get_int("NCCL_IB_GID_INDEX"));
  p.roce_version = static_cast<int>(params::get_int("NCCL_IB_ROCE_VERSION_NUM"));
  p.routable_flid_index = static_cast<int>(params::get_int("NCCL_IB_ROUTABLE_FLID_GID_INDEX"));
  const std::string fam = params::get_string("NCCL_IB_ADDR_FAMILY");
  if (fam == "AF_INET6") {
    p.family = AddrFamily::V6;
  } else if (fam != "AF_INET" && problems) {
    problems->push_back(diag::make("config.bad_env",
                                   fmt::format("NCCL_IB_ADDR_FAMILY={} is neither AF_INET nor AF_INET6; NCCL "
                                               "uses AF_INET",
                                               fam)));
  }
  if (auto text = params::raw("NCCL_IB_ADDR_RANGE")) {
    std::string error;
    p.range = parse_addr_range(*text, p.family, &error);
    if (!p.range && problems)
      problems->push_back(diag::make(
          "config.bad_env", fmt::format("NCCL_IB_ADDR_RANGE={}: {}; NCCL ignores the range", *text, error)));
  }
  return p;
}

GidChoice select_gid(LinkLayer link_layer, int gid_tbl_len, std::span<const GidEntry> table,
                     const GidPolicy& policy, std::string_view where) {
  int tbl_len = gid_tbl_len;
  if (tbl_len <= 0)
    for (const auto& e : table) tbl_len = std::max(tbl_len, e.index + 1);
  if (tbl_len <= 0) {
    GidChoice c;
    c.reason = "the port has no GID table";
    if (link_layer != LinkLayer::InfiniBand)
      c.findings.push_back(diag::make("gid.none_usable", fmt::format("{}: the GID table is empty", where)));
    return c;
  }
  std::vector<const GidEntry*> at(static_cast<size_t>(tbl_len), nullptr);
  for (const auto& e : table)
    if (e.index < tbl_len) at[static_cast<size_t>(e.index)] = &e;

  if (link_layer == LinkLayer::InfiniBand) return select_infiniband(tbl_len, at, policy, where);

  GidChoice c;
  if (policy.forced_index >= 0) {
    c.forced = true;
    c.index = policy.forced_index;
    if (c.index < tbl_len && at[static_cast<size_t>(c.index)] != nullptr)
      c.entry = *at[static_cast<size_t>(c.index)];
    GidPolicy automatic = policy;
    automatic.forced_index = -1;
    const GidChoice alt = select_gid(link_layer, tbl_len, table, automatic, where);
    c.reason = fmt::format("forced by NCCL_IB_GID_INDEX={} (automatic selection would pick index {})",
                           c.index, alt.index);
    for (int i = 0; i < tbl_len; ++i)
      if (i != c.index && at[static_cast<size_t>(i)] != nullptr)
        c.rejected.push_back(
            {static_cast<GidIndex>(i), fmt::format("NCCL_IB_GID_INDEX forces index {}", c.index)});
    judge_selected(c, tbl_len, policy, where);
    return c;
  }

  static const Gid kZero{};
  std::vector<std::string> why(static_cast<size_t>(tbl_len));
  int cur = 0;
  c.reason = "index 0: where NCCL starts, and no later entry qualified";
  const std::string want =
      fmt::format("{} RoCE v{}{}", to_string(policy.family), policy.roce_version, range_text(policy));
  for (int i = 1; i < tbl_len; ++i) {
    const GidEntry* cand = at[static_cast<size_t>(i)];
    const GidEntry* now = at[static_cast<size_t>(cur)];
    const Gid& cg = cand ? cand->gid : kZero;
    const Gid& ng = now ? now->gid : kZero;
    const bool in_range = !policy.range || policy.range->contains(cg);
    if (cg.family() != ng.family() && cg.family() == policy.family && in_range) {
      if (now)
        why[static_cast<size_t>(cur)] =
            fmt::format("replaced by index {}, which has the wanted family {}", i, to_string(policy.family));
      c.reason = fmt::format("first {} entry{} after an entry of the other family", to_string(policy.family),
                             range_text(policy));
      cur = i;
      continue;
    }
    if (cand == nullptr) continue;
    std::string& w = why[static_cast<size_t>(i)];
    if (cg.family() != policy.family) {
      w = fmt::format("family {}, wanted {} (NCCL_IB_ADDR_FAMILY)", to_string(cg.family()),
                      to_string(policy.family));
    } else if (!cg.is_valid_for_roce()) {
      w = why_invalid(cg);
    } else if (!in_range) {
      w = fmt::format("outside NCCL_IB_ADDR_RANGE {}", policy.range->text);
    } else {
      const int vc = roce_version(cand->type);
      const int vn = now ? roce_version(now->type) : 0;
      if ((vn != vc || !ng.is_valid_for_roce()) && vc == policy.roce_version) {
        if (now)
          why[static_cast<size_t>(cur)] = fmt::format(
              "replaced by index {} ({})", i,
              ng.is_valid_for_roce() ? fmt::format("RoCE v{} wanted", policy.roce_version) : why_invalid(ng));
        c.reason = fmt::format("first valid {} GID", want);
        cur = i;
      } else if (vc != policy.roce_version) {
        w = vc == 0 ? fmt::format("RoCE version unknown, wanted v{} (NCCL_IB_ROCE_VERSION_NUM)",
                                  policy.roce_version)
                    : fmt::format("RoCE v{}, wanted v{} (NCCL_IB_ROCE_VERSION_NUM)", vc, policy.roce_version);
      } else {
        w = fmt::format("also {}, but index {} came first", want, cur);
      }
    }
  }
  c.index = cur;
  if (at[static_cast<size_t>(cur)] != nullptr) c.entry = *at[static_cast<size_t>(cur)];
  for (int i = 0; i < tbl_len; ++i)
    if (i != cur && at[static_cast<size_t>(i)] != nullptr)
      c.rejected.push_back({static_cast<GidIndex>(i), why[static_cast<size_t>(i)]});
  judge_selected(c, tbl_len, policy, where);
  return c;
}

}  // namespace railscope::node
