// SPDX-License-Identifier: Apache-2.0
// Test-bed program: a virtual NIC of more than four ports through net v12, as NCCL 2.30 drives it
// (dlopen, ncclNetPlugin_v12, makeVDevice). With `--rails R` the guest has R rails of two rxe ports
// (rxe2i on "host" A, rxe2i+1 on B): the sending virtual NIC fuses all 2R ports, A's first, the
// receiving one the same ports with B's first, so lane i of each end is on the same rail. Every
// message size up to 4 MiB is sent and checked byte for byte, and every port must have sent packets
// (its hw_counters/sent_pkts grew): the messages were striped over all 2R ports.
//   net_vnic               (the rail count from $TESTBED_RAILS)
// Exit status 0 = every check passed; failures are printed to stderr.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "abi/plugin_loader.h"
#include "check.h"
#include "railscope/nccl/net.h"

using namespace railscope::abi_test;
using Clock = std::chrono::steady_clock;

namespace {

uint64_t sent_packets(const std::string& dev) {
  std::ifstream in("/sys/class/infiniband/" + dev + "/ports/1/hw_counters/sent_pkts");
  uint64_t v = 0;
  in >> v;
  return v;
}

template <class Post>
bool post_until(Post post, void** req, const char* what) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (*req == nullptr) {
    if (post() != ncclSuccess || Clock::now() > deadline) {
      std::fprintf(stderr, "%s failed or no request within 60 s\n", what);
      return false;
    }
  }
  return true;
}

// Tests both requests in turn until both are done (one thread holds both ends).
bool wait_both(const ncclNet_v12_t* t, void* a, int* a_size, void* b, int* b_size) {
  const auto deadline = Clock::now() + std::chrono::seconds(90);
  int done_a = 0, done_b = 0;
  while (!done_a || !done_b) {
    if ((!done_a && t->test(a, &done_a, a_size) != ncclSuccess) ||
        (!done_b && t->test(b, &done_b, b_size) != ncclSuccess)) {
      std::fprintf(stderr, "test failed\n");
      return false;
    }
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "not done within 90 s\n");
      return false;
    }
  }
  return true;
}

