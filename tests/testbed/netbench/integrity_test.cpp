// SPDX-License-Identifier: Apache-2.0
// Acceptance ("Data integrity"), in the soft-RoCE guest: railscope's net plugin driven through
// its ABI between rxe1 (sender) and rxe0 (receiver). Random payloads compared byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "abi/plugin_loader.h"
#include "net_link.h"

namespace railscope::netbench::testbed {
namespace {

using abi_test::CapturedLog;

constexpr size_t kMax = 64ULL << 20;

void random_fill(unsigned char* p, size_t n, std::mt19937_64& rng) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t w = rng();
    std::memcpy(p + i, &w, 8);
  }
  for (; i < n; ++i) p[i] = static_cast<unsigned char>(rng());
}

// First differing byte, or -1.
long first_difference(const unsigned char* a, const unsigned char* b, size_t n) {
  if (std::memcmp(a, b, n) == 0) return -1;
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<long>(i);
  return -1;
}

class NetIntegrity : public ::testing::Test {
 protected:
  void SetUp() override {
    CapturedLog::clear();
    ASSERT_TRUE(plugin.opened.api) << plugin.opened.library.error;
    rxe0 = plugin.device("rxe0");
    rxe1 = plugin.device("rxe1");
    ASSERT_GE(rxe0, 0);
    ASSERT_GE(rxe1, 0);
  }
  void TearDown() override {
    if (HasFailure())
      for (const auto& l : CapturedLog::lines()) std::fprintf(stderr, "  plugin log: %s\n", l.text.c_str());
  }
  Plugin plugin;
  int rxe0 = -1, rxe1 = -1;
};

TEST_F(NetIntegrity, EverySizeFromZeroTo64MiBAndOddSizes) {
  auto link = make_link(plugin.api(), rxe1, rxe0);
  ASSERT_FALSE(HasFailure());
  NetApi& api = plugin.api();
  Mr src(api, link->send_comm, kMax);
  Mr dst(api, link->recv_comm, kMax + 4096);
  std::vector<size_t> sizes = {0};
  for (size_t s = 1; s <= kMax; s <<= 1) sizes.push_back(s);
  for (size_t s : {3, 7, 13, 1000, 1023, 1025, 4095, 4097, 65535, 65537, 1000003, 4194305, 33554433})
    sizes.push_back(s);
  std::mt19937_64 rng(0x5eed);
  for (const size_t size : sizes) {
    random_fill(src.data, size, rng);
    std::memset(dst.data, 0xa5, std::min(dst.size, size + 64));
    size_t posted = kMax + 4096;  // a receive may be larger than what is sent
    void* d = dst.data;
    int tag = 7;
    void* rmh = dst.mh;
    void* rreq = post_irecv(api, link->recv_comm, 1, &d, &posted, &tag, &rmh);
    void* sreq = post_isend(api, link->send_comm, src.data, size, tag, src.mh);
    ASSERT_TRUE(rreq && sreq) << size;
    const auto sizes_seen = wait_requests(api, {sreq, rreq}, {1, 1});
    ASSERT_FALSE(HasFailure()) << "size " << size;
    EXPECT_EQ(sizes_seen[0][0], static_cast<int>(size)) << "sent size reported by test()";
    EXPECT_EQ(sizes_seen[1][0], static_cast<int>(size)) << "received size reported by test()";
    EXPECT_EQ(first_difference(src.data, dst.data, size), -1) << "size " << size;
    // Nothing written past the message.
    EXPECT_EQ(dst.data[size], 0xa5) << "byte after a " << size << "-byte message was overwritten";
  }
}

