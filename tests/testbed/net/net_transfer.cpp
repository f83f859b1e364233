// SPDX-License-Identifier: Apache-2.0
// Test-bed program: loads the net plugin through its ABI (the harness, as NCCL would) and moves data
// between rxe0 and rxe1 of the soft-RoCE test bed, checking every byte.
//   net_transfer loopback [--expect-mtu-warning] [--check-stats FILE] [--vdevice]   both ends in this process
//   net_transfer server HANDLE_FILE                                     receive end (rxe1)
//   net_transfer client HANDLE_FILE                                     send end (rxe0)
//   net_transfer rails SECONDS [--expect-ports-down | --expect-failover | --expect-recovery |
//                               --expect-keep-out | --expect-unanswered]
//                                 (--rails 2) a virtual NIC rxe0+rxe2 -> rxe1+rxe3, 1 MiB messages
//   (server/client take --loop: repeat the sweep until something fails)
// Exit status 0 = every check passed; failures are printed to stderr.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "abi/plugin_loader.h"
#include "check.h"
#include "large_window.h"
#include "progress.h"
#include "railscope/nccl/net.h"
#include "railscope/node/port_counters.h"
#include "railscope/node/sysfs.h"
#include "receive_window.h"
#include "send_window.h"

using namespace railscope::abi_test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kMaxSize = 4u << 20;
constexpr int kTailMessages = 20;

// NET_TRANSFER_SYNC_DIR (two_process.sh --link-down-at-close): the two processes and the script meet
// through files there, so the receiver closes while the link is down and the sender closes after it
// came back (the receiver's last word must reach a sender that closes later).
void sync_touch(const char* name) {
  if (const char* dir = std::getenv("NET_TRANSFER_SYNC_DIR"))
    std::ofstream(std::string(dir) + "/" + name).put('x');
}
bool sync_wait(const char* name) {
  const char* dir = std::getenv("NET_TRANSFER_SYNC_DIR");
  if (dir == nullptr) return true;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!std::ifstream(std::string(dir) + "/" + name)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The eager protocol is on unless RAILSCOPE_NET_EAGER_MAX=0 (rxe ports carry host memory only).
size_t eager_limit() {
  const char* v = std::getenv("RAILSCOPE_NET_EAGER_MAX");
  return v == nullptr ? 4096 : std::strtoull(v, nullptr, 10);
}

// This process's pinned memory (VmPin in /proc/self/status, KiB); -1 when it says none.
long pinned_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmPin:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

// What one comm of a single-device connection registers at connect time, in KiB (docs/net-protocol.md,
// "Memory per connection"): eager at the default limit, a send comm the two pages its receiver writes
// (mailbox, credit word, clear-to-sends ahead) and its 32 KiB staging ring, a receive comm its 32 KiB
// ring and 4 KiB of control-write staging; receiver-driven, a send comm its 16 KiB FIFO and 4 KiB of
// sizes, a receive comm 4 KiB of sizes and 16 KiB of clear-to-send staging. An eager connection pins no
// FIFO. -1: another eager limit, not checked.
long comm_pin_kib(bool eager, bool send) {
  if (!eager) return 20;
  if (eager_limit() != 4096) return -1;
  return send ? 40 : 36;
}

std::vector<size_t> sweep_sizes() {
  std::vector<size_t> s = {0, 1, 3, 7, 8, 13, 127, 128, 129, 1000, 4095, 4097, 65537, 999999, 3u << 20};
  for (size_t p = 1; p <= kMaxSize; p <<= 1) s.push_back(p);
  return s;
}

void fill(std::vector<uint8_t>& buf, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    std::memcpy(&buf[i], &v, 8);
  }
  for (; i < n; ++i) buf[i] = static_cast<uint8_t>(rng());
}

// A stand-in for NCCL's profiler callback: counts the plugin's QP events and checks the descriptor.
// railscope's port announcements (RailscopeNetPort_v1, once per lane of a connection) are counted apart.
std::atomic<int> g_prof_start{0}, g_prof_stop{0}, g_prof_bad{0}, g_prof_ports{0};
int g_prof_token = 0;
ncclResult_t count_events(void** eh, int type, void* phandle, int64_t plugin_id, void* ext) {
  if (type == ncclProfilerNetEventStart && plugin_id == railscope::nccl::kNetRailscopePluginId) {
    const auto* d = static_cast<const railscope::nccl::RailscopeNetPort_v1*>(ext);
    const bool ok = phandle == &g_prof_token && d != nullptr &&
                    d->type == railscope::nccl::kRailscopeNetPort && d->device[0] != '\0' && d->port > 0;
    if (!ok) ++g_prof_bad;
    ++g_prof_ports;
    *eh = nullptr;  // started and stopped at once: no stop is expected for it
  } else if (type == ncclProfilerNetEventStart) {
    auto* d = static_cast<const ncclProfilerNetIbDescr_v1_t*>(ext);
    bool ok = phandle == &g_prof_token && plugin_id == (NCCL_PROFILER_NET_TYPE_IB | 1) && d != nullptr &&
              d->type == ncclProfileQp && d->qp.qpNum > 0;
    if (!ok) ++g_prof_bad;
    ++g_prof_start;
    *eh = &g_prof_token;
  } else if (type == ncclProfilerNetEventStop) {
    if (eh == nullptr || *eh != &g_prof_token) ++g_prof_bad;
    ++g_prof_stop;
  }
  return ncclSuccess;
}

struct Net {
  LoadedPlugin plugin;
  const ncclNet_v11_t* t = nullptr;
  void* ctx = nullptr;

  bool open() {
    plugin = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_28_9);
    if (!plugin) {
      std::fprintf(stderr, "cannot load the plugin: %s\n", plugin.error.c_str());
      return false;
    }
    t = static_cast<const ncclNet_v11_t*>(plugin.table);
    ncclNetCommConfig_v11_t config{-1};
    if (t->init(&ctx, 0xabc, &config, CapturedLog::logger, count_events) != ncclSuccess) {
      std::fprintf(stderr, "init failed\n");
      return false;
    }
    return true;
  }
  int device(const char* name) {
    int n = 0;
    t->devices(&n);
    for (int d = 0; d < n; ++d) {
      ncclNetProperties_v11_t p{};
      if (t->getProperties(d, &p) == ncclSuccess && std::strcmp(p.name, name) == 0) {
        CHECK(p.ptrSupport == NCCL_PTR_HOST, "ptrSupport %d", p.ptrSupport);
        CHECK(p.regIsGlobal == 1 && p.maxRecvs == 8 && p.speed > 0, "properties of %s", name);
        return d;
      }
    }
    std::fprintf(stderr, "no device named %s among %d\n", name, n);
    return -1;
  }
};

// Polls until *req is non-null (isend/irecv may answer "call again").
template <class Post>
bool post_until(Post post, void** req, const char* what) {
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (*req == nullptr) {
    if (post() != ncclSuccess) {
      std::fprintf(stderr, "%s failed\n", what);
      return false;
    }
    if (*req == nullptr && Clock::now() > deadline) {
      std::fprintf(stderr, "%s: no request within 60 s\n", what);
      return false;
    }
  }
  return true;
}

bool wait_done(const ncclNet_v11_t* t, void* req, int* sizes, const char* what) {
  auto deadline = Clock::now() + std::chrono::seconds(90);
  int done = 0;
  while (!done) {
    if (t->test(req, &done, sizes) != ncclSuccess) {
      std::fprintf(stderr, "%s: test failed\n", what);
      return false;
    }
    if (!done && Clock::now() > deadline) {
      std::fprintf(stderr, "%s: not done within 90 s\n", what);
      return false;
    }
  }
  return true;
}

// The receive ends are no longer tested (rails --expect-unanswered): a receiver that stopped
// progressing, so a failover's MOVE is never answered.
bool g_receiver_deaf = false;

// isend of `size` bytes from `data` (tag 7) until it gives a request. While the send waits, receive
// `rreq` is tested, as NCCL's proxy tests its posted receives between tries of a send: a receive comm
// reads what its peer sends out of band (a failover's MOVE) there. *early: that receive completed.
bool isend_testing(Net& net, void* sc, void* data, size_t size, void* smr, void** sreq, void* rreq,
                   int* early) {
  return post_until(
      [&] {
        const ncclResult_t r = net.t->isend(sc, data, size, 7, smr, nullptr, sreq);
        int ignored = 0;
        if (r == ncclSuccess && *sreq == nullptr && *early == 0 && !g_receiver_deaf)
          return net.t->test(rreq, early, &ignored);
        return r;
      },
      sreq, "isend");
}

