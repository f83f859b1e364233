// SPDX-License-Identifier: Apache-2.0
// The shared socket layer (plugin/net/common/socket.h) on loopback: listening on the advertised
// address only, the one id for a listener that cannot be opened, the per-connection options, and a
// liveness check that bytes left unread cannot fool (both the layer and the verbs out-of-band
// channel built on it).
#include "plugin/net/common/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "plugin/net/verbs/setup/oob_channel.h"

namespace railscope::net {
namespace {

SocketAddress loopback(uint16_t port = 0) {
  SocketAddress a;
  a.addr = {127, 0, 0, 1};
  a.port = port;
  return a;
}

// A connected pair over 127.0.0.1: *client (connect side) and *server (accepted side).
void connected_pair(Fd* client, Fd* server) {
  Fd listener;
  uint16_t port = 0;
  ASSERT_TRUE(open_listener(loopback(), &listener, &port).ok());
  ASSERT_TRUE(start_connect(loopback(port), client).ok());
  for (int i = 0; i < 2000 && !*server; ++i) {
    ASSERT_TRUE(accept_one(listener, server).ok());
    if (!*server) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(*server);
  bool ready = false;
  for (int i = 0; i < 2000 && !ready; ++i) {
    ASSERT_TRUE(connect_finished(client->get(), "test", &ready).ok());
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(ready);
}

// Waits (bounded) until the kernel delivered the peer's FIN, then asks peer_alive.
Status alive_after_close(int fd) {
  Status st = Status::success();
  for (int i = 0; i < 2000 && st.ok(); ++i) {
    st = peer_alive(fd, "peer");
    if (st.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return st;
}

TEST(NetSocket, ListenerBindsTheGivenAddressOnly) {
  Fd listener;
  uint16_t port = 0;
  ASSERT_TRUE(open_listener(loopback(), &listener, &port).ok());
  EXPECT_NE(port, 0);
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ASSERT_EQ(getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
  EXPECT_EQ(ntohl(a.sin_addr.s_addr), 0x7f000001u);  // not INADDR_ANY
}

TEST(NetSocket, AListenerThatCannotBindIsNamedOnce) {
  SocketAddress a;
  a.addr = {192, 0, 2, 1};  // TEST-NET-1 (RFC 5737): not assigned to this host
  Fd listener;
  uint16_t port = 0;
  Status st = open_listener(a, &listener, &port);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "net.listen_failed");
  EXPECT_NE(st.finding().detail.find("192.0.2.1"), std::string::npos) << st.finding().detail;
  EXPECT_FALSE(listener);
}

TEST(NetSocket, RefusedConnectIsPeerClosed) {
  Fd listener;
  uint16_t port = 0;
  ASSERT_TRUE(open_listener(loopback(), &listener, &port).ok());
  listener.reset();  // nobody listens on that port any more
  Fd c;
  Status st = start_connect(loopback(port), &c);
  bool ready = false;
  for (int i = 0; i < 2000 && st.ok() && !ready; ++i) {
    st = connect_finished(c.get(), "127.0.0.1", &ready);
    if (st.ok() && !ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "peer.closed");
}

TEST(NetSocket, TuneSocketSetsKeepaliveAndUserTimeout) {
  Fd c, s;
  connected_pair(&c, &s);
  tune_socket(c.get(), 60);
  int v = 0;
  socklen_t len = sizeof v;
  ASSERT_EQ(getsockopt(c.get(), SOL_SOCKET, SO_KEEPALIVE, &v, &len), 0);
  EXPECT_EQ(v, 1);
  ASSERT_EQ(getsockopt(c.get(), IPPROTO_TCP, TCP_USER_TIMEOUT, &v, &len), 0);
  EXPECT_EQ(v, 60000);
  ASSERT_EQ(getsockopt(c.get(), IPPROTO_TCP, TCP_KEEPIDLE, &v, &len), 0);
  EXPECT_EQ(v, 20);
  ASSERT_EQ(getsockopt(c.get(), IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
  EXPECT_NE(v, 0);
}

TEST(NetSocket, ASlowReadersConnectionKeepsKeepaliveButNotTheUserTimeout) {
  Fd c, s;
  connected_pair(&c, &s);
  tune_socket(c.get(), 60);
  allow_slow_reader(c.get());
  int v = -1;
  socklen_t len = sizeof v;
  ASSERT_EQ(getsockopt(c.get(), IPPROTO_TCP, TCP_USER_TIMEOUT, &v, &len), 0);
  EXPECT_EQ(v, 0);  // the system's: no abort while the receiver's window stays shut
  ASSERT_EQ(getsockopt(c.get(), SOL_SOCKET, SO_KEEPALIVE, &v, &len), 0);
  EXPECT_EQ(v, 1);
}

TEST(NetSocket, APeerIsUnresponsiveOnlyWhenItLeavesSomethingUnanswered) {
  // A receiver that does not read: nothing unacknowledged, its probes answered, however long ago
  // (zero-window probes back off to two minutes apart).
  EXPECT_FALSE(peer_unresponsive(AckState{0, 0, 600'000}, 5));
  EXPECT_FALSE(peer_unresponsive(AckState{0, 1, 600'000}, 5));  // a probe out, not answered yet
  // Data unacknowledged for the timeout, or two probes unanswered: the peer's kernel is gone.
  EXPECT_TRUE(peer_unresponsive(AckState{3, 0, 5'000}, 5));
  EXPECT_FALSE(peer_unresponsive(AckState{3, 0, 4'999}, 5));
  EXPECT_TRUE(peer_unresponsive(AckState{0, 2, 5'000}, 5));
}

TEST(NetSocket, AckStateOfALiveConnectionWithAnUnreadBacklog) {
  Fd c, s;
  connected_pair(&c, &s);
  ASSERT_EQ(fcntl(c.get(), F_SETFL, O_NONBLOCK), 0);
  std::vector<char> chunk(1 << 16, 'x');
  while (send(c.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL) > 0) {
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::optional<AckState> a = ack_state(c.get());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->unacked, 0u);  // all it sent was acknowledged; the rest waits in the send buffer
  EXPECT_FALSE(peer_unresponsive(*a, 1));
}

TEST(NetSocket, LivePeerIsAliveEvenWithUnreadBytes) {
  Fd c, s;
  connected_pair(&c, &s);
  EXPECT_TRUE(peer_alive(s.get(), "peer").ok());
  ASSERT_EQ(send(c.get(), "abc", 3, MSG_NOSIGNAL), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(peer_alive(s.get(), "peer").ok());
}

TEST(NetSocket, PeerThatWroteThenClosedIsSeenAsClosed) {
  Fd c, s;
  connected_pair(&c, &s);
  ASSERT_EQ(send(c.get(), "stray bytes", 11, MSG_NOSIGNAL), 11);
  c.reset();
  Status st = alive_after_close(s.get());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "peer.closed");
}

TEST(NetSocket, PeerThatClosedSilentlyIsSeenAsClosed) {
  Fd c, s;
  connected_pair(&c, &s);
  c.reset();
  Status st = alive_after_close(s.get());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "peer.closed");
}

// The verbs out-of-band channel: a MSG_PEEK of one byte saw the unread byte and called the peer
// alive forever; the channel now asks the socket layer.
TEST(NetSocket, VerbsChannelSeesAPeerThatWroteThenClosed) {
  Fd c, s;
  connected_pair(&c, &s);
  verbs::Channel ch(std::move(s), "peer");
  EXPECT_TRUE(ch.alive().ok());
  ASSERT_EQ(send(c.get(), "x", 1, MSG_NOSIGNAL), 1);
  c.reset();
  Status st = Status::success();
  for (int i = 0; i < 2000 && st.ok(); ++i) {
    st = ch.alive();
    if (st.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "peer.closed");
}

TEST(NetSocket, PeerOfAndAddressText) {
  Fd c, s;
  connected_pair(&c, &s);
  EXPECT_EQ(peer_of(c.get()).rfind("127.0.0.1:", 0), 0u) << peer_of(c.get());
  SocketAddress six;
  six.family = 6;
  six.addr[15] = 1;
  six.port = 80;
  EXPECT_EQ(address_text(six), "[::1]:80");
  EXPECT_EQ(peer_of(-1), "?");
}

}  // namespace
}  // namespace railscope::net
