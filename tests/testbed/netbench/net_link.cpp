// SPDX-License-Identifier: Apache-2.0
#include "net_link.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "abi/plugin_loader.h"

namespace railscope::netbench::testbed {

using Clock = std::chrono::steady_clock;

Plugin::Plugin() {
  opened = open_plugin(abi_test::built_plugin_path(abi_test::PluginKind::Net));
  if (!opened.api) {
    ADD_FAILURE() << "cannot load the net plugin: " << opened.library.error;
    return;
  }
  const ncclResult_t r = opened.api->init(&abi_test::CapturedLog::logger);
  EXPECT_EQ(r, ncclSuccess) << "init";
  inited = r == ncclSuccess;
}

Plugin::~Plugin() {
  if (inited) {
    EXPECT_EQ(opened.api->finalize(), ncclSuccess);
  }
}

int Plugin::device(const std::string& name) {
  const int d = find_device(*opened.api, name);
  EXPECT_GE(d, 0) << "no device " << name;
  return d;
}

Link::~Link() { close(); }
void Link::close() {
  if (api == nullptr) return;
  if (send_comm) {
    EXPECT_EQ(api->close_send(send_comm), ncclSuccess);
  }
  if (recv_comm) {
    EXPECT_EQ(api->close_recv(recv_comm), ncclSuccess);
  }
  if (listen_comm) {
    EXPECT_EQ(api->close_listen(listen_comm), ncclSuccess);
  }
  send_comm = recv_comm = listen_comm = nullptr;
}

std::unique_ptr<Link> make_link(NetApi& api, int send_dev, int recv_dev, std::chrono::seconds limit) {
  auto l = std::make_unique<Link>();
  l->api = &api;
  unsigned char handle[kHandleBytes] = {};
  EXPECT_EQ(api.listen(recv_dev, handle, &l->listen_comm), ncclSuccess);
  EXPECT_NE(l->listen_comm, nullptr);
  const auto deadline = Clock::now() + limit;
  while (l->send_comm == nullptr || l->recv_comm == nullptr) {
    if (l->send_comm == nullptr && api.connect(send_dev, handle, &l->send_comm) != ncclSuccess) {
      ADD_FAILURE() << "connect failed";
      return l;
    }
    if (l->recv_comm == nullptr && api.accept(l->listen_comm, &l->recv_comm) != ncclSuccess) {
      ADD_FAILURE() << "accept failed";
      return l;
    }
    if (Clock::now() > deadline) {
      ADD_FAILURE() << "connection not established within " << limit.count() << " s";
      return l;
    }
    sched_yield();
  }
  return l;
}

Mr::Mr(NetApi& a, void* c, size_t bytes) : api(&a), comm(c), storage(bytes + 4096), size(bytes) {
  auto addr = reinterpret_cast<uintptr_t>(storage.data());
  data = storage.data() + ((4096 - addr % 4096) % 4096);
  EXPECT_EQ(api->reg_mr(comm, data, size, &mh), ncclSuccess) << "regMr " << bytes;
}
Mr::~Mr() {
  if (mh) {
    EXPECT_EQ(api->dereg_mr(comm, mh), ncclSuccess);
  }
}

std::vector<int> wait_request(NetApi& api, void* request, int n, std::chrono::seconds limit) {
  std::vector<int> sizes(static_cast<size_t>(n), -1);
  const auto deadline = Clock::now() + limit;
  for (;;) {
    int done = 0;
    const ncclResult_t r = api.test(request, &done, sizes.data());
    if (r != ncclSuccess) {
      ADD_FAILURE() << "test() failed: " << result_name(r);
      return sizes;
    }
    if (done) return sizes;
    if (Clock::now() > deadline) {
      ADD_FAILURE() << "request not complete after " << limit.count() << " s";
      return sizes;
    }
  }
}

std::vector<std::vector<int>> wait_requests(NetApi& api, const std::vector<void*>& requests,
                                            const std::vector<int>& ns, std::chrono::seconds limit) {
  std::vector<std::vector<int>> sizes;
  for (int n : ns) sizes.emplace_back(static_cast<size_t>(n), -1);
  std::vector<int> done(requests.size(), 0);
  const auto deadline = Clock::now() + limit;
  for (size_t left = requests.size(); left > 0;) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (done[i]) continue;
      const ncclResult_t r = api.test(requests[i], &done[i], sizes[i].data());
      if (r != ncclSuccess) {
        ADD_FAILURE() << "test() of request " << i << " failed: " << result_name(r);
        return sizes;
      }
      if (done[i]) --left;
    }
    if (left > 0 && Clock::now() > deadline) {
      ADD_FAILURE() << left << " of " << requests.size() << " requests not complete after " << limit.count()
                    << " s";
      return sizes;
    }
  }
  return sizes;
}

namespace {
template <class Post>
void* retry_post(Post post, const char* what) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    void* req = nullptr;
    const ncclResult_t r = post(&req);
    if (r != ncclSuccess) {
      ADD_FAILURE() << what << " failed: " << result_name(r);
      return nullptr;
    }
    if (req != nullptr) return req;
    if (Clock::now() > deadline) {
      ADD_FAILURE() << what << " kept returning no request for 60 s";
      return nullptr;
    }
  }
}
}  // namespace

void* post_isend(NetApi& api, void* comm, void* data, size_t size, int tag, void* mh) {
  return retry_post([&](void** req) { return api.isend(comm, data, size, tag, mh, req); }, "isend");
}
void* post_irecv(NetApi& api, void* comm, int n, void** data, size_t* sizes, int* tags, void** mhs) {
  return retry_post([&](void** req) { return api.irecv(comm, n, data, sizes, tags, mhs, req); }, "irecv");
}

std::map<int, std::string> open_fds() {
  std::map<int, std::string> fds;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return fds;
  const int own = dirfd(d);
  while (const dirent* e = readdir(d)) {
    char* end = nullptr;
    const long n = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || n == own) continue;
    char target[PATH_MAX] = {};
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    const ssize_t len = readlink(link.c_str(), target, sizeof target - 1);
    fds[static_cast<int>(n)] = len > 0 ? std::string(target, static_cast<size_t>(len)) : "?";
  }
  closedir(d);
  return fds;
}

std::string fds_left_open(const std::map<int, std::string>& before, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::map<int, std::string> now = open_fds();
  while (now.size() != before.size() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    now = open_fds();
  }
  std::string extra;
  for (const auto& [fd, target] : now) {
    const auto it = before.find(fd);
    if (it == before.end() || it->second != target) extra += " " + std::to_string(fd) + " -> " + target;
  }
  if (extra.empty() && now.size() != before.size()) extra = " (fewer than before)";
  return extra;
}

std::string rdma_resources(const std::string& dev) {
  std::string out;
  FILE* f = popen(("rdma resource show " + dev + " 2>&1").c_str(), "r");
  if (f == nullptr) return out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) out += buf;
  pclose(f);
  return out;
}

}  // namespace railscope::netbench::testbed
