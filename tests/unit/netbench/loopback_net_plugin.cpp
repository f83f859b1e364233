// SPDX-License-Identifier: Apache-2.0
// A deliberately simple net plugin over loopback TCP, exporting ncclNetPlugin_v12, used to test
// `railscope netbench` end to end on machines without RDMA. It follows the ABI's contracts that
// netbench must cope with: connect and accept return a NULL comm on their first calls, isend
// answers "not now" (*request == NULL) every third call, grouped receives match by tag, and test()
// reports sizes. Messages travel as {size, tag} + bytes. Test-only: blocking I/O, no pools.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>

#include "railscope/nccl/net.h"

namespace {

constexpr uint32_t kMagic = 0x4c4f4f50;  // "LOOP"

struct Handle {
  uint32_t magic;
  uint16_t port;
};

struct ListenComm {
  int fd;
  int accept_calls;
};
struct Request;
struct Comm {
  int fd;
  int connect_calls;
  int isend_calls;
  std::deque<Request*> pending;  // receive requests, oldest first
  bool corrupt;                  // LOOPBACK_NET_CORRUPT=1: flip a byte of every received message
};
struct Request {
  Comm* comm;
  bool is_send;
  int n;
  void* data[8];
  size_t sizes[8];
  int tags[8];
  int got[8];
  int received;
};
struct Frame {
  uint64_t size;
  int32_t tag;
  int32_t pad;
};

ncclDebugLogger_t g_log = nullptr;

bool io_all(int fd, void* buf, size_t n, bool write) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = write ? ::send(fd, p, n, MSG_NOSIGNAL) : ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

ncclResult_t lb_init(void** ctx, uint64_t, ncclNetCommConfig_v12_t*, ncclDebugLogger_t log,
                     ncclProfilerCallback_t) {
  g_log = log;
  *ctx = &g_log;
  return ncclSuccess;
}
ncclResult_t lb_devices(int* n) {
  *n = 1;
  return ncclSuccess;
}
ncclResult_t lb_props(int dev, ncclNetProperties_v12_t* p) {
  if (dev != 0) return ncclInvalidArgument;
  std::memset(p, 0, sizeof *p);
  static char name[] = "lo";
  p->name = name;
  p->ptrSupport = NCCL_PTR_HOST;
  p->speed = 10000;
  p->maxComms = 1024;
  p->maxRecvs = 8;
  p->vProps.ndevs = 1;
  p->maxP2pBytes = 1ULL << 31;
  p->maxCollBytes = 1ULL << 31;
  p->maxMultiRequestSize = 1;
  p->railId = p->planeId = NCCL_NET_ID_UNDEF;
  return ncclSuccess;
}
ncclResult_t lb_listen(void*, int, void* handle, void** lc) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return ncclSystemError;
  Handle h{kMagic, ntohs(a.sin_port)};
  std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
  std::memcpy(handle, &h, sizeof h);
  *lc = new ListenComm{fd, 0};
  return ncclSuccess;
}
Comm* new_comm(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const char* c = std::getenv("LOOPBACK_NET_CORRUPT");
  return new Comm{fd, 0, 0, {}, c != nullptr && c[0] == '1'};
}
ncclResult_t lb_connect(void*, int, void* handle, void** sc, ncclNetDeviceHandle_v12_t**) {
  static thread_local int calls = 0;
  *sc = nullptr;
  if (++calls % 2 == 1) return ncclSuccess;  // "still connecting": NCCL calls again
  Handle h;
  std::memcpy(&h, handle, sizeof h);
  if (h.magic != kMagic) {
    if (g_log) g_log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, "loopback: bad handle");
    return ncclInvalidArgument;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(h.port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return ncclSystemError;
  *sc = new_comm(fd);
  return ncclSuccess;
}
ncclResult_t lb_accept(void* lcp, void** rc, ncclNetDeviceHandle_v12_t**) {
  auto* lc = static_cast<ListenComm*>(lcp);
  *rc = nullptr;
  if (++lc->accept_calls == 1) return ncclSuccess;
  const int fd = ::accept4(lc->fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? ncclSuccess : ncclSystemError;
  *rc = new_comm(fd);
  return ncclSuccess;
}
int g_mr;
ncclResult_t lb_reg(void*, void*, size_t, int type, void** mh) {
  if (type != NCCL_PTR_HOST) return ncclInternalError;
  *mh = &g_mr;
  return ncclSuccess;
}
ncclResult_t lb_reg_dmabuf(void*, void*, size_t, int, uint64_t, int, void**) { return ncclInternalError; }
ncclResult_t lb_dereg(void*, void* mh) { return mh == &g_mr ? ncclSuccess : ncclInternalError; }
ncclResult_t lb_isend(void* scp, void* data, size_t size, int tag, void* mh, void*, void** req) {
  auto* c = static_cast<Comm*>(scp);
  *req = nullptr;
  if (mh != &g_mr) return ncclInternalError;
  if (++c->isend_calls % 3 == 0) return ncclSuccess;  // "not now"
  Frame f{size, tag, 0};
  if (!io_all(c->fd, &f, sizeof f, true) || !io_all(c->fd, data, size, true)) return ncclSystemError;
  *req = new Request{c, true, 1, {}, {size}, {tag}, {static_cast<int>(size)}, 1};
  return ncclSuccess;
}
ncclResult_t lb_irecv(void* rcp, int n, void** data, size_t* sizes, int* tags, void** mhs, void**,
                      void** req) {
  auto* c = static_cast<Comm*>(rcp);
  if (n < 1 || n > 8) return ncclInternalError;
  auto* r = new Request{c, false, n, {}, {}, {}, {}, 0};
  for (int i = 0; i < n; ++i) {
    if (mhs[i] != &g_mr) {
      delete r;
      return ncclInternalError;
    }
    r->data[i] = data[i];
    r->sizes[i] = sizes[i];
    r->tags[i] = tags[i];
    r->got[i] = -1;
  }
  c->pending.push_back(r);
  *req = r;
  return ncclSuccess;
}
ncclResult_t lb_iflush(void*, int, void**, int*, void**, void** req) {
  *req = nullptr;
  return ncclSuccess;
}
ncclResult_t lb_test(void* rp, int* done, int* sizes) {
  auto* r = static_cast<Request*>(rp);
  *done = 0;
  if (!r->is_send) {
    Comm* c = r->comm;
    // Messages arrive in order and fill the oldest posted receive first.
    while (!c->pending.empty() && c->pending.front() != nullptr) {
      Request* head = c->pending.front();
      if (head->received == head->n) break;
      pollfd p{c->fd, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) break;
      Frame f;
      if (!io_all(c->fd, &f, sizeof f, false)) return ncclRemoteError;
      int slot = -1;
      for (int i = 0; i < head->n; ++i)
        if (head->tags[i] == f.tag && head->got[i] < 0) slot = i;
      if (slot < 0 || f.size > head->sizes[slot]) return ncclInternalError;
      if (!io_all(c->fd, head->data[slot], f.size, false)) return ncclRemoteError;
      if (c->corrupt && f.size > 0) static_cast<unsigned char*>(head->data[slot])[f.size / 2] ^= 0x40;
      head->got[slot] = static_cast<int>(f.size);
      if (++head->received == head->n) c->pending.pop_front();
    }
  }
  if (r->received < r->n) return ncclSuccess;
  *done = 1;
  if (sizes)
    for (int i = 0; i < r->n; ++i) sizes[i] = r->got[i];
  delete r;
  return ncclSuccess;
}
ncclResult_t lb_close(void* cp) {
  auto* c = static_cast<Comm*>(cp);
  ::close(c->fd);
  delete c;
  return ncclSuccess;
}
ncclResult_t lb_close_listen(void* lcp) {
  auto* lc = static_cast<ListenComm*>(lcp);
  ::close(lc->fd);
  delete lc;
  return ncclSuccess;
}
ncclResult_t lb_finalize(void*) { return ncclSuccess; }

}  // namespace

extern "C" {
__attribute__((visibility("default"))) ncclNet_v12_t ncclNetPlugin_v12 = {
    "loopback-test", lb_init,  lb_devices, lb_props, lb_listen,   lb_connect, lb_accept, lb_reg,
    lb_reg_dmabuf,   lb_dereg, lb_isend,   lb_irecv, lb_iflush,   lb_test,    lb_close,  lb_close,
    lb_close_listen, nullptr,  nullptr,    nullptr,  lb_finalize, nullptr};
}  // extern "C"
