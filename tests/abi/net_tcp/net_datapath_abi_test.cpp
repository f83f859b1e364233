// SPDX-License-Identifier: Apache-2.0
// The net plugin's data path through its ABI, two processes, any engine (RAILSCOPE_TRANSPORT decides;
// CTest runs this binary with the TCP engine on loopback and across a veth pair between two network
// namespaces). Every ABI version v8–v12 moves data; grouped receives, many comms at once,
// connect/close loops without leaks, a peer killed mid-transfer, a link taken down and bad handles
// each end in the documented result.
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>

#include "abi/net_tcp/peer.h"

namespace railscope::abi_test {
namespace {

constexpr int kDev = 0;

std::unique_ptr<NetApi> ready_api(int version) {
  auto api = load_net_api(version, CapturedLog::logger);
  if (!api) return nullptr;
  if (api->init() != ncclSuccess) return nullptr;
  int n = 0;
  if (api->devices(&n) != ncclSuccess || n < 1) return nullptr;
  return api;
}

// What the plugin logged at WARN (its findings), one per line: the reason behind a failed call.
std::string logged_warnings() {
  std::string out;
  for (const auto& l : CapturedLog::lines())
    if (l.level == NCCL_LOG_WARN) out += l.text + "\n";
  return out;
}

// Every size up to 64 MiB through the newest ABI; the older ones, whose adapters differ only in how
// they pass the same calls, up to 1 MiB (the large sizes took four fifths of the test, and under the
// sanitizers several minutes, without reaching any code the newest version does not).
std::vector<size_t> integrity_sizes(int version) {
  const size_t top = version >= 12 ? size_t{64} << 20 : size_t{1} << 20;
  std::vector<size_t> s;
  for (size_t v : {size_t{0}, size_t{3}, size_t{4095}, size_t{8193}, size_t{65537}, size_t{1000003},
                   size_t{7777777}, (size_t{64} << 20) - 1})
    if (v <= top) s.push_back(v);
  for (size_t p = 1; p <= top; p <<= 1) s.push_back(p);
  return s;
}

// Peer side of the integrity test: sends every size with its pattern.
int send_all_sizes(int fd, int version) {
  auto api = ready_api(version);
  if (!api) return 10;
  void* comm = nullptr;
  if (establish_send(*api, kDev, fd, &comm) != ncclSuccess) return 11;
  std::vector<unsigned char> buf(size_t{64} << 20);
  void* mh = nullptr;
  if (api->reg_mr(comm, buf.data(), buf.size(), &mh) != ncclSuccess) return 12;
  for (size_t size : integrity_sizes(version)) {
    fill_pattern(buf, size, 7);
    void* req = nullptr;
    if (post_send(*api, comm, buf.data(), size, 1, mh, &req) != ncclSuccess) return 13;
    int sent = -1;
    if (wait_request(*api, req, &sent) != ncclSuccess || sent != static_cast<int>(size)) {
      std::fprintf(stderr, "send_all_sizes: size %zu failed; the plugin logged:\n%s", size,
                   logged_warnings().c_str());
      return 14;
    }
  }
  char ok = 0;
  if (!read_all(fd, &ok, 1)) return 15;  // the receiver has checked everything
  api->dereg_mr(comm, mh);
  return api->close_send(comm) == ncclSuccess ? 0 : 16;
}

int stream_forever(int fd, int version);

constexpr int kComms = 16;
constexpr size_t kBytes = 4 << 20;
constexpr int kRounds = 200;

size_t grouped_size(int n, int i) {
  return static_cast<size_t>((i * 7919 + n * 131) % 5 == 0 ? 0 : (i + 1) * 300001 / (n % 3 + 1));
}

int grouped_sender(int fd, int /*version*/) {
  auto a = ready_api(12);
  if (!a) return 10;
  NetProps props;
  if (a->properties(kDev, &props) != ncclSuccess) return 9;
  void* comm = nullptr;
  if (establish_send(*a, kDev, fd, &comm) != ncclSuccess) return 11;
  std::vector<std::vector<unsigned char>> bufs(8, std::vector<unsigned char>(4 << 20));
  void* mh = nullptr;
  a->reg_mr(comm, bufs[0].data(), bufs[0].size(), &mh);
  for (int n = 1; n <= props.max_recvs; ++n) {
    std::vector<void*> reqs;
    for (int i = 0; i < n; ++i) {
      fill_pattern(bufs[static_cast<size_t>(i)], grouped_size(n, i), static_cast<uint64_t>(n * 100 + i));
      void* r = nullptr;
      if (post_send(*a, comm, bufs[static_cast<size_t>(i)].data(), grouped_size(n, i), 1000 + i, mh, &r) !=
          ncclSuccess)
        return 12;
      reqs.push_back(r);
    }
    for (void* r : reqs)
      if (wait_request(*a, r, nullptr) != ncclSuccess) return 13;
  }
  char ok = 0;
  if (!read_all(fd, &ok, 1)) return 14;
  return a->close_send(comm) == ncclSuccess ? 0 : 15;
}

int concurrent_sender(int fd, int /*version*/) {
  auto a = ready_api(12);
  if (!a) return 10;
  std::vector<void*> comms(kComms);
  for (auto& c : comms)
    if (establish_send(*a, kDev, fd, &c) != ncclSuccess) return 11;
  std::vector<std::vector<unsigned char>> bufs(kComms, std::vector<unsigned char>(kBytes));
  std::vector<void*> reqs(kComms);
  for (int i = 0; i < kComms; ++i) {
    fill_pattern(bufs[static_cast<size_t>(i)], kBytes, static_cast<uint64_t>(i));
    if (post_send(*a, comms[static_cast<size_t>(i)], bufs[static_cast<size_t>(i)].data(), kBytes, 0, nullptr,
                  &reqs[static_cast<size_t>(i)]) != ncclSuccess)
      return 12;
  }
  for (void* r : reqs)
    if (wait_request(*a, r, nullptr) != ncclSuccess) return 13;
  char ok = 0;
  if (!read_all(fd, &ok, 1)) return 14;
  for (void* c : comms)
    if (a->close_send(c) != ncclSuccess) return 15;
  return 0;
}

bool one_round_send(NetApi& a, int fd) {
  void* comm = nullptr;
  if (establish_send(a, kDev, fd, &comm) != ncclSuccess) return false;
  std::vector<char> msg(100000, 1);
  void* req = nullptr;
  if (post_send(a, comm, msg.data(), msg.size(), 0, nullptr, &req) != ncclSuccess) return false;
  if (wait_request(a, req, nullptr) != ncclSuccess) return false;
  char ok = 0;
  if (!read_all(fd, &ok, 1)) return false;
  return a.close_send(comm) == ncclSuccess;
}

int close_loop_sender(int fd, int /*version*/) {
  auto a = ready_api(12);
  if (!a || !one_round_send(*a, fd)) return 10;  // warm-up round: lazily created state
  int fds = count_dir_entries("/proc/self/fd"), threads = count_dir_entries("/proc/self/task");
  for (int i = 1; i < kRounds; ++i)
    if (!one_round_send(*a, fd)) return 11;
  if (count_dir_entries("/proc/self/fd") != fds) return 12;
  if (count_dir_entries("/proc/self/task") != threads) return 13;
  return 0;
}

// One receive into all of buf (tag 0; no memory handle: the TCP engine needs none).
ncclResult_t post_whole(NetApi& api, void* rcomm, std::vector<unsigned char>& buf, void** req) {
  void* data = buf.data();
  size_t cap = buf.size();
  int tag = 0;
  void* mh = nullptr;
  return post_recv(api, rcomm, 1, &data, &cap, &tag, &mh, req);
}

int stop_receiving(int fd, int /*version*/) {
  auto a = ready_api(12);
  if (!a) return 10;
  void *rcomm = nullptr, *lcomm = nullptr;
  if (establish_recv(*a, kDev, fd, &rcomm, &lcomm) != ncclSuccess) return 11;
  std::vector<unsigned char> buf(size_t{64} << 20);
  void* req = nullptr;
  if (post_whole(*a, rcomm, buf, &req) != ncclSuccess) return 12;
  if (wait_request(*a, req, nullptr) != ncclSuccess) return 13;
  char note = 1;
  write_all(fd, &note, 1);
  for (;;) ::pause();  // stops receiving; killed by the test
}

int send_three_mib(int fd, int /*version*/) {
  auto a = ready_api(12);
  if (!a) return 10;
  void* comm = nullptr;
  if (establish_send(*a, kDev, fd, &comm) != ncclSuccess) return 11;
  std::vector<unsigned char> buf(1 << 20, 9);
  for (int i = 0; i < 3; ++i) {
    void* req = nullptr;
    if (post_send(*a, comm, buf.data(), buf.size(), 0, nullptr, &req) != ncclSuccess) return 12;
    if (wait_request(*a, req, nullptr) != ncclSuccess) return 13;
  }
  char ok = 0;
  if (!read_all(fd, &ok, 1)) return 14;
  return a->close_send(comm) == ncclSuccess ? 0 : 15;
}

// A receiver that posts its receive only well after the sender's data filled the socket buffers (a
// rank busy elsewhere, as in a checkpoint): the sender sits on a zero window meanwhile.
constexpr size_t kLateBytes = size_t{32} << 20;
constexpr auto kLateBy = std::chrono::milliseconds(3500);
// Receives one message of `bytes` (pattern `seed`) into a receive of `capacity`, posted `delay` after
// the connection is up; 12-14: the receive failed or the message is not whole (what the plugin logged
// goes to stderr).
int receive_checked(int fd, size_t capacity, size_t bytes, uint64_t seed, std::chrono::milliseconds delay,
                    const char* role) {
  auto a = ready_api(12);
  if (!a) return 10;
  void *rcomm = nullptr, *lcomm = nullptr;
  if (establish_recv(*a, kDev, fd, &rcomm, &lcomm) != ncclSuccess) return 11;
  std::this_thread::sleep_for(delay);
  std::vector<unsigned char> buf(capacity);
  // Every way out closes the comms first: their helper threads may still be reading into buf, and
  // the plugin is unloaded when `a` goes.
  auto closed = [&](int rc) {
    (void)a->close_recv(rcomm);
    (void)a->close_listen(lcomm);
    return rc;
  };
  void* req = nullptr;
  if (post_whole(*a, rcomm, buf, &req) != ncclSuccess) return closed(12);
  int got = -1;
  if (wait_request(*a, req, &got) != ncclSuccess) {
    std::fprintf(stderr, "%s: the receive failed; the plugin logged:\n%s", role, logged_warnings().c_str());
    return closed(13);
  }
  if (got != static_cast<int>(bytes) || check_pattern(buf, bytes, seed) != SIZE_MAX) return closed(14);
  char ok = 1;
  write_all(fd, &ok, 1);
  return a->close_recv(rcomm) == ncclSuccess && a->close_listen(lcomm) == ncclSuccess ? 0 : 15;
}

int late_receiver(int fd, int /*version*/) {
  return receive_checked(fd, kLateBytes, kLateBytes, 3, kLateBy, "late_receiver");
}

// One message of kOneBytes (pattern 7) into a larger receive.
constexpr size_t kOneBytes = 100000;
int receive_one(int fd, int /*version*/) {
  return receive_checked(fd, size_t{1} << 20, kOneBytes, 7, std::chrono::milliseconds(0), "receive_one");
}

// Records NCCL profiler callbacks (peer process only).
struct ProfilerRecord {
  int starts = 0, stops = 0, bad = 0;
  std::vector<size_t> lengths;
};
ProfilerRecord& profiler_record() {
  static ProfilerRecord r;
  return r;
}
int dummy_event;
ncclResult_t record_profiler(void** event, int type, void* parent, int64_t plugin_id, void* data) {
  auto& r = profiler_record();
  if (type == ncclProfilerNetEventStart) {
    ++r.starts;
    struct Descr {
      uint8_t type;
      struct {
        int fd;
        int op;
        size_t length;
      } sock;
    };
    Descr d{};
    std::memcpy(&d, data, sizeof d);
    if (parent == nullptr || plugin_id != ((int64_t{2} << 16) | 1) || d.type != 1 || d.sock.op != 0 ||
        d.sock.fd < 0)
      ++r.bad;
    r.lengths.push_back(d.sock.length);
    *event = &dummy_event;
  } else if (type == ncclProfilerNetEventStop) {
    ++r.stops;
    if (*event != &dummy_event) ++r.bad;
  }
  return ncclSuccess;
}

int profiled_sender(int fd, int /*version*/) {
  auto a = load_net_api(12, CapturedLog::logger, record_profiler);
  if (!a || a->init() != ncclSuccess) return 10;
  void* comm = nullptr;
  if (establish_send(*a, kDev, fd, &comm) != ncclSuccess) return 11;
  std::vector<unsigned char> buf(1 << 20, 4);
  const size_t sizes[] = {0, 100, 20000, 1 << 20};
  int parent = 0;
  for (size_t size : sizes) {
    void* req = nullptr;
    if (a->isend_profiled(comm, buf.data(), size, 0, nullptr, &parent, &req) != ncclSuccess || req == nullptr)
      return 12;
    if (wait_request(*a, req, nullptr) != ncclSuccess) return 13;
  }
  char ok = 0;
  if (!read_all(fd, &ok, 1)) return 14;
  a->close_send(comm);
  const auto& r = profiler_record();
  if (r.starts != 4 || r.stops != 4) return 20;
  if (r.bad != 0) return 21;
  for (size_t i = 0; i < 4; ++i)
    if (r.lengths[i] != sizes[i]) return 22;
  return 0;
}

class DataIntegrity : public ::testing::TestWithParam<int> {};

TEST_P(DataIntegrity, EverySizeByteForByte) {
  int version = GetParam();
  auto api = ready_api(version);
  ASSERT_TRUE(api) << "plugin v" << version << " did not initialise with a device";
  Peer peer = spawn_peer("send_all_sizes", version);
  void *rcomm = nullptr, *lcomm = nullptr;
  ASSERT_EQ(establish_recv(*api, kDev, peer.fd, &rcomm, &lcomm), ncclSuccess);
  std::vector<unsigned char> buf((size_t{64} << 20) + 64);
  // A failed ASSERT below returns at once, and buf is freed on the way out while the plugin's lane
  // threads may still be receiving into it: the comm is closed first, whatever the way out.
  struct CloseBeforeFree {
    NetApi& api;
    void*& rcomm;
    ~CloseBeforeFree() {
      if (rcomm != nullptr) (void)api.close_recv(rcomm);
    }
  } close_first{*api, rcomm};
  void* mh = nullptr;
  ASSERT_EQ(api->reg_mr(rcomm, buf.data(), buf.size(), &mh), ncclSuccess);
  for (size_t size : integrity_sizes(version)) {
    std::fill(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size + 64), 0xA5);
    void* data = buf.data();
    size_t cap = size + 64;  // room to spare: the reported size must be the sent size
    int tag = 1;
    void* req = nullptr;
    ASSERT_EQ(post_recv(*api, rcomm, 1, &data, &cap, &tag, &mh, &req), ncclSuccess);
    int got = -1;
    ASSERT_EQ(wait_request(*api, req, &got), ncclSuccess) << "size " << size << "; the plugin logged:\n"
                                                          << logged_warnings();
    EXPECT_EQ(got, static_cast<int>(size));
    EXPECT_EQ(check_pattern(buf, size, 7), SIZE_MAX) << "size " << size;
    EXPECT_EQ(buf[size], 0xA5) << "wrote past the message, size " << size;
    // As NCCL's proxy after a receive: iflush (host memory: nothing to flush, no request), then
    // irecvConsumed; both reach the comm's own data path and change nothing.
    int flushed = got;
    void* flush_req = reinterpret_cast<void*>(0x1);
    ASSERT_EQ(api->iflush(rcomm, 1, &data, &flushed, &mh, &flush_req), ncclSuccess) << logged_warnings();
    EXPECT_EQ(flush_req, nullptr);
    ASSERT_EQ(api->irecv_consumed(rcomm, 1, req), ncclSuccess) << logged_warnings();
    EXPECT_EQ(check_pattern(buf, size, 7), SIZE_MAX) << "size " << size;
  }
  char ok = 1;
  write_all(peer.fd, &ok, 1);
  EXPECT_EQ(api->dereg_mr(rcomm, mh), ncclSuccess);
  EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  rcomm = nullptr;
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
  EXPECT_EQ(peer.wait(), 0);
  EXPECT_EQ(api->finalize(), ncclSuccess);
}

INSTANTIATE_TEST_SUITE_P(AbiVersions, DataIntegrity, ::testing::Values(8, 9, 10, 11, 12),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return "V" + std::to_string(p.param);
                         });

