// The verbs listener's side of a connection before its HELLO is verified (RecvAcceptor, no RDMA
// needed until then): a stray connection (an HTTP probe, random bytes, a peer that closes, a HELLO
// for another listener) fails unverified, with a kind the engine logs once and drops, so it never
// becomes accept()'s error. The engine's loop over acceptors runs on the soft-RoCE test bed
// (net.fault.stray_connection).
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <random>
#include <thread>

#include "plugin/net/common/socket.h"
#include "plugin/net/verbs/connect.h"

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
  DeviceInfo d;
  d.name = "rxe1";
  d.netdev = "vethB";
  d.link_layer = node::LinkLayer::Ethernet;
  d.gid.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  d.gid_type = node::GidType::RoceV2;
  d.active_mtu = 3;
  d.netdev_mtu = 1500;
  hello.end.devs = {d};
  auto bytes = encode_message(hello);
  write_all(p.client, bytes.data(), bytes.size());
  Status st = step_until_failure(*p.acceptor);
  EXPECT_EQ(st.finding().id(), "peer.bad_handshake");
  EXPECT_NE(st.finding().detail.find("another listener"), std::string::npos) << st.finding().detail;
  EXPECT_FALSE(p.acceptor->verified());
  EXPECT_STREQ(p.acceptor->refusal(), "wrong_listener");
  // The sender learns why: a REPLY (this test's acceptor has no devices to describe, so only its
  // header is checked; the full refusal is covered on the test bed).
  std::array<std::byte, kMessageHeaderSize> header{};
  size_t got = 0;
  for (int i = 0; i < 2000 && got < header.size(); ++i) {
    ssize_t n = recv(p.client.get(), header.data() + got, header.size() - got, MSG_DONTWAIT);
    if (n > 0) got += static_cast<size_t>(n);
    if (got < header.size()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(got, header.size());
  MessageType type{};
  std::string why;
  ASSERT_TRUE(decode_header(header, &type, &why)) << why;
  EXPECT_EQ(type, MessageType::Reply);
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
