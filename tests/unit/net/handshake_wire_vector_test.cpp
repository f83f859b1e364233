// SPDX-License-Identifier: Apache-2.0
// The handshake's bytes for fixed messages, stored: a change to how a port is described in memory must
// not change what goes on the wire (a peer on the previous build of the same protocol version reads
// these bytes). A deliberate format change bumps kProtocolVersion and replaces the vectors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugin/net/verbs/setup/handshake.h"

namespace railscope::net::verbs {
namespace {

std::string hex(const std::vector<std::byte>& bytes) {
  std::string s;
  for (std::byte b : bytes) s += fmt::format("{:02x}", static_cast<unsigned>(b));
  return s;
}

EndDevice roce_port() {
  EndDevice e;
  node::PortRecord& d = e.record;
  d.dev_name = "rxe0";
  d.netdev = "vethA";
  d.port = 1;
  d.link_layer = node::LinkLayer::Ethernet;
  d.gid = *node::Gid::parse("::ffff:10.0.0.1");
  d.gid_index = 3;
  d.gid_type = node::GidType::RoceV2;
  d.active_mtu = 1024;  // ibv_mtu code 3 on the wire
  d.lid = 0;
  d.netdev_mtu = 1500;
  d.speed_mbps = 100000;
  d.pci_path = "/sys/devices/pci0000:00/0000:00:03.0";  // local only: not in the bytes
  e.rkey = 0x1234;
  return e;
}

EndDevice ib_port() {
  EndDevice e;
  node::PortRecord& d = e.record;
  d.dev_name = "mlx5_1";
  d.port = 2;
  d.link_layer = node::LinkLayer::InfiniBand;
  d.gid = *node::Gid::parse("fe80::248a:703:9b:a5c6");
  d.gid_index = 0;
  d.gid_type = node::GidType::IB;
  d.active_mtu = 4096;  // ibv_mtu code 5 on the wire
  d.lid = 0x2a;
  d.speed_mbps = 400000;
  e.rkey = 0xabcdef01;
  return e;
}

EndInfo end_of(std::vector<EndDevice> devs) {
  EndInfo e;
  e.host = "node-a";
  e.devs = std::move(devs);
  e.qps_per_conn = 2;
  e.traffic_class = 106;
  e.service_level = 3;
  e.addr = 0x7f0012345000ull;
  e.eager_max = 4096;
  return e;
}

// A HELLO for two ports, RoCE and InfiniBand, in protocol version 6.
constexpr const char* kHelloHex =
    "52534e4d060001007c0000008877665544332211066e6f64652d61020472786530057665746841010200000000000000"
    "000000ffff0a000001030003030000dc050000a086010034120000066d6c78355f31000201fe80000000000000248a07"
    "03009ba5c6000001052a0000000000801a060001efcdab026a0300503412007f0000001000000000";

TEST(NetHandshakeWire, HelloBytesAreTheStoredVector) {
  Message m;
  m.type = MessageType::Hello;
  m.nonce = 0x1122334455667788ull;
  m.end = end_of({roce_port(), ib_port()});
  EXPECT_EQ(hex(encode_message(m)), kHelloHex);
}

TEST(NetHandshakeWire, ReplyBytesAreTheStoredVector) {
  Message m;
  m.type = MessageType::Reply;
  m.status = kOk;
  m.end = end_of({ib_port()});
  m.end.qpns = {0x11, 0xabcdef};
  EXPECT_EQ(hex(encode_message(m)),
            "52534e4d060002004e00000000066e6f64652d6101066d6c78355f31000201fe80000000000000248a0703009ba5c600"
            "0001052a0000000000801a060001efcdab026a0300503412007f000000100000020011000000efcdab00");
}

TEST(NetHandshakeWire, StoredHelloDecodesToTheSameRecords) {
  std::vector<std::byte> bytes;
  const std::string hex_text = kHelloHex;
  for (size_t i = 0; i + 1 < hex_text.size(); i += 2)
    bytes.push_back(static_cast<std::byte>(std::stoi(hex_text.substr(i, 2), nullptr, 16)));
  MessageType type{};
  std::string why;
  const auto len = decode_header(
      std::span<const std::byte, kMessageHeaderSize>(bytes.data(), kMessageHeaderSize), &type, &why);
  ASSERT_TRUE(len) << why;
  const auto m = decode_body(type, std::span<const std::byte>(bytes).subspan(kMessageHeaderSize), &why);
  ASSERT_TRUE(m) << why;
  ASSERT_EQ(m->end.devs.size(), 2u);
  node::PortRecord roce = roce_port().record;
  roce.pci_path.clear();  // never sent
  EXPECT_EQ(m->end.devs[0].record, roce);
  EXPECT_EQ(m->end.devs[0].rkey, 0x1234u);
  EXPECT_EQ(m->end.devs[1].record, ib_port().record);
  EXPECT_EQ(m->end.devs[1].rkey, 0xabcdef01u);
}

}  // namespace
}  // namespace railscope::net::verbs
