// SPDX-License-Identifier: Apache-2.0
// NCCL_IB_ADDR_RANGE: parsing a CIDR block and matching a GID against it the way NCCL does
// (IPv4: the GID's last 32-bit word; IPv6: word by word, the last partial word masked).
#include <arpa/inet.h>

#include <charconv>

#include "railscope/node/gid_selection.h"

namespace railscope::node {
namespace {

uint32_t mask_bits(int bits) { return bits >= 32 ? 0xffffffffu : ~((1u << (32 - bits)) - 1u); }

uint32_t word_of(const std::array<uint8_t, 16>& b, int i) {
  const size_t k = static_cast<size_t>(i) * 4;
  return (uint32_t{b[k]} << 24) | (uint32_t{b[k + 1]} << 16) | (uint32_t{b[k + 2]} << 8) | uint32_t{b[k + 3]};
}

}  // namespace

bool AddrRange::contains(const Gid& gid) const {
  if (prefix_len <= 0) return true;
  if (family == AddrFamily::V4) {
    const uint32_t m = mask_bits(prefix_len);
    return (word_of(base, 0) & m) == (gid.word(3) & m);
  }
  int left = prefix_len;
  for (int i = 0; i < 4 && left > 0; ++i) {
    const int bits = left >= 32 ? 32 : left;
    const uint32_t m = mask_bits(bits);
    if ((word_of(base, i) & m) != (gid.word(i) & m)) return false;
    left -= bits;
  }
  return true;
}

std::optional<AddrRange> parse_addr_range(std::string_view text, AddrFamily family, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<AddrRange> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return fail("expected <address>/<prefix length>");
  const std::string addr(text.substr(0, slash));
  const std::string_view len_text = text.substr(slash + 1);
  AddrRange r;
  r.family = family;
  r.text = std::string(text);
  const int af = family == AddrFamily::V4 ? AF_INET : AF_INET6;
  if (addr.empty() || inet_pton(af, addr.c_str(), r.base.data()) != 1)
    return fail("'" + addr + "' is not an " + std::string(family == AddrFamily::V4 ? "IPv4" : "IPv6") +
                " address (NCCL_IB_ADDR_FAMILY is " + std::string(to_string(family)) + ")");
  int len = -1;
  auto [end, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
  const int max = family == AddrFamily::V4 ? 32 : 128;
  if (ec != std::errc() || end != len_text.data() + len_text.size() || len < 0 || len > max)
    return fail("prefix length '" + std::string(len_text) + "' is not in 0.." + std::to_string(max));
  r.prefix_len = len;
  return r;
}

}  // namespace railscope::node
