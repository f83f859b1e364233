// SPDX-License-Identifier: Apache-2.0
// What the TCP engine puts on the wire and in NCCL's 128-byte handle: the listen handle, the hello
// every socket of a new connection sends first, the receiver's answer, the per-message header of
// the control socket, and how a message is cut into chunks across the data sockets. Everything that
// arrives from the network is validated here before any other code looks at it.
//
// Byte order is the host's (little-endian on every platform NCCL supports); fields are copied with
// memcpy at fixed offsets, never by casting the buffer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "plugin/net/transport.h"

namespace railscope::net {
struct SocketAddress;  // plugin/net/common/socket.h
}  // namespace railscope::net

namespace railscope::net::tcp {

inline constexpr uint32_t kHandleMagic = 0x31545352;  // "RST1"
inline constexpr uint32_t kHelloMagic = 0x48545352;   // "RSTH"
inline constexpr uint32_t kAckMagic = 0x41545352;     // "RSTA"
inline constexpr uint16_t kWireVersion = 1;
inline constexpr int kMaxSockets = 64;  // data sockets per connection (NCCL's socket transport cap)
inline constexpr int kMaxThreads = 16;  // helper threads per connection

// --- the listen handle (inside NCCL's 128 bytes)
struct ListenHandle {
  uint8_t family = 4;  // 4 or 6
  uint16_t port = 0;   // host order
  std::array<uint8_t, 16> addr{};
  uint64_t nonce = 0;       // the listener's; every hello must carry it
  uint64_t connect_id = 0;  // local state of a connect() in progress (not covered by the checksum)
};
void encode_handle(const ListenHandle& h, HandleBytes out);
// nullopt and *why when the bytes are not a valid TCP-engine handle (magic, version, checksum, ranges).
std::optional<ListenHandle> decode_handle(HandleBytes in, std::string* why);
// Rewrites only the connect_id field of an encoded handle.
void store_connect_id(HandleBytes handle, uint64_t id);
std::string handle_peer_text(const ListenHandle& h);  // "10.0.0.2:41234" / "[fe80::1]:41234"
// Where the handle's listener is, for the shared socket layer (plugin/net/common/socket.h).
SocketAddress handle_address(const ListenHandle& h);

// --- hello: the first bytes on every socket of a connection, sender → receiver
enum class SocketRole : uint16_t { Control = 0, Data = 1 };
inline constexpr size_t kHelloSize = 64;
struct Hello {
  SocketRole role = SocketRole::Control;
  uint64_t nonce = 0;    // the listener's nonce from the handle
  uint64_t conn_id = 0;  // groups the sockets of one connection
  uint16_t index = 0;    // data socket index (0 for the control socket)
  uint16_t nsocks = 0;   // data sockets in this connection
  uint32_t min_chunk = 0;
  uint32_t inline_max = 0;  // messages up to this size travel on the control socket
  std::string host;         // sender's host name (truncated to 23 bytes)
};
void encode_hello(const Hello& h, std::array<std::byte, kHelloSize>* out);
std::optional<Hello> decode_hello(const std::array<std::byte, kHelloSize>& in, std::string* why);

// --- the receiver's answer on the control socket once every socket of the connection has arrived
enum class AckCode : uint16_t { Ok = 0, BadHello = 1, WrongListener = 2 };
inline constexpr size_t kAckSize = 16;
void encode_ack(AckCode code, std::array<std::byte, kAckSize>* out);
std::optional<AckCode> decode_ack(const std::array<std::byte, kAckSize>& in, std::string* why);

// --- per-message header on the control socket, sender → receiver
inline constexpr size_t kHeaderSize = 16;
struct MsgHeader {
  uint64_t size = 0;
  int32_t tag = 0;
  uint32_t seq = 0;  // low 32 bits of the message counter: catches a desynchronised stream
};
void encode_header(const MsgHeader& h, std::byte* out);
MsgHeader decode_header(const std::byte* in);

// --- how a message of `size` bytes is spread over the data sockets. Chunk i covers
// [i*chunk, min(size,(i+1)*chunk)) and travels on socket (first + i) % nsocks. Both ends compute
// the same plan from the same (size, nsocks, min_chunk, seq).
struct ChunkPlan {
  size_t chunk = 0;
  int count = 0;
  int first = 0;
  size_t offset(int i) const { return static_cast<size_t>(i) * chunk; }
  size_t length(int i, size_t size) const {
    size_t off = offset(i);
    return size - off < chunk ? size - off : chunk;
  }
  int socket(int i, int nsocks) const { return (first + i) % nsocks; }
};
ChunkPlan plan_chunks(size_t size, int nsocks, size_t min_chunk, uint64_t seq);

}  // namespace railscope::net::tcp