TEST(NetDataPath, PropertiesDescribeTheInterface) {
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  int n = 0;
  ASSERT_EQ(api->devices(&n), ncclSuccess);
  for (int d = 0; d < n; ++d) {
    NetProps p;
    ASSERT_EQ(api->properties(d, &p), ncclSuccess);
    EXPECT_FALSE(p.name.empty());
    EXPECT_GT(p.speed, 0);
    EXPECT_EQ(p.ptr_support, NCCL_PTR_HOST);
    EXPECT_GE(p.max_recvs, 1);
    char real[PATH_MAX] = {};
    std::string link = "/sys/class/net/" + p.name + "/device";
    if (::realpath(link.c_str(), real) != nullptr) {
      EXPECT_EQ(p.pci_path, real);
    } else {
      EXPECT_EQ(p.pci_path, "");
    }
    if (const char* want = std::getenv("RAILSCOPE_TEST_EXPECT_IFNAME")) {
      EXPECT_EQ(p.name, want);
    }
  }
  EXPECT_EQ(api->finalize(), ncclSuccess);
}

// Grouped receives: n = 1..maxRecvs messages matched by tag into one request, posted in a
// different tag order than they are sent; sizes mix inline and striped messages.
TEST(NetDataPath, GroupedReceives) {
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  NetProps props;
  ASSERT_EQ(api->properties(kDev, &props), ncclSuccess);
  const int max_n = props.max_recvs;
  Peer peer = spawn_peer("grouped_sender");
  void *rcomm = nullptr, *lcomm = nullptr;
  ASSERT_EQ(establish_recv(*api, kDev, peer.fd, &rcomm, &lcomm), ncclSuccess);
  std::vector<std::vector<unsigned char>> bufs(8, std::vector<unsigned char>(4 << 20));
  for (int n = 1; n <= max_n; ++n) {
    void* data[8];
    size_t caps[8];
    int tags[8];
    void* mhs[8] = {};
    for (int i = 0; i < n; ++i) {  // slot i expects the message with tag 1000 + (n-1-i): reverse order
      data[i] = bufs[static_cast<size_t>(i)].data();
      caps[i] = bufs[static_cast<size_t>(i)].size();
      tags[i] = 1000 + (n - 1 - i);
    }
    void* req = nullptr;
    ASSERT_EQ(post_recv(*api, rcomm, n, data, caps, tags, mhs, &req), ncclSuccess);
    int sizes[8] = {};
    ASSERT_EQ(wait_request(*api, req, sizes), ncclSuccess) << "n=" << n;
    for (int i = 0; i < n; ++i) {
      int sent_index = n - 1 - i;
      EXPECT_EQ(sizes[i], static_cast<int>(grouped_size(n, sent_index))) << "n=" << n << " slot " << i;
      EXPECT_EQ(check_pattern(bufs[static_cast<size_t>(i)], grouped_size(n, sent_index),
                              static_cast<uint64_t>(n * 100 + sent_index)),
                SIZE_MAX)
          << "n=" << n << " slot " << i;
    }
  }
  char ok = 1;
  write_all(peer.fd, &ok, 1);
  EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
  EXPECT_EQ(peer.wait(), 0);
  EXPECT_GE(max_n, 1);
}

