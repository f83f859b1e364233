// SPDX-License-Identifier: Apache-2.0
// The verbs listener's side of a connection before its HELLO is verified (RecvAcceptor, no RDMA
// needed until then): a stray connection (an HTTP probe, random bytes, a peer that closes, a HELLO
// for another listener) fails unverified, with a kind the engine logs once and drops, so it never
// becomes accept()'s error. The engine's loop over acceptors runs on the soft-RoCE test bed
// (net.fault.stray_connection).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <random>
#include <thread>

#include "plugin/net/common/socket.h"
#include "plugin/net/verbs/setup/connect.h"
#include "plugin/net/verbs/setup/oob_channel.h"

namespace railscope::net::verbs {
namespace {

constexpr uint64_t kNonce = 0x5eed5eed5eed5eedull;

SocketAddress loopback(uint16_t port = 0) {
  SocketAddress a;
  a.addr = {127, 0, 0, 1};
  a.port = port;
  return a;
}

struct Pair {
  Fd client;  // the stray side
  std::unique_ptr<RecvAcceptor> acceptor;
};

Pair make_pair() {
  Pair p;
  Fd listener, server;
  uint16_t port = 0;
  EXPECT_TRUE(open_listener(loopback(), &listener, &port).ok());
  EXPECT_TRUE(start_connect(loopback(port), &p.client).ok());
  for (int i = 0; i < 2000 && !server; ++i) {
    EXPECT_TRUE(accept_one(listener, &server).ok());
    if (!server) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(server);
  std::string peer = peer_of(server.get());
  p.acceptor = std::make_unique<RecvAcceptor>(std::move(server), peer, kNonce, LocalDevice{}, LinkParams{});
  return p;
}

// Steps the acceptor until it fails (bounded); the failure's status.
Status step_until_failure(RecvAcceptor& a) {
  for (int i = 0; i < 2000; ++i) {
    VerbsRecvComm* comm = nullptr;
    Status st = a.step(&comm);
    EXPECT_EQ(comm, nullptr);
    if (!st.ok()) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ADD_FAILURE() << "the acceptor never failed";
  return Status::success();
}

void write_all(const Fd& fd, const void* data, size_t n) {
  ASSERT_EQ(send(fd.get(), data, n, MSG_NOSIGNAL), static_cast<ssize_t>(n));
}

// The header of a REPLY the acceptor sends back, read within 2 s.
std::optional<std::array<std::byte, kMessageHeaderSize>> read_header(const Fd& client) {
  std::array<std::byte, kMessageHeaderSize> header{};
  size_t got = 0;
  for (int i = 0; i < 2000 && got < header.size(); ++i) {
    ssize_t n = recv(client.get(), header.data() + got, header.size() - got, MSG_DONTWAIT);
    if (n > 0) got += static_cast<size_t>(n);
    if (got < header.size()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (got < header.size()) return std::nullopt;
  return header;
}

TEST(NetStrayConnection, HttpProbeFailsUnverified) {
  Pair p = make_pair();
  const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  write_all(p.client, http, sizeof http - 1);
  Status st = step_until_failure(*p.acceptor);
  EXPECT_EQ(st.finding().id(), "peer.bad_handshake");
  EXPECT_NE(st.finding().detail.find("0x20544547"), std::string::npos) << st.finding().detail;  // "GET "
  EXPECT_FALSE(p.acceptor->verified());
  EXPECT_STREQ(p.acceptor->refusal(), "malformed");
}

TEST(NetStrayConnection, RandomBytesFailUnverified) {
  std::mt19937 rng(19);
  for (int round = 0; round < 20; ++round) {
    Pair p = make_pair();
    std::array<uint8_t, 256> junk{};
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    write_all(p.client, junk.data(), junk.size());
    p.client.reset();  // whatever the header parses to, the connection ends unverified
    Status st = step_until_failure(*p.acceptor);
    EXPECT_FALSE(p.acceptor->verified()) << round;
    EXPECT_NE(std::string(p.acceptor->refusal()), "") << round;
  }
}

TEST(NetStrayConnection, PeerThatClosesFailsUnverified) {
  Pair p = make_pair();
  p.client.reset();
  Status st = step_until_failure(*p.acceptor);
  EXPECT_EQ(st.finding().id(), "peer.closed");
  EXPECT_FALSE(p.acceptor->verified());
  EXPECT_STREQ(p.acceptor->refusal(), "closed");
}

TEST(NetStrayConnection, HelloForAnotherListenerFailsUnverifiedAndIsTold) {
  Pair p = make_pair();
  Message hello;
  hello.type = MessageType::Hello;
  hello.nonce = kNonce ^ 1;  // a stale handle: the port was reused by this listener
  hello.end.host = "node-b";
  hello.end.qps_per_conn = 1;
  node::PortRecord d;
  d.dev_name = "rxe1";
  d.netdev = "vethB";
  d.link_layer = node::LinkLayer::Ethernet;
  d.gid.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  d.gid_type = node::GidType::RoceV2;
  d.active_mtu = 1024;
  d.netdev_mtu = 1500;
  hello.end.devs = {{d, 0}};
  auto bytes = encode_message(hello);
  write_all(p.client, bytes.data(), bytes.size());
  Status st = step_until_failure(*p.acceptor);
  EXPECT_EQ(st.finding().id(), "peer.bad_handshake");
  EXPECT_NE(st.finding().detail.find("another listener"), std::string::npos) << st.finding().detail;
  EXPECT_FALSE(p.acceptor->verified());
  EXPECT_STREQ(p.acceptor->refusal(), "wrong_listener");
  // The sender learns why: a REPLY (this test's acceptor has no devices to describe, so only its
  // header is checked; the full refusal is covered on the test bed).
  const auto header = read_header(p.client);
  ASSERT_TRUE(header) << "no REPLY";
  MessageType type{};
  std::string why;
  ASSERT_TRUE(decode_header(*header, &type, &why)) << why;
  EXPECT_EQ(type, MessageType::Reply);
}

// railscope of another release (its HELLO's header names another handshake version): refused as its
// own kind, with the fix, and told so in a REPLY of this version, which the other release cannot read
// and names ("peer speaks handshake version N"), so that its connect fails saying why.
TEST(NetStrayConnection, OtherHandshakeVersionIsNamedAndTold) {
  for (const uint16_t other :
       {static_cast<uint16_t>(kProtocolVersion - 1), static_cast<uint16_t>(kProtocolVersion + 1)}) {
    Pair p = make_pair();
    Message hello;
    hello.type = MessageType::Hello;
    hello.nonce = kNonce;
    auto bytes = encode_message(hello);  // its body need not parse: the header decides
    bytes[4] = static_cast<std::byte>(other & 0xff);
    bytes[5] = static_cast<std::byte>(other >> 8);
    write_all(p.client, bytes.data(), bytes.size());
    Status st = step_until_failure(*p.acceptor);
    EXPECT_EQ(st.finding().id(), "peer.bad_handshake");
    EXPECT_NE(st.finding().detail.find(
                  fmt::format("peer speaks handshake version {}, this build {}", other, kProtocolVersion)),
              std::string::npos)
        << st.finding().detail;
    EXPECT_NE(st.finding().fix.find("same railscope release on every node"), std::string::npos)
        << st.finding().fix;
    EXPECT_FALSE(p.acceptor->verified());
    EXPECT_STREQ(p.acceptor->refusal(), "version");
    const auto header = read_header(p.client);
    ASSERT_TRUE(header) << "no REPLY";
    EXPECT_EQ(header_version(*header), kProtocolVersion);
    MessageType type{};
    std::string why;
    ASSERT_TRUE(decode_header(*header, &type, &why)) << why;
    EXPECT_EQ(type, MessageType::Reply);
  }
  // Bytes that are not railscope's are no version at all.
  Pair p = make_pair();
  const char http[] = "GET / HTTP/1.1\r\n\r\n";
  write_all(p.client, http, sizeof http - 1);
  (void)step_until_failure(*p.acceptor);
  EXPECT_STREQ(p.acceptor->refusal(), "malformed");
}

// The sender's side of it: a REPLY from railscope of another release fails its connect naming both
// versions and the fix.
TEST(NetStrayConnection, ReplyOfAnotherVersionNamesBothAndTheFix) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  Fd other(sv[1]);
  Channel ch{Fd(sv[0]), "node-b:1234"};
  Message reply;
  reply.type = MessageType::Reply;
  auto bytes = encode_message(reply);
  const uint16_t version = kProtocolVersion + 1;
  bytes[4] = static_cast<std::byte>(version & 0xff);
  bytes[5] = static_cast<std::byte>(version >> 8);
  write_all(other, bytes.data(), bytes.size());
  std::optional<Message> m;
  Status st = ch.receive(&m);
  EXPECT_FALSE(m);
  EXPECT_EQ(st.finding().id(), "peer.bad_handshake");
  EXPECT_NE(
      st.finding().detail.find(fmt::format(
          "from node-b:1234: peer speaks handshake version {}, this build {}", version, kProtocolVersion)),
      std::string::npos)
      << st.finding().detail;
  EXPECT_NE(st.finding().fix.find("same railscope release"), std::string::npos) << st.finding().fix;
  EXPECT_TRUE(ch.peer_speaks_other_version());
}

TEST(NetStrayConnection, SilentConnectionWaits) {
  Pair p = make_pair();
  for (int i = 0; i < 20; ++i) {
    VerbsRecvComm* comm = nullptr;
    ASSERT_TRUE(p.acceptor->step(&comm).ok());
    EXPECT_EQ(comm, nullptr);
  }
  EXPECT_FALSE(p.acceptor->verified());
  EXPECT_STREQ(p.acceptor->refusal(), "");
}

}  // namespace
}  // namespace railscope::net::verbs
