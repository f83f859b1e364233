// SPDX-License-Identifier: Apache-2.0
// The TCP engine's wire formats: handles, hellos, answers and headers round-trip; anything else
// (random bytes, truncation, flipped bits, out-of-range fields) is refused with a reason; the chunk
// plan covers every byte exactly once on distinct sockets.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "plugin/net/tcp/wire.h"

namespace railscope::net::tcp {
namespace {

ListenHandle sample_handle() {
  ListenHandle h;
  h.family = 4;
  h.port = 41234;
  h.addr = {10, 77, 1, 2};
  h.nonce = 0x1122334455667788ull;
  return h;
}

TEST(TcpWire, HandleRoundTrips) {
  std::array<std::byte, kHandleSize> buf{};
  encode_handle(sample_handle(), buf);
  std::string why;
  auto h = decode_handle(buf, &why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->port, 41234);
  EXPECT_EQ(h->nonce, 0x1122334455667788ull);
  EXPECT_EQ(h->addr[1], 77);
  EXPECT_EQ(handle_peer_text(*h), "10.77.1.2:41234");
  store_connect_id(buf, 99);  // local state: does not break the checksum
  h = decode_handle(buf, &why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->connect_id, 99u);
}

TEST(TcpWire, RandomHandlesAreRefused) {
  std::mt19937_64 gen(1);
  for (int i = 0; i < 2000; ++i) {
    std::array<std::byte, kHandleSize> buf{};
    for (auto& b : buf) b = static_cast<std::byte>(gen());
    std::string why;
    EXPECT_FALSE(decode_handle(buf, &why));
    EXPECT_FALSE(why.empty());
  }
}

TEST(TcpWire, TruncatedOrFlippedHandlesAreRefused) {
  std::array<std::byte, kHandleSize> good{};
  encode_handle(sample_handle(), good);
  for (size_t cut = 0; cut < 40; ++cut) {
    auto buf = good;
    for (size_t i = cut; i < buf.size(); ++i) buf[i] = std::byte{0};
    std::string why;
    EXPECT_FALSE(decode_handle(buf, &why)) << "cut at " << cut;
  }
  for (size_t byte = 0; byte < 40; ++byte) {
    auto buf = good;
    buf[byte] ^= std::byte{0x01};
    std::string why;
    EXPECT_FALSE(decode_handle(buf, &why)) << "flipped byte " << byte;
  }
}

TEST(TcpWire, HelloRoundTripsAndRangesAreChecked) {
  Hello h;
  h.role = SocketRole::Data;
  h.nonce = 5;
  h.conn_id = 6;
  h.index = 3;
  h.nsocks = 4;
  h.min_chunk = 65536;
  h.inline_max = 8192;
  h.host = "a-rather-long-host-name-that-gets-cut";
  std::array<std::byte, kHelloSize> buf{};
  encode_hello(h, &buf);
  std::string why;
  auto d = decode_hello(buf, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->index, 3);
  EXPECT_EQ(d->nsocks, 4);
  EXPECT_EQ(d->host, h.host.substr(0, 23));

  auto bad = [&](Hello x) {
    encode_hello(x, &buf);
    std::string w;
    bool refused = !decode_hello(buf, &w);
    return refused && !w.empty();
  };
  Hello x = h;
  x.nsocks = 0;
  EXPECT_TRUE(bad(x));
  x = h;
  x.nsocks = kMaxSockets + 1;
  x.index = 0;
  EXPECT_TRUE(bad(x));
  x = h;
  x.index = 4;  // == nsocks
  EXPECT_TRUE(bad(x));
  x = h;
  x.min_chunk = 1;
  EXPECT_TRUE(bad(x));
  x = h;
  x.inline_max = 2u << 20;
  EXPECT_TRUE(bad(x));
  x = h;
  x.conn_id = 0;
  EXPECT_TRUE(bad(x));
  std::array<std::byte, kHelloSize> junk{};
  junk.fill(std::byte{0x5a});
  EXPECT_FALSE(decode_hello(junk, &why));
}

TEST(TcpWire, AckAndHeader) {
  std::array<std::byte, kAckSize> ack{};
  encode_ack(AckCode::WrongListener, &ack);
  std::string why;
  auto code = decode_ack(ack, &why);
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, AckCode::WrongListener);
  ack[6] = std::byte{9};
  EXPECT_FALSE(decode_ack(ack, &why));
  std::byte hdr[kHeaderSize];
  encode_header(MsgHeader{(size_t{1} << 33) + 5, -3, 77}, hdr);
  MsgHeader m = decode_header(hdr);
  EXPECT_EQ(m.size, (size_t{1} << 33) + 5);
  EXPECT_EQ(m.tag, -3);
  EXPECT_EQ(m.seq, 77u);
}

TEST(TcpWire, ChunkPlanCoversEveryByteOnce) {
  for (int nsocks : {1, 2, 3, 4, 8, 64})
    for (size_t size : {size_t{0}, size_t{1}, size_t{65535}, size_t{65536}, size_t{65537}, size_t{1000003},
                        size_t{64} << 20, (size_t{64} << 20) - 1})
      for (uint64_t seq : {0ull, 1ull, 7ull}) {
        ChunkPlan p = plan_chunks(size, nsocks, 65536, seq);
        EXPECT_LE(p.count, nsocks);
        size_t covered = 0;
        std::set<int> sockets;
        for (int i = 0; i < p.count; ++i) {
          EXPECT_EQ(p.offset(i), covered);
          size_t len = p.length(i, size);
          EXPECT_GT(len, 0u);
          if (i + 1 < p.count) {
            EXPECT_GE(len, size_t{65536});
          }
          covered += len;
          sockets.insert(p.socket(i, nsocks));
        }
        EXPECT_EQ(covered, size) << "nsocks " << nsocks << " size " << size;
        EXPECT_EQ(sockets.size(), static_cast<size_t>(p.count));
        if (size > 0) {
          EXPECT_EQ(p.socket(0, nsocks), static_cast<int>(seq % static_cast<uint64_t>(nsocks)));
        }
      }
}

}  // namespace
}  // namespace railscope::net::tcp