// 16 comms open at once, all transferring concurrently (requests interleaved across comms).
TEST(NetDataPath, SixteenConcurrentComms) {
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  Peer peer = spawn_peer("concurrent_sender");
  std::vector<void*> rcomms(kComms), lcomms(kComms);
  for (int i = 0; i < kComms; ++i)
    ASSERT_EQ(
        establish_recv(*api, kDev, peer.fd, &rcomms[static_cast<size_t>(i)], &lcomms[static_cast<size_t>(i)]),
        ncclSuccess);
  std::vector<std::vector<unsigned char>> bufs(kComms, std::vector<unsigned char>(kBytes));
  std::vector<void*> reqs(kComms);
  for (int i = 0; i < kComms; ++i) {
    void* data = bufs[static_cast<size_t>(i)].data();
    size_t cap = kBytes;
    int tag = 0;
    void* mh = nullptr;
    ASSERT_EQ(post_recv(*api, rcomms[static_cast<size_t>(i)], 1, &data, &cap, &tag, &mh,
                        &reqs[static_cast<size_t>(i)]),
              ncclSuccess);
  }
  // Round-robin test() over all comms, as NCCL's proxy does.
  std::vector<bool> done(kComms, false);
  auto end = Clock::now() + std::chrono::seconds(60);
  int left = kComms;
  while (left > 0 && Clock::now() < end) {
    for (int i = 0; i < kComms; ++i) {
      if (done[static_cast<size_t>(i)]) continue;
      int d = 0, size = 0;
      ASSERT_EQ(api->test(reqs[static_cast<size_t>(i)], &d, &size), ncclSuccess);
      if (d) {
        done[static_cast<size_t>(i)] = true;
        --left;
        EXPECT_EQ(size, static_cast<int>(kBytes));
        EXPECT_EQ(check_pattern(bufs[static_cast<size_t>(i)], kBytes, static_cast<uint64_t>(i)), SIZE_MAX)
            << "comm " << i;
      }
    }
  }
  EXPECT_EQ(left, 0);
  char ok = 1;
  write_all(peer.fd, &ok, 1);
  for (int i = 0; i < kComms; ++i) {
    EXPECT_EQ(api->close_recv(rcomms[static_cast<size_t>(i)]), ncclSuccess);
    EXPECT_EQ(api->close_listen(lcomms[static_cast<size_t>(i)]), ncclSuccess);
  }
  EXPECT_EQ(peer.wait(), 0);
}

