// SPDX-License-Identifier: Apache-2.0
// Throughput of the net plugin through its ABI (v12, loaded as NCCL loads it): this process sends
// `--count` messages of `--size` bytes with `--inflight` requests outstanding to a receiver it
// starts in the peer network namespace (RAILSCOPE_TEST_PEER_NETNS, see
// tests/abi/net_tcp/in_netns_pair.sh), and prints one line: "size count seconds Gbit/s".
// The clock runs from the first isend to the receiver's report that the last byte landed.
// When a pass over the requests completed none, both sides call sched_yield() as NCCL's proxy
// thread does; `--idle-us N` sleeps N microseconds instead (to measure what the spinning costs).
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "abi/net_tcp/peer.h"

namespace railscope::abi_test {
namespace {

struct Options {
  size_t size = size_t{64} << 20;
  int count = 64;
  int inflight = 4;
  int idle_us = 0;  // 0: sched_yield() when a pass completed nothing (NCCL's proxy), else usleep
};

void idle(const Options& o) {
  if (o.idle_us == 0)
    sched_yield();
  else
    usleep(static_cast<useconds_t>(o.idle_us));
}

std::unique_ptr<NetApi> ready() {
  auto api = load_net_api(12, nullptr);
  if (!api || api->init() != ncclSuccess) return nullptr;
  int n = 0;
  if (api->devices(&n) != ncclSuccess || n < 1) return nullptr;
  return api;
}

// The receiving side; its options arrive over the socketpair.
int receiver(int fd) {
  Options o;
  if (!read_all(fd, &o, sizeof o)) return 10;
  auto api = ready();
  if (!api) return 11;
  void *rcomm = nullptr, *lcomm = nullptr;
  if (establish_recv(*api, 0, fd, &rcomm, &lcomm) != ncclSuccess) return 12;
  std::vector<std::vector<unsigned char>> bufs(static_cast<size_t>(o.inflight),
                                               std::vector<unsigned char>(o.size));
  std::vector<void*> reqs(static_cast<size_t>(o.inflight), nullptr);
  int posted = 0, done = 0;
  while (done < o.count) {
    int before = done;
    for (int s = 0; s < o.inflight; ++s) {
      auto i = static_cast<size_t>(s);
      if (reqs[i] == nullptr && posted < o.count) {
        void* data = bufs[i].data();
        size_t cap = o.size;
        int tag = 0;
        void* mh = nullptr;
        if (api->irecv(rcomm, 1, &data, &cap, &tag, &mh, &reqs[i]) != ncclSuccess) return 13;
        if (reqs[i] != nullptr) ++posted;
      }
      if (reqs[i] != nullptr) {
        int d = 0;
        if (api->test(reqs[i], &d, nullptr) != ncclSuccess) return 14;
        if (d) {
          reqs[i] = nullptr;
          ++done;
        }
      }
    }
    if (done == before) idle(o);  // NCCL's proxy thread yields when a pass made no progress
  }
  char note = 1;
  write_all(fd, &note, 1);
  read_all(fd, &note, 1);
  api->close_recv(rcomm);
  api->close_listen(lcomm);
  return 0;
}

int sender(const Options& o) {
  Peer peer = spawn_peer("bw_receiver");
  if (!write_all(peer.fd, &o, sizeof o)) return 2;
  auto api = ready();
  if (!api) return 3;
  void* scomm = nullptr;
  if (establish_send(*api, 0, peer.fd, &scomm) != ncclSuccess) return 4;
  std::vector<unsigned char> buf(o.size, 0x5a);
  std::vector<void*> reqs(static_cast<size_t>(o.inflight), nullptr);
  int posted = 0, done = 0;
  auto t0 = Clock::now();
  while (done < o.count) {
    int before = done;
    for (auto& r : reqs) {
      if (r == nullptr && posted < o.count) {
        if (api->isend(scomm, buf.data(), o.size, 0, nullptr, &r) != ncclSuccess) return 5;
        if (r != nullptr) ++posted;
      }
      if (r != nullptr) {
        int d = 0;
        if (api->test(r, &d, nullptr) != ncclSuccess) return 6;
        if (d) {
          r = nullptr;
          ++done;
        }
      }
    }
    if (done == before) idle(o);
  }
  char note = 0;
  if (!read_all(peer.fd, &note, 1)) return 7;
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  write_all(peer.fd, &note, 1);
  api->close_send(scomm);
  if (peer.wait() != 0) return 8;
  double gbits = static_cast<double>(o.size) * o.count * 8 / secs / 1e9;
  std::printf("%zu %d %.3f %.2f\n", o.size, o.count, secs, gbits);
  return 0;
}

}  // namespace

// The test-file convention peer.h relies on: peers re-enter main with --peer.
int peer_main(const std::string& role, int fd, int /*version*/) {
  return role == "bw_receiver" ? receiver(fd) : 99;
}

}  // namespace railscope::abi_test

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--peer")
    return railscope::abi_test::peer_main(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  railscope::abi_test::Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    long v = std::atol(argv[i + 1]);
    if (k == "--size" && v > 0)
      o.size = static_cast<size_t>(v);
    else if (k == "--count" && v > 0)
      o.count = static_cast<int>(v);
    else if (k == "--inflight" && v > 0 && v <= 32)
      o.inflight = static_cast<int>(v);
    else if (k == "--idle-us" && v >= 0 && v <= 100000)
      o.idle_us = static_cast<int>(v);
    else {
      std::fprintf(stderr, "usage: %s [--size BYTES] [--count N] [--inflight N] [--idle-us N]\n", argv[0]);
      return 1;
    }
  }
  return railscope::abi_test::sender(o);
}
