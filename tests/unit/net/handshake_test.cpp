// SPDX-License-Identifier: Apache-2.0
// The listen handle and handshake messages: round trips, and every kind of garbage the network can
// deliver (truncated, random, wrong magic/version, out-of-range counts) gives an error, never a crash.
#include "plugin/net/verbs/setup/handshake.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

namespace railscope::net::verbs {
namespace {

std::array<std::byte, kHandleSize> encoded(const ListenHandle& h) {
  std::array<std::byte, kHandleSize> out{};
  encode_handle(h, HandleBytes(out));
  return out;
}

ListenHandle sample_handle() {
  ListenHandle h;
  h.family = 4;
  h.addr = {10, 0, 0, 2};
  h.port = 40123;
  h.nonce = 0x1122334455667788ull;
  return h;
}

EndDevice sample_device(const char* name) {
  EndDevice e;
  node::PortRecord& d = e.record;
  d.dev_name = name;
  d.netdev = "vethA";
  d.port = 1;
  d.link_layer = node::LinkLayer::Ethernet;
  d.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
  d.gid_index = 1;
  d.gid_type = node::GidType::RoceV2;
  d.active_mtu = 1024;
  d.netdev_mtu = 1500;
  d.speed_mbps = 10000;
  e.rkey = 0x1234;
  return e;
}

Message sample_hello() {
  Message m;
  m.type = MessageType::Hello;
  m.nonce = 42;
  m.end.host = "node-a";
  m.end.devs = {sample_device("rxe0")};
  m.end.qps_per_conn = 2;
  m.end.traffic_class = 106;
  m.end.service_level = 3;
  m.end.addr = 0xdeadbeef000ull;
  m.end.eager_max = 4096;
  return m;
}

std::optional<Message> decode_all(const std::vector<std::byte>& bytes, std::string* why) {
  if (bytes.size() < kMessageHeaderSize) {
    *why = "short";
    return std::nullopt;
  }
  MessageType type{};
  auto len = decode_header(std::span<const std::byte, kMessageHeaderSize>(bytes.data(), kMessageHeaderSize),
                           &type, why);
  if (!len) return std::nullopt;
  if (bytes.size() - kMessageHeaderSize < *len) {
    *why = "short body";
    return std::nullopt;
  }
  return decode_body(type, std::span<const std::byte>(bytes.data() + kMessageHeaderSize, *len), why);
}

TEST(NetHandle, RoundTrip) {
  auto bytes = encoded(sample_handle());
  std::string why;
  auto h = decode_handle(bytes, &why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->port, 40123);
  EXPECT_EQ(h->nonce, 0x1122334455667788ull);
  EXPECT_EQ(h->addr[0], 10);
  EXPECT_EQ(h->connect_id, 0u);
  store_connect_id(HandleBytes(bytes), 77);
  EXPECT_EQ(decode_handle(bytes, &why)->connect_id, 77u);
}

TEST(NetHandle, TruncatedHandleIsRejected) {
  auto good = encoded(sample_handle());
  std::string why;
  EXPECT_FALSE(decode_handle(std::span<const std::byte>(good.data(), 64), &why));
  EXPECT_NE(why.find("64 bytes"), std::string::npos) << why;
  // A handle cut short in transit: the tail replaced by zeros at every possible length.
  for (size_t keep = 0; keep < 28; ++keep) {
    std::array<std::byte, kHandleSize> cut{};
    std::copy(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(keep), cut.begin());
    EXPECT_FALSE(decode_handle(cut, &why)) << "kept " << keep;
  }
}

TEST(NetHandle, WrongMagicAndVersionAreNamed) {
  auto bytes = encoded(sample_handle());
  bytes[0] = std::byte{0x00};
  std::string why;
  EXPECT_FALSE(decode_handle(bytes, &why));
  EXPECT_NE(why.find("magic"), std::string::npos) << why;
  bytes = encoded(sample_handle());
  bytes[4] = std::byte{9};
  EXPECT_FALSE(decode_handle(bytes, &why));
  EXPECT_NE(why.find("version 9"), std::string::npos) << why;
}

TEST(NetHandle, OutOfRangeFieldsAreRejected) {
  auto h = sample_handle();
  h.family = 5;
  std::string why;
  EXPECT_FALSE(decode_handle(encoded(h), &why));
  h = sample_handle();
  h.port = 0;
  EXPECT_FALSE(decode_handle(encoded(h), &why));
  h = sample_handle();
  h.nonce = 0;
  EXPECT_FALSE(decode_handle(encoded(h), &why));
}

// A handle corrupted in transit (one bit of its address, port, nonce, family or size) is refused at
// once by its checksum instead of sending connect() to a wrong address; the connect id, which
// connect() rewrites in place, stays outside the checksum.
TEST(NetHandle, CorruptedHandleIsRefusedByItsChecksum) {
  const auto good = encoded(sample_handle());
  for (size_t byte = 6; byte < 36; ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      auto bytes = good;
      bytes[byte] ^= static_cast<std::byte>(1u << bit);
      std::string why;
      EXPECT_FALSE(decode_handle(bytes, &why)) << "byte " << byte << " bit " << bit;
      EXPECT_NE(why.find("checksum"), std::string::npos) << "byte " << byte << ": " << why;
    }
  auto bytes = good;
  store_connect_id(HandleBytes(bytes), 0xfedcba9876543210ull);
  std::string why;
  auto h = decode_handle(bytes, &why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->connect_id, 0xfedcba9876543210ull);
  bytes[44] ^= std::byte{1};  // the checksum itself
  EXPECT_FALSE(decode_handle(bytes, &why));
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;
}

TEST(NetHandle, RandomBytesNeverDecode) {
  std::mt19937_64 rng(7);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::array<std::byte, kHandleSize> b{};
    for (auto& x : b) x = static_cast<std::byte>(rng());
    std::string why;
    if (decode_handle(b, &why)) ++accepted;
  }
  EXPECT_EQ(accepted, 0);
}

TEST(NetMessage, HelloRoundTrip) {
  auto m = sample_hello();
  std::string why;
  auto d = decode_all(encode_message(m), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->type, MessageType::Hello);
  EXPECT_EQ(d->nonce, 42u);
  EXPECT_EQ(d->end.host, "node-a");
  ASSERT_EQ(d->end.devs.size(), 1u);
  EXPECT_EQ(d->end.devs[0].record.dev_name, "rxe0");
  EXPECT_EQ(d->end.devs[0].record.netdev, "vethA");
  EXPECT_EQ(d->end.devs[0].record.gid, sample_device("rxe0").record.gid);
  EXPECT_EQ(d->end.devs[0].rkey, 0x1234u);
  EXPECT_EQ(d->end.qps_per_conn, 2);
  EXPECT_EQ(d->end.traffic_class, 106);
  EXPECT_EQ(d->end.addr, 0xdeadbeef000ull);
  EXPECT_EQ(d->end.eager_max, 4096u);
}

// The device record's link layer and GID type travel as the protocol-2 codes (InfiniBand 1,
// Ethernet 2; IB 1, RoCE v1 2, RoCE v2 3; 0 unknown) whatever the in-memory node:: enums are.
TEST(NetMessage, DeviceRecordCodesOnTheWire) {
  // Header 12, nonce 8, host "node-a" 1+6, device count 1; then name "rxe0" 1+4, netdev "vethA" 1+5,
  // port 1: the link layer is byte 40, the GID bytes 41..56, the index 57..58, the GID type byte 59.
  constexpr size_t kLinkLayer = 40, kGid = 41, kGidType = 59;
  const std::pair<node::LinkLayer, uint8_t> layers[] = {
      {node::LinkLayer::Unknown, 0}, {node::LinkLayer::InfiniBand, 1}, {node::LinkLayer::Ethernet, 2}};
  const std::pair<node::GidType, uint8_t> types[] = {{node::GidType::Unknown, 0},
                                                     {node::GidType::IB, 1},
                                                     {node::GidType::RoceV1, 2},
                                                     {node::GidType::RoceV2, 3}};
  for (auto [layer, layer_code] : layers) {
    for (auto [type, type_code] : types) {
      Message m = sample_hello();
      m.end.devs[0].record.link_layer = layer;
      m.end.devs[0].record.gid_type = type;
      const auto bytes = encode_message(m);
      ASSERT_GT(bytes.size(), kGidType);
      EXPECT_EQ(static_cast<uint8_t>(bytes[kLinkLayer]), layer_code);
      EXPECT_EQ(static_cast<uint8_t>(bytes[kGidType]), type_code);
      EXPECT_EQ(static_cast<uint8_t>(bytes[kGid + 10]), 0xff);
      EXPECT_EQ(static_cast<uint8_t>(bytes[kGid + 12]), 10);
      EXPECT_EQ(static_cast<uint8_t>(bytes[kGid + 15]), 1);
      std::string why;
      auto d = decode_all(bytes, &why);
      ASSERT_TRUE(d) << why;
      EXPECT_EQ(d->end.devs[0].record.link_layer, layer);
      EXPECT_EQ(d->end.devs[0].record.gid_type, type);
    }
  }
}

TEST(NetMessage, ReplyQpnsReadyRoundTrip) {
  Message r = sample_hello();
  r.type = MessageType::Reply;
  r.end.qpns = {0x11, 0x12, 0x13};
  std::string why;
  auto d = decode_all(encode_message(r), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->end.qpns, (std::vector<uint32_t>{0x11, 0x12, 0x13}));
  Message q;
  q.type = MessageType::Qpns;
  q.qpns = {5, 6};
  d = decode_all(encode_message(q), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->qpns, (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(d->fifo_addr, 0u) << "an eager connection's QPNS names no FIFO";
  EXPECT_TRUE(d->fifo_rkeys.empty());
  q.fifo_addr = 0x7f0000001000ull;
  q.fifo_rkeys = {0x1234, 0xabcdef01u};
  d = decode_all(encode_message(q), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->qpns, (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(d->fifo_addr, 0x7f0000001000ull);
  EXPECT_EQ(d->fifo_rkeys, (std::vector<uint32_t>{0x1234, 0xabcdef01u}));
  Message ready;
  ready.type = MessageType::Ready;
  ready.status = kRejectIncompatible;
  d = decode_all(encode_message(ready), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->status, kRejectIncompatible);
  Message closing;
  closing.type = MessageType::Closing;
  closing.released = 0x123456789abull;
  d = decode_all(encode_message(closing), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->type, MessageType::Closing);
  EXPECT_EQ(d->released, 0x123456789abull);
}

TEST(NetMessage, EveryTruncationIsAnError) {
  auto bytes = encode_message(sample_hello());
  MessageType type{};
  std::string why;
  auto len = decode_header(std::span<const std::byte, kMessageHeaderSize>(bytes.data(), kMessageHeaderSize),
                           &type, &why);
  ASSERT_TRUE(len);
  for (size_t n = 0; n < *len; ++n)
    EXPECT_FALSE(decode_body(type, std::span<const std::byte>(bytes.data() + kMessageHeaderSize, n), &why))
        << "body cut at " << n;
}

// The receiver-driven FIFO in QPNS: an address with one rkey per device (at most kMaxDevsPerEnd), or
// neither; every cut of the record is an error.
TEST(NetMessage, QpnsFifoRecordIsChecked) {
  Message q;
  q.type = MessageType::Qpns;
  q.qpns = {5};
  q.fifo_addr = 0x1000;
  q.fifo_rkeys = {1, 2, 3, 4, 5, 6, 7, 8};  // a virtual NIC of 8 ports (net v12)
  std::string why;
  ASSERT_TRUE(decode_all(encode_message(q), &why)) << why;
  q.fifo_rkeys.push_back(9);
  EXPECT_FALSE(decode_all(encode_message(q), &why));
  EXPECT_NE(why.find("FIFO rkey count 9"), std::string::npos) << why;
  q.fifo_rkeys = {};
  EXPECT_FALSE(decode_all(encode_message(q), &why)) << "an address without rkeys";
  EXPECT_NE(why.find("with 0 rkey"), std::string::npos) << why;
  q.fifo_addr = 0;
  q.fifo_rkeys = {7};
  EXPECT_FALSE(decode_all(encode_message(q), &why)) << "rkeys without an address";
  q.fifo_addr = 0x2000;
  const auto bytes = encode_message(q);
  for (size_t n = 0; n + kMessageHeaderSize < bytes.size(); ++n)
    EXPECT_FALSE(decode_body(MessageType::Qpns,
                             std::span<const std::byte>(bytes.data() + kMessageHeaderSize, n), &why))
        << "body cut at " << n;
}

// What the receiver does with a well-formed QPNS: a receiver-driven connection takes the FIFO (an rkey
// for each of the sender's devices) in place of what HELLO named; an eager one refuses any FIFO.
TEST(NetMessage, ReceiverTakesTheFifoFromQpnsOnlyWhenReceiverDriven) {
  Message hello = sample_hello();
  hello.end.devs = {sample_device("rxe0"), sample_device("rxe2")};
  hello.end.addr = 0x5000;  // the eager mailbox the sender offered
  Message q;
  q.type = MessageType::Qpns;
  q.fifo_addr = 0x9000;
  q.fifo_rkeys = {0x21, 0x22};

  EndInfo remote = hello.end;
  ASSERT_TRUE(take_fifo(q, 0, "peer", &remote).ok());
  EXPECT_EQ(remote.addr, 0x9000u);
  EXPECT_EQ(remote.devs[0].rkey, 0x21u);
  EXPECT_EQ(remote.devs[1].rkey, 0x22u);

  remote = hello.end;
  Status st = take_fifo(q, 4096, "peer", &remote);
  EXPECT_EQ(st.code, ncclRemoteError);
  EXPECT_EQ(st.finding().id(), "peer.bad_handshake");
  EXPECT_NE(st.finding().detail.find("peer sent 2 FIFO rkey(s) for 2 device(s) on an eager connection"),
            std::string::npos)
      << st.finding().detail;
  EXPECT_EQ(remote.addr, 0x5000u) << "a refused QPNS changes nothing";

  q.fifo_rkeys = {0x21};  // one rkey for two devices
  st = take_fifo(q, 0, "peer", &remote);
  EXPECT_EQ(st.finding().id(), "peer.bad_handshake");
  EXPECT_NE(st.finding().detail.find("1 FIFO rkey(s) for 2 device(s) on a receiver-driven"),
            std::string::npos)
      << st.finding().detail;
  EXPECT_EQ(remote.addr, 0x5000u);
  EXPECT_EQ(remote.devs[0].rkey, hello.end.devs[0].rkey);

  q.fifo_addr = 0;
  q.fifo_rkeys.clear();
  EXPECT_TRUE(take_fifo(q, 4096, "peer", &remote).ok()) << "an eager connection's QPNS names no FIFO";
  EXPECT_FALSE(take_fifo(q, 0, "peer", &remote).ok()) << "a receiver-driven one must";
}

TEST(NetMessage, TrailingBytesAreAnError) {
  auto bytes = encode_message(sample_hello());
  MessageType type{};
  std::string why;
  auto len = decode_header(std::span<const std::byte, kMessageHeaderSize>(bytes.data(), kMessageHeaderSize),
                           &type, &why);
  std::vector<std::byte> body(bytes.begin() + kMessageHeaderSize, bytes.end());
  body.push_back(std::byte{0});
  EXPECT_FALSE(decode_body(type, body, &why));
  EXPECT_NE(why.find("trailing"), std::string::npos) << why;
  (void)len;
}

TEST(NetMessage, HeaderChecks) {
  auto bytes = encode_message(sample_hello());
  std::array<std::byte, kMessageHeaderSize> h{};
  std::copy_n(bytes.begin(), kMessageHeaderSize, h.begin());
  MessageType type{};
  std::string why;
  auto bad = h;
  bad[0] = std::byte{'X'};
  EXPECT_FALSE(decode_header(bad, &type, &why));
  bad = h;
  bad[4] = std::byte{kProtocolVersion + 1};
  EXPECT_FALSE(decode_header(bad, &type, &why));
  EXPECT_NE(why.find(fmt::format("version {}", kProtocolVersion + 1)), std::string::npos) << why;
  bad = h;
  bad[6] = std::byte{9};
  EXPECT_FALSE(decode_header(bad, &type, &why));
  bad = h;
  bad[10] = std::byte{0x7f};  // body length ~8 MB
  EXPECT_FALSE(decode_header(bad, &type, &why));
}

TEST(NetMessage, OutOfRangeCountsAreRejected) {
  std::string why;
  auto m = sample_hello();
  m.end.devs.clear();  // 0 devices
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  m = sample_hello();
  m.end.devs.assign(kMaxDevsPerEnd + 1, sample_device("rxe0"));
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  EXPECT_NE(why.find(fmt::format("device count {}", kMaxDevsPerEnd + 1)), std::string::npos) << why;
  m = sample_hello();
  m.end.qps_per_conn = 17;
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  m = sample_hello();
  m.end.qpns.assign(kMaxQps + 1, 7);
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  m = sample_hello();
  m.end.qpns = {0};
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  m = sample_hello();
  m.end.devs[0].record.active_mtu = 6;  // not an MTU: no ibv_mtu code, refused on decode
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  m = sample_hello();
  m.end.devs[0].record.dev_name = "bad\nname";
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  m = sample_hello();
  m.end.service_level = 16;
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  m = sample_hello();
  m.end.eager_max = kMaxEagerBytes + 1;
  EXPECT_FALSE(decode_all(encode_message(m), &why));
  EXPECT_NE(why.find("eager limit"), std::string::npos) << why;
}

// The wire's GID index is 16 bits; a port's GID table, and so node::GidIndex, ends at 255. A peer's
// index past that is refused rather than narrowed into another entry.
TEST(NetMessage, GidIndexPastTheTableIsRefused) {
  const Message m = sample_hello();  // host "node-a", one device "rxe0" on "vethA"
  std::vector<std::byte> bytes = encode_message(m);
  // header, nonce, host, device count, name, netdev, port, link layer, GID
  const size_t at = kMessageHeaderSize + 8 + (1 + 6) + 1 + (1 + 4) + (1 + 5) + 1 + 1 + 16;
  ASSERT_EQ(bytes[at], std::byte{1});  // sample_device's GID index, little-endian
  std::string why;
  bytes[at] = std::byte{0xff};
  auto d = decode_all(bytes, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->end.devs[0].record.gid_index, 255);
  bytes[at] = std::byte{0};
  bytes[at + 1] = std::byte{1};  // 256
  EXPECT_FALSE(decode_all(bytes, &why));
  EXPECT_NE(why.find("GID index 256"), std::string::npos) << why;
}

TEST(NetMessage, RandomBodiesNeverCrash) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::byte> body(rng() % 300);
    for (auto& x : body) x = static_cast<std::byte>(rng());
    std::string why;
    for (auto t : {MessageType::Hello, MessageType::Reply, MessageType::Qpns, MessageType::Ready,
                   MessageType::Closing})
      (void)decode_body(t, body, &why);
  }
  // Random bytes where a real message's fields would be: mutate one byte of a valid HELLO at a time.
  auto good = encode_message(sample_hello());
  for (size_t pos = kMessageHeaderSize; pos < good.size(); ++pos)
    for (int v : {0x00, 0x05, 0x7f, 0xff}) {
      auto b = good;
      b[pos] = static_cast<std::byte>(v);
      std::string why;
      (void)decode_all(b, &why);
    }
}

}  // namespace
}  // namespace railscope::net::verbs