// 200 connect / transfer / close rounds: file descriptors and threads come back to where they were
// (on both ends: the peer reports its own leak as its exit code).
TEST(NetDataPath, ConnectCloseLoopLeaksNothing) {
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  Peer peer = spawn_peer("close_loop_sender");
  int fds = 0, threads = 0;
  for (int i = 0; i < kRounds; ++i) {
    void *rcomm = nullptr, *lcomm = nullptr;
    ASSERT_EQ(establish_recv(*api, kDev, peer.fd, &rcomm, &lcomm), ncclSuccess) << "round " << i;
    std::vector<unsigned char> buf(100000);
    void* data = buf.data();
    size_t cap = buf.size();
    int tag = 0;
    void* mh = nullptr;
    void* req = nullptr;
    ASSERT_EQ(post_recv(*api, rcomm, 1, &data, &cap, &tag, &mh, &req), ncclSuccess);
    ASSERT_EQ(wait_request(*api, req, nullptr), ncclSuccess) << "round " << i;
    char ok = 1;
    write_all(peer.fd, &ok, 1);
    ASSERT_EQ(api->close_recv(rcomm), ncclSuccess);
    ASSERT_EQ(api->close_listen(lcomm), ncclSuccess);
    if (i == 0) {
      fds = count_dir_entries("/proc/self/fd");
      threads = count_dir_entries("/proc/self/task");
    }
  }
  EXPECT_EQ(count_dir_entries("/proc/self/fd"), fds);
  EXPECT_EQ(count_dir_entries("/proc/self/task"), threads);
  EXPECT_EQ(peer.wait(), 0) << "the peer leaked (12: fds, 13: threads) or failed";
}

