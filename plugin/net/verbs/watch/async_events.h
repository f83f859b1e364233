// SPDX-License-Identifier: Apache-2.0
// One thread per opened RDMA device reads its asynchronous events (port error/active, GID table
// change, device fatal, QP/CQ errors) and logs each as a diagnosis. A device fatal error marks its
// ports failed: connections check their ports' health generation in test() (one atomic load) and
// fail with the recorded finding. A port going down (IBV_EVENT_PORT_ERR) is logged once as
// [link.down] with the retransmission budget and does not fail anything yet: the QPs retransmit, as
// NCCL's IB transport lets them. Only when the port stays down longer than the budget of the
// connections using it (checked on every wake-up, at most 100 ms apart) does the port fail
// (async.port_error); IBV_EVENT_PORT_ACTIVE ends the outage (the fabric sampler logs
// [link.recovered] once traffic flows again, fabric_watch.h).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <infiniband/verbs.h>

#include <string>

#include "plugin/net/verbs/watch/port_health.h"
#include "railscope/core/diagnosis.h"

namespace railscope::net::verbs {

struct NetPort;

class AsyncEvents {
 public:
  // health[i] belongs to ports[i]; both outlive this object. sampler_logs_recovery: the fabric
  // sampler runs and says [link.recovered] once traffic flows; else it is said at PORT_ACTIVE.
  AsyncEvents(const std::vector<NetPort>& ports, std::vector<std::unique_ptr<PortHealth>>& health,
              bool sampler_logs_recovery);
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
  void on_port_down(const Watched& w, int port, PortHealth* health);
  void on_port_active(const Watched& w, int port, PortHealth* health);
  // A port down for longer than its connections' retransmission budget fails them.
  static void check_budget(const Watched& w);
  std::atomic<bool> stop_{false};
  bool sampler_logs_recovery_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace railscope::net::verbs