// One send of `size` bytes and the matching receive, both in this process; the send is posted
// `pause` after the receive.
void transfer_one(Net& net, void* sc, void* rc, std::vector<uint8_t>& sbuf, std::vector<uint8_t>& rbuf,
                  void* smr, void* rmr, size_t size, uint64_t seed,
                  std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  fill(sbuf, size, seed);
  std::memset(rbuf.data(), 0xee, std::min(rbuf.size(), size + 64));
  void* rreq = nullptr;
  void* data = rbuf.data();
  size_t rsize = kMaxSize;  // larger than what is sent: allowed
  int tag = 7;
  if (!post_until([&] { return net.t->irecv(rc, 1, &data, &rsize, &tag, &rmr, nullptr, &rreq); }, &rreq,
                  "irecv"))
    return ++g_failures, void();
  if (pause.count() > 0) std::this_thread::sleep_for(pause);
  void* sreq = nullptr;
  int early = 0;
  if (!isend_testing(net, sc, sbuf.data(), size, smr, &sreq, rreq, &early)) return ++g_failures, void();
  CHECK(early == 0, "the receive of %zu bytes completed before its send was posted", size);
  int ssize = -1, got = -1;
  if (g_receiver_deaf) {  // the send alone, its receive left untested: the stream ends when a send fails
    if (!wait_all(net.t, {{sreq, &ssize}}, "transfer")) ++g_failures;
    return;
  }
  if (!wait_all(net.t, {{sreq, &ssize}, {rreq, &got}}, "transfer")) return ++g_failures, void();
  CHECK(ssize == static_cast<int>(size), "send size %d != %zu", ssize, size);
  CHECK(got == static_cast<int>(size), "recv size %d != %zu", got, size);
  CHECK(std::memcmp(sbuf.data(), rbuf.data(), size) == 0, "payload of %zu bytes differs", size);
  CHECK(size + 1 > rbuf.size() || rbuf[size] == 0xee, "byte after a %zu-byte receive was overwritten", size);
}

// A connection's stream with its next receive posted before the current send completes, as NCCL's
// proxy posts the receives of the next steps: the receive comm is tested all the while, so it reads
// what its sender says out of band (a failover's MOVE) also when the current message arrived whole
// before its send completed (the sender's port failed before the acknowledgement came back).
// Slots b = 0, 1 of rbuf at `base` + b * stride alternate between the current receive and the next.
struct AheadStream {
  size_t base = 0;
  int cur = 0;
  void* next = nullptr;  // the receive posted ahead, into slot cur ^ 1 once cur is taken
};

bool post_recv(Net& net, void* rc, uint8_t* at, size_t size, void* rmr, void** rreq) {
  std::memset(at, 0xee, size + 64);
  void* data = at;
  size_t rsize = kMaxSize;
  int tag = 7;
  *rreq = nullptr;
  return post_until([&] { return net.t->irecv(rc, 1, &data, &rsize, &tag, &rmr, nullptr, rreq); }, rreq,
                    "irecv");
}

void transfer_ahead(Net& net, void* sc, void* rc, AheadStream& a, std::vector<uint8_t>& sbuf,
                    std::vector<uint8_t>& rbuf, void* smr, void* rmr, size_t size, size_t stride,
                    uint64_t seed) {
  fill(sbuf, size, seed);
  uint8_t* slot[2] = {rbuf.data() + a.base, rbuf.data() + a.base + stride};
  void* rreq = a.next;
  a.next = nullptr;
  if (rreq == nullptr && !post_recv(net, rc, slot[a.cur], size, rmr, &rreq)) return ++g_failures, void();
  if (!post_recv(net, rc, slot[a.cur ^ 1], size, rmr, &a.next)) return ++g_failures, void();
  void* sreq = nullptr;
  int early = 0;
  if (!isend_testing(net, sc, sbuf.data(), size, smr, &sreq, rreq, &early)) return ++g_failures, void();
  CHECK(early == 0, "the receive of %zu bytes completed before its send was posted", size);
  int ssize = -1, got = -1;
  if (!wait_all(net.t, {{sreq, &ssize}, {rreq, &got}}, "transfer", std::chrono::seconds(90), {a.next}))
    return ++g_failures, void();
  const uint8_t* r = slot[a.cur];
  a.cur ^= 1;
  CHECK(ssize == static_cast<int>(size) && got == static_cast<int>(size), "sent %d, received %d of %zu bytes",
        ssize, got, size);
  CHECK(std::memcmp(sbuf.data(), r, size) == 0, "payload of %zu bytes differs", size);
  CHECK(r[size] == 0xee, "byte after a %zu-byte receive was overwritten", size);
}

// The receive a stream posted ahead, taken by one last message (seed), so that the comms close idle.
void settle_ahead(Net& net, void* sc, AheadStream& a, std::vector<uint8_t>& sbuf, std::vector<uint8_t>& rbuf,
                  void* smr, size_t size, size_t stride, uint64_t seed) {
  if (a.next == nullptr) return;
  fill(sbuf, size, seed);
  void* sreq = nullptr;
  int early = 0, ssize = -1, got = -1;
  if (!isend_testing(net, sc, sbuf.data(), size, smr, &sreq, a.next, &early) ||
      !wait_all(net.t, {{sreq, &ssize}, {a.next, &got}}, "the last message"))
    return ++g_failures, void();
  a.next = nullptr;
  CHECK(got == static_cast<int>(size) &&
            std::memcmp(sbuf.data(), rbuf.data() + a.base + static_cast<size_t>(a.cur) * stride, size) == 0,
        "the last message: received %d of %zu bytes, or its payload differs", got, size);
}

// `batch` receives of `size` bytes posted at once (slices of rbuf, `stride` apart), then the sends of
// their first half (of sbuf), which complete before those of the second half are posted: as NCCL's
// proxy keeps several steps of a channel in flight, some receives are written and others not yet at any
// moment. Every byte checked.
void transfer_batch(Net& net, void* sc, void* rc, std::vector<uint8_t>& sbuf, std::vector<uint8_t>& rbuf,
                    void* smr, void* rmr, size_t size, size_t stride, int batch, uint64_t seed) {
  std::vector<uint8_t> expect(size);
  std::vector<void*> rreq(static_cast<size_t>(batch)), sreq(static_cast<size_t>(batch));
  std::vector<int> ssize(static_cast<size_t>(batch), -1), got(static_cast<size_t>(batch), -1);
  for (int i = 0; i < batch; ++i) {
    fill(expect, size, seed + static_cast<uint64_t>(i));
    std::memcpy(sbuf.data() + stride * static_cast<size_t>(i), expect.data(), size);
    std::memset(rbuf.data() + stride * static_cast<size_t>(i), 0xee, std::min(stride, size + 64));
  }
  for (int i = 0; i < batch; ++i) {
    void* data = rbuf.data() + stride * static_cast<size_t>(i);
    size_t rsize = stride;
    int tag = 7;
    if (!post_until([&] { return net.t->irecv(rc, 1, &data, &rsize, &tag, &rmr, nullptr, &rreq[i]); },
                    &rreq[i], "irecv"))
      return ++g_failures, void();
  }
  int early = 0;
  for (const auto& [from, to] : {std::pair{0, batch / 2}, std::pair{batch / 2, batch}}) {
    std::vector<std::pair<void*, int*>> half;
    for (int i = from; i < to; ++i) {
      // While a send waits, the last receive is tested.
      if (!isend_testing(net, sc, sbuf.data() + stride * static_cast<size_t>(i), size, smr, &sreq[i],
                         rreq[static_cast<size_t>(batch - 1)], &early))
        return ++g_failures, void();
      half.emplace_back(sreq[i], &ssize[i]);
      half.emplace_back(rreq[i], &got[i]);
    }
    if (!wait_all(net.t, half, "batch")) return ++g_failures, void();
  }
  CHECK(early == 0, "the last receive of a batch of %d completed before its send was posted", batch);
  for (int i = 0; i < batch; ++i) {
    const uint8_t* r = rbuf.data() + stride * static_cast<size_t>(i);
    fill(expect, size, seed + static_cast<uint64_t>(i));
    CHECK(ssize[i] == static_cast<int>(size) && got[i] == static_cast<int>(size),
          "batch message %d: sent %d, received %d of %zu bytes", i, ssize[i], got[i], size);
    CHECK(std::memcmp(expect.data(), r, size) == 0, "batch message %d: payload of %zu bytes differs", i,
          size);
    CHECK(size + 1 > stride || r[size] == 0xee, "batch message %d: byte after it overwritten", i);
  }
}

