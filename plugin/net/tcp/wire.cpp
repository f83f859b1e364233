// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/wire.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>

#include "plugin/net/common/socket.h"
#include "plugin/net/common/wire.h"

namespace railscope::net::tcp {
namespace {

// Handle layout (byte offsets): magic 0, version 4, family 6, port 8, addr 12..27, nonce 28..35,
// checksum 36..39 (FNV-1a over bytes 0..35), connect_id 40..47; the rest is zero.
constexpr size_t kOffVersion = 4, kOffFamily = 6, kOffPort = 8, kOffAddr = 12, kOffNonce = 28, kOffCheck = 36,
                 kOffConnectId = 40, kChecked = 36;

template <class T>
void put(std::byte* base, size_t off, T v) {
  std::memcpy(base + off, &v, sizeof v);
}
template <class T>
T get(const std::byte* base, size_t off) {
  T v{};
  std::memcpy(&v, base + off, sizeof v);
  return v;
}

uint32_t fnv1a(const std::byte* p, size_t n) { return wire::fnv1a(std::span<const std::byte>(p, n)); }

template <class T>
std::optional<T> bad(std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
  return std::nullopt;
}

}  // namespace

void encode_handle(const ListenHandle& h, HandleBytes out) {
  std::byte* b = out.data();
  std::memset(b, 0, out.size());
  put<uint32_t>(b, 0, kHandleMagic);
  put<uint16_t>(b, kOffVersion, kWireVersion);
  put<uint16_t>(b, kOffFamily, h.family);
  put<uint16_t>(b, kOffPort, h.port);
  std::memcpy(b + kOffAddr, h.addr.data(), h.addr.size());
  put<uint64_t>(b, kOffNonce, h.nonce);
  put<uint32_t>(b, kOffCheck, fnv1a(b, kChecked));
  put<uint64_t>(b, kOffConnectId, h.connect_id);
}

std::optional<ListenHandle> decode_handle(HandleBytes in, std::string* why) {
  const std::byte* b = in.data();
  auto magic = get<uint32_t>(b, 0);
  if (magic != kHandleMagic)
    return bad<ListenHandle>(
        why, fmt::format("bad magic {:#010x} (not a railscope TCP handle: another engine or plugin on the "
                         "peer, or random bytes)",
                         magic));
  auto version = get<uint16_t>(b, kOffVersion);
  if (version != kWireVersion)
    return bad<ListenHandle>(why,
                             fmt::format("wire version {} (this build speaks {})", version, kWireVersion));
  if (get<uint32_t>(b, kOffCheck) != fnv1a(b, kChecked))
    return bad<ListenHandle>(why, "checksum mismatch (truncated or corrupted handle)");
  ListenHandle h;
  auto family = get<uint16_t>(b, kOffFamily);
  if (family != 4 && family != 6) return bad<ListenHandle>(why, fmt::format("address family {}", family));
  h.family = static_cast<uint8_t>(family);
  h.port = get<uint16_t>(b, kOffPort);
  if (h.port == 0) return bad<ListenHandle>(why, "port 0");
  std::memcpy(h.addr.data(), b + kOffAddr, h.addr.size());
  h.nonce = get<uint64_t>(b, kOffNonce);
  h.connect_id = get<uint64_t>(b, kOffConnectId);
  return h;
}

void store_connect_id(HandleBytes handle, uint64_t id) { put<uint64_t>(handle.data(), kOffConnectId, id); }

std::string handle_peer_text(const ListenHandle& h) { return address_text(handle_address(h)); }

SocketAddress handle_address(const ListenHandle& h) { return SocketAddress{h.family, h.addr, h.port}; }

// Hello layout: magic 0, version 4, role 6, nonce 8, conn_id 16, index 24, nsocks 26, header size 28,
// min_chunk 32, inline_max 36, host 40..63 (NUL-padded).
void encode_hello(const Hello& h, std::array<std::byte, kHelloSize>* out) {
  std::byte* b = out->data();
  std::memset(b, 0, kHelloSize);
  put<uint32_t>(b, 0, kHelloMagic);
  put<uint16_t>(b, 4, kWireVersion);
  put<uint16_t>(b, 6, static_cast<uint16_t>(h.role));
  put<uint64_t>(b, 8, h.nonce);
  put<uint64_t>(b, 16, h.conn_id);
  put<uint16_t>(b, 24, h.index);
  put<uint16_t>(b, 26, h.nsocks);
  put<uint16_t>(b, 28, static_cast<uint16_t>(kHeaderSize));
  put<uint32_t>(b, 32, h.min_chunk);
  put<uint32_t>(b, 36, h.inline_max);
  std::memcpy(b + 40, h.host.data(), h.host.size() < 23 ? h.host.size() : 23);
}

std::optional<Hello> decode_hello(const std::array<std::byte, kHelloSize>& in, std::string* why) {
  const std::byte* b = in.data();
  if (auto m = get<uint32_t>(b, 0); m != kHelloMagic)
    return bad<Hello>(why, fmt::format("hello with bad magic {:#010x} (not a railscope TCP peer)", m));
  if (auto v = get<uint16_t>(b, 4); v != kWireVersion)
    return bad<Hello>(why, fmt::format("hello of wire version {} (this build speaks {})", v, kWireVersion));
  Hello h;
  auto role = get<uint16_t>(b, 6);
  if (role > 1) return bad<Hello>(why, fmt::format("hello with socket role {}", role));
  h.role = static_cast<SocketRole>(role);
  h.nonce = get<uint64_t>(b, 8);
  h.conn_id = get<uint64_t>(b, 16);
  h.index = get<uint16_t>(b, 24);
  h.nsocks = get<uint16_t>(b, 26);
  if (h.nsocks < 1 || h.nsocks > kMaxSockets)
    return bad<Hello>(why, fmt::format("hello announcing {} data sockets (1..{})", h.nsocks, kMaxSockets));
  if (h.index >= h.nsocks)
    return bad<Hello>(why, fmt::format("hello for data socket {} of {}", h.index, h.nsocks));
  if (auto hs = get<uint16_t>(b, 28); hs != kHeaderSize)
    return bad<Hello>(why, fmt::format("message header of {} bytes (this build uses {})", hs, kHeaderSize));
  h.min_chunk = get<uint32_t>(b, 32);
  if (h.min_chunk < 512) return bad<Hello>(why, fmt::format("minimum chunk of {} bytes", h.min_chunk));
  h.inline_max = get<uint32_t>(b, 36);
  if (h.inline_max > (1u << 20))
    return bad<Hello>(why, fmt::format("inline limit of {} bytes (at most 1 MiB)", h.inline_max));
  char host[24] = {};
  std::memcpy(host, b + 40, 23);
  for (char& c : host)
    if (c != 0 && (c < 0x20 || c > 0x7e)) c = '?';
  h.host = host;
  if (h.conn_id == 0) return bad<Hello>(why, "hello with connection id 0");
  return h;
}

void encode_ack(AckCode code, std::array<std::byte, kAckSize>* out) {
  std::byte* b = out->data();
  std::memset(b, 0, kAckSize);
  put<uint32_t>(b, 0, kAckMagic);
  put<uint16_t>(b, 4, kWireVersion);
  put<uint16_t>(b, 6, static_cast<uint16_t>(code));
}

std::optional<AckCode> decode_ack(const std::array<std::byte, kAckSize>& in, std::string* why) {
  const std::byte* b = in.data();
  if (auto m = get<uint32_t>(b, 0); m != kAckMagic)
    return bad<AckCode>(why, fmt::format("answer with bad magic {:#010x}", m));
  if (auto v = get<uint16_t>(b, 4); v != kWireVersion)
    return bad<AckCode>(why,
                        fmt::format("answer of wire version {} (this build speaks {})", v, kWireVersion));
  auto code = get<uint16_t>(b, 6);
  if (code > 2) return bad<AckCode>(why, fmt::format("answer code {}", code));
  return static_cast<AckCode>(code);
}

void encode_header(const MsgHeader& h, std::byte* out) {
  put<uint64_t>(out, 0, h.size);
  put<int32_t>(out, 8, h.tag);
  put<uint32_t>(out, 12, h.seq);
}

MsgHeader decode_header(const std::byte* in) {
  return MsgHeader{get<uint64_t>(in, 0), get<int32_t>(in, 8), get<uint32_t>(in, 12)};
}

ChunkPlan plan_chunks(size_t size, int nsocks, size_t min_chunk, uint64_t seq) {
  ChunkPlan p;
  if (size == 0 || nsocks < 1) return p;
  auto n = static_cast<size_t>(nsocks);
  size_t even = (size + n - 1) / n;
  p.chunk = even > min_chunk ? even : min_chunk;
  p.count = static_cast<int>((size + p.chunk - 1) / p.chunk);
  p.first = static_cast<int>(seq % n);
  return p;
}

}  // namespace railscope::net::tcp
