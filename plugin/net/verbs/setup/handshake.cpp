// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/setup/handshake.h"

#include <fmt/format.h>

#include <algorithm>

#include "plugin/net/common/wire.h"
#include "railscope/node/mtu.h"

namespace railscope::net::verbs {
namespace {

// Handle layout: magic 0, version 4, size 6, family 8, port 10, addr 12..27, nonce 28..35 (the
// checksummed part), connect_id 36..43 (local state, rewritten by connect()), checksum 44..47
// (FNV-1a over bytes 0..35, as the TCP engine's handle: a corrupted handle is refused at once).
constexpr size_t kHandleConnectIdOffset = 36;
constexpr size_t kHandleChecked = 36;

void bad(std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
}
bool fail(std::string* why, std::string text) {
  bad(why, std::move(text));
  return false;
}

// The device record's codes for link layer and GID type (protocol version 2; never renumber).
enum class WireLinkLayer : uint8_t { Unknown = 0, InfiniBand = 1, Ethernet = 2 };
enum class WireGidType : uint8_t { Unknown = 0, IB = 1, RoceV1 = 2, RoceV2 = 3 };

WireLinkLayer to_wire(node::LinkLayer l) {
  switch (l) {
    case node::LinkLayer::InfiniBand: return WireLinkLayer::InfiniBand;
    case node::LinkLayer::Ethernet: return WireLinkLayer::Ethernet;
    case node::LinkLayer::Unknown: break;
  }
  return WireLinkLayer::Unknown;
}

WireGidType to_wire(node::GidType t) {
  switch (t) {
    case node::GidType::IB: return WireGidType::IB;
    case node::GidType::RoceV1: return WireGidType::RoceV1;
    case node::GidType::RoceV2: return WireGidType::RoceV2;
    case node::GidType::Unknown: break;
  }
  return WireGidType::Unknown;
}

// Codes already checked to be in range.
node::LinkLayer link_layer_from_wire(uint8_t code) {
  switch (static_cast<WireLinkLayer>(code)) {
    case WireLinkLayer::InfiniBand: return node::LinkLayer::InfiniBand;
    case WireLinkLayer::Ethernet: return node::LinkLayer::Ethernet;
    case WireLinkLayer::Unknown: break;
  }
  return node::LinkLayer::Unknown;
}

node::GidType gid_type_from_wire(uint8_t code) {
  switch (static_cast<WireGidType>(code)) {
    case WireGidType::IB: return node::GidType::IB;
    case WireGidType::RoceV1: return node::GidType::RoceV1;
    case WireGidType::RoceV2: return node::GidType::RoceV2;
    case WireGidType::Unknown: break;
  }
  return node::GidType::Unknown;
}

constexpr uint32_t kMaxNetdevMtu = 1u << 20;

// The device record (protocol version 2 onwards): name, netdev, port u8, link layer u8, GID 16 bytes,
// GID index u16, GID type u8, active MTU (ibv_mtu) u8, LID u16, netdev MTU u32, speed in Mbps u32, rkey
// u32. The port record's wider in-memory types are narrowed here only: port numbers are 8-bit in verbs,
// speeds stay far below 2^32 Mbps, and netdev MTUs are 0..2^20 (what decoding accepts).
void put_device(wire::Writer& w, const EndDevice& d) {
  const node::PortRecord& p = d.record;
  w.str(p.dev_name);
  w.str(p.netdev);
  w.u8(static_cast<uint8_t>(p.port));
  w.u8(static_cast<uint8_t>(to_wire(p.link_layer)));
  w.raw(p.gid.raw);
  w.u16(p.gid_index);
  w.u8(static_cast<uint8_t>(to_wire(p.gid_type)));
  w.u8(static_cast<uint8_t>(node::ib_mtu_enum(p.active_mtu)));  // the wire carries ibv_mtu's code
  w.u16(p.lid);
  w.u32(static_cast<uint32_t>(std::clamp<int64_t>(p.netdev_mtu, 0, kMaxNetdevMtu)));
  w.u32(static_cast<uint32_t>(std::clamp<int64_t>(p.speed_mbps, 0, UINT32_MAX)));
  w.u32(d.rkey);
}

// Reads the record into locals, checks them, and only then fills *d.
bool get_device(wire::Reader& r, EndDevice* d, std::string* why) {
  std::string name = r.str(63);
  std::string netdev = r.str(31);
  const uint8_t port = r.u8();
  const uint8_t ll = r.u8();
  node::Gid gid;
  r.raw(gid.raw);
  const uint16_t gid_index = r.u16();
  const uint8_t gt = r.u8();
  const uint8_t active_mtu = r.u8();
  const uint16_t lid = r.u16();
  const uint32_t netdev_mtu = r.u32();
  const uint32_t speed_mbps = r.u32();
  const uint32_t rkey = r.u32();
  if (r.bad()) return fail(why, "truncated or malformed device record");
  if (ll > 2 || gt > 3) return fail(why, fmt::format("link layer {} / GID type {} out of range", ll, gt));
  if (gid_index >= node::kGidIndexEnd)
    return fail(why, fmt::format("GID index {} out of range 0..{}", gid_index, node::kGidIndexEnd - 1));
  if (active_mtu < 1 || active_mtu > 5)
    return fail(why, fmt::format("active MTU code {} out of range 1..5", active_mtu));
  if (netdev_mtu > kMaxNetdevMtu) return fail(why, "netdev MTU out of range");
  node::PortRecord& p = d->record;
  p = node::PortRecord{};
  p.dev_name = std::move(name);
  p.port = port;
  p.link_layer = link_layer_from_wire(ll);
  p.gid_index = static_cast<node::GidIndex>(gid_index);
  p.gid = gid;
  p.gid_type = gid_type_from_wire(gt);
  p.netdev = std::move(netdev);
  p.netdev_mtu = static_cast<int>(netdev_mtu);
  p.active_mtu = node::ib_mtu_bytes(active_mtu);
  p.lid = lid;
  p.speed_mbps = speed_mbps;
  d->rkey = rkey;
  return true;
}

void put_end(wire::Writer& w, const EndInfo& e) {
  w.str(e.host);
  w.u8(static_cast<uint8_t>(e.devs.size()));
  for (const auto& d : e.devs) put_device(w, d);
  w.u8(e.qps_per_conn);
  w.u8(e.traffic_class);
  w.u8(e.service_level);
  w.u64(e.addr);
  w.u32(e.eager_max);
  w.u16(static_cast<uint16_t>(e.qpns.size()));
  for (uint32_t q : e.qpns) w.u32(q);
}

bool get_qpns(wire::Reader& r, std::vector<uint32_t>* qpns, std::string* why) {
  uint16_t n = r.u16();
  if (r.bad() || n > kMaxQps) return fail(why, fmt::format("QP count {} out of range 0..{}", n, kMaxQps));
  qpns->clear();
  for (uint16_t i = 0; i < n; ++i) {
    uint32_t q = r.u32();
    if (q == 0 || q > 0xffffffu) return fail(why, fmt::format("QPN {:#x} out of range", q));
    qpns->push_back(q);
  }
  if (r.bad()) return fail(why, "truncated QPN list");
  return true;
}

// A FIFO is an address with one rkey per device of the sender, or nothing at all.
bool get_fifo(wire::Reader& r, Message* m, std::string* why) {
  m->fifo_addr = r.u64();
  const uint8_t n = r.u8();
  if (r.bad()) return fail(why, "truncated FIFO record");
  if (n > kMaxDevsPerEnd)
    return fail(why, fmt::format("FIFO rkey count {} out of range 0..{}", n, kMaxDevsPerEnd));
  if ((n == 0) != (m->fifo_addr == 0))
    return fail(why, fmt::format("FIFO address {:#x} with {} rkey(s)", m->fifo_addr, n));
  m->fifo_rkeys.clear();
  for (uint8_t i = 0; i < n; ++i) m->fifo_rkeys.push_back(r.u32());
  if (r.bad()) return fail(why, "truncated FIFO rkeys");
  return true;
}

bool get_end(wire::Reader& r, EndInfo* e, std::string* why) {
  e->host = r.str(255);
  uint8_t ndevs = r.u8();
  if (r.bad()) return fail(why, "truncated end record");
  if (ndevs < 1 || ndevs > kMaxDevsPerEnd)
    return fail(why, fmt::format("device count {} out of range 1..{}", ndevs, kMaxDevsPerEnd));
  e->devs.resize(ndevs);
  for (auto& d : e->devs)
    if (!get_device(r, &d, why)) return false;
  e->qps_per_conn = r.u8();
  e->traffic_class = r.u8();
  e->service_level = r.u8();
  e->addr = r.u64();
  e->eager_max = r.u32();
  if (r.bad()) return fail(why, "truncated end record");
  if (e->eager_max > kMaxEagerBytes)
    return fail(why, fmt::format("eager limit {} out of range 0..{}", e->eager_max, kMaxEagerBytes));
  if (e->qps_per_conn < 1 || e->qps_per_conn > kMaxQpsPerConn)
    return fail(why,
                fmt::format("QPs per connection {} out of range 1..{}", e->qps_per_conn, kMaxQpsPerConn));
  if (e->service_level > 15)
    return fail(why, fmt::format("service level {} out of range 0..15", e->service_level));
  return get_qpns(r, &e->qpns, why);
}

}  // namespace

void encode_handle(const ListenHandle& h, HandleBytes out) {
  wire::Writer w;
  w.u32(kHandleMagic);
  w.u16(kProtocolVersion);
  w.u16(static_cast<uint16_t>(kHandleSize));
  w.u8(h.family);
  w.u8(0);
  w.u16(h.port);
  w.raw(h.addr);
  w.u64(h.nonce);
  const uint32_t check = wire::fnv1a(std::span<const std::byte>(w.bytes().data(), kHandleChecked));
  w.u64(h.connect_id);
  w.u32(check);
  std::fill(out.begin(), out.end(), std::byte{0});
  std::copy(w.bytes().begin(), w.bytes().end(), out.begin());
}

std::optional<ListenHandle> decode_handle(std::span<const std::byte> in, std::string* why) {
  if (in.size() < kHandleSize) {
    bad(why, fmt::format("handle is {} bytes, expected {}", in.size(), kHandleSize));
    return std::nullopt;
  }
  wire::Reader r(in.first(kHandleSize));
  uint32_t magic = r.u32();
  uint16_t version = r.u16();
  uint16_t size = r.u16();
  ListenHandle h;
  h.family = r.u8();
  r.u8();
  h.port = r.u16();
  r.raw(h.addr);
  h.nonce = r.u64();
  h.connect_id = r.u64();
  const uint32_t check = r.u32();
  if (magic != kHandleMagic) {
    bad(why, fmt::format("bad magic {:#010x} (not a railscope handle, or truncated)", magic));
    return std::nullopt;
  }
  if (version != kProtocolVersion) {
    bad(why, fmt::format("handle version {} but this build speaks {}", version, kProtocolVersion));
    return std::nullopt;
  }
  if (check != wire::fnv1a(in.first(kHandleChecked))) {
    bad(why, "checksum mismatch (truncated or corrupted handle)");
    return std::nullopt;
  }
  if (size != kHandleSize || (h.family != 4 && h.family != 6) || h.port == 0 || h.nonce == 0) {
    bad(why, fmt::format("handle fields out of range (size {}, family {}, port {}, nonce {})", size, h.family,
                         h.port, h.nonce));
    return std::nullopt;
  }
  return h;
}

void store_connect_id(HandleBytes handle, uint64_t id) {
  for (int i = 0; i < 8; ++i)
    handle[kHandleConnectIdOffset + static_cast<size_t>(i)] = static_cast<std::byte>(id >> (8 * i));
}

std::vector<std::byte> encode_message(const Message& m) {
  wire::Writer body;
  switch (m.type) {
    case MessageType::Hello:
      body.u64(m.nonce);
      put_end(body, m.end);
      break;
    case MessageType::Reply:
      body.u8(m.status);
      put_end(body, m.end);
      break;
    case MessageType::Qpns:
      body.u16(static_cast<uint16_t>(m.qpns.size()));
      for (uint32_t q : m.qpns) body.u32(q);
      body.u64(m.fifo_addr);
      body.u8(static_cast<uint8_t>(m.fifo_rkeys.size()));
      for (uint32_t k : m.fifo_rkeys) body.u32(k);
      break;
    case MessageType::Ready: body.u8(m.status); break;
    case MessageType::Closing: body.u64(m.released); break;
    case MessageType::Failover:
      body.bytes().insert(body.bytes().end(), m.failover.begin(), m.failover.end());
      break;
  }
  wire::Writer w;
  w.u32(kMessageMagic);
  w.u16(kProtocolVersion);
  w.u16(static_cast<uint16_t>(m.type));
  w.u32(static_cast<uint32_t>(body.bytes().size()));
  auto out = std::move(w.bytes());
  out.insert(out.end(), body.bytes().begin(), body.bytes().end());
  return out;
}

uint16_t header_version(std::span<const std::byte, kMessageHeaderSize> header) {
  wire::Reader r(header);
  const uint32_t magic = r.u32();
  const uint16_t version = r.u16();
  return magic == kMessageMagic ? version : 0;
}

std::optional<size_t> decode_header(std::span<const std::byte, kMessageHeaderSize> header, MessageType* type,
                                    std::string* why) {
  wire::Reader r(header);
  uint32_t magic = r.u32();
  uint16_t version = r.u16();
  uint16_t t = r.u16();
  uint32_t len = r.u32();
  if (magic != kMessageMagic) {
    bad(why, fmt::format("bad message magic {:#010x}", magic));
    return std::nullopt;
  }
  if (version != kProtocolVersion) {
    bad(why, fmt::format("peer speaks handshake version {}, this build {}", version, kProtocolVersion));
    return std::nullopt;
  }
  if (t < 1 || t > static_cast<uint16_t>(MessageType::Failover)) {
    bad(why, fmt::format("unknown message type {}", t));
    return std::nullopt;
  }
  if (len > kMaxMessageBody) {
    bad(why, fmt::format("message body of {} bytes exceeds {}", len, kMaxMessageBody));
    return std::nullopt;
  }
  *type = static_cast<MessageType>(t);
  return len;
}

std::optional<Message> decode_body(MessageType type, std::span<const std::byte> body, std::string* why) {
  wire::Reader r(body);
  Message m;
  m.type = type;
  bool ok = true;
  switch (type) {
    case MessageType::Hello:
      m.nonce = r.u64();
      ok = get_end(r, &m.end, why);
      break;
    case MessageType::Reply:
      m.status = r.u8();
      ok = get_end(r, &m.end, why);
      break;
    case MessageType::Qpns: ok = get_qpns(r, &m.qpns, why) && get_fifo(r, &m, why); break;
    case MessageType::Ready: m.status = r.u8(); break;
    case MessageType::Closing: m.released = r.u64(); break;
    case MessageType::Failover: m.failover.assign(body.begin(), body.end()); return m;
  }
  if (!ok) return std::nullopt;
  if (r.bad()) {
    bad(why, "truncated message");
    return std::nullopt;
  }
  if (r.remaining() != 0) {
    bad(why, fmt::format("{} unexpected trailing bytes", r.remaining()));
    return std::nullopt;
  }
  return m;
}

namespace {

std::string describe(const node::PortRecord& d, const std::string& host) {
  return fmt::format("{}:{}:{} GID[{}] {} ({}, {}{})", host, d.dev_name, d.port, d.gid_index,
                     d.gid.to_string(), node::to_string(d.gid_type),
                     d.gid.family() == node::AddrFamily::V4 ? "IPv4" : "IPv6",
                     d.gid.is_link_local() ? ", link-local" : "");
}

std::string_view ll_name(node::LinkLayer l) {
  return l == node::LinkLayer::Ethernet ? "Ethernet (RoCE)" : node::to_string(l);
}

}  // namespace

Status take_fifo(const Message& qpns, uint32_t eager_max, const std::string& peer, EndInfo* remote) {
  const size_t want = eager_max == 0 ? remote->devs.size() : 0;
  if (qpns.fifo_rkeys.size() != want)
    return Status::fail(
        ncclRemoteError, "peer.bad_handshake",
        fmt::format("{} sent {} FIFO rkey(s) for {} device(s) on {} connection", peer, qpns.fifo_rkeys.size(),
                    remote->devs.size(), eager_max == 0 ? "a receiver-driven" : "an eager"));
  if (want == 0) return Status::success();
  remote->addr = qpns.fifo_addr;
  for (size_t d = 0; d < want; ++d) remote->devs[d].rkey = qpns.fifo_rkeys[d];
  return Status::success();
}

Status check_link(const node::PortRecord& local, const std::string& local_host,
                  const node::PortRecord& remote, const std::string& remote_host, PathChoice* out) {
  std::string both =
      fmt::format("local {} vs remote {}", describe(local, local_host), describe(remote, remote_host));
  if (local.link_layer != remote.link_layer)
    return Status::fail(ncclSystemError, "link.layer_mismatch",
                        fmt::format("{} is {} but {} is {}: {}", local.dev_name, ll_name(local.link_layer),
                                    remote.dev_name, ll_name(remote.link_layer), both),
                        "Select NICs of one link type on every node with NCCL_IB_HCA");
  if (local.link_layer == node::LinkLayer::Ethernet) {
    bool ll_local = local.gid.is_link_local(), ll_remote = remote.gid.is_link_local();
    if (ll_local != ll_remote) {
      const node::PortRecord& wrong = ll_local ? local : remote;
      const std::string& wrong_host = ll_local ? local_host : remote_host;
      return Status::fail(
          ncclSystemError,
          diag::make(
              "gid.link_local", diag::Severity::Error,
              fmt::format("{} uses a link-local GID towards a peer with a routable GID: {}", wrong.dev_name,
                          both),
              fmt::format("On {} set NCCL_IB_GID_INDEX to the index of {}'s IPv4-mapped RoCE v2 GID (see "
                          "`railscope doctor`), or unset NCCL_IB_GID_INDEX on both ends",
                          wrong_host, wrong.dev_name)));
    }
    bool v4_local = local.gid.family() == node::AddrFamily::V4;
    bool v4_remote = remote.gid.family() == node::AddrFamily::V4;
    if (local.gid_type != remote.gid_type || v4_local != v4_remote)
      return Status::fail(
          ncclSystemError, "gid.mismatch", fmt::format("GID type or address family differs: {}", both),
          "Unset NCCL_IB_GID_INDEX on both ends (railscope then picks the IPv4 RoCE v2 GID), or set "
          "NCCL_IB_GID_INDEX on each node to an index of the same type and family (`railscope doctor`)");
  }
  out->path_mtu = std::min(local.active_mtu, remote.active_mtu);
  out->warnings.clear();
  if (local.active_mtu != remote.active_mtu) {
    auto netdev = [](const node::PortRecord& d) {
      return d.netdev.empty()
                 ? std::string("no netdev")
                 : fmt::format("{} MTU {}", d.netdev, d.netdev_mtu ? std::to_string(d.netdev_mtu) : "?");
    };
    out->warnings.push_back(
        diag::make("mtu.mismatch",
                   fmt::format("active MTU {} on {}:{} ({}) but {} on {}:{} ({}); using path MTU {}",
                               local.active_mtu, local_host, local.dev_name, netdev(local), remote.active_mtu,
                               remote_host, remote.dev_name, netdev(remote), out->path_mtu)));
  }
  return Status::success();
}

}  // namespace railscope::net::verbs
