// SPDX-License-Identifier: Apache-2.0
// Fuzzes what a peer of the verbs engine controls before any QP exists: the 128-byte listen handle
// and the handshake messages (plugin/net/verbs/setup/handshake.h, docs/net-protocol.md).
//
// Input: byte 0 picks the target, the rest are the bytes that arrive.
//   0     decode_handle(rest); then store_connect_id on the re-encoded handle
//   1     decode_header(first 12 bytes), then decode_body(the next `length` bytes) when it passes
//   2..7  decode_body(type 1..6, rest): a body without its header, so mutations need not keep the magic
// Properties: a decoder reads nothing outside the bytes it is given (each part is copied to an
// allocation of exactly its size, so AddressSanitizer sees an overread); whatever decodes re-encodes
// to bytes that decode to the same values; a message re-encodes byte for byte (its encoding is
// canonical: every field is read as written, trailing bytes are refused).
#include <algorithm>
#include <array>
#include <span>
#include <string>

#include "plugin/net/verbs/setup/handshake.h"
#include "railscope/node/mtu.h"
#include "tests/fuzz/fuzz_check.h"

namespace rv = railscope::net::verbs;
using railscope::fuzz::Input;

namespace {

bool same_handle(const rv::ListenHandle& a, const rv::ListenHandle& b) {
  return a.family == b.family && a.addr == b.addr && a.port == b.port && a.nonce == b.nonce &&
         a.connect_id == b.connect_id;
}

bool same_device(const rv::EndDevice& a, const rv::EndDevice& b) {
  return a.record == b.record && a.rkey == b.rkey;
}

bool same_end(const rv::EndInfo& a, const rv::EndInfo& b) {
  return a.host == b.host && a.devs.size() == b.devs.size() &&
         std::equal(a.devs.begin(), a.devs.end(), b.devs.begin(), same_device) &&
         a.qps_per_conn == b.qps_per_conn && a.traffic_class == b.traffic_class &&
         a.service_level == b.service_level && a.addr == b.addr && a.eager_max == b.eager_max &&
         a.qpns == b.qpns;
}

bool same_message(const rv::Message& a, const rv::Message& b) {
  return a.type == b.type && a.nonce == b.nonce && a.status == b.status && same_end(a.end, b.end) &&
         a.qpns == b.qpns && a.fifo_addr == b.fifo_addr && a.fifo_rkeys == b.fifo_rkeys &&
         a.released == b.released && a.failover == b.failover;
}

// What decoding promises about the values it lets through.
void check_values(const rv::Message& m) {
  if (m.type == rv::MessageType::Qpns) {
    RS_FUZZ_CHECK(m.fifo_rkeys.size() <= rv::kMaxDevsPerEnd, "%zu FIFO rkeys", m.fifo_rkeys.size());
    RS_FUZZ_CHECK(m.fifo_rkeys.empty() == (m.fifo_addr == 0), "FIFO address without rkeys or the reverse");
  }
  if (m.type != rv::MessageType::Hello && m.type != rv::MessageType::Reply) return;
  const rv::EndInfo& e = m.end;
  RS_FUZZ_CHECK(!e.devs.empty() && e.devs.size() <= rv::kMaxDevsPerEnd, "%zu devices", e.devs.size());
  RS_FUZZ_CHECK(e.qps_per_conn >= 1 && e.qps_per_conn <= rv::kMaxQpsPerConn, "qps %d", e.qps_per_conn);
  RS_FUZZ_CHECK(e.qpns.size() <= rv::kMaxQps, "%zu QPNs", e.qpns.size());
  RS_FUZZ_CHECK(e.eager_max <= rv::kMaxEagerBytes, "eager_max %u", e.eager_max);
  for (const auto& [d, rkey] : e.devs) {
    RS_FUZZ_CHECK(railscope::node::ib_mtu_enum(d.active_mtu) != 0, "active MTU %d bytes", d.active_mtu);
    RS_FUZZ_CHECK(d.netdev_mtu >= 0 && d.netdev_mtu <= (1 << 20), "netdev MTU %d", d.netdev_mtu);
    RS_FUZZ_CHECK(d.pci_path.empty(), "a peer's record names a PCI path");
  }
}

void round_trip_handle(Input& in) {
  const std::vector<std::byte> bytes = in.rest();
  std::string why;
  const auto h = rv::decode_handle(bytes, &why);
  if (!h) {
    RS_FUZZ_CHECK(!why.empty(), "a refused handle must say why");
    return;
  }
  std::array<std::byte, railscope::net::kHandleSize> enc{};
  rv::encode_handle(*h, enc);
  const auto again = rv::decode_handle(enc, &why);
  RS_FUZZ_CHECK(again && same_handle(*h, *again), "handle does not survive encode/decode: %s", why.c_str());
  // store_connect_id changes the connect id and nothing else.
  const uint64_t id = h->nonce * 0x9e3779b97f4a7c15ull;
  rv::store_connect_id(enc, id);
  const auto stored = rv::decode_handle(enc, &why);
  rv::ListenHandle want = *h;
  want.connect_id = id;
  RS_FUZZ_CHECK(stored && same_handle(want, *stored), "store_connect_id changed more than the id");
}

void round_trip_body(rv::MessageType type, const std::vector<std::byte>& body) {
  std::string why;
  const auto m = rv::decode_body(type, body, &why);
  if (!m) {
    RS_FUZZ_CHECK(!why.empty(), "a refused body must say why");
    return;
  }
  RS_FUZZ_CHECK(m->type == type, "decoded type %d, asked for %d", static_cast<int>(m->type),
                static_cast<int>(type));
  check_values(*m);
  const std::vector<std::byte> enc = rv::encode_message(*m);
  RS_FUZZ_CHECK(enc.size() == rv::kMessageHeaderSize + body.size(),
                "re-encoded %zu bytes for a %zu-byte body", enc.size(), body.size());
  RS_FUZZ_CHECK(std::equal(body.begin(), body.end(), enc.begin() + rv::kMessageHeaderSize),
                "the body does not re-encode byte for byte");
  rv::MessageType t{};
  const auto len = rv::decode_header(
      std::span<const std::byte, rv::kMessageHeaderSize>(enc.data(), rv::kMessageHeaderSize), &t, &why);
  RS_FUZZ_CHECK(len && *len == body.size() && t == type, "the re-encoded header does not decode: %s",
                why.c_str());
  const std::vector<std::byte> body2(enc.begin() + rv::kMessageHeaderSize, enc.end());
  const auto m2 = rv::decode_body(t, body2, &why);
  RS_FUZZ_CHECK(m2 && same_message(*m, *m2), "the message does not survive encode/decode: %s", why.c_str());
}

void header_then_body(Input& in) {
  const std::vector<std::byte> header = in.bytes(rv::kMessageHeaderSize);
  if (header.size() < rv::kMessageHeaderSize) return;
  rv::MessageType type{};
  std::string why;
  const auto len = rv::decode_header(
      std::span<const std::byte, rv::kMessageHeaderSize>(header.data(), rv::kMessageHeaderSize), &type, &why);
  if (!len) {
    RS_FUZZ_CHECK(!why.empty(), "a refused header must say why");
    return;
  }
  RS_FUZZ_CHECK(*len <= rv::kMaxMessageBody, "body length %zu accepted", *len);
  const int t = static_cast<int>(type);
  RS_FUZZ_CHECK(t >= 1 && t <= static_cast<int>(rv::MessageType::Failover), "message type %d accepted", t);
  round_trip_body(type, in.bytes(*len));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const uint8_t target = in.u8() % 8;  // 0 handle, 1 header then body, 2..7 a body of type 1..6
  if (target == 0)
    round_trip_handle(in);
  else if (target == 1)
    header_then_body(in);
  else
    round_trip_body(static_cast<rv::MessageType>(target - 1), in.rest());
  return 0;
}
