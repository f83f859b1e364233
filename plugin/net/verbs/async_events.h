// One thread per opened RDMA device reads its asynchronous events (port error/active, GID table
// change, device fatal, QP/CQ errors), logs each as a diagnosis, and marks the affected ports
// unhealthy. Connections check their ports' health generation in test() (one atomic load) and fail
// with the recorded finding instead of waiting on a dead port.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <infiniband/verbs.h>

#include <string>

#include "railscope/core/diagnosis.h"

namespace railscope::net::verbs {

struct NetPort;

class PortHealth {
 public:
  uint32_t generation() const { return generation_.load(std::memory_order_acquire); }
  void fail(diag::Finding f);
  diag::Finding last() const;

 private:
  std::atomic<uint32_t> generation_{0};
  mutable std::mutex mutex_;
  diag::Finding last_;
};

class AsyncEvents {
 public:
  // health[i] belongs to ports[i]; both outlive this object.
  AsyncEvents(const std::vector<NetPort>& ports, std::vector<std::unique_ptr<PortHealth>>& health);
  ~AsyncEvents();
  AsyncEvents(const AsyncEvents&) = delete;
  AsyncEvents& operator=(const AsyncEvents&) = delete;

 private:
  struct Watched {
    ibv_context* ctx = nullptr;
    std::string dev;
    std::vector<std::pair<int, PortHealth*>> ports;  // port number → health
  };
  void run(Watched w);
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace railscope::net::verbs
