// SPDX-License-Identifier: Apache-2.0
// bench/connection_scale: what each connection costs a rank with N peers. Two processes (one per rxe
// "host" of the test bed), each opening N send comms and N receive comms to the other through a net
// plugin's ABI as NCCL does (listen, ship the handle, poll connect/accept until both return a comm).
// Per N the first process reports, per connection pair (one send + one receive comm): pinned bytes
// (VmPin of /proc/self/status: what ibv_reg_mr pinned), resident memory (Rss summed over /proc/self/smaps),
// QPs, CQs and MRs
// (`rdma -j res show` on its device), file descriptors, connect and close time; then, with the N - 1
// other pairs idle, the cost of one test() of a pending receive on pair 0 and the 8-byte ping-pong
// half round trip on pair 0. Not a test: run.sh runs it in the soft-RoCE guest.
// usage: conn_scale [--plugin PATH] [--dev-a rxe0] [--dev-b rxe1] [--counts 1,8,64,256,1024]
//                   [--pings N] [--tests N] [--smaps: resident split by kind of mapping]
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "net_api.h"

namespace {

using railscope::netbench::kHandleBytes;
using railscope::netbench::NetApi;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string plugin;
  std::string dev_a = "rxe0", dev_b = "rxe1";
  std::vector<int> counts = {1, 8, 64, 256, 1024};
  int pings = 2000;
  int tests = 200000;
  bool smaps = false;  // also resident memory per pair by kind of mapping
};

void fail(const std::string& what) { throw std::runtime_error(what); }

void check(ncclResult_t r, const char* call) {
  if (r != ncclSuccess) fail(std::string(call) + " failed: " + railscope::netbench::result_name(r));
}

// Blocking exchange with the other process over a socketpair.
void write_all(int fd, const void* p, size_t n) {
  const auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, b, n);
    if (w <= 0) fail("socketpair write");
    b += w;
    n -= static_cast<size_t>(w);
  }
}
void read_all(int fd, void* p, size_t n) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, b, n);
    if (r <= 0) fail("socketpair read (the other process failed)");
    b += r;
    n -= static_cast<size_t>(r);
  }
}
void barrier(int fd) {
  char c = 'b';
  write_all(fd, &c, 1);
  read_all(fd, &c, 1);
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One field of /proc/self/status in KiB ("VmPin", "VmRSS").
long status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + key.size(), nullptr, 10);
  return -1;
}

long open_fds() {
  long n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// QPs, CQs and MRs the kernel tracks on one RDMA device (`rdma -j res show`); -1 when unknown.
struct RdmaCounts {
  long qp = -1, cq = -1, mr = -1;
};
RdmaCounts rdma_counts(const std::string& dev) {
  RdmaCounts c;
  FILE* f = ::popen("rdma -j res show 2>/dev/null", "r");
  if (f == nullptr) return c;
  std::string text;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  ::pclose(f);
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return c;
  for (const auto& d : j)
    if (d.value("ifname", "") == dev) {
      c.qp = d.value("qp", -1L);
      c.cq = d.value("cq", -1L);
      c.mr = d.value("mr", -1L);
    }
  return c;
}

// Resident KiB by kind of mapping (/proc/self/smaps): the heap and anonymous mappings (malloc'd
// objects, and the registered buffers, which are malloc'd), the verbs device's mappings (the provider's
// queues: rxe maps every QP's and CQ's ring into the process) and everything else.
struct RssByKind {
  long heap = 0, uverbs = 0, other = 0;
};
RssByKind rss_by_kind() {
  RssByKind r;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  long* current = &r.other;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::string first = line.substr(0, line.find(' '));
    if (first.find('-') != std::string::npos && first.back() != ':') {
      // A mapping's header line ("start-end perms offset dev inode [path]"), not a field ("Rss: 4 kB").
      std::istringstream f(line);
      std::string range, perms, offset, devno, inode, path;
      f >> range >> perms >> offset >> devno >> inode;
      std::getline(f >> std::ws, path);
      current = path.rfind("/dev/infiniband/", 0) == 0 ? &r.uverbs
                : (path.empty() || path == "[heap]")   ? &r.heap
                                                       : &r.other;
    } else if (line.rfind("Rss:", 0) == 0) {
      *current += std::strtol(line.c_str() + 4, nullptr, 10);
    }
  }
  return r;
}

struct Snapshot {
  long pin_kib = 0, rss_kib = 0, fds = 0;
  RdmaCounts rdma;
  RssByKind rss_kinds;
};
Snapshot snapshot(const std::string& dev) {
  // Resident memory from smaps, not VmRSS: VmRSS adds each thread's page counts only after some page
  // faults (the kernel's split RSS counting, "inaccurate" in Documentation/filesystems/proc.rst), and
  // rxe's queue mappings are inserted whole at mmap time, so one process's VmRSS included them and the
  // other's not (measured: the reference's VmRSS per pair 117-137 KiB, its smaps 349-358 KiB).
  const RssByKind kinds = rss_by_kind();
  return Snapshot{status_kib("VmPin"), kinds.heap + kinds.uverbs + kinds.other, open_fds(), rdma_counts(dev),
                  kinds};
}

