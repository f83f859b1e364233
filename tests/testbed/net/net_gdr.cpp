// SPDX-License-Identifier: Apache-2.0
// Test-bed program: the net plugin's GPUDirect integration on soft-RoCE, through the ABI (loaded by
// the harness as NCCL would). The guest has no GPU, no peer-memory client and rxe is not a PCI
// device, so every GPU path must be refused with its diagnosis while host memory keeps working.
//   net_gdr props LEVEL        getProperties = HOST only; the decision line names NCCL_NET_GDR_LEVEL=LEVEL
//                              and every refusal (gdr.nic_virtual, gdr.no_peermem, gdr.dmabuf_unsupported)
//                              is logged once
//   net_gdr reg                regMr(NCCL_PTR_CUDA) refused (gdr.nic_virtual); regMrDmaBuf on a real
//                              dma-buf (/dev/udmabuf) or a memfd fails with gdr.dmabuf_unsupported;
//                              regMrDmaBuf(fd -1) registers host memory; transfers still work after
//   net_gdr flush yes|no       iflush after each receive: a request (completed by the loopback RDMA
//                              read) only when "yes" (RAILSCOPE_NET_FLUSH=force), NULL otherwise
// Exit status 0 = every check passed; failures are printed to stderr.
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "abi/plugin_loader.h"
#include "check.h"
#include "progress.h"
#include "railscope/nccl/net.h"

using namespace railscope::abi_test;
using Clock = std::chrono::steady_clock;

namespace {

size_t count_lines(const std::string& needle) {
  size_t n = 0;
  for (const auto& l : CapturedLog::lines())
    if (l.text.find(needle) != std::string::npos) ++n;
  return n;
}

void dump_log() {
  for (const auto& l : CapturedLog::lines())
    std::fprintf(stderr, "  log[%d] %s\n", static_cast<int>(l.level), l.text.c_str());
}

struct Net {
  LoadedPlugin plugin;
  const ncclNet_v11_t* t = nullptr;
  void* ctx = nullptr;
  int dev0 = -1, dev1 = -1;
  void *sc = nullptr, *rc = nullptr;

  bool open() {
    plugin = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_28_9);
    if (!plugin) return std::fprintf(stderr, "cannot load the plugin: %s\n", plugin.error.c_str()), false;
    t = static_cast<const ncclNet_v11_t*>(plugin.table);
    ncclNetCommConfig_v11_t config{-1};
    if (t->init(&ctx, 0xabc, &config, CapturedLog::logger, nullptr) != ncclSuccess)
      return std::fprintf(stderr, "init failed\n"), false;
    int n = 0;
    t->devices(&n);
    for (int d = 0; d < n; ++d) {
      ncclNetProperties_v11_t p{};
      if (t->getProperties(d, &p) != ncclSuccess) continue;
      if (std::strcmp(p.name, "rxe0") == 0) dev0 = d;
      if (std::strcmp(p.name, "rxe1") == 0) dev1 = d;
    }
    if (dev0 < 0 || dev1 < 0) return std::fprintf(stderr, "rxe0/rxe1 not found among %d devices\n", n), false;
    return true;
  }
  bool connect() {
    std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> handle{};
    void* lc = nullptr;
    if (t->listen(ctx, dev1, handle.data(), &lc) != ncclSuccess) return false;
    ncclNetDeviceHandle_v11_t *sdev = nullptr, *rdev = nullptr;
    auto deadline = Clock::now() + std::chrono::seconds(60);
    while (sc == nullptr || rc == nullptr) {
      if (sc == nullptr && t->connect(ctx, dev0, handle.data(), &sc, &sdev) != ncclSuccess) return false;
      if (rc == nullptr && t->accept(lc, &rc, &rdev) != ncclSuccess) return false;
      if (Clock::now() > deadline) return false;
    }
    t->closeListen(lc);
    return true;
  }
  bool wait(void* req, int* sizes) {
    auto deadline = Clock::now() + std::chrono::seconds(60);
    for (int done = 0; !done;) {
      if (t->test(req, &done, sizes) != ncclSuccess) return false;
      if (!done && Clock::now() > deadline) return false;
    }
    return true;
  }
  // One message of `size` bytes from sbuf to rbuf, checked byte for byte.
  bool transfer(std::vector<uint8_t>& sbuf, std::vector<uint8_t>& rbuf, void* smr, void* rmr, size_t size,
                int seed) {
    for (size_t i = 0; i < size; ++i) sbuf[i] = static_cast<uint8_t>(i * 7 + static_cast<size_t>(seed));
    std::memset(rbuf.data(), 0, size);
    void *rreq = nullptr, *sreq = nullptr;
    void* data = rbuf.data();
    size_t rsize = rbuf.size();
    int tag = 1;
    for (auto end = Clock::now() + std::chrono::seconds(60); rreq == nullptr && Clock::now() < end;)
      if (t->irecv(rc, 1, &data, &rsize, &tag, &rmr, nullptr, &rreq) != ncclSuccess) return false;
    for (auto end = Clock::now() + std::chrono::seconds(60); sreq == nullptr && Clock::now() < end;)
      if (t->isend(sc, sbuf.data(), size, 1, smr, nullptr, &sreq) != ncclSuccess) return false;
    int ssz = -1, rsz = -1;
    if (rreq == nullptr || sreq == nullptr ||
        !wait_all(t, {{sreq, &ssz}, {rreq, &rsz}}, "transfer", std::chrono::seconds(60)))
      return false;
    return rsz == static_cast<int>(size) && std::memcmp(sbuf.data(), rbuf.data(), size) == 0;
  }
  void close() {
    if (sc != nullptr) t->closeSend(sc);
    if (rc != nullptr) t->closeRecv(rc);
    if (t != nullptr && t->finalize != nullptr) t->finalize(ctx);
  }
};

