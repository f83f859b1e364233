// SPDX-License-Identifier: Apache-2.0
// The net plugin's profiler events through its ABI (ncclNet_v11, NCCL's profiler callback faked):
//  1. a healthy send and receive each start one QP event (NCCL's IB descriptor) naming device 0 and a
//     real QP number, and stop it;
//  2. a send larger than its receive fails the connection: the receive's QP event is stopped and one
//     railscope NetPlugin event (pluginId 0x5253 << 16 | 1, docs/profiler.md) starts under the same
//     parent naming the same QP, then UpdateAndStop carries a non-zero status and the diagnosis id;
//  3. each connection names its port once, before its first QP event (RailscopeNetPort_v1): the
//     device, port 1, a line rate, and host staging with its reason (the test bed has no GPU memory).
// Exit status 0 = every check passed.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "abi/plugin_loader.h"
#include "check.h"
#include "progress.h"
#include "railscope/nccl/net.h"

using namespace railscope::abi_test;
using Clock = std::chrono::steady_clock;

namespace {

using railscope::nccl::kNetRailscopePluginId;
using RsQp = railscope::nccl::RailscopeNetQp_v1;
using RsCompletion = railscope::nccl::RailscopeNetCompletion_v1;
using RsPort = railscope::nccl::RailscopeNetPort_v1;
constexpr int64_t kIbId = NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER;

struct Event {
  int64_t plugin_id = 0;
  void* parent = nullptr;
  int device = -1, qp = -1;
  bool stopped = false;
  int status = 0;
  std::string diag;
};

std::mutex g_mutex;
std::vector<Event> g_events;  // handle = index + 1
struct PortSeen {
  void* parent = nullptr;
  std::string device, reason;
  int port = 0, speed_mbps = 0, host_staged = 0;
};
std::vector<PortSeen> g_ports;  // kRailscopeNetPort starts: the whole event, no handle
int g_parents[4] = {};

ncclResult_t profiler(void** eh, int type, void* phandle, int64_t plugin_id, void* ext) {
  std::lock_guard lock(g_mutex);
  if (type == ncclProfilerNetEventStart && plugin_id == kNetRailscopePluginId &&
      *static_cast<const uint8_t*>(ext) == railscope::nccl::kRailscopeNetPort) {
    const auto* d = static_cast<const RsPort*>(ext);
    g_ports.push_back({phandle, std::string(d->device, strnlen(d->device, sizeof d->device)),
                       d->reason != nullptr ? d->reason : "", d->port, d->speedMbps, d->hostStaged});
    *eh = nullptr;
    return ncclSuccess;
  }
  if (type == ncclProfilerNetEventStart) {
    Event e;
    e.plugin_id = plugin_id;
    e.parent = phandle;
    if (plugin_id == kIbId) {
      const auto* d = static_cast<const ncclProfilerNetIbDescr_v1_t*>(ext);
      e.device = d->qp.device;
      e.qp = d->qp.qpNum;
    } else if (plugin_id == kNetRailscopePluginId) {
      const auto* d = static_cast<const RsQp*>(ext);
      e.device = d->device;
      e.qp = d->qpNum;
    }
    g_events.push_back(e);
    *eh = reinterpret_cast<void*>(g_events.size());
    return ncclSuccess;
  }
  const auto i = reinterpret_cast<size_t>(*eh);
  if (i == 0 || i > g_events.size()) return ncclSuccess;
  Event& e = g_events[i - 1];
  if (type == ncclProfilerNetEventUpdate || type == ncclProfilerNetEventUpdateAndStop) {
    if (e.plugin_id == kNetRailscopePluginId && ext != nullptr) {
      const auto* c = static_cast<const RsCompletion*>(ext);
      e.status = c->status;
      e.diag = c->diag_id != nullptr ? c->diag_id : "";
    }
  }
  if (type == ncclProfilerNetEventStop || type == ncclProfilerNetEventUpdateAndStop) e.stopped = true;
  return ncclSuccess;
}

template <class Post>
bool post_until(Post post, void** req) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (*req == nullptr) {
    if (post() != ncclSuccess || Clock::now() > deadline) return false;
  }
  return true;
}

}  // namespace