// What one process measured at one N (the first process prints its own).
struct Result {
  double connect_s = 0, close_s = 0;
  double test_ns = 0;      // one test() of a receive nothing has been sent for yet, on pair 0
  double half_rtt_us = 0;  // 8-byte ping-pong on pair 0, median
  Snapshot before, after;
};

struct Comms {
  std::vector<void*> listen, send, recv;
};

// N pairs as NCCL sets them up: every listen first, handles exchanged, then connect/accept polled.
void open_pairs(NetApi& api, int dev, int fd, int n, Comms* c) {
  std::vector<unsigned char> mine(kHandleBytes * static_cast<size_t>(n)), theirs(mine.size());
  c->listen.assign(static_cast<size_t>(n), nullptr);
  c->send.assign(static_cast<size_t>(n), nullptr);
  c->recv.assign(static_cast<size_t>(n), nullptr);
  for (int i = 0; i < n; ++i)
    check(api.listen(dev, mine.data() + kHandleBytes * static_cast<size_t>(i),
                     &c->listen[static_cast<size_t>(i)]),
          "listen");
  write_all(fd, mine.data(), mine.size());
  read_all(fd, theirs.data(), theirs.size());
  int done = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(600);
  while (done < 2 * n) {
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      if (c->send[i] == nullptr) {
        check(api.connect(dev, theirs.data() + kHandleBytes * i, &c->send[i]), "connect");
        done += c->send[i] != nullptr;
      }
      if (c->recv[i] == nullptr) {
        check(api.accept(c->listen[i], &c->recv[i]), "accept");
        done += c->recv[i] != nullptr;
      }
    }
    if (Clock::now() > deadline) fail("connections not established within 600 s");
  }
}

void close_pairs(NetApi& api, Comms* c) {
  for (void* s : c->send) check(api.close_send(s), "closeSend");
  for (void* r : c->recv) check(api.close_recv(r), "closeRecv");
  for (void* l : c->listen) check(api.close_listen(l), "closeListen");
  *c = Comms{};
}

void* post_send(NetApi& api, void* comm, void* data, size_t size, void* mh) {
  void* req = nullptr;
  while (req == nullptr) check(api.isend(comm, data, size, 0, mh, &req), "isend");
  return req;
}
void* post_recv(NetApi& api, void* comm, void* data, size_t size, void* mh) {
  void* req = nullptr;
  int tag = 0;
  while (req == nullptr) check(api.irecv(comm, 1, &data, &size, &tag, &mh, &req), "irecv");
  return req;
}
void wait(NetApi& api, void* req) {
  int done = 0, size = 0;
  while (!done) check(api.test(req, &done, &size), "test");
}

// Pair 0 while the others stay idle: the first process pings, the second answers.
void measure_pair0(NetApi& api, const Options& o, int fd, bool first, Comms& c, Result* r) {
  constexpr size_t kBytes = 8;
  std::vector<unsigned char> sbuf(4096), rbuf(4096);
  void *smh = nullptr, *rmh = nullptr;
  check(api.reg_mr(c.send[0], sbuf.data(), sbuf.size(), &smh), "regMr");
  check(api.reg_mr(c.recv[0], rbuf.data(), rbuf.size(), &rmh), "regMr");
  barrier(fd);
  const int warm = std::max(10, o.pings / 10);
  std::vector<double> rtt;
  for (int i = 0; i < warm + o.pings; ++i) {
    if (first) {
      const auto t0 = Clock::now();
      void* rr = post_recv(api, c.recv[0], rbuf.data(), kBytes, rmh);
      void* sr = post_send(api, c.send[0], sbuf.data(), kBytes, smh);
      wait(api, sr);
      wait(api, rr);
      if (i >= warm) rtt.push_back(seconds_since(t0) * 1e6);
    } else {
      void* rr = post_recv(api, c.recv[0], rbuf.data(), kBytes, rmh);
      wait(api, rr);
      void* sr = post_send(api, c.send[0], sbuf.data(), kBytes, smh);
      wait(api, sr);
    }
  }
  if (!rtt.empty()) {
    std::nth_element(rtt.begin(), rtt.begin() + static_cast<long>(rtt.size() / 2), rtt.end());
    r->half_rtt_us = rtt[rtt.size() / 2] / 2;
  }
  // test() of a receive whose message has not been sent: the cost of one turn of a progress loop.
  barrier(fd);
  if (first) {
    void* rr = post_recv(api, c.recv[0], rbuf.data(), kBytes, rmh);
    int done = 0, size = 0;
    const auto t0 = Clock::now();
    for (int i = 0; i < o.tests && !done; ++i) check(api.test(rr, &done, &size), "test");
    r->test_ns = seconds_since(t0) * 1e9 / o.tests;
    barrier(fd);  // now the second process sends it
    wait(api, rr);
  } else {
    barrier(fd);
    wait(api, post_send(api, c.send[0], sbuf.data(), kBytes, smh));
  }
  barrier(fd);
  check(api.dereg_mr(c.send[0], smh), "deregMr");
  check(api.dereg_mr(c.recv[0], rmh), "deregMr");
}

void logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  if (level != NCCL_LOG_WARN && level != NCCL_LOG_ABORT) return;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "conn_scale plugin WARN: ");
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
}

int run_side(const Options& o, int fd, bool first) {
  // NCCL raises its descriptor limit to the hard one at init; a rank with 1,024 peers needs it.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  auto opened = railscope::netbench::open_plugin(o.plugin);
  if (!opened.api) fail("cannot load the net plugin: " + opened.library.error);
  NetApi& api = *opened.api;
  check(api.init(&logger), "init");
  const std::string& name = first ? o.dev_b : o.dev_a;
  const int dev = railscope::netbench::find_device(api, name);
  if (dev < 0) fail("no device " + name + " in the plugin");
  if (first) {
    std::printf("plugin %s (ABI v%d), device %s; per connection pair = one send + one receive comm\n",
                api.name().c_str(), api.version(), name.c_str());
    std::printf("%6s %10s %10s %6s %6s %6s %6s %10s %10s %9s %10s\n", "N", "pin_KiB", "rss_KiB", "QPs", "CQs",
                "MRs", "fds", "conn_ms", "close_ms", "test_ns", "8B_lat_us");
  }
  for (int n : o.counts) {
    Result r;
    Comms c;
    barrier(fd);
    r.before = snapshot(name);
    const auto t0 = Clock::now();
    open_pairs(api, dev, fd, n, &c);
    r.connect_s = seconds_since(t0);
    barrier(fd);
    r.after = snapshot(name);
    measure_pair0(api, o, fd, first, c, &r);
    const auto t1 = Clock::now();
    close_pairs(api, &c);
    r.close_s = seconds_since(t1);
    if (!first) continue;
    const double per = n;
    auto d = [&](long a, long b) { return (a < 0 || b < 0) ? -1.0 : static_cast<double>(b - a) / per; };
    std::printf("%6d %10.1f %10.1f %6.2f %6.2f %6.2f %6.2f %10.3f %10.3f %9.0f %10.1f\n", n,
                d(r.before.pin_kib, r.after.pin_kib), d(r.before.rss_kib, r.after.rss_kib),
                d(r.before.rdma.qp, r.after.rdma.qp), d(r.before.rdma.cq, r.after.rdma.cq),
                d(r.before.rdma.mr, r.after.rdma.mr), d(r.before.fds, r.after.fds), r.connect_s * 1e3 / per,
                r.close_s * 1e3 / per, r.test_ns, r.half_rtt_us);
    if (o.smaps)
      std::printf(
          "%6s resident KiB per pair by mapping: heap and anonymous %.1f, verbs device %.1f, other %.1f\n",
          "", d(r.before.rss_kinds.heap, r.after.rss_kinds.heap),
          d(r.before.rss_kinds.uverbs, r.after.rss_kinds.uverbs),
          d(r.before.rss_kinds.other, r.after.rss_kinds.other));
    std::fflush(stdout);
  }
  check(api.finalize(), "finalize");
  return 0;
}

std::vector<int> parse_counts(const std::string& s) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const int v =
        std::atoi(s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos).c_str());
    if (v <= 0 || v > 65536) fail("bad --counts entry in '" + s + "'");
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) fail(a + " needs a value");
        return argv[++i];
      };
      if (a == "--plugin")
        o.plugin = next();
      else if (a == "--dev-a")
        o.dev_a = next();
      else if (a == "--dev-b")
        o.dev_b = next();
      else if (a == "--counts")
        o.counts = parse_counts(next());
      else if (a == "--pings")
        o.pings = std::max(1, std::atoi(next().c_str()));
      else if (a == "--tests")
        o.tests = std::max(1, std::atoi(next().c_str()));
      else if (a == "--smaps")
        o.smaps = true;
      else
        fail("unknown option " + a);
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) fail("socketpair");
    std::fflush(stdout);
    const pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) {
      ::close(sv[0]);
      int rc = 1;
      try {
        rc = run_side(o, sv[1], false);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "conn_scale (second process): %s\n", e.what());
      }
      _exit(rc);
    }
    ::close(sv[1]);
    int rc = run_side(o, sv[0], true);
    ::close(sv[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conn_scale: %s\n", e.what());
    return 1;
  }
}