int run(int rails) {
  LoadedPlugin plugin = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_30);
  if (!plugin || plugin.symbol != "ncclNetPlugin_v12") {
    std::fprintf(stderr, "cannot load ncclNetPlugin_v12: %s\n", plugin.error.c_str());
    return 1;
  }
  const auto* t = static_cast<const ncclNet_v12_t*>(plugin.table);
  void* ctx = nullptr;
  ncclNetCommConfig_v12_t config{-1};
  if (t->init(&ctx, 0xabc, &config, CapturedLog::logger, nullptr) != ncclSuccess) {
    std::fprintf(stderr, "init failed\n");
    return 1;
  }
  int n = 0;
  t->devices(&n);
  std::vector<int> side_a, side_b;
  std::vector<std::string> names;
  for (int r = 0; r < rails; ++r)
    for (int s = 0; s < 2; ++s) {
      const std::string want = "rxe" + std::to_string(2 * r + s);
      int found = -1;
      for (int d = 0; d < n; ++d) {
        ncclNetProperties_v12_t p{};
        if (t->getProperties(d, &p) == ncclSuccess && want == p.name) found = d;
      }
      if (found < 0) {
        std::fprintf(stderr, "no device %s among %d\n", want.c_str(), n);
        return 1;
      }
      (s == 0 ? side_a : side_b).push_back(found);
      names.push_back(want);
    }
  const int ports = 2 * rails;
  auto make = [&](const std::vector<int>& first, const std::vector<int>& then, const char* which) {
    ncclNetVDeviceProps_v12_t vp{};
    vp.ndevs = ports;
    int i = 0;
    for (int d : first) vp.devs[i++] = d;
    for (int d : then) vp.devs[i++] = d;
    int vd = -1;
    CHECK(t->makeVDevice(&vd, &vp) == ncclSuccess, "makeVDevice of %d ports (%s)", ports, which);
    ncclNetProperties_v12_t p{};
    CHECK(t->getProperties(vd, &p) == ncclSuccess && p.vProps.ndevs == ports, "vdev %s: %d ports", which,
          p.vProps.ndevs);
    std::printf("virtual NIC %s: %s\n", which, p.name);
    return vd;
  };
  const int vsend = make(side_a, side_b, "send");
  const int vrecv = make(side_b, side_a, "recv");
  {  // one port more than NCCL's v12 array holds is refused, and nothing crashes
    ncclNetVDeviceProps_v12_t vp{};
    vp.ndevs = NCCL_NET_MAX_DEVS_PER_NIC_V12 + 1;
    int vd = -1;
    CHECK(t->makeVDevice(&vd, &vp) != ncclSuccess, "a virtual NIC of %d ports was accepted", vp.ndevs);
  }
  if (g_failures > 0) return 1;

  CapturedLog::clear();
  std::vector<char> handle(NCCL_NET_HANDLE_MAXSIZE);
  void *lc = nullptr, *sc = nullptr, *rc = nullptr;
  ncclNetDeviceHandle_v12_t *sdev = nullptr, *rdev = nullptr;
  if (t->listen(ctx, vrecv, handle.data(), &lc) != ncclSuccess) return std::fprintf(stderr, "listen\n"), 1;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (sc == nullptr || rc == nullptr) {
    if ((sc == nullptr && t->connect(ctx, vsend, handle.data(), &sc, &sdev) != ncclSuccess) ||
        (rc == nullptr && t->accept(lc, &rc, &rdev) != ncclSuccess) || Clock::now() > deadline) {
      std::fprintf(stderr, "connection of the two %d-port virtual NICs failed\n", ports);
      return 1;
    }
  }
  t->closeListen(lc);
  const std::string qps = "with " + std::to_string(ports) + " QP(s)";
  CHECK(CapturedLog::contains(qps), "the connection log does not say \"%s\"", qps.c_str());
  if (ports > 4)  // eager holds 4 rkeys per clear-to-send: more ports go receiver-driven
    CHECK(CapturedLog::contains("receiver-driven"), "a %d-port connection did not go receiver-driven", ports);

  std::vector<uint64_t> before;
  for (const auto& d : names) before.push_back(sent_packets(d));
  constexpr size_t kMax = (4u << 20) + 3;
  std::vector<uint8_t> sbuf(kMax), rbuf(kMax + 64);
  void *smr = nullptr, *rmr = nullptr;
  CHECK(t->regMr(sc, sbuf.data(), sbuf.size(), NCCL_PTR_HOST, &smr) == ncclSuccess, "regMr send");
  CHECK(t->regMr(rc, rbuf.data(), rbuf.size(), NCCL_PTR_HOST, &rmr) == ncclSuccess, "regMr recv");
  uint64_t seed = 1;
  for (size_t size : {size_t{1}, size_t{4096}, size_t{65536}, size_t{1} << 20, kMax, kMax, kMax}) {
    for (size_t i = 0; i < size; ++i) sbuf[i] = static_cast<uint8_t>((i * 131 + seed * 7) >> 3);
    ++seed;
    std::memset(rbuf.data(), 0xee, size + 64);
    void *rreq = nullptr, *sreq = nullptr;
    void* data = rbuf.data();
    size_t rsize = kMax;
    int tag = 3;
    if (!post_until([&] { return t->irecv(rc, 1, &data, &rsize, &tag, &rmr, nullptr, &rreq); }, &rreq,
                    "irecv") ||
        !post_until([&] { return t->isend(sc, sbuf.data(), size, 3, smr, nullptr, &sreq); }, &sreq, "isend"))
      return 1;
    int ssize = -1, got = -1;
    if (!wait_both(t, sreq, &ssize, rreq, &got)) return 1;
    CHECK(ssize == static_cast<int>(size) && got == static_cast<int>(size), "sizes %d / %d for %zu", ssize,
          got, size);
    CHECK(std::memcmp(sbuf.data(), rbuf.data(), size) == 0, "payload of %zu bytes differs", size);
    CHECK(rbuf[size] == 0xee, "byte after a %zu-byte receive was overwritten", size);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const uint64_t sent = sent_packets(names[i]) - before[i];
    std::printf("%s sent %llu packets\n", names[i].c_str(), static_cast<unsigned long long>(sent));
    CHECK(sent > 0, "%s sent nothing: the messages were not striped over every port", names[i].c_str());
  }
  t->deregMr(sc, smr);
  t->deregMr(rc, rmr);
  t->closeSend(sc);
  t->closeRecv(rc);
  for (const auto& l : CapturedLog::lines())
    CHECK(l.level != NCCL_LOG_WARN, "warning in a healthy run: %s", l.text.c_str());
  t->finalize(ctx);
  std::printf("net_vnic %d ports: %s\n", ports, g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main() {
  const char* rails = std::getenv("TESTBED_RAILS");
  if (rails == nullptr || std::atoi(rails) < 1) {
    std::fprintf(stderr, "run in the test bed with --rails N\n");
    return 2;
  }
  return run(std::atoi(rails));
}