int main() {
  LoadedPlugin plugin = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_28_9);
  if (!plugin) {
    std::fprintf(stderr, "cannot load the plugin: %s\n", plugin.error.c_str());
    return 1;
  }
  const auto* t = static_cast<const ncclNet_v11_t*>(plugin.table);
  void* ctx = nullptr;
  ncclNetCommConfig_v11_t config{-1};
  if (t->init(&ctx, 0xabc, &config, CapturedLog::logger, profiler) != ncclSuccess) return 1;
  int n = 0, a = -1, b = -1;
  t->devices(&n);
  for (int d = 0; d < n; ++d) {
    ncclNetProperties_v11_t p{};
    if (t->getProperties(d, &p) != ncclSuccess) continue;
    if (std::strcmp(p.name, "rxe0") == 0) a = d;
    if (std::strcmp(p.name, "rxe1") == 0) b = d;
  }
  if (a < 0 || b < 0) return 1;
  std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> handle{};
  void* lc = nullptr;
  void* sc = nullptr;
  void* rc = nullptr;
  ncclNetDeviceHandle_v11_t* dh = nullptr;
  if (t->listen(ctx, b, handle.data(), &lc) != ncclSuccess) return 1;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while ((sc == nullptr || rc == nullptr) && Clock::now() < deadline) {
    if (sc == nullptr && t->connect(ctx, a, handle.data(), &sc, &dh) != ncclSuccess) return 1;
    if (rc == nullptr && t->accept(lc, &rc, &dh) != ncclSuccess) return 1;
  }
  if (sc == nullptr || rc == nullptr) return 1;
  std::vector<char> sbuf(8192, 's'), rbuf(8192, 'r');
  void* smr = nullptr;
  void* rmr = nullptr;
  CHECK(t->regMr(sc, sbuf.data(), sbuf.size(), NCCL_PTR_HOST, &smr) == ncclSuccess, "regMr send");
  CHECK(t->regMr(rc, rbuf.data(), rbuf.size(), NCCL_PTR_HOST, &rmr) == ncclSuccess, "regMr recv");

  // 1. A healthy exchange.
  {
    void* sreq = nullptr;
    void* rreq = nullptr;
    void* data = rbuf.data();
    size_t size = 1000;
    int tag = 3;
    void* ph = &g_parents[0];
    void* sph = &g_parents[1];
    CHECK(post_until([&] { return t->irecv(rc, 1, &data, &size, &tag, &rmr, &ph, &rreq); }, &rreq), "irecv");
    CHECK(post_until([&] { return t->isend(sc, sbuf.data(), 1000, 3, smr, sph, &sreq); }, &sreq), "isend");
    int s1 = 0, s2 = 0;
    CHECK(wait_all(t, {{sreq, &s1}, {rreq, &s2}}, "healthy"), "healthy transfer");
    std::lock_guard lock(g_mutex);
    CHECK(g_events.size() == 2, "%zu events for one send and one receive", g_events.size());
    for (const Event& e : g_events)
      CHECK(e.plugin_id == kIbId && e.device == 0 && e.qp > 0 && e.stopped && e.status == 0,
            "healthy event: id %#llx device %d qp %d stopped %d", static_cast<long long>(e.plugin_id),
            e.device, e.qp, e.stopped);
    CHECK(g_ports.size() == 2, "%zu port announcements for one send and one receive connection",
          g_ports.size());
    for (const PortSeen& p : g_ports) {
      std::printf("port %s:%d %d Mb/s host_staged %d reason %s\n", p.device.c_str(), p.port, p.speed_mbps,
                  p.host_staged, p.reason.c_str());
      CHECK(p.device.rfind("rxe", 0) == 0 && p.port == 1 && p.speed_mbps > 0,
            "port announcement %s:%d at %d Mb/s", p.device.c_str(), p.port, p.speed_mbps);
      CHECK(p.host_staged == 1 && p.reason.rfind("gdr.", 0) == 0, "host staging %d, reason '%s'",
            p.host_staged, p.reason.c_str());
      CHECK(p.parent == &g_parents[0] || p.parent == &g_parents[1], "port announced under parent %p",
            p.parent);
    }
  }

  // 2. 3000 bytes sent to a 1000-byte receive: the connection fails, the profiler hears why.
  {
    std::unique_lock lock(g_mutex);
    g_events.clear();
    g_ports.clear();
    lock.unlock();
    void* sreq = nullptr;
    void* rreq = nullptr;
    void* data = rbuf.data();
    size_t size = 1000;
    int tag = 4;
    void* ph = &g_parents[2];
    void* sph = &g_parents[3];
    CHECK(post_until([&] { return t->irecv(rc, 1, &data, &size, &tag, &rmr, &ph, &rreq); }, &rreq), "irecv");
    CHECK(post_until([&] { return t->isend(sc, sbuf.data(), 3000, 4, smr, sph, &sreq); }, &sreq), "isend");
    bool recv_failed = false;
    int done = 0, sizes = 0;
    const auto limit = Clock::now() + std::chrono::seconds(30);
    while (!recv_failed && Clock::now() < limit) {
      t->test(sreq, &done, &sizes);  // the sender may finish or fail: either way it progresses
      if (t->test(rreq, &done, &sizes) != ncclSuccess) recv_failed = true;
      CHECK(!done, "the 1000-byte receive of 3000 bytes reported done");
      if (done) break;
    }
    CHECK(recv_failed, "the receive of a message larger than its buffer did not fail");
    lock.lock();
    CHECK(g_ports.empty(), "%zu ports announced again by connections that had announced them",
          g_ports.size());
    const Event* ib = nullptr;
    const Event* rs = nullptr;
    for (const Event& e : g_events) {
      if (e.parent != &g_parents[2]) continue;
      if (e.plugin_id == kIbId) ib = &e;
      if (e.plugin_id == kNetRailscopePluginId) rs = &e;
    }
    CHECK(ib != nullptr && ib->stopped, "the failed receive's QP event was not stopped");
    CHECK(rs != nullptr, "no railscope NetPlugin event carried the receive's error");
    if (ib != nullptr && rs != nullptr) {
      CHECK(rs->stopped && rs->status != 0, "error event: stopped %d status %d", rs->stopped, rs->status);
      CHECK(rs->diag == "internal.bad_argument", "error event names '%s'", rs->diag.c_str());
      CHECK(rs->device == ib->device && rs->qp == ib->qp && rs->qp > 0,
            "error event QP %d/%d, receive QP %d/%d", rs->device, rs->qp, ib->device, ib->qp);
    }
    for (const Event& e : g_events)
      std::printf("event id %#llx parent %p device %d qp %d stopped %d status %d diag %s\n",
                  static_cast<long long>(e.plugin_id), e.parent, e.device, e.qp, e.stopped, e.status,
                  e.diag.c_str());
  }
  t->deregMr(sc, smr);
  t->deregMr(rc, rmr);
  t->closeSend(sc);
  t->closeRecv(rc);
  t->closeListen(lc);
  t->finalize(ctx);
  std::printf("net_profiler: %s\n", g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}
