// SPDX-License-Identifier: Apache-2.0
// GID index selection exactly as NCCL 2.28's IB transport does it (ncclIbGetGidIndex), with the
// result explained: which index, why, and why every other non-empty entry lost.
//
// InfiniBand ports: NCCL_IB_GID_INDEX is ignored; index NCCL_IB_ROUTABLE_FLID_GID_INDEX (default 1)
// when that GID carries a non-zero FLID, else 0.
// RoCE ports: NCCL_IB_GID_INDEX >= 0 is used verbatim. Otherwise start at index 0 and walk
// 1..gid_tbl_len-1; a candidate replaces the current choice when
//   (a) its family differs from the current one, equals NCCL_IB_ADDR_FAMILY, and it lies in
//       NCCL_IB_ADDR_RANGE; or
//   (b) it is valid (configured, not link-local), has the wanted family, lies in the range, its RoCE
//       version equals NCCL_IB_ROCE_VERSION_NUM, and the current choice has a different version or
//       is not valid.
// Net effect: the first valid IPv4 RoCE v2 GID in range; index 0 when nothing qualifies.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/node/gid.h"
#include "railscope/node/link.h"

namespace railscope::node {

// One non-empty entry of a port's GID table.
struct GidEntry {
  GidIndex index = 0;
  Gid gid;
  GidType type = GidType::Unknown;
  std::string netdev;  // interface the GID belongs to (RoCE); empty when unknown
};

// NCCL_IB_ADDR_RANGE: an IPv4 or IPv6 CIDR block.
struct AddrRange {
  AddrFamily family = AddrFamily::V4;
  std::array<uint8_t, 16> base{};  // V4: the address in bytes 0..3
  int prefix_len = 0;
  std::string text;

  // True when the GID's address lies in the block (V4: the GID's last word, as NCCL compares).
  bool contains(const Gid& gid) const;
};
// Parses "10.0.0.0/16" or "fd00::/64". The range's family must match `family` (NCCL reads it in the
// family NCCL_IB_ADDR_FAMILY names); nullopt and a message otherwise.
std::optional<AddrRange> parse_addr_range(std::string_view text, AddrFamily family, std::string* error);

struct GidPolicy {
  int forced_index = -1;               // NCCL_IB_GID_INDEX
  int roce_version = 2;                // NCCL_IB_ROCE_VERSION_NUM
  AddrFamily family = AddrFamily::V4;  // NCCL_IB_ADDR_FAMILY
  std::optional<AddrRange> range;      // NCCL_IB_ADDR_RANGE
  int routable_flid_index = 1;         // NCCL_IB_ROUTABLE_FLID_GID_INDEX
};
// Reads the NCCL_IB_* variables above through the params registry. Bad values (unknown family,
// unparsable range) are appended to `problems` as config.bad_env findings and NCCL's default used.
GidPolicy gid_policy_from_env(std::vector<diag::Finding>* problems);

struct GidRejection {
  GidIndex index = 0;
  std::string reason;
};

struct GidChoice {
  // The index the policy lands on, which NCCL_IB_GID_INDEX may put past the table (a finding says so);
  // -1 only when the table is empty. The usable index is entry->index.
  int index = -1;
  bool forced = false;                  // NCCL_IB_GID_INDEX decided it
  std::optional<GidEntry> entry;        // the selected entry; nullopt when that index is empty
  std::string reason;                   // why this index, one sentence
  std::vector<GidRejection> rejected;   // every other non-empty entry and why it lost
  std::vector<diag::Finding> findings;  // gid.index_invalid, gid.link_local, gid.roce_v1, ...
};

// `table` holds the non-empty entries (any order); missing indices below gid_tbl_len are empty.
// `where` names the port in findings ("rxe0:1").
GidChoice select_gid(LinkLayer link_layer, int gid_tbl_len, std::span<const GidEntry> table,
                     const GidPolicy& policy, std::string_view where);

}  // namespace railscope::node