TEST_F(NetIntegrity, GroupedReceivesOneToEightMatchTags) {
  DeviceInfo info;
  ASSERT_EQ(plugin.api().properties(rxe0, &info), ncclSuccess);
  ASSERT_GE(info.max_recvs, 8) << "getProperties maxRecvs";
  auto link = make_link(plugin.api(), rxe1, rxe0);
  ASSERT_FALSE(HasFailure());
  NetApi& api = plugin.api();
  constexpr size_t kSlot = 256 << 10;
  Mr src(api, link->send_comm, 8 * kSlot);
  Mr dst(api, link->recv_comm, 8 * kSlot);
  std::mt19937_64 rng(42);
  for (int n = 1; n <= 8; ++n) {
    for (int round = 0; round < 3; ++round) {
      void* data[8];
      size_t sizes[8];
      int tags[8];
      void* mhs[8];
      size_t lens[8];
      for (int i = 0; i < n; ++i) {
        data[i] = dst.data + i * kSlot;
        sizes[i] = kSlot;
        tags[i] = 100 + i;
        mhs[i] = dst.mh;
        lens[i] = (round == 0) ? kSlot : static_cast<size_t>(rng() % kSlot);  // short sends too
        random_fill(src.data + i * kSlot, lens[i], rng);
      }
      std::memset(dst.data, 0, 8 * kSlot);
      void* rreq = post_irecv(api, link->recv_comm, n, data, sizes, tags, mhs);
      // Sent in reverse tag order: the tag, not the order, picks the buffer.
      std::vector<void*> sreqs;
      for (int i = n - 1; i >= 0; --i)
        sreqs.push_back(post_isend(api, link->send_comm, src.data + i * kSlot, lens[i], 100 + i, src.mh));
      std::vector<void*> all{rreq};
      std::vector<int> ns{n};
      for (void* s : sreqs) all.push_back(s), ns.push_back(1);
      const auto got = wait_requests(api, all, ns)[0];
      ASSERT_FALSE(HasFailure()) << "n=" << n;
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(got[static_cast<size_t>(i)], static_cast<int>(lens[i])) << "n=" << n << " buffer " << i;
        EXPECT_EQ(first_difference(src.data + i * kSlot, dst.data + i * kSlot, lens[i]), -1)
            << "n=" << n << " buffer " << i;
      }
    }
  }
}

TEST_F(NetIntegrity, SixteenConcurrentComms) {
  NetApi& api = plugin.api();
  constexpr int kComms = 16;
  constexpr int kInFlight = 4;
  constexpr size_t kSize = 192 << 10;
  std::vector<std::unique_ptr<Link>> links;
  for (int i = 0; i < kComms; ++i) {
    // Both directions across the pair.
    links.push_back(i % 2 ? make_link(api, rxe1, rxe0) : make_link(api, rxe0, rxe1));
    ASSERT_FALSE(HasFailure()) << "link " << i;
  }
  std::vector<std::unique_ptr<Mr>> srcs, dsts;
  std::mt19937_64 rng(16);
  for (auto& l : links) {
    srcs.push_back(std::make_unique<Mr>(api, l->send_comm, kSize * kInFlight));
    dsts.push_back(std::make_unique<Mr>(api, l->recv_comm, kSize * kInFlight));
    random_fill(srcs.back()->data, kSize * kInFlight, rng);
  }
  for (int round = 0; round < 3; ++round) {
    std::vector<void*> rreqs, sreqs;
    for (int c = 0; c < kComms; ++c) {
      std::memset(dsts[c]->data, 0, kSize * kInFlight);
      for (int k = 0; k < kInFlight; ++k) {
        void* d = dsts[c]->data + k * kSize;
        size_t sz = kSize;
        int tag = c;
        void* mh = dsts[c]->mh;
        rreqs.push_back(post_irecv(api, links[c]->recv_comm, 1, &d, &sz, &tag, &mh));
      }
    }
    for (int c = 0; c < kComms; ++c)
      for (int k = 0; k < kInFlight; ++k)
        sreqs.push_back(
            post_isend(api, links[c]->send_comm, srcs[c]->data + k * kSize, kSize, c, srcs[c]->mh));
    // Everything is in flight at once; poll all of it round robin, as NCCL's proxy does.
    std::vector<bool> done(rreqs.size() + sreqs.size(), false);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    size_t remaining = done.size();
    while (remaining > 0 && std::chrono::steady_clock::now() < deadline) {
      for (size_t i = 0; i < done.size(); ++i) {
        if (done[i]) continue;
        void* req = i < rreqs.size() ? rreqs[i] : sreqs[i - rreqs.size()];
        int d = 0, sz = -1;
        ASSERT_EQ(api.test(req, &d, &sz), ncclSuccess) << "request " << i;
        if (d) {
          if (i < rreqs.size()) {
            EXPECT_EQ(sz, static_cast<int>(kSize));
          }
          done[i] = true;
          --remaining;
        }
      }
    }
    ASSERT_EQ(remaining, 0u) << "requests still pending after 120 s";
    for (int c = 0; c < kComms; ++c)
      EXPECT_EQ(first_difference(srcs[c]->data, dsts[c]->data, kSize * kInFlight), -1) << "comm " << c;
  }
  srcs.clear();
  dsts.clear();
}

