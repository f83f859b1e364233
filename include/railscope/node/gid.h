// SPDX-License-Identifier: Apache-2.0
// A GID (16 bytes, network order) and the facts NCCL's selection looks at: address family
// (IPv4-mapped or IPv6), link-local, configured or empty, and the GID type (IB / RoCE v1 / v2).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace railscope::node {

enum class AddrFamily { V4, V6 };
std::string_view to_string(AddrFamily f);  // "AF_INET" / "AF_INET6"

// Index of an entry in a port's GID table. Every provider's table has fewer than 256 entries and the
// QP's address vector holds the source GID index in 8 bits (ibv_global_route::sgid_index); entries past
// 255 could not be used and are not read.
using GidIndex = uint8_t;
inline constexpr int kGidIndexEnd = 256;

// Kind of a GID table entry as the kernel reports it (sysfs gid_attrs/types, ibv_gid_entry).
enum class GidType { Unknown, IB, RoceV1, RoceV2 };
std::string_view to_string(GidType t);  // "IB", "RoCE v1", "RoCE v2", "unknown"
// RoCE version number NCCL derives from the type: 1, 2, or 0 when unknown.
int roce_version(GidType t);
// Parses the text of gid_attrs/types/<i> ("IB/RoCE v1", "RoCE v1", "RoCE v2"). On an InfiniBand
// port "IB/RoCE v1" means IB. Anything else is Unknown.
GidType parse_gid_type(std::string_view text, bool infiniband_port);

struct Gid {
  std::array<uint8_t, 16> raw{};

  bool operator==(const Gid&) const = default;

  // Parses sysfs form "fe80:0000:0000:0000:0250:56ff:fe8f:1234" (8 groups of 4 hex digits) and
  // also any textual IPv6 address ("::ffff:10.0.0.1"). nullopt on garbage.
  static std::optional<Gid> parse(std::string_view text);
  // Builds the IPv4-mapped GID ::ffff:a.b.c.d.
  static Gid from_ipv4(uint32_t host_order_addr);

  bool is_zero() const;
  AddrFamily family() const;   // V4 for ::ffff:a.b.c.d (and NCCL's ff0e::ffff:a.b.c.d multicast form)
  bool is_link_local() const;  // fe80:0000:0000:0000/64, as NCCL tests it
  // NCCL's "configured": not all-zero and not a bare fe80:: prefix without an interface id.
  bool is_configured() const;
  // NCCL's validity test for auto-selection: configured and not link-local.
  bool is_valid_for_roce() const { return is_configured() && !is_link_local(); }
  // 32-bit word i (0..3) in host order.
  uint32_t word(int i) const;
  // InfiniBand FLID: bytes 4..5 of the subnet prefix, big-endian (0 = none).
  uint16_t flid() const;

  // "::ffff:10.0.0.1" or the compressed IPv6 text.
  std::string to_string() const;
  // The sysfs form (8 groups of 4 hex digits), as ibv_devinfo/show_gids print it.
  std::string to_sysfs_string() const;
};

// The IPv4 address of a V4 GID in dotted form; empty for V6 GIDs.
std::string ipv4_text(const Gid& gid);

}  // namespace railscope::node