// A sender that streams until it is killed.
int stream_forever(int fd, int /*version*/) {
  auto a = ready_api(12);
  if (!a) return 10;
  void* comm = nullptr;
  if (establish_send(*a, kDev, fd, &comm) != ncclSuccess) return 11;
  std::vector<unsigned char> buf(size_t{64} << 20, 3);
  for (;;) {
    void* req = nullptr;
    if (post_send(*a, comm, buf.data(), buf.size(), 0, nullptr, &req) != ncclSuccess) return 12;
    if (wait_request(*a, req, nullptr) != ncclSuccess) return 13;
  }
}

// Receives into `buf` until the transfer stalls or fails after `disrupt` ran; returns the failing
// test()'s or irecv()'s result and the time it took. The caller owns `buf` and closes the comm before
// freeing it: a failed receive may still have bytes in flight to it (another lane's helper thread
// reading what its socket still holds), as under NCCL, which frees no buffer of a comm it has not
// closed.
ncclResult_t receive_until_failure(NetApi& api, void* rcomm, std::vector<unsigned char>& buf,
                                   const std::function<void()>& disrupt, std::chrono::milliseconds* took) {
  void* data = buf.data();
  size_t cap = buf.size();
  int tag = 0;
  void* mh = nullptr;
  void* req = nullptr;
  if (post_recv(api, rcomm, 1, &data, &cap, &tag, &mh, &req) != ncclSuccess) return ncclInternalError;
  if (wait_request(api, req, nullptr) != ncclSuccess) return ncclInternalError;  // one good message first
  if (post_recv(api, rcomm, 1, &data, &cap, &tag, &mh, &req) != ncclSuccess) return ncclInternalError;
  auto t0 = Clock::now();
  disrupt();
  ncclResult_t rc = ncclSuccess;
  // The failure may come from test() or from the next irecv (a comm whose peer is gone refuses new
  // receives with the same error): either is the plugin's answer, kept as it is.
  for (int i = 0; i < 1000 && rc == ncclSuccess; ++i) {
    rc = wait_request(api, req, nullptr, std::chrono::milliseconds(60000));
    if (rc == ncclSuccess) rc = post_recv(api, rcomm, 1, &data, &cap, &tag, &mh, &req);
  }
  *took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  return rc;
}

