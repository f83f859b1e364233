// SPDX-License-Identifier: Apache-2.0
// What the two ends of a verbs connection tell each other, and the checks made on it before any QP
// moves to RTR. Everything here is pure (no verbs, no sockets) so it is unit-tested directly.
//
// The listen handle (128 bytes NCCL ships through its bootstrap) holds where to reach the listener
// (address family, address, TCP port) and a nonce identifying the listen comm. The connection
// handshake then runs over that TCP socket:
//   sender   -> HELLO  (its EndInfo: devices, GIDs, MTUs, QP count wanted, eager offer; the address and
//                       rkeys of what the receiver writes into first: the eager mailbox where it offers
//                       eager, else the receiver-driven FIFO)
//   receiver -> REPLY  (its EndInfo incl. QPNs, the agreed eager limit and sizes-area or ring
//                       address/rkeys; or a rejection)
//   sender   -> QPNS   (the sender's QPNs, after its QPs reached RTS; on a receiver-driven connection
//                       also the FIFO's address and rkeys, registered only once the REPLY said so)
//   receiver -> READY  (its QPs reached RTS; or a failure code)
// and, when the eager protocol's receiver closes (eager_protocol.h):
//   receiver -> CLOSING (how many ring messages it took: the sender's close needs no RDMA ack)
// and, when QPs of one port fail, in both directions:
//   FAILOVER (a failover notice, decoded by failover/failover_message.h against the connection)
// Every message starts with magic, version, type and body length and is validated field by field:
// garbage from the network becomes peer.bad_handshake, never a crash.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "plugin/net/transport.h"
#include "plugin/net/verbs/setup/wire_limits.h"
#include "railscope/node/port_record.h"

namespace railscope::net::verbs {

// --- listen handle
struct ListenHandle {
  uint8_t family = 4;              // 4 or 6
  std::array<uint8_t, 16> addr{};  // IPv4 in bytes 0..3
  uint16_t port = 0;
  uint64_t nonce = 0;       // identifies the listen comm
  uint64_t connect_id = 0;  // written by connect() into NCCL's copy to find its pending state; 0 = fresh
};
void encode_handle(const ListenHandle& h, HandleBytes out);
// nullopt with *why set when the bytes are not a valid railscope handle.
std::optional<ListenHandle> decode_handle(std::span<const std::byte> in, std::string* why);
// Updates only the connect_id field of an encoded handle.
void store_connect_id(HandleBytes handle, uint64_t id);

// --- what one end says about itself. The device record's wire form exists only inside encode_message
// and decode_body (handshake.cpp); a peer's record is decoded into a node::PortRecord whose every field
// was range-checked (its pci_path stays empty: the wire does not carry it).
struct EndDevice {
  node::PortRecord record;
  uint32_t rkey = 0;  // rkey, on this device, of the region EndInfo::addr names
};

struct EndInfo {
  std::string host;
  std::vector<EndDevice> devs;  // 1..kMaxDevsPerEnd
  uint8_t qps_per_conn = 1;     // 1..kMaxQpsPerConn
  uint8_t traffic_class = 0;
  uint8_t service_level = 0;
  uint64_t addr = 0;       // eager mailbox or FIFO (sender, see above); sizes area or eager ring (receiver)
  uint32_t eager_max = 0;  // HELLO: the sender's offer; REPLY: the agreed limit (0 = no eager path)
  std::vector<uint32_t> qpns;  // 0..kMaxQps (HELLO has none)
};

enum class MessageType : uint16_t { Hello = 1, Reply = 2, Qpns = 3, Ready = 4, Closing = 5, Failover = 6 };

struct Message {
  MessageType type = MessageType::Hello;
  uint64_t nonce = 0;          // Hello: the listen nonce from the handle
  uint8_t status = 0;          // Reply/Ready: 0 ok, otherwise a rejection (see Reject)
  EndInfo end;                 // Hello, Reply
  std::vector<uint32_t> qpns;  // Qpns
  // Qpns of a receiver-driven connection: the sender's clear-to-send FIFO, its address and its rkey on
  // each of the sender's devices (none on an eager connection: its sender never registers a FIFO).
  uint64_t fifo_addr = 0;
  std::vector<uint32_t> fifo_rkeys;  // 0..kMaxDevsPerEnd
  uint64_t released = 0;             // Closing: ring messages the receiver took (its released prefix)
  // Failover: the notice's bytes, as they came (at most kMaxMessageBody); only failover::decode, which
  // knows the connection's QPs, reads them.
  std::vector<std::byte> failover;
};

enum Reject : uint8_t { kOk = 0, kRejectIncompatible = 1, kRejectResources = 2, kRejectNonce = 3 };

std::vector<std::byte> encode_message(const Message& m);
// Header check: returns the body length, or nullopt with *why.
std::optional<size_t> decode_header(std::span<const std::byte, kMessageHeaderSize> header, MessageType* type,
                                    std::string* why);
std::optional<Message> decode_body(MessageType type, std::span<const std::byte> body, std::string* why);
// The handshake version a header with railscope's magic names; 0 when the magic is not railscope's. A
// peer that speaks another version is railscope on another release, not a stray connection.
uint16_t header_version(std::span<const std::byte, kMessageHeaderSize> header);
// What fixes a peer of another handshake version.
inline constexpr const char* kSameReleaseFix =
    "Run the same railscope release on every node of the job (the net plugin's handshake changed)";

// QPNS at the receiver: a receiver-driven connection (eager_max 0) takes the sender's FIFO from it, its
// address and an rkey for each device the sender's HELLO listed, into *remote (that HELLO's EndInfo); an
// eager connection must be sent none. decode_body checked the record's form; this checks it against the
// connection. peer.bad_handshake otherwise, *remote unchanged.
Status take_fifo(const Message& qpns, uint32_t eager_max, const std::string& peer, EndInfo* remote);

// --- checks before RTR
struct PathChoice {
  int path_mtu = 0;                     // bytes, the smaller active_mtu
  std::vector<diag::Finding> warnings;  // mtu.mismatch
};
// Link layer, GID type/family/link-local compatibility of a local and a remote device, and the path
// MTU (the smaller active MTU). Failure: a finding naming both ends, both GIDs and the fix.
Status check_link(const node::PortRecord& local, const std::string& local_host,
                  const node::PortRecord& remote, const std::string& remote_host, PathChoice* out);

}  // namespace railscope::net::verbs