// A grouped receive of n buffers of `slice` bytes at rbuf (tags tag0+i), then, `pause` later, its sends of
// send_sizes[i] bytes from sbuf in reverse tag order. True when every request completed with its size and
// every buffer holds what was sent to it; else false and *why.
bool grouped_transfer(const ncclNet_v11_t* t, void* sc, void* rc, uint8_t* sbuf, uint8_t* rbuf, void* smr,
                      void* rmr, int n, size_t slice, int tag0, const size_t* send_sizes,
                      std::chrono::milliseconds pause, std::string* why) {
  void* data[8];
  size_t sizes[8];
  int tags[8];
  void* mhs[8];
  for (int i = 0; i < n; ++i) {
    data[i] = rbuf + i * slice;
    sizes[i] = slice;
    tags[i] = tag0 + i;
    mhs[i] = rmr;
  }
  std::memset(rbuf, 0, n * slice);
  void* rreq = nullptr;
  if (!post_until([&] { return t->irecv(rc, n, data, sizes, tags, mhs, nullptr, &rreq); }, &rreq,
                  "grouped irecv"))
    return *why = "grouped irecv", false;
  if (pause.count() > 0) std::this_thread::sleep_for(pause);
  void* sreq[8] = {};
  for (int i = n - 1; i >= 0; --i)
    if (!post_until(
            [&] { return t->isend(sc, sbuf + i * slice, send_sizes[i], tag0 + i, smr, nullptr, &sreq[i]); },
            &sreq[i], "grouped isend"))
      return *why = "grouped isend", false;
  int ssz[8] = {};
  int got[8] = {};
  std::vector<std::pair<void*, int*>> all{{rreq, got}};
  for (int i = 0; i < n; ++i) all.emplace_back(sreq[i], &ssz[i]);
  if (!wait_all(t, all, "grouped")) return *why = "a request did not complete", false;
  for (int i = 0; i < n; ++i) {
    if (ssz[i] != static_cast<int>(send_sizes[i]) || got[i] != static_cast<int>(send_sizes[i]))
      return *why = "n=" + std::to_string(n) + " buffer " + std::to_string(i) + ": sent " +
                    std::to_string(ssz[i]) + ", received " + std::to_string(got[i]) + " of " +
                    std::to_string(send_sizes[i]) + " bytes",
             false;
    if (std::memcmp(sbuf + i * slice, rbuf + i * slice, send_sizes[i]) != 0)
      return *why = "n=" + std::to_string(n) + " buffer " + std::to_string(i) + ": payload differs", false;
  }
  return true;
}

// Grouped receive of n buffers (tags 100+i), sends posted at once in reverse tag order.
void grouped(Net& net, void* sc, void* rc, std::vector<uint8_t>& sbuf, std::vector<uint8_t>& rbuf, void* smr,
             void* rmr, int n, uint64_t seed) {
  constexpr size_t kSlice = 256 << 10;
  size_t send_sizes[8];
  for (int i = 0; i < n; ++i) send_sizes[i] = (static_cast<size_t>(i) * 37777 + seed * 131) % kSlice;
  fill(sbuf, n * kSlice, seed);
  std::string why;
  CHECK(grouped_transfer(net.t, sc, rc, sbuf.data(), rbuf.data(), smr, rmr, n, kSlice, 100, send_sizes,
                         std::chrono::milliseconds(0), &why),
        "grouped: %s", why.c_str());
}

// Eight grouped receives in turn, each of eight large buffers (tags 200+i), its sends posted 300 ms later,
// when the clear-to-sends it wrote ahead, one per buffer, have landed: each send takes its own (the stats
// check of the caller: 64 "ahead" on both ends, no request-to-send). Sizes differ, all above the eager
// limit. 64 entries ahead go around the sender's 32 twice and fill the receiver's control window: the
// 64th control write needs one that was signalled, within a merged write, to have retired the first.
constexpr int kGroupedAheadRounds = 8;
bool grouped_ahead(const ncclNet_v11_t* t, void* sc, void* rc, std::vector<uint8_t>& sbuf,
                   std::vector<uint8_t>& rbuf, void* smr, void* rmr, std::string* why) {
  constexpr int n = 8;
  const size_t slice = std::max<size_t>(128 << 10, 2 * (eager_limit() + 1));
  size_t send_sizes[n];
  for (int i = 0; i < n; ++i)
    send_sizes[i] = eager_limit() + 1 + static_cast<size_t>(i) * 4099 % (slice - eager_limit() - 1);
  for (int round = 0; round < kGroupedAheadRounds; ++round)
    if (!grouped_transfer(t, sc, rc, sbuf.data(), rbuf.data(), smr, rmr, n, slice, 200, send_sizes,
                          std::chrono::milliseconds(300), why))
      return *why = "round " + std::to_string(round) + ": " + *why, false;
  return true;
}

// The lines of a RAILSCOPE_NET_STATS file (a comm writes its final one when it closes).
std::vector<std::string> stats_lines(const char* file) {
  std::vector<std::string> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Sends posted before their receives, as NCCL may: with the eager protocol every isend is taken at
// once (small ones carried whole, large ones asking first) and each lands in the receive posted later
// with its tag, in order, with tags interleaved and a grouped receive among them.
void sends_first(Net& net, void* sc, void* rc, std::vector<uint8_t>& sbuf, std::vector<uint8_t>& rbuf,
                 void* smr, void* rmr, uint64_t seed) {
  constexpr size_t kSlice = 128 << 10;
  const size_t eager = eager_limit();
  struct Msg {
    int tag;
    size_t size;
  };
  const std::vector<Msg> msgs = {{9, 0},  {9, 8},      {10, eager},  {9, eager + 1},
                                 {10, 3}, {9, 100000}, {10, 5000},   {9, eager},
                                 {11, 1}, {12, 2},     {11, kSlice}, {12, 777}};
  fill(sbuf, msgs.size() * kSlice, seed);
  std::memset(rbuf.data(), 0xee, msgs.size() * kSlice);
  std::vector<void*> sreq(msgs.size(), nullptr);
  for (size_t k = 0; k < msgs.size(); ++k) {
    CHECK(net.t->isend(sc, sbuf.data() + k * kSlice, msgs[k].size, msgs[k].tag, smr, nullptr, &sreq[k]) ==
              ncclSuccess,
          "early isend %zu", k);
    CHECK(sreq[k] != nullptr, "isend %zu (%zu bytes) before its receive was not taken", k, msgs[k].size);
    if (sreq[k] == nullptr) return;
  }
  // Receives: tag 9 and 10 singly (10 first), then {12, 11} and {11, 12} grouped. The first (tag 10,
  // the third message) is tested alone until done: its test() finds the two tag-9 messages before it
  // (and whatever else has arrived) with no receive posted, and holds them. Then all the others are
  // posted, each taking a held message (irecv does not poll the completion queue) or one still to come,
  // and every request is progressed until done.
  const std::vector<std::vector<size_t>> groups = {{2}, {0}, {1}, {4}, {3}, {5}, {6}, {7}, {9, 8}, {10, 11}};
  std::vector<void*> rreq(groups.size(), nullptr);
  std::vector<std::array<int, 8>> got(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g == 1 && !wait_all(net.t, {{rreq[0], got[0].data()}}, "sends first: the first receive"))
      return ++g_failures, void();
    void* data[8];
    size_t sizes[8];
    int tags[8];
    void* mhs[8];
    for (size_t i = 0; i < groups[g].size(); ++i) {
      data[i] = rbuf.data() + groups[g][i] * kSlice;
      sizes[i] = kSlice;
      tags[i] = msgs[groups[g][i]].tag;
      mhs[i] = rmr;
    }
    const int n = static_cast<int>(groups[g].size());
    if (!post_until([&] { return net.t->irecv(rc, n, data, sizes, tags, mhs, nullptr, &rreq[g]); }, &rreq[g],
                    "late irecv"))
      return ++g_failures, void();
  }
  std::vector<int> ssz(msgs.size(), -1);
  std::vector<std::pair<void*, int*>> all;
  for (size_t g = 1; g < groups.size(); ++g) all.emplace_back(rreq[g], got[g].data());
  for (size_t k = 0; k < msgs.size(); ++k) all.emplace_back(sreq[k], &ssz[k]);
  if (!wait_all(net.t, all, "sends first")) return ++g_failures, void();
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t i = 0; i < groups[g].size(); ++i) {
      const size_t k = groups[g][i];
      CHECK(got[g][i] == static_cast<int>(msgs[k].size), "late message %zu: %d bytes, %zu sent", k, got[g][i],
            msgs[k].size);
      CHECK(std::memcmp(sbuf.data() + k * kSlice, rbuf.data() + k * kSlice, msgs[k].size) == 0,
            "late message %zu (tag %d, %zu bytes) payload differs", k, msgs[k].tag, msgs[k].size);
    }
  for (size_t k = 0; k < msgs.size(); ++k)
    CHECK(ssz[k] == static_cast<int>(msgs[k].size), "early send %zu: size %d", k, ssz[k]);
}

bool connect_pair(Net& net, int dev_send, int dev_recv, void** sc, void** rc) {
  std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> handle{};
  void* lc = nullptr;
  if (net.t->listen(net.ctx, dev_recv, handle.data(), &lc) != ncclSuccess || lc == nullptr) return false;
  ncclNetDeviceHandle_v11_t* sdev = nullptr;
  ncclNetDeviceHandle_v11_t* rdev = nullptr;
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (*sc == nullptr || *rc == nullptr) {
    if (*sc == nullptr && net.t->connect(net.ctx, dev_send, handle.data(), sc, &sdev) != ncclSuccess)
      return false;
    if (*rc == nullptr && net.t->accept(lc, rc, &rdev) != ncclSuccess) return false;
    if (Clock::now() > deadline) return false;
  }
  CHECK(sdev == nullptr && rdev == nullptr, "device handles must stay untouched");
  net.t->closeListen(lc);
  return true;
}