TEST(NetDataPath, SenderKilledMidTransferIsPeerClosed) {
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  Peer peer = spawn_peer("stream_forever");
  std::vector<unsigned char> buf(size_t{64} << 20);  // outlives rcomm: destroyed after the close below
  void *rcomm = nullptr, *lcomm = nullptr;
  ASSERT_EQ(establish_recv(*api, kDev, peer.fd, &rcomm, &lcomm), ncclSuccess);
  CapturedLog::clear();
  std::chrono::milliseconds took{};
  ncclResult_t rc = receive_until_failure(
      *api, rcomm, buf, [&] { peer.kill(); }, &took);
  EXPECT_EQ(rc, ncclRemoteError) << "the plugin logged:\n" << logged_warnings();
  EXPECT_LT(took.count(), 10000);
  EXPECT_TRUE(CapturedLog::contains("[peer.closed]")) << "no peer.closed diagnosis logged";
  EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
}

TEST(NetDataPath, ReceiverKilledMidTransferIsPeerClosed) {
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  Peer peer = spawn_peer("stop_receiving");
  void* scomm = nullptr;
  ASSERT_EQ(establish_send(*api, kDev, peer.fd, &scomm), ncclSuccess);
  std::vector<unsigned char> buf(size_t{64} << 20, 5);
  void* req = nullptr;
  ASSERT_EQ(post_send(*api, scomm, buf.data(), buf.size(), 0, nullptr, &req), ncclSuccess);
  ASSERT_EQ(wait_request(*api, req, nullptr), ncclSuccess);
  char note = 0;
  ASSERT_TRUE(read_all(peer.fd, &note, 1));
  CapturedLog::clear();
  ASSERT_EQ(post_send(*api, scomm, buf.data(), buf.size(), 0, nullptr, &req), ncclSuccess);
  auto t0 = Clock::now();
  peer.kill();
  ncclResult_t rc = ncclSuccess;
  for (int i = 0; i < 100 && rc == ncclSuccess; ++i) {  // sends may still complete into socket buffers
    rc = wait_request(*api, req, nullptr, std::chrono::milliseconds(30000));
    if (rc == ncclSuccess) rc = post_send(*api, scomm, buf.data(), buf.size(), 0, nullptr, &req);
  }
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  EXPECT_EQ(rc, ncclRemoteError) << "the plugin logged:\n" << logged_warnings();
  EXPECT_LT(took.count(), 10000);
  EXPECT_TRUE(CapturedLog::contains("[peer.closed]"));
  EXPECT_EQ(api->close_send(scomm), ncclSuccess);
}

// A peer that is alive but does not read (its receive is not posted yet) is not a failure, however
// long it takes: Linux aborts a connection whose zero window lasts longer than TCP_USER_TIMEOUT
// (the connection was reset after RAILSCOPE_TCP_TIMEOUT, which CTest sets to 5 s and this test to 2 s,
// below the receiver's 3.5 s. It was 1 s, and once, in an ASan run sharing two cores with two test-bed
// guests, the engine's watch saw a second without an acknowledgement and called the peer silent; the
// likely cause is TCP's retransmission backoff, which starts at 200 ms and doubles, so that three
// segments lost in a row leave more than a second without one).
TEST(NetDataPath, AReceiverLaterThanTheTimeoutIsNoFailure) {
  // CTest's value comes back for the later tests of this process, whatever the way out.
  struct RestoreTimeout {
    std::optional<std::string> was;
    ~RestoreTimeout() {
      if (was)
        ::setenv("RAILSCOPE_TCP_TIMEOUT", was->c_str(), 1);
      else
        ::unsetenv("RAILSCOPE_TCP_TIMEOUT");
    }
  } restore;
  if (const char* v = std::getenv("RAILSCOPE_TCP_TIMEOUT")) restore.was = v;
  ::setenv("RAILSCOPE_TCP_TIMEOUT", "2", 1);
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  Peer peer = spawn_peer("late_receiver");
  void* scomm = nullptr;
  ASSERT_EQ(establish_send(*api, kDev, peer.fd, &scomm), ncclSuccess);
  std::vector<unsigned char> buf(kLateBytes);
  fill_pattern(buf, kLateBytes, 3);
  CapturedLog::clear();
  void* req = nullptr;
  ASSERT_EQ(post_send(*api, scomm, buf.data(), buf.size(), 0, nullptr, &req), ncclSuccess);
  EXPECT_EQ(wait_request(*api, req, nullptr, std::chrono::milliseconds(60000)), ncclSuccess)
      << "the plugin logged:\n"
      << logged_warnings();
  char ok = 0;
  EXPECT_TRUE(read_all(peer.fd, &ok, 1));
  EXPECT_EQ(api->close_send(scomm), ncclSuccess);
  EXPECT_EQ(peer.wait(), 0);
  EXPECT_EQ(api->finalize(), ncclSuccess);
}

