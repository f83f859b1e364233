// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/failover/failover_message.h"

#include <fmt/format.h>

#include "plugin/net/common/wire.h"

namespace railscope::net::verbs::failover {

namespace {
std::nullopt_t refuse(std::string* why, std::string what) {
  if (why != nullptr) *why = "failover notice: " + std::move(what);
  return std::nullopt;
}
}  // namespace

std::vector<std::byte> encode(const Notice& n) {
  wire::Writer w;
  w.u8(kVersion);
  w.u8(static_cast<uint8_t>(n.kind));
  w.u32(n.epoch);
  w.u64(n.qps);
  if (n.kind == Kind::Held || n.kind == Kind::Restored) w.u64(n.next_seq);
  if (n.kind == Kind::Held) {
    w.u16(static_cast<uint16_t>(n.held.size()));
    for (const PartsHeld& p : n.held) {
      w.u16(p.target);
      w.u32(p.seq);
      w.u64(p.parts);
    }
  }
  return std::move(w.bytes());
}

std::optional<Notice> decode(std::span<const std::byte> body, size_t nqps, std::string* why) {
  if (nqps == 0 || nqps > kMaxQps) {
    return refuse(why, fmt::format("a connection of {} QPs cannot fail over", nqps));
  }
  if (body.size() > kMaxBodyBytes) {
    return refuse(why, fmt::format("{} bytes, at most {}", body.size(), kMaxBodyBytes));
  }
  wire::Reader r(body);
  Notice n;
  const uint8_t version = r.u8();
  const uint8_t kind = r.u8();
  n.epoch = r.u32();
  n.qps = r.u64();
  if (r.bad()) return refuse(why, "truncated");
  if (version != kVersion) return refuse(why, fmt::format("version {}, {} expected", version, kVersion));
  if (kind < static_cast<uint8_t>(Kind::Move) || kind > static_cast<uint8_t>(Kind::Restored))
    return refuse(why, fmt::format("unknown kind {}", kind));
  n.kind = static_cast<Kind>(kind);
  if (n.epoch == 0) return refuse(why, "epoch 0");
  const uint64_t mask = all_qps(nqps);
  if (n.qps == 0 || (n.qps & ~mask) != 0 || n.qps == mask)
    return refuse(why, fmt::format("QPs {:#x} on a connection of {} QPs", n.qps, nqps));
  if (n.kind == Kind::Held || n.kind == Kind::Restored) {
    n.next_seq = r.u64();
    if (r.bad()) return refuse(why, "truncated");
  }
  if (n.kind == Kind::Held) {
    const uint16_t count = r.u16();
    if (r.bad()) return refuse(why, "truncated");
    if (count > kMaxHeld) return refuse(why, fmt::format("{} targets, at most {}", count, kMaxHeld));
    n.held.reserve(count);
    for (uint16_t i = 0; i < count; ++i) {
      PartsHeld p;
      p.target = r.u16();
      p.seq = r.u32();
      p.parts = r.u64();
      if (r.bad()) return refuse(why, "truncated");
      if (p.target >= kMaxHeld) return refuse(why, fmt::format("target {}", p.target));
      if (!n.held.empty() && p.target <= n.held.back().target)
        return refuse(why, fmt::format("target {} after {}", p.target, n.held.back().target));
      if ((p.parts & ~mask) != 0)
        return refuse(why, fmt::format("parts {:#x} of target {}", p.parts, p.target));
      n.held.push_back(p);
    }
  }
  if (r.remaining() != 0) return refuse(why, fmt::format("{} bytes left over", r.remaining()));
  return n;
}

}  // namespace railscope::net::verbs::failover