TEST_F(NetIntegrity, ConnectClose200TimesLeaksNothing) {
  NetApi& api = plugin.api();
  // One warm-up cycle first: the plugin may open per-device resources once (context, PD, event thread).
  {
    auto l = make_link(api, rxe1, rxe0);
    ASSERT_FALSE(HasFailure());
  }
  const auto fds_before = open_fds();
  const std::string res0_before = rdma_resources("rxe0");
  const std::string res1_before = rdma_resources("rxe1");
  for (int i = 0; i < 200; ++i) {
    auto l = make_link(api, rxe1, rxe0);
    ASSERT_FALSE(HasFailure()) << "cycle " << i;
    Mr src(api, l->send_comm, 4096);
    Mr dst(api, l->recv_comm, 4096);
    std::memset(src.data, i & 0xff, 4096);
    void* d = dst.data;
    size_t sz = 4096;
    int tag = 1;
    void* mh = dst.mh;
    void* rreq = post_irecv(api, l->recv_comm, 1, &d, &sz, &tag, &mh);
    void* sreq = post_isend(api, l->send_comm, src.data, 4096, 1, src.mh);
    wait_requests(api, {sreq, rreq}, {1, 1});
    ASSERT_EQ(dst.data[4095], static_cast<unsigned char>(i & 0xff)) << "cycle " << i;
  }
  EXPECT_EQ(fds_left_open(fds_before), "") << "file descriptors leaked over 200 connect/close cycles";
  EXPECT_EQ(rdma_resources("rxe0"), res0_before) << "verbs objects (pd/cq/qp/mr) leaked on rxe0";
  EXPECT_EQ(rdma_resources("rxe1"), res1_before) << "verbs objects (pd/cq/qp/mr) leaked on rxe1";
  std::fprintf(stderr, "resources after 200 cycles: %s%s", res0_before.c_str(), res1_before.c_str());
}

// A connection handle from the network that is cut short or is noise: a clear error naming
// peer.bad_handshake within 60 s, never a crash or a hang.
void expect_bad_handle_rejected(Plugin& plugin, int rxe0, int rxe1, bool truncate) {
  NetApi& api = plugin.api();
  unsigned char handle[kHandleBytes] = {};
  void* lc = nullptr;
  ASSERT_EQ(api.listen(rxe0, handle, &lc), ncclSuccess);
  if (truncate) {
    std::memset(handle + 8, 0, kHandleBytes - 8);  // cut after 8 bytes
  } else {
    std::mt19937_64 rng(std::random_device{}());
    for (auto& b : handle) b = static_cast<unsigned char>(rng());
  }
  const auto t0 = std::chrono::steady_clock::now();
  void* sc = nullptr;
  void* rc = nullptr;
  ncclResult_t r = ncclSuccess;
  while (r == ncclSuccess && sc == nullptr &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
    r = api.connect(rxe1, handle, &sc);
    if (r == ncclSuccess && rc == nullptr) (void)api.accept(lc, &rc);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(r, ncclSuccess) << "connect accepted a " << (truncate ? "truncated" : "random") << " handle";
  EXPECT_EQ(sc, nullptr);
  EXPECT_LT(secs, 60.0);
  EXPECT_TRUE(CapturedLog::contains("peer.bad_handshake"))
      << "no [peer.bad_handshake] line in the plugin log";
  if (sc) api.close_send(sc);
  if (rc) api.close_recv(rc);
  EXPECT_EQ(api.close_listen(lc), ncclSuccess);
}

TEST_F(NetIntegrity, TruncatedHandleIsRejected) { expect_bad_handle_rejected(plugin, rxe0, rxe1, true); }
TEST_F(NetIntegrity, RandomHandleIsRejected) { expect_bad_handle_rejected(plugin, rxe0, rxe1, false); }

}  // namespace
}  // namespace railscope::netbench::testbed