// A send above the maxP2pBytes the device announces (NCCL never posts one; test() could not report its
// size) is refused as an invalid argument before anything travels, and the connection goes on: the
// next message arrives whole.
TEST(NetDataPath, ASendAboveMaxP2pBytesIsRefusedAndTheCommGoesOn) {
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  NetProps props;
  ASSERT_EQ(api->properties(kDev, &props), ncclSuccess);
  ASSERT_GT(props.max_p2p_bytes, 0u);
  ASSERT_LE(props.max_p2p_bytes, static_cast<size_t>(INT32_MAX));  // test() reports sizes as int
  Peer peer = spawn_peer("receive_one");
  void* scomm = nullptr;
  ASSERT_EQ(establish_send(*api, kDev, peer.fd, &scomm), ncclSuccess);
  std::vector<unsigned char> buf(kOneBytes);
  fill_pattern(buf, kOneBytes, 7);
  CapturedLog::clear();
  void* req = nullptr;
  // The size is refused before the buffer is touched (it is far smaller than the size claims).
  EXPECT_EQ(api->isend(scomm, buf.data(), props.max_p2p_bytes + 1, 0, nullptr, &req), ncclInvalidArgument);
  EXPECT_EQ(req, nullptr);
  EXPECT_TRUE(CapturedLog::contains("above maxP2pBytes")) << logged_warnings();
  ASSERT_EQ(post_send(*api, scomm, buf.data(), kOneBytes, 0, nullptr, &req), ncclSuccess);
  EXPECT_EQ(wait_request(*api, req, nullptr), ncclSuccess);
  char ok = 0;
  EXPECT_TRUE(read_all(peer.fd, &ok, 1));
  EXPECT_EQ(api->close_send(scomm), ncclSuccess);
  EXPECT_EQ(peer.wait(), 0) << "12-14: the message after the refused one did not arrive whole";
}

// Only across the veth pair: our end's link goes down mid-transfer; the silent peer is diagnosed
// (progress.stalled) within the configured bound (RAILSCOPE_TCP_TIMEOUT, set small by CTest).
TEST(NetDataPath, LinkDownIsDiagnosedWithinTheBound) {
  const char* ifname = std::getenv("RAILSCOPE_TEST_LOCAL_IFNAME");
  if (std::getenv("RAILSCOPE_TEST_PEER_NETNS") == nullptr || ifname == nullptr)
    GTEST_SKIP() << "needs the veth pair between two namespaces (tests/abi/net_tcp/in_netns_pair.sh)";
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  Peer peer = spawn_peer("stream_forever");
  std::vector<unsigned char> buf(size_t{64} << 20);  // outlives rcomm: destroyed after the close below
  void *rcomm = nullptr, *lcomm = nullptr;
  ASSERT_EQ(establish_recv(*api, kDev, peer.fd, &rcomm, &lcomm), ncclSuccess);
  CapturedLog::clear();
  std::string down = std::string("ip link set ") + ifname + " down";
  std::string up = std::string("ip link set ") + ifname + " up";
  std::chrono::milliseconds took{};
  ncclResult_t rc = receive_until_failure(
      *api, rcomm, buf, [&] { ASSERT_EQ(std::system(down.c_str()), 0); }, &took);
  EXPECT_EQ(std::system(up.c_str()), 0);
  EXPECT_EQ(rc, ncclRemoteError) << "the plugin logged:\n" << logged_warnings();
  const char* t = std::getenv("RAILSCOPE_TCP_TIMEOUT");
  long bound_ms = (t != nullptr ? std::atol(t) : 60) * 1000 * 2 + 2000;
  EXPECT_LT(took.count(), bound_ms);
  EXPECT_TRUE(CapturedLog::contains("[progress.stalled]")) << "expected progress.stalled";
  EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
  peer.kill();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the link come back before later tests
}