int props(const std::string& level) {
  Net net;
  if (!net.open()) return 1;
  for (int dev : {net.dev0, net.dev1}) {
    for (int i = 0; i < 3; ++i) {  // repeated calls log nothing new
      ncclNetProperties_v11_t p{};
      CHECK(net.t->getProperties(dev, &p) == ncclSuccess, "getProperties(%d)", dev);
      CHECK(p.ptrSupport == NCCL_PTR_HOST, "%s: ptrSupport %#x, HOST only expected", p.name, p.ptrSupport);
      CHECK(p.forceFlush == 0, "%s: forceFlush %d", p.name, p.forceFlush);
    }
  }
  for (const char* nic : {"rxe0", "rxe1"}) {
    std::string line =
        std::string("GPUDirect ") + nic + ": ptrSupport=HOST (NCCL_NET_GDR_LEVEL=" + level + " set,";
    CHECK(count_lines(line) == 1, "decision line '%s' logged %zu times, once expected", line.c_str(),
          count_lines(line));
    std::string virt = std::string("[gdr.nic_virtual] ") + nic + " is not a PCI device";
    CHECK(count_lines(virt) == 1, "'%s' logged %zu times", virt.c_str(), count_lines(virt));
    std::string peer = std::string("[gdr.no_peermem] no peer-memory client for ") + nic;
    CHECK(count_lines(peer) == 1, "'%s' logged %zu times", peer.c_str(), count_lines(peer));
    std::string dmabuf = std::string("[gdr.dmabuf_unsupported] NCCL_PTR_DMABUF not offered on ") + nic;
    CHECK(count_lines(dmabuf) == 1, "'%s' logged %zu times", dmabuf.c_str(), count_lines(dmabuf));
  }
  CHECK(count_lines("not offered because: gdr.nic_virtual, gdr.no_peermem, gdr.dmabuf_unsupported") == 2,
        "the decision lines do not list the refusals");
  if (g_failures) dump_log();
  net.close();
  return g_failures == 0 ? 0 : 1;
}

// A dma-buf fd: /dev/udmabuf over a sealed memfd when the kernel offers it, else the memfd itself.
int make_dmabuf(size_t size, bool* real) {
  *real = false;
  int memfd = memfd_create("railscope-gdr", MFD_ALLOW_SEALING);
  if (memfd < 0 || ftruncate(memfd, static_cast<off_t>(size)) != 0) return -1;
  int dev = ::open("/dev/udmabuf", O_RDWR);
  if (dev < 0) return memfd;
  fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK);
  udmabuf_create c{};
  c.memfd = static_cast<__u32>(memfd);
  c.size = size;
  int buf = ioctl(dev, UDMABUF_CREATE, &c);
  ::close(dev);
  if (buf < 0) return memfd;
  ::close(memfd);
  *real = true;
  return buf;
}

