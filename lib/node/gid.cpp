// SPDX-License-Identifier: Apache-2.0
// GID parsing, formatting and classification (family, link-local, configured).
#include "railscope/node/gid.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstdio>

namespace railscope::node {

std::string_view to_string(AddrFamily f) { return f == AddrFamily::V4 ? "AF_INET" : "AF_INET6"; }

std::string_view to_string(GidType t) {
  switch (t) {
    case GidType::IB: return "IB";
    case GidType::RoceV1: return "RoCE v1";
    case GidType::RoceV2: return "RoCE v2";
    case GidType::Unknown: break;
  }
  return "unknown";
}

int roce_version(GidType t) {
  switch (t) {
    case GidType::RoceV1: return 1;
    case GidType::RoceV2: return 2;
    default: return 0;
  }
}

GidType parse_gid_type(std::string_view text, bool infiniband_port) {
  // NCCL compares prefixes, so trailing newlines or padding do not matter.
  if (text.starts_with("IB/RoCE v1")) return infiniband_port ? GidType::IB : GidType::RoceV1;
  if (text.starts_with("RoCE v1")) return GidType::RoceV1;
  if (text.starts_with("RoCE v2")) return GidType::RoceV2;
  if (text.starts_with("IB")) return GidType::IB;
  return GidType::Unknown;
}

namespace {

std::optional<Gid> parse_sysfs_form(std::string_view text) {
  // Exactly 8 groups of 4 hex digits separated by ':' (39 characters).
  if (text.size() != 39) return std::nullopt;
  Gid g;
  for (size_t group = 0; group < 8; ++group) {
    const size_t base = group * 5;
    if (group < 7 && text[base + 4] != ':') return std::nullopt;
    unsigned value = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[base + k];
      if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
      const unsigned digit =
          std::isdigit(static_cast<unsigned char>(c))
              ? static_cast<unsigned>(c - '0')
              : static_cast<unsigned>(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
      value = value * 16 + digit;
    }
    g.raw[group * 2] = static_cast<uint8_t>(value >> 8);
    g.raw[group * 2 + 1] = static_cast<uint8_t>(value & 0xff);
  }
  return g;
}

}  // namespace

std::optional<Gid> Gid::parse(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (auto g = parse_sysfs_form(text)) return g;
  if (text.empty() || text.size() > 63) return std::nullopt;
  const std::string s(text);
  Gid g;
  if (inet_pton(AF_INET6, s.c_str(), g.raw.data()) == 1) return g;
  return std::nullopt;
}

Gid Gid::from_ipv4(uint32_t host_order_addr) {
  Gid g;
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  g.raw[12] = static_cast<uint8_t>(host_order_addr >> 24);
  g.raw[13] = static_cast<uint8_t>(host_order_addr >> 16);
  g.raw[14] = static_cast<uint8_t>(host_order_addr >> 8);
  g.raw[15] = static_cast<uint8_t>(host_order_addr);
  return g;
}

uint32_t Gid::word(int i) const {
  const size_t b = static_cast<size_t>(i) * 4;
  return (uint32_t{raw[b]} << 24) | (uint32_t{raw[b + 1]} << 16) | (uint32_t{raw[b + 2]} << 8) |
         uint32_t{raw[b + 3]};
}

bool Gid::is_zero() const {
  for (auto b : raw)
    if (b != 0) return false;
  return true;
}

AddrFamily Gid::family() const {
  const bool mapped = word(0) == 0 && word(1) == 0 && word(2) == 0x0000ffffu;
  const bool mapped_multicast = word(0) == 0xff0e0000u && word(1) == 0 && word(2) == 0x0000ffffu;
  return (mapped || mapped_multicast) ? AddrFamily::V4 : AddrFamily::V6;
}

bool Gid::is_link_local() const { return word(0) == 0xfe800000u && word(1) == 0; }

bool Gid::is_configured() const {
  const uint32_t trailer = word(1) | word(2) | word(3);
  if ((word(0) | trailer) == 0) return false;
  if (word(0) == 0xfe800000u && trailer == 0) return false;
  return true;
}

uint16_t Gid::flid() const { return static_cast<uint16_t>((raw[4] << 8) | raw[5]); }

std::string Gid::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, raw.data(), buf, sizeof buf) == nullptr) return to_sysfs_string();
  return buf;
}

std::string Gid::to_sysfs_string() const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10],
                raw[11], raw[12], raw[13], raw[14], raw[15]);
  return buf;
}

std::string ipv4_text(const Gid& gid) {
  if (gid.family() != AddrFamily::V4) return {};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", gid.raw[12], gid.raw[13], gid.raw[14], gid.raw[15]);
  return buf;
}

}  // namespace railscope::node