// RAILSCOPE_NET_STATS: one JSON line per connection at close, in the verbs engine's format.
TEST(NetDataPath, StatsLineAtClose) {
  const char* engine = std::getenv("RAILSCOPE_TRANSPORT");
  if (engine == nullptr || std::string(engine) != "tcp") GTEST_SKIP() << "checks the TCP engine's line";
  std::string path = "/tmp/rs-tcp-stats-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  ::setenv("RAILSCOPE_NET_STATS", path.c_str(), 1);
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  Peer peer = spawn_peer("send_three_mib");
  void *rcomm = nullptr, *lcomm = nullptr;
  ASSERT_EQ(establish_recv(*api, kDev, peer.fd, &rcomm, &lcomm), ncclSuccess);
  std::vector<unsigned char> buf(1 << 20);
  for (int i = 0; i < 3; ++i) {
    void* data = buf.data();
    size_t cap = buf.size();
    int tag = 0;
    void* mh = nullptr;
    void* req = nullptr;
    ASSERT_EQ(post_recv(*api, rcomm, 1, &data, &cap, &tag, &mh, &req), ncclSuccess);
    ASSERT_EQ(wait_request(*api, req, nullptr), ncclSuccess);
  }
  char ok = 1;
  write_all(peer.fd, &ok, 1);
  EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
  EXPECT_EQ(peer.wait(), 0);
  ::unsetenv("RAILSCOPE_NET_STATS");
  // Both ends write a line (the peer inherits RAILSCOPE_NET_STATS): one send, one recv.
  std::ifstream in(path);
  std::string line;
  int send_lines = 0, recv_lines = 0;
  while (std::getline(in, line)) {
    EXPECT_NE(line.find("\"engine\":\"tcp\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"bytes\":3145728"), std::string::npos) << line;
    EXPECT_NE(line.find("\"messages\":3,"), std::string::npos) << line;
    send_lines += line.find("\"role\":\"send\"") != std::string::npos ? 1 : 0;
    recv_lines += line.find("\"role\":\"recv\"") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(send_lines, 1) << path;
  EXPECT_EQ(recv_lines, 1) << path;
  std::remove(path.c_str());
}

// NCCL's profiler (v10+ callback): one socket event per isend, started when posted and stopped when
// done, with NCCL's socket descriptor (checked inside the peer, which reports through its exit code).
TEST(NetDataPath, ProfilerSocketEvents) {
  const char* engine = std::getenv("RAILSCOPE_TRANSPORT");
  if (engine == nullptr || std::string(engine) != "tcp") GTEST_SKIP() << "checks the TCP engine's events";
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  Peer peer = spawn_peer("profiled_sender");
  void *rcomm = nullptr, *lcomm = nullptr;
  ASSERT_EQ(establish_recv(*api, kDev, peer.fd, &rcomm, &lcomm), ncclSuccess);
  std::vector<unsigned char> buf(1 << 20);
  for (int i = 0; i < 4; ++i) {
    void* data = buf.data();
    size_t cap = buf.size();
    int tag = 0;
    void* mh = nullptr;
    void* req = nullptr;
    ASSERT_EQ(post_recv(*api, rcomm, 1, &data, &cap, &tag, &mh, &req), ncclSuccess);
    ASSERT_EQ(wait_request(*api, req, nullptr), ncclSuccess);
  }
  char ok = 1;
  write_all(peer.fd, &ok, 1);
  EXPECT_EQ(api->close_recv(rcomm), ncclSuccess);
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
  EXPECT_EQ(peer.wait(), 0) << "20: start/stop counts, 21: descriptor fields, 22: lengths";
}

// Random bytes, a handle cut short (the rest zero) and a handle with a flipped address byte: each is
// refused by connect with peer.bad_handshake, and nothing is left behind.
TEST(NetDataPath, BadHandlesArePeerBadHandshake) {
  auto api = ready_api(12);
  ASSERT_TRUE(api);
  char good[128] = {};
  void* lcomm = nullptr;
  ASSERT_EQ(api->listen(kDev, good, &lcomm), ncclSuccess);
  std::mt19937 gen(42);
  std::vector<std::vector<char>> bad;
  for (int i = 0; i < 20; ++i) {
    std::vector<char> h(128);
    for (char& c : h) c = static_cast<char>(gen());
    bad.push_back(h);
  }
  for (size_t cut : {0, 4, 8, 20, 30, 36}) {
    std::vector<char> h(good, good + 128);
    std::fill(h.begin() + static_cast<std::ptrdiff_t>(cut), h.end(), 0);
    bad.push_back(h);
  }
  std::vector<char> flipped(good, good + 128);
  flipped[13] = static_cast<char>(flipped[13] ^ 0x40);
  bad.push_back(flipped);
  for (size_t i = 0; i < bad.size(); ++i) {
    CapturedLog::clear();
    void* scomm = nullptr;
    EXPECT_EQ(api->connect(kDev, bad[i].data(), &scomm), ncclInvalidArgument) << "handle " << i;
    EXPECT_EQ(scomm, nullptr);
    EXPECT_TRUE(CapturedLog::contains("[peer.bad_handshake]")) << "handle " << i;
  }
  EXPECT_EQ(api->close_listen(lcomm), ncclSuccess);
}

// Peer processes re-enter here: `<binary> --peer ROLE FD VERSION`.
int peer_main(const std::string& role, int fd, int version) {
  if (role == "send_all_sizes") return send_all_sizes(fd, version);
  if (role == "grouped_sender") return grouped_sender(fd, version);
  if (role == "concurrent_sender") return concurrent_sender(fd, version);
  if (role == "close_loop_sender") return close_loop_sender(fd, version);
  if (role == "stream_forever") return stream_forever(fd, version);
  if (role == "stop_receiving") return stop_receiving(fd, version);
  if (role == "send_three_mib") return send_three_mib(fd, version);
  if (role == "late_receiver") return late_receiver(fd, version);
  if (role == "receive_one") return receive_one(fd, version);
  if (role == "profiled_sender") return profiled_sender(fd, version);
  return 99;
}

}  // namespace
}  // namespace railscope::abi_test

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--peer")
    return railscope::abi_test::peer_main(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