void bad_handles(Net& net, int dev_send, int dev_recv) {
  std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> handle{};
  void* lc = nullptr;
  CHECK(net.t->listen(net.ctx, dev_recv, handle.data(), &lc) == ncclSuccess, "listen");
  auto truncated = handle;
  std::fill(truncated.begin() + 16, truncated.end(), std::byte{0});
  void* sc = nullptr;
  ncclNetDeviceHandle_v11_t* dh = nullptr;
  CapturedLog::clear();
  CHECK(net.t->connect(net.ctx, dev_send, truncated.data(), &sc, &dh) != ncclSuccess && sc == nullptr,
        "connect with a truncated handle must fail");
  CHECK(CapturedLog::contains("[peer.bad_handshake]"), "no peer.bad_handshake line for a truncated handle");
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100; ++i) {
    std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> random{};
    for (auto& b : random) b = static_cast<std::byte>(rng());
    CapturedLog::clear();
    CHECK(net.t->connect(net.ctx, dev_send, random.data(), &sc, &dh) != ncclSuccess && sc == nullptr,
          "connect with a random handle must fail");
    CHECK(CapturedLog::contains("[peer.bad_handshake]"), "no peer.bad_handshake line for a random handle");
  }
  net.t->closeListen(lc);
}

int loopback(bool expect_mtu_warning, const char* stats_file, bool vdevice) {
  Net net;
  if (!net.open()) return 1;
  // Init checked each port's active_mtu against its netdev (node::check_port_mtu, as doctor does): rxe1
  // sits on a 1500-byte netdev (active_mtu 1024), which is information (mtu.small), never a warning.
  for (const auto& l : CapturedLog::lines())
    CHECK(l.level != NCCL_LOG_WARN || l.text.find("[mtu.") == std::string::npos, "init warned: %s",
          l.text.c_str());
  CHECK(CapturedLog::contains("[mtu.small] rxe1:1: active_mtu 1024"), "no mtu.small line for rxe1 at init");
  int a = net.device("rxe0"), b = net.device("rxe1");
  if (a < 0 || b < 0) return 1;
  if (vdevice) {  // send through a virtual NIC fusing rxe0 and rxe1, striped over both
    ncclNetVDeviceProps_v11_t vp{};
    vp.ndevs = 2;
    vp.devs[0] = a;
    vp.devs[1] = b;
    int vd = -1, n = 0;
    CHECK(net.t->makeVDevice(&vd, &vp) == ncclSuccess, "makeVDevice");
    net.t->devices(&n);
    CHECK(vd == 2 && n == 3, "virtual device index %d, %d devices", vd, n);
    ncclNetProperties_v11_t p{};
    CHECK(net.t->getProperties(vd, &p) == ncclSuccess, "getProperties(vdev)");
    CHECK(std::strcmp(p.name, "rxe0+rxe1") == 0 && p.vProps.ndevs == 2, "vdev name %s ndevs %d", p.name,
          p.vProps.ndevs);
    a = vd;
  }
  CapturedLog::clear();
  void* sc = nullptr;
  void* rc = nullptr;
  const long pinned_before = pinned_kib();
  if (!connect_pair(net, a, b, &sc, &rc)) {
    std::fprintf(stderr, "connection rxe0 -> rxe1 failed\n");
    return 1;
  }
  if (const long want = comm_pin_kib(eager_limit() > 0, true) + comm_pin_kib(eager_limit() > 0, false);
      !vdevice && comm_pin_kib(eager_limit() > 0, true) >= 0)
    CHECK(pinned_kib() - pinned_before == want, "a connection pair pinned %ld KiB, %ld expected",
          pinned_kib() - pinned_before, want);
  if (expect_mtu_warning) {
    CHECK(CapturedLog::contains("[mtu.mismatch]"), "no mtu.mismatch warning");
    CHECK(CapturedLog::contains("MTU 9000") && CapturedLog::contains("MTU 1500"),
          "warning does not name both MTUs");
    CHECK(CapturedLog::contains("path MTU 1024"), "path MTU is not 1024");
    // The finding is about the pair of ports: a second connection between them repeats nothing.
    auto mismatch_lines = [] {
      int n = 0;
      for (const auto& l : CapturedLog::lines()) n += l.text.find("[mtu.mismatch]") != std::string::npos;
      return n;
    };
    const int first = mismatch_lines();
    void *sc2 = nullptr, *rc2 = nullptr;
    CHECK(connect_pair(net, a, b, &sc2, &rc2), "second connection rxe0 -> rxe1");
    CHECK(mismatch_lines() == first, "mtu.mismatch logged %d times after a second connection, %d before",
          mismatch_lines(), first);
    if (sc2 != nullptr) net.t->closeSend(sc2);
    if (rc2 != nullptr) net.t->closeRecv(rc2);
  } else {
    CHECK(!CapturedLog::contains("[mtu.mismatch]"), "unexpected mtu.mismatch warning");
  }
  const std::string protocol =
      eager_limit() > 0 ? "eager up to " + std::to_string(eager_limit()) + " B" : "receiver-driven";
  CHECK(CapturedLog::contains(protocol), "the connection log does not say \"%s\"", protocol.c_str());
  std::vector<uint8_t> sbuf(kMaxSize + 4096), rbuf(kMaxSize + 4096);
  void *smr = nullptr, *rmr = nullptr;
  CHECK(net.t->regMr(sc, sbuf.data(), sbuf.size(), NCCL_PTR_HOST, &smr) == ncclSuccess, "regMr send");
  CHECK(net.t->regMr(rc, rbuf.data(), rbuf.size(), NCCL_PTR_HOST, &rmr) == ncclSuccess, "regMr recv");
  // A registration inside a registered range is a cache hit (and must work for data too).
  void* sub = nullptr;
  CHECK(net.t->regMr(sc, sbuf.data() + 4096, 8192, NCCL_PTR_HOST, &sub) == ncclSuccess, "regMr sub-range");
  void* cuda = nullptr;
  CapturedLog::clear();
  CHECK(net.t->regMr(sc, sbuf.data(), 4096, NCCL_PTR_CUDA, &cuda) == ncclInvalidArgument && cuda == nullptr,
        "regMr of CUDA memory must be refused");
  CHECK(CapturedLog::contains("host memory only"), "CUDA refusal without a clear message");
  uint64_t seed = 1;
  for (size_t size : sweep_sizes()) transfer_one(net, sc, rc, sbuf, rbuf, smr, rmr, size, seed++);
  // Large sends posted well after their receives: the clear-to-send the receive wrote ahead has landed
  // (the sweep posts each send at once, when it may still be on its way: on a loaded host none was
  // there in time once), so these take the "ahead" path the stats check below counts.
  if (eager_limit() > 0)
    for (size_t size : {eager_limit() + 1, size_t{256} << 10, size_t{1} << 20})
      transfer_one(net, sc, rc, sbuf, rbuf, smr, rmr, size, seed++, std::chrono::milliseconds(300));
  for (int rep = 0; rep < 3; ++rep)  // more messages than the FIFO has slots
    for (int i = 0; i < 40; ++i)
      transfer_one(net, sc, rc, sbuf, rbuf, smr, rmr, static_cast<size_t>(i * 97), seed++);
  for (int n = 1; n <= 8; ++n) grouped(net, sc, rc, sbuf, rbuf, smr, rmr, n, seed++);
  // A window case (window(sc, rc, smr, rmr, &why)) on a fresh connection of its own: every ring credit,
  // slot and request free, so only the bound under test can refuse a post.
  auto on_fresh_connection = [&](const char* what, auto&& window) {
    void *wsc = nullptr, *wrc = nullptr, *wsmr = nullptr, *wrmr = nullptr;
    CHECK(connect_pair(net, a, b, &wsc, &wrc), "a connection for the case: %s", what);
    if (wsc != nullptr && wrc != nullptr) {
      CHECK(net.t->regMr(wsc, sbuf.data(), sbuf.size(), NCCL_PTR_HOST, &wsmr) == ncclSuccess, "regMr send");
      CHECK(net.t->regMr(wrc, rbuf.data(), rbuf.size(), NCCL_PTR_HOST, &wrmr) == ncclSuccess, "regMr recv");
      std::string why;
      CHECK(window(wsc, wrc, wsmr, wrmr, &why), "%s: %s", what, why.c_str());
      CHECK(net.t->deregMr(wsc, wsmr) == ncclSuccess && net.t->deregMr(wrc, wrmr) == ncclSuccess, "deregMr");
    }
    CHECK(wsc == nullptr || net.t->closeSend(wsc) == ncclSuccess, "closeSend (%s)", what);
    CHECK(wrc == nullptr || net.t->closeRecv(wrc) == ncclSuccess, "closeRecv (%s)", what);
  };
  if (eager_limit() > 0 && stats_file != nullptr) {
    // A grouped receive writes a clear-to-send ahead for each large buffer: on a connection of its own,
    // whose two stats lines (written as its comms close) count only this case, every send took one. A
    // receive's eight entries follow each other in the sender's region, and so do their staging slots at
    // the receiver: one RDMA write carries them (eager::ahead_adjoins), but for the receive whose entries
    // reach the 64th control write, where the staging slots wrap: 8 receives, 9 writes.
    const size_t before = stats_lines(stats_file).size();
    fill(sbuf, kMaxSize, seed++);
    on_fresh_connection("grouped receives written ahead",
                        [&](void* wsc, void* wrc, void* wsmr, void* wrmr, std::string* why) {
                          return grouped_ahead(net.t, wsc, wrc, sbuf, rbuf, wsmr, wrmr, why);
                        });
    const std::vector<std::string> lines = stats_lines(stats_file);
    int all_ahead = 0, merged = 0;
    for (size_t i = before; i < lines.size(); ++i) {
      if (lines[i].find("\"ahead\":64,") != std::string::npos &&
          lines[i].find("\"rts\":0,") != std::string::npos)
        ++all_ahead;
      if (lines[i].find("\"role\":\"recv\"") != std::string::npos &&
          lines[i].find("\"cts_writes\":9,") != std::string::npos)
        ++merged;
    }
    CHECK(lines.size() == before + 2 && all_ahead == 2,
          "grouped receives written ahead: %zu new stats lines, %d of them count 64 sends ahead and no "
          "request-to-send",
          lines.size() - before, all_ahead);
    CHECK(merged == 1,
          "grouped receives written ahead: the receiver's 64 entries did not take 9 RDMA writes "
          "(its stats line: cts_writes)");
    for (size_t i = before; i < lines.size() && (all_ahead != 2 || merged != 1); ++i)
      std::fprintf(stderr, "%s\n", lines[i].c_str());
  }
  if (eager_limit() > 0) {
    for (int rep = 0; rep < 8; ++rep)  // more ring messages than the ring has slots
      sends_first(net, sc, rc, sbuf, rbuf, smr, rmr, seed++);
    // More large messages than may be in flight (large_window.h).
    on_fresh_connection(
        "large sends beyond the window", [&](void* wsc, void* wrc, void* wsmr, void* wrmr, std::string* why) {
          const size_t slice = std::max<size_t>(64 << 10, eager_limit() + 1 + 512 * kLargeWindowMessages);
          fill(sbuf, kLargeWindowMessages * slice, seed++);
          return large_beyond_window(net.t, wsc, wrc, sbuf.data(), rbuf.data(), slice, wsmr, wrmr,
                                     eager_limit() + 1, why);
        });
  } else {
    // More receives than may be in flight (receive_window.h).
    on_fresh_connection(
        "receives beyond the window", [&](void* wsc, void* wrc, void* wsmr, void* wrmr, std::string* why) {
          constexpr size_t slice = 64 << 10;
          fill(sbuf, kReceiveWindowMessages * slice, seed++);
          return receives_beyond_window(net.t, wsc, wrc, sbuf.data(), rbuf.data(), slice, wsmr, wrmr, why);
        });
    // More sends than the sender's request pool holds (send_window.h).
    on_fresh_connection(
        "sends beyond the request pool", [&](void* wsc, void* wrc, void* wsmr, void* wrmr, std::string* why) {
          constexpr size_t slice = 8 << 10;
          fill(sbuf, kSendWindowMessages * slice, seed++);
          return sends_beyond_request_pool(net.t, wsc, wrc, sbuf.data(), rbuf.data(), slice, wsmr, wrmr, why);
        });
  }
  // Profiler events: one start/stop pair per send and per received buffer, only when NCCL gives phandles.
  {
    fill(sbuf, 1000, seed);
    void* rreq = nullptr;
    void* sreq = nullptr;
    void* data = rbuf.data();
    size_t rsize = 1000;
    int tag = 3;
    void* ph = &g_prof_token;
    int before = g_prof_start;
    int ports_before = g_prof_ports;
    if (post_until([&] { return net.t->irecv(rc, 1, &data, &rsize, &tag, &rmr, &ph, &rreq); }, &rreq,
                   "irecv") &&
        post_until([&] { return net.t->isend(sc, sbuf.data(), 1000, 3, smr, ph, &sreq); }, &sreq, "isend")) {
      int s1 = 0, s2 = 0;
      CHECK(wait_all(net.t, {{sreq, &s1}, {rreq, &s2}}, "profiled"), "profiled transfer");
    }
    CHECK(g_prof_start - before == 2 && g_prof_start == g_prof_stop && g_prof_bad == 0,
          "profiler events: %d starts (%d new), %d stops, %d bad", g_prof_start.load(), g_prof_start - before,
          g_prof_stop.load(), g_prof_bad.load());
    // Each end names its ports once, at its first profiled request: one lane per end, or the two lanes
    // of the virtual device's sender and the receiver's one.
    const int want_ports = vdevice ? 3 : 2;
    CHECK(g_prof_ports - ports_before == want_ports, "port announcements: %d new, expected %d",
          g_prof_ports - ports_before, want_ports);
  }
  std::printf("loopback transfers done (%d failures)\n", g_failures);
  CHECK(net.t->deregMr(sc, sub) == ncclSuccess, "deregMr sub");
  CHECK(net.t->deregMr(sc, smr) == ncclSuccess, "deregMr send");
  CHECK(net.t->deregMr(rc, rmr) == ncclSuccess, "deregMr recv");
  CHECK(net.t->closeSend(sc) == ncclSuccess, "closeSend");
  CHECK(net.t->closeRecv(rc) == ncclSuccess, "closeRecv");
  // The healthy twins of the listener's refusals and of the close: none of them is logged here (the
  // only warning this run provokes on purpose is the refused regMr of GPU memory above).
  for (const char* never : {"stray connection", "peer.connection_flood", "net.too_many_connects",
                            "not acknowledged by the receiver"})
    CHECK(!CapturedLog::contains(never), "a healthy run logged \"%s\"", never);
  bad_handles(net, a, b);
  CHECK(net.t->finalize(net.ctx) == ncclSuccess, "finalize");
  if (stats_file != nullptr) {
    std::ifstream in(stats_file);
    std::string line;
    int lines = 0, send_lines = 0, eager_lines = 0, timed_recv_lines = 0;
    while (std::getline(in, line)) {
      ++lines;
      // With RAILSCOPE_NET_STATS set, receives are timed (their latency histogram): a receive line has
      // counts beyond bucket 0 (0 us), which is all an untimed receive would fill.
      if (line.find("\"role\":\"recv\"") != std::string::npos) {
        const size_t at = line.find("\"counts\":[");
        if (at != std::string::npos) {
          const size_t first = line.find(',', at);  // after bucket 0
          const size_t end = line.find(']', at);
          if (first != std::string::npos && first < end &&
              line.substr(first + 1, end - first - 1).find_first_of("123456789") != std::string::npos)
            ++timed_recv_lines;
        }
      }
      if (line.find("\"role\":\"send\"") != std::string::npos &&
          line.find("\"bytes\":0,") == std::string::npos)
        ++send_lines;
      // Every path of the eager protocol counted on both ends when it is on (small messages whole,
      // large ones asking first when sent before their receive, or written into the clear-to-send
      // written ahead when sent after it); none otherwise.
      const bool counted = line.find("\"eager\":0,") == std::string::npos &&
                           line.find("\"rts\":0,") == std::string::npos &&
                           line.find("\"ahead\":0,") == std::string::npos;
      if (counted) ++eager_lines;
    }
    CHECK(lines >= 2 && send_lines >= 1, "stats file %s: %d lines, %d send lines with bytes", stats_file,
          lines, send_lines);
    CHECK(timed_recv_lines >= 1, "stats file %s: no receive line with a timed latency", stats_file);
    if (eager_limit() > 0)
      CHECK(eager_lines >= 2, "stats file %s: %d lines count eager, rts and ahead messages", stats_file,
            eager_lines);
    else
      CHECK(eager_lines == 0, "stats file %s: eager counts without the eager protocol", stats_file);
  }
  std::printf("loopback: %s\n", g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

// Streams 1 MiB messages for `seconds` from a virtual NIC fusing host A's two rails (rxe0, rxe2) to
// one fusing host B's (rxe1, rxe3), both ends in this process, every byte checked; prints the rate of
// each second (`rate t=<s> MB/s=<rate>`) and the whole run's. With NET_TRANSFER_SYNC_DIR set it touches
// `streaming` there after its first second, so that a script can act on a rail mid-transfer. A healthy
// run logs no warning. `ports_down` (rails_down.sh took rails down once streaming): the stream must end
// with an error within the QPs' retry budget (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT; at most 10 s expected)
// and a margin, and the error must name a port that is down (async.port_error), not blame the peer
// (progress.stalled). The failover cases stream over two connections, taking turns. `failover`
// (rails_down.sh took rail 1 down, 5 s into the stream): the stream goes on to its end, every byte
// checked, with one link.failover from each end of each connection, the senders' naming host A's port of
// that rail (rxe2) and the receivers' host B's (rxe3), one of each at WARN and the other at INFO, and
// the rate from 3 s after the pull on is at least 0.4x the rate before it. `recovery` (rails_down.sh
// with RAILS_DOWN_FOR: the rail is down that long, then back, `rail_up` touched in the sync folder): the
// same through the outage, then one link.recovered from each end of each connection, and one per port
// at WARN (a connection's or the port watcher's), and rail 1 carries the stream again (rxe2's sent packets
// grow after the recovery). `keep_out` (RAILSCOPE_NET_FAILOVER_LIMIT=2, rails_down.sh with
// RAILS_DOWN_CYCLES=2: rail 1 down, back, down and back again): the stream goes on to its end, every byte
// checked; two link.failover from each end of each connection (one per port and outage at WARN), each
// sender's second saying the port is kept out; one link.recovered from each end of each, after the first
// outage only. `unanswered`: once the rail is down the receive ends are no longer tested, so the
// receiver never answers the sender's MOVE: the send fails with progress.stalled naming the HELD it
// waited for, within the exchange's budget and a margin, no hang.
enum class RailsExpect { kHealthy, kPortsDown, kFailover, kRecovery, kKeepOut, kUnanswered };
namespace {
bool sync_exists(const char* name) {
  const char* dir = std::getenv("NET_TRANSFER_SYNC_DIR");
  return dir != nullptr && std::ifstream(std::string(dir) + "/" + name).good();
}
// The loss counters (node::CounterCategory::Loss: rxe's out-of-sequence, retry and RNR counters) of
// every port of the test bed's rails, summed.
uint64_t rails_loss_total() {
  const railscope::node::Sysfs sysfs("/sys");
  uint64_t total = 0;
  for (const char* dev : {"rxe0", "rxe1", "rxe2", "rxe3"})
    for (const auto& c : railscope::node::read_port_counters(sysfs, dev, 1).counters)
      if (c.category == railscope::node::CounterCategory::Loss) total += c.value;
  return total;
}
long rxe_sent_pkts(const char* dev) {
  std::ifstream f(std::string("/sys/class/infiniband/") + dev + "/ports/1/hw_counters/sent_pkts");
  long v = -1;
  f >> v;
  return v;
}
// A connection's own link.recovered (the port watcher says it of the port too, without "connection").
bool connection_recovered_lines(int* n) {
  *n = 0;
  for (const auto& l : CapturedLog::lines())
    if (l.text.find("[link.recovered]") != std::string::npos &&
        l.text.find("connection") != std::string::npos)
      ++*n;
  return *n > 0;
}
// link.recovered lines at WARN about `port`: the port watcher's ("[link.recovered] rxe2:1 after"), a
// sender's ("[link.recovered] port rxe2:1 of connection") and a receiver's ("(this end's port rxe3:1)");
// a connection's names both ends' ports in its description.
int recovered_warnings(const std::string& port) {
  int n = 0;
  for (const auto& l : CapturedLog::lines())
    if (l.level == NCCL_LOG_WARN && l.text.find("[link.recovered]") != std::string::npos &&
        (l.text.find("[link.recovered] " + port + " after") != std::string::npos ||
         l.text.find("[link.recovered] port " + port + " of") != std::string::npos ||
         l.text.find("this end's port " + port + ")") != std::string::npos))
      ++n;
  return n;
}
}  // namespace
int rails(int seconds, RailsExpect expect) {
  const bool ports_down = expect == RailsExpect::kPortsDown, recovery = expect == RailsExpect::kRecovery;
  const bool keep_out = expect == RailsExpect::kKeepOut, unanswered = expect == RailsExpect::kUnanswered;
  const bool failover = expect == RailsExpect::kFailover || recovery || keep_out;
  Net net;
  if (!net.open()) return 1;
  int a[2] = {net.device("rxe0"), net.device("rxe2")};
  int b[2] = {net.device("rxe1"), net.device("rxe3")};
  if (a[0] < 0 || a[1] < 0 || b[0] < 0 || b[1] < 0) return 1;
  auto fuse = [&](const int* devs, const char* name) {
    ncclNetVDeviceProps_v11_t vp{};
    vp.ndevs = 2;
    vp.devs[0] = devs[0];
    vp.devs[1] = devs[1];
    int vd = -1;
    CHECK(net.t->makeVDevice(&vd, &vp) == ncclSuccess, "makeVDevice %s", name);
    ncclNetProperties_v11_t p{};
    CHECK(vd >= 0 && net.t->getProperties(vd, &p) == ncclSuccess, "getProperties(%s)", name);
    CHECK(std::strcmp(p.name, name) == 0 && p.vProps.ndevs == 2, "virtual NIC %s, %d ports", p.name,
          p.vProps.ndevs);
    return vd;
  };
  const int va = fuse(a, "rxe0+rxe2"), vb = fuse(b, "rxe1+rxe3");
  CapturedLog::clear();
  // The failover cases stream over two connections, messages taking turns, as NCCL's channels share a
  // NIC: each connection moves its own traffic, and each port's outage is one warning per end.
  const size_t nconn = failover ? 2 : 1;
  void* sc[2] = {};
  void* rc[2] = {};
  for (size_t i = 0; i < nconn; ++i)
    if (!connect_pair(net, va, vb, &sc[i], &rc[i])) {
      std::fprintf(stderr, "connection rxe0+rxe2 -> rxe1+rxe3 failed\n");
      return 1;
    }
  constexpr size_t kMessage = 1 << 20;
  // NET_TRANSFER_BATCH=N: each turn of a connection posts N receives, then their N sends.
  const char* batch_env = std::getenv("NET_TRANSFER_BATCH");
  const int batch = batch_env != nullptr ? std::clamp(std::atoi(batch_env), 1, 8) : 1;
  constexpr size_t kStride = kMessage + 4096;
  // A batch's receives, or each connection's two slots (AheadStream).
  std::vector<uint8_t> sbuf(kStride * static_cast<size_t>(batch)),
      rbuf(kStride * std::max(static_cast<size_t>(batch), 2 * nconn));
  AheadStream ahead[2];
  for (size_t i = 0; i < nconn; ++i) ahead[i].base = 2 * i * kStride;
  void* smr[2] = {};
  void* rmr[2] = {};
  for (size_t i = 0; i < nconn; ++i) {
    CHECK(net.t->regMr(sc[i], sbuf.data(), sbuf.size(), NCCL_PTR_HOST, &smr[i]) == ncclSuccess, "regMr send");
    CHECK(net.t->regMr(rc[i], rbuf.data(), rbuf.size(), NCCL_PTR_HOST, &rmr[i]) == ncclSuccess, "regMr recv");
  }
  const auto close_all = [&] {
    if (g_failures == 0)
      for (size_t i = 0; i < nconn; ++i)
        settle_ahead(net, sc[i], ahead[i], sbuf, rbuf, smr[i], kMessage, kStride, 1000 + i);
    for (size_t i = 0; i < nconn; ++i) {
      CHECK(net.t->deregMr(sc[i], smr[i]) == ncclSuccess && net.t->deregMr(rc[i], rmr[i]) == ncclSuccess,
            "deregMr");
      CHECK(net.t->closeSend(sc[i]) == ncclSuccess, "closeSend");
      CHECK(net.t->closeRecv(rc[i]) == ncclSuccess, "closeRecv");
    }
  };
  const uint64_t loss_at_start = rails_loss_total();
  const auto start = Clock::now();
  auto window = start;
  size_t window_bytes = 0, total = 0;
  uint64_t seed = 1;
  size_t turn = 1;  // connection turn % nconn
  bool told = false;
  Clock::time_point told_at{};
  size_t before_bytes = 0, after_bytes = 0, back_bytes = 0;
  double before_s = 0, after_s = 0, back_s = 0;
  bool rail_up = false, recovered = false;
  long sent_at_recovery = -1;
  Clock::time_point recovered_at{};
  // The failover case pulls the rail after 5 s of healthy stream, its baseline.
  const auto tell_after = std::chrono::seconds(failover ? 5 : 1);
  while (g_failures == 0 && Clock::now() - start < std::chrono::seconds(seconds)) {
    const size_t k = turn++ % nconn;
    if (batch > 1) {
      transfer_batch(net, sc[k], rc[k], sbuf, rbuf, smr[k], rmr[k], kMessage, kStride, batch, seed);
      seed += static_cast<uint64_t>(batch);
    } else if (unanswered) {
      transfer_one(net, sc[k], rc[k], sbuf, rbuf, smr[k], rmr[k], kMessage, seed++);
    } else {
      transfer_ahead(net, sc[k], rc[k], ahead[k], sbuf, rbuf, smr[k], rmr[k], kMessage, kStride, seed++);
    }
    window_bytes += kMessage * static_cast<size_t>(batch);
    total += kMessage * static_cast<size_t>(batch);
    const auto now = Clock::now();
    if (now - window >= std::chrono::seconds(1)) {
      const double s = std::chrono::duration<double>(now - window).count();
      std::printf("rate t=%.1f MB/s=%.2f\n", std::chrono::duration<double>(now - start).count(),
                  static_cast<double>(window_bytes) / s / 1e6);
      std::fflush(stdout);
      if (recovery && told && !rail_up) rail_up = sync_exists("rail_up");
      if (recovery && rail_up && !recovered) {
        int n = 0;
        if (connection_recovered_lines(&n)) {
          recovered = true;
          recovered_at = now;
          sent_at_recovery = rxe_sent_pkts("rxe2");
          std::printf("rails: traffic back on rail 1 %.1f s into the stream\n",
                      std::chrono::duration<double>(now - start).count());
        }
      }
      if (!told) {
        before_bytes += window_bytes;
        before_s += s;
      } else if (recovered && now - recovered_at >= std::chrono::seconds(1)) {
        back_bytes += window_bytes;
        back_s += s;
      } else if (!rail_up && now - told_at >= std::chrono::seconds(3)) {
        after_bytes += window_bytes;
        after_s += s;
      }
      window = now;
      window_bytes = 0;
      if (!told && now - start >= tell_after) {
        sync_touch("streaming");
        told_at = now;
        told = true;
        g_receiver_deaf = unanswered;
      }
    }
  }
  const double all = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("rails: %zu messages of 1 MiB in %.1f s, %.2f MB/s (%d failures)\n", total / kMessage, all,
              static_cast<double>(total) / all / 1e6, g_failures);
  if (failover) {
    const double healthy = before_s > 0 ? static_cast<double>(before_bytes) / before_s / 1e6 : 0;
    const double moved = after_s > 0 ? static_cast<double>(after_bytes) / after_s / 1e6 : 0;
    std::printf("rails: healthy %.2f MB/s, after the failover %.2f MB/s (%.2fx)\n", healthy, moved,
                healthy > 0 ? moved / healthy : 0.0);
    CHECK(told && after_s >= 3, "the stream did not run long enough after the rail went down");
    if (recovery) CHECK(back_s >= 3, "the stream did not run long enough after the recovery");
    // keep_out's windows mix the outages and the time between them: its rate is not judged.
    if (!keep_out)
      CHECK(moved >= 0.4 * healthy, "after the failover %.2f MB/s, below 0.4x the healthy %.2f MB/s", moved,
            healthy);
    // One from each connection's end per outage: the senders' name host A's port of rail 1, the
    // receivers' host B's. Per port and outage the first at WARN, the other connection's at INFO.
    int sender = 0, receiver = 0, others = 0, sender_warn = 0, receiver_warn = 0;
    for (const auto& l : CapturedLog::lines())
      if (l.text.find("[link.failover]") != std::string::npos) {
        std::printf("finding: %s%s\n", l.level == NCCL_LOG_WARN ? "" : "(INFO) ", l.text.c_str());
        const bool warn = l.level == NCCL_LOG_WARN;
        // When it happened, as the reader compares it with other logs ("at 01:02:03.456 UTC").
        CHECK(l.text.find(" UTC") != std::string::npos, "link.failover does not say when: %s",
              l.text.c_str());
        if (l.text.find("port rxe2:1 of connection") != std::string::npos) {
          ++sender;
          sender_warn += warn ? 1 : 0;
        } else if (l.text.find("(this end's port rxe3:1)") != std::string::npos) {
          ++receiver;
          receiver_warn += warn ? 1 : 0;
        } else {
          ++others;
        }
      }
    const int outages = keep_out ? 2 : 1, want = outages * static_cast<int>(nconn);
    CHECK(sender == want && receiver == want && others == 0,
          "link.failover: %d from the senders naming rxe2:1, %d from the receivers naming rxe3:1, %d other; "
          "%d, %d and 0 expected",
          sender, receiver, others, want, want);
    CHECK(sender_warn == outages && receiver_warn == outages,
          "link.failover at WARN: %d naming rxe2:1, %d naming rxe3:1; %d each expected (one per outage)",
          sender_warn, receiver_warn, outages);
    for (const auto& l : CapturedLog::lines())
      if (l.text.find("the receiver holds what arrived") != std::string::npos)
        std::printf("rails: %s\n", l.text.c_str());
    int back = 0;
    connection_recovered_lines(&back);
    // One link.recovered at WARN per port and outage, the port watcher's or a connection's, whichever
    // came first; the others at INFO.
    const int warn_a = recovered_warnings("rxe2:1"), warn_b = recovered_warnings("rxe3:1");
    if (keep_out) {
      for (const auto& l : CapturedLog::lines())
        if (l.text.find("[link.recovered]") != std::string::npos)
          std::printf("finding: %s%s\n", l.level == NCCL_LOG_WARN ? "" : "(INFO) ", l.text.c_str());
      int kept = 0;
      for (const auto& l : CapturedLog::lines())
        if (l.text.find("[link.failover] port rxe2:1") != std::string::npos &&
            l.text.find("kept out until the connection closes") != std::string::npos)
          ++kept;
      CHECK(kept == static_cast<int>(nconn),
            "%d link.failover saying rxe2:1 is kept out, %zu expected (each connection's second)", kept,
            nconn);
      // The second outage's recovery is the watcher's alone, once the port receives again: it may not
      // before the stream ends, the connections keeping their traffic off it.
      CHECK(back == 2 * static_cast<int>(nconn) && warn_a >= 1 && warn_a <= 2 && warn_b >= 1 && warn_b <= 2,
            "%d link.recovered of the connections, %zu expected (the first outage's); at WARN %d naming "
            "rxe2:1 and %d rxe3:1, 1 or 2 each expected (one per outage)",
            back, 2 * nconn, warn_a, warn_b);
    } else if (recovery) {
      for (const auto& l : CapturedLog::lines())
        if (l.text.find("[link.recovered]") != std::string::npos)
          std::printf("finding: %s%s\n", l.level == NCCL_LOG_WARN ? "" : "(INFO) ", l.text.c_str());
      const double again = back_s > 0 ? static_cast<double>(back_bytes) / back_s / 1e6 : 0;
      const long sent_after = rxe_sent_pkts("rxe2") - sent_at_recovery;
      std::printf("rails: after the recovery %.2f MB/s (%.2fx healthy); rxe2 sent %ld packets since\n", again,
                  healthy > 0 ? again / healthy : 0.0, sent_after);
      CHECK(rail_up, "the rail never came back (rail_up)");
      CHECK(recovered && back == 2 * static_cast<int>(nconn) && warn_a == 1 && warn_b == 1,
            "%d link.recovered of the connections, %zu expected (one from each end of each); at WARN %d "
            "naming rxe2:1 and %d rxe3:1, 1 each expected (the port watcher's or a connection's)",
            back, 2 * nconn, warn_a, warn_b);
      CHECK(sent_at_recovery >= 0 && sent_after >= 1000,
            "rxe2 sent %ld packets after the recovery: the stream did not return to rail 1", sent_after);
    } else {
      CHECK(back == 0, "%d link.recovered of the connections while the rail stayed down", back);
    }
    for (const auto& l : CapturedLog::lines())
      CHECK(l.text.find("[progress.stalled]") == std::string::npos &&
                l.text.find("[peer.bad_handshake]") == std::string::npos,
            "the failover logged an error: %s", l.text.c_str());
    // The port watcher's own lines about the port agree: its connections move, none fails.
    for (const auto& l : CapturedLog::lines()) {
      if (l.level != NCCL_LOG_WARN) continue;
      CHECK(l.text.find("[async.port_error]") == std::string::npos,
            "a port whose connections all moved their traffic logged an error: %s", l.text.c_str());
      CHECK(l.text.find("[link.down]") == std::string::npos ||
                l.text.find("move their traffic to their virtual NIC's other ports") != std::string::npos,
            "link.down does not say that the connections move: %s", l.text.c_str());
    }
    close_all();
    CHECK(net.t->finalize(net.ctx) == ncclSuccess, "finalize");
    return g_failures == 0 ? 0 : 1;
  }
  if (unanswered) {
    const double after = std::chrono::duration<double>(Clock::now() - told_at).count();
    std::printf("rails: the stream ended %.1f s after the rail was taken down\n", after);
    g_failures = 0;
    // The exchange's budget: the retry budget (2 s here) to drain, and 10 s for the receiver's answer.
    CHECK(told && after < 25.0, "the error came %.1f s after the rail went down", after);
    bool named = false;
    for (const auto& l : CapturedLog::lines())
      if (l.text.find("[progress.stalled]") != std::string::npos) {
        std::printf("error: %s\n", l.text.c_str());
        named = named || l.text.find("the receiver's HELD has not come") != std::string::npos;
      }
    CHECK(CapturedLog::contains("[link.failover] port rxe2:1") && named,
          "no link.failover of rxe2:1 followed by progress.stalled naming the HELD the sender waited for");
    (void)net.t->closeSend(sc[0]);
    (void)net.t->closeRecv(rc[0]);
    CHECK(net.t->finalize(net.ctx) == ncclSuccess, "finalize");
    return g_failures == 0 ? 0 : 1;
  }
  if (ports_down) {
    const double after = std::chrono::duration<double>(Clock::now() - told_at).count();
    std::printf("rails: the stream ended %.1f s after the rails were taken down\n", after);
    const bool failed = g_failures > 0;
    g_failures = 0;
    CHECK(told && failed, "the stream went on with every rail down");
    CHECK(after < 25.0, "the error came %.1f s after the rails went down", after);
    CHECK(CapturedLog::contains("[async.port_error]") && !CapturedLog::contains("[progress.stalled]"),
          "the error does not name the port that is down");
    for (const auto& l : CapturedLog::lines())
      if (l.text.find("[async.port_error]") != std::string::npos) std::printf("error: %s\n", l.text.c_str());
    (void)net.t->closeSend(sc[0]);
    (void)net.t->closeRecv(rc[0]);
    CHECK(net.t->finalize(net.ctx) == ncclSuccess, "finalize");
    return g_failures == 0 ? 0 : 1;
  }
  // Every warning fails the healthy stream but fabric.rail_skew when the rails' loss counters rose:
  // the emulated links drop a packet now and then on the guest's busy CPUs, and the port waits out a
  // retransmission timeout: for seconds that port is slower than its sibling, and the finding is true
  // of what the port did. Without a loss it is a mismeasured rate, and fails the stream. Rail skew's
  // silence on healthy rails is netfabric.rail_skew's healthy twin too (a connection per rail).
  const uint64_t loss = rails_loss_total() - loss_at_start;
  std::printf("rails: loss counters of the rails' ports rose by %llu\n",
              static_cast<unsigned long long>(loss));
  for (const auto& l : CapturedLog::lines()) {
    if (l.level == NCCL_LOG_WARN && l.text.find("[fabric.rail_skew]") != std::string::npos && loss > 0) {
      std::printf("rails: a rail slowed by loss: %s\n", l.text.c_str());
      continue;
    }
    CHECK(l.level != NCCL_LOG_WARN, "a healthy stream logged: %s", l.text.c_str());
  }
  close_all();
  CHECK(net.t->finalize(net.ctx) == ncclSuccess, "finalize");
  return g_failures == 0 ? 0 : 1;
}

int server(const std::string& handle_file, bool loop) {
  Net net;
  if (!net.open()) return 1;
  int dev = net.device("rxe1");
  if (dev < 0) return 1;
  std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> handle{};
  void* lc = nullptr;
  if (net.t->listen(net.ctx, dev, handle.data(), &lc) != ncclSuccess) return 1;
  {
    std::string tmp = handle_file + ".tmp";
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(handle.data()), handle.size());
    out.close();
    std::rename(tmp.c_str(), handle_file.c_str());
  }
  void* rc = nullptr;
  ncclNetDeviceHandle_v11_t* dh = nullptr;
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (rc == nullptr) {
    if (net.t->accept(lc, &rc, &dh) != ncclSuccess || Clock::now() > deadline) {
      std::fprintf(stderr, "accept failed\n");
      return 1;
    }
  }
  std::vector<uint8_t> rbuf(kMaxSize + 4096), expect(kMaxSize + 4096);
  void* rmr = nullptr;
  CHECK(net.t->regMr(rc, rbuf.data(), rbuf.size(), NCCL_PTR_HOST, &rmr) == ncclSuccess, "regMr");
  uint64_t seed = 1;
  for (int round = 0; round == 0 || loop; ++round)
    for (size_t size : sweep_sizes()) {
      void* req = nullptr;
      void* data = rbuf.data();
      size_t rsize = kMaxSize;
      int tag = 1;
      std::memset(rbuf.data(), 0xee, size + 1);
      if (!post_until([&] { return net.t->irecv(rc, 1, &data, &rsize, &tag, &rmr, nullptr, &req); }, &req,
                      "irecv"))
        return 1;
      int got = -1;
      if (!wait_done(net.t, req, &got, "recv")) return 1;
      fill(expect, size, seed++);
      CHECK(got == static_cast<int>(size), "recv size %d != %zu", got, size);
      CHECK(std::memcmp(expect.data(), rbuf.data(), size) == 0, "payload of %zu bytes differs", size);
    }
  // The client's last messages are small (eager: done once posted) and it closes right after them.
  for (int k = 0; k < kTailMessages; ++k) {
    void* req = nullptr;
    void* data = rbuf.data();
    size_t rsize = kMaxSize;
    int tag = 2;
    if (!post_until([&] { return net.t->irecv(rc, 1, &data, &rsize, &tag, &rmr, nullptr, &req); }, &req,
                    "tail irecv"))
      return 1;
    int got = -1;
    if (!wait_done(net.t, req, &got, "tail recv")) return 1;
    CHECK(got == 100 && rbuf[0] == static_cast<uint8_t>(k) && rbuf[99] == static_cast<uint8_t>(k),
          "tail message %d: %d bytes, first byte %d", k, got, rbuf[0]);
  }
  sync_touch("received");
  CHECK(sync_wait("link_down"), "no link_down from the script");
  net.t->deregMr(rc, rmr);
  net.t->closeRecv(rc);
  net.t->closeListen(lc);
  net.t->finalize(net.ctx);
  std::printf("server: %s\n", g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

int client(const std::string& handle_file, bool loop) {
  Net net;
  if (!net.open()) return 1;
  int dev = net.device("rxe0");
  if (dev < 0) return 1;
  std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> handle{};
  auto deadline = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    std::ifstream in(handle_file, std::ios::binary);
    if (in.read(reinterpret_cast<char*>(handle.data()), handle.size())) break;
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "no handle file %s\n", handle_file.c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  void* sc = nullptr;
  ncclNetDeviceHandle_v11_t* dh = nullptr;
  const long pinned_before = pinned_kib();
  while (sc == nullptr) {
    if (net.t->connect(net.ctx, dev, handle.data(), &sc, &dh) != ncclSuccess || Clock::now() > deadline) {
      std::fprintf(stderr, "connect failed\n");
      return 1;
    }
  }
  // This end offered eager; the receiver chose (two_process_mixed: it refused, and this end then
  // registered its FIFO in place of the mailbox).
  const bool eager = !CapturedLog::contains("receiver-driven");
  if (const long want = comm_pin_kib(eager, true); want >= 0)
    CHECK(pinned_kib() - pinned_before == want, "the %s send comm pinned %ld KiB, %ld expected",
          eager ? "eager" : "receiver-driven", pinned_kib() - pinned_before, want);
  std::vector<uint8_t> sbuf(kMaxSize + 4096);
  void* smr = nullptr;
  CHECK(net.t->regMr(sc, sbuf.data(), sbuf.size(), NCCL_PTR_HOST, &smr) == ncclSuccess, "regMr");
  uint64_t seed = 1;
  for (int round = 0; round == 0 || loop; ++round)
    for (size_t size : sweep_sizes()) {
      fill(sbuf, size, seed++);
      void* req = nullptr;
      if (!post_until([&] { return net.t->isend(sc, sbuf.data(), size, 1, smr, nullptr, &req); }, &req,
                      "isend"))
        return 1;
      int s = -1;
      if (!wait_done(net.t, req, &s, "send")) return 1;
      CHECK(s == static_cast<int>(size), "send size %d", s);
    }
  for (int k = 0; k < kTailMessages; ++k) {  // then close at once: the plugin must still deliver them
    std::memset(sbuf.data(), k, 100);
    void* req = nullptr;
    if (!post_until([&] { return net.t->isend(sc, sbuf.data(), 100, 2, smr, nullptr, &req); }, &req,
                    "tail isend"))
      return 1;
    int s = -1;
    if (!wait_done(net.t, req, &s, "tail send")) return 1;
  }
  CHECK(sync_wait("go"), "no go from the script");
  net.t->deregMr(sc, smr);
  net.t->closeSend(sc);
  // The receiver took every message: closing says nothing (it said so before it went).
  CHECK(
      !CapturedLog::contains("not acknowledged by the receiver") && !CapturedLog::contains("without taking"),
      "a healthy close warned of eager messages");
  net.t->finalize(net.ctx);
  std::printf("client: %s\n", g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s loopback [--expect-mtu-warning] [--check-stats FILE] | server FILE | client FILE "
                 "| rails SECONDS\n",
                 argv[0]);
    return 2;
  }
  CapturedLog::set_echo(std::getenv("NET_TRANSFER_ECHO") != nullptr);
  std::string mode = argv[1];
  if (mode == "loopback") {
    bool mtu = false, vdev = false;
    const char* stats = nullptr;
    for (int i = 2; i < argc; ++i) {
      if (std::strcmp(argv[i], "--expect-mtu-warning") == 0) mtu = true;
      if (std::strcmp(argv[i], "--vdevice") == 0) vdev = true;
      if (std::strcmp(argv[i], "--check-stats") == 0 && i + 1 < argc) stats = argv[++i];
    }
    return loopback(mtu, stats, vdev);
  }
  if (mode == "rails" && argc >= 3)
    return rails(std::atoi(argv[2]),
                 argc < 4                                           ? RailsExpect::kHealthy
                 : std::strcmp(argv[3], "--expect-ports-down") == 0 ? RailsExpect::kPortsDown
                 : std::strcmp(argv[3], "--expect-failover") == 0   ? RailsExpect::kFailover
                 : std::strcmp(argv[3], "--expect-recovery") == 0   ? RailsExpect::kRecovery
                 : std::strcmp(argv[3], "--expect-keep-out") == 0   ? RailsExpect::kKeepOut
                 : std::strcmp(argv[3], "--expect-unanswered") == 0 ? RailsExpect::kUnanswered
                                                                    : RailsExpect::kHealthy);
  bool loop = argc == 4 && std::strcmp(argv[3], "--loop") == 0;  // repeat the sweep until failure
  if (mode == "server" && argc >= 3) return server(argv[2], loop);
  if (mode == "client" && argc >= 3) return client(argv[2], loop);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