int reg() {
  Net net;
  if (!net.open() || !net.connect()) return std::fprintf(stderr, "setup failed\n"), 1;
  constexpr size_t kSize = 1 << 20;
  std::vector<uint8_t> sbuf(kSize), rbuf(kSize);
  // NCCL_PTR_CUDA: refused before any ibv_reg_mr, with the port's reason.
  for (void* comm : {net.sc, net.rc}) {
    CapturedLog::clear();
    void* mh = nullptr;
    CHECK(net.t->regMr(comm, rbuf.data(), 4096, NCCL_PTR_CUDA, &mh) != ncclSuccess && mh == nullptr,
          "regMr(NCCL_PTR_CUDA) must be refused on rxe");
    CHECK(count_lines("[gdr.nic_virtual] regMr of 4096 bytes of GPU memory (NCCL_PTR_CUDA) refused on rxe") ==
              1,
          "no gdr.nic_virtual refusal line for regMr(NCCL_PTR_CUDA)");
    CHECK(count_lines("(ptrSupport=HOST, host memory only): rxe") == 1,
          "the refusal does not give ptrSupport");
    if (g_failures) dump_log();
  }
  // regMrDmaBuf with a real fd: ibv_reg_dmabuf_mr is called; rxe has no dma-buf MRs.
  bool real = false;
  int fd = make_dmabuf(kSize, &real);
  CHECK(fd >= 0, "no memfd");
  std::printf("regMrDmaBuf with a %s fd\n", real ? "udmabuf dma-buf" : "memfd (no /dev/udmabuf)");
  CapturedLog::clear();
  void* mh = nullptr;
  ncclResult_t r = net.t->regMrDmaBuf(net.rc, rbuf.data(), kSize, NCCL_PTR_CUDA, 0, fd, &mh);
  CHECK(r != ncclSuccess && mh == nullptr, "regMrDmaBuf on rxe unexpectedly succeeded");
  CHECK(count_lines("[gdr.dmabuf_unsupported] regMrDmaBuf (fd ") == 1,
        "no gdr.dmabuf_unsupported line for regMrDmaBuf");
  CHECK(count_lines("failed with Operation not supported") == 1, "the line does not give the errno");
  CHECK(count_lines("does not offer NCCL_PTR_DMABUF (gdr.nic_virtual)") == 1,
        "the line does not name the port's reason");
  if (mh != nullptr) net.t->deregMr(net.rc, mh);
  if (g_failures) dump_log();
  ::close(fd);
  // The plugin stays usable: host memory, through regMr and through regMrDmaBuf(fd -1).
  void *smr = nullptr, *rmr = nullptr;
  CHECK(net.t->regMr(net.sc, sbuf.data(), kSize, NCCL_PTR_HOST, &smr) == ncclSuccess, "regMr host (send)");
  CHECK(net.t->regMrDmaBuf(net.rc, rbuf.data(), kSize, NCCL_PTR_HOST, 0, -1, &rmr) == ncclSuccess,
        "regMrDmaBuf(fd -1) of host memory");
  if (smr != nullptr && rmr != nullptr)
    for (size_t size : {size_t{1}, size_t{4097}, kSize})
      CHECK(net.transfer(sbuf, rbuf, smr, rmr, size, 3), "transfer of %zu bytes", size);
  if (smr != nullptr) net.t->deregMr(net.sc, smr);
  if (rmr != nullptr) net.t->deregMr(net.rc, rmr);
  net.close();
  return g_failures == 0 ? 0 : 1;
}

int flush(bool expect) {
  Net net;
  if (!net.open() || !net.connect()) return std::fprintf(stderr, "setup failed\n"), 1;
  constexpr size_t kSize = 256 << 10;
  std::vector<uint8_t> sbuf(kSize), rbuf(kSize);
  void *smr = nullptr, *rmr = nullptr;
  if (net.t->regMr(net.sc, sbuf.data(), kSize, NCCL_PTR_HOST, &smr) != ncclSuccess ||
      net.t->regMr(net.rc, rbuf.data(), kSize, NCCL_PTR_HOST, &rmr) != ncclSuccess)
    return std::fprintf(stderr, "regMr failed\n"), 1;
  int flushed = 0;
  for (int i = 0; i < 150 && g_failures == 0; ++i) {  // > 64: flush slots are reused
    size_t size = 1 + static_cast<size_t>(i) * 1699 % kSize;
    CHECK(net.transfer(sbuf, rbuf, smr, rmr, size, i), "transfer %d of %zu bytes", i, size);
    // As NCCL calls it: the received sizes; a grouped receive whose first buffer got nothing.
    void* data[2] = {rbuf.data(), rbuf.data()};
    int sizes[2] = {i % 2 == 0 ? static_cast<int>(size) : 0, static_cast<int>(size)};
    void* mhs[2] = {rmr, rmr};
    void* req = nullptr;
    CHECK(net.t->iflush(net.rc, 2, data, sizes, mhs, &req) == ncclSuccess, "iflush %d", i);
    CHECK((req != nullptr) == expect, "iflush %d returned %s request", i, req ? "a" : "no");
    if (req != nullptr) {
      CHECK(net.wait(req, nullptr), "flush %d did not complete", i);
      ++flushed;
    }
    // Nothing received: nothing to flush, whatever the mode.
    int none[1] = {0};
    void* nreq = nullptr;
    CHECK(net.t->iflush(net.rc, 1, data, none, mhs, &nreq) == ncclSuccess && nreq == nullptr,
          "iflush of an empty receive must return no request");
  }
  std::printf("%d flush reads completed\n", flushed);
  CHECK((count_lines("flush loopback QP(s) ready on") == 1) == expect, "flush QP log line");
  if (g_failures) dump_log();
  net.t->deregMr(net.sc, smr);
  net.t->deregMr(net.rc, rmr);
  net.close();
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "props" && argc == 3) return props(argv[2]);
  if (mode == "reg") return reg();
  if (mode == "flush" && argc == 3) return flush(std::string(argv[2]) == "yes");
  std::fprintf(stderr, "usage: net_gdr props LEVEL | reg | flush yes|no\n");
  return 2;
}
