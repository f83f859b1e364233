// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/watch/async_events.h"

#include "plugin/net/verbs/setup/discovery.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <algorithm>

#include "plugin/net/verbs/setup/link_params.h"
#include "railscope/core/log.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {

AsyncEvents::AsyncEvents(const std::vector<NetPort>& ports, std::vector<std::unique_ptr<PortHealth>>& health,
                         bool sampler_logs_recovery)
    : sampler_logs_recovery_(sampler_logs_recovery) {
  std::vector<Watched> watched;
  for (size_t i = 0; i < ports.size(); ++i) {
    Watched* w = nullptr;
    for (auto& x : watched)
      if (x.ctx == ports[i].ctx.get()) w = &x;
    if (w == nullptr) {
      watched.push_back(Watched{ports[i].ctx.get(), ports[i].dev_name, {}});
      w = &watched.back();
    }
    w->ports.emplace_back(ports[i].port, health[i].get());
  }
  for (auto& w : watched) {
    int flags = fcntl(w.ctx->async_fd, F_GETFL);
    fcntl(w.ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
    threads_.emplace_back([this, w] { run(w); });
  }
}

AsyncEvents::~AsyncEvents() {
  stop_.store(true);
  for (auto& t : threads_) t.join();
}

void AsyncEvents::run(Watched w) {
  while (!stop_.load(std::memory_order_relaxed)) {
    check_budget(w);
    pollfd p{w.ctx->async_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ibv_async_event ev{};
    if (ibv::api()->get_async_event(w.ctx, &ev) != 0) continue;
    auto type = ev.event_type;
    switch (type) {
      case IBV_EVENT_PORT_ERR:
        for (auto& [port, health] : w.ports)
          if (port == static_cast<int>(ev.element.port_num)) on_port_down(w, port, health);
        break;
      case IBV_EVENT_PORT_ACTIVE:
        for (auto& [port, health] : w.ports)
          if (port == static_cast<int>(ev.element.port_num)) on_port_active(w, port, health);
        break;
      case IBV_EVENT_DEVICE_FATAL: {
        auto f = diag::make("async.device_fatal", fmt::format("{} reported IBV_EVENT_DEVICE_FATAL", w.dev));
        for (auto& [port, health] : w.ports) health->fail(f);
        RS_WARN("NET/railscope : {}", diag::one_line(f));
        break;
      }
      case IBV_EVENT_GID_CHANGE:
        RS_WARN("NET/railscope : {}",
                diag::one_line(diag::make(
                    "async.gid_change", fmt::format("{}:{} GID table changed", w.dev, ev.element.port_num))));
        break;
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
      case IBV_EVENT_CQ_ERR:
        RS_WARN("NET/railscope : {}",
                diag::one_line(diag::make("async.qp_fatal",
                                          fmt::format("{} reported {}", w.dev, ibv::event_type_text(type)))));
        break;
      default: RS_INFO(NCCL_NET, "NET/railscope : {} async event {}", w.dev, ibv::event_type_text(type));
    }
    ibv::api()->ack_async_event(&ev);
  }
}

namespace {

// The budget of the connections on the port, or what the environment gives them when none is attached.
std::chrono::microseconds port_budget(const PortHealth& h, int* timeout, int* retry_cnt) {
  auto budget = h.budget(timeout, retry_cnt);
  if (budget.count() > 0) return budget;
  const LinkParams lp = link_params_from_env(-1);
  *timeout = lp.timeout;
  *retry_cnt = lp.retry_cnt;
  return retry_budget(lp.timeout, lp.retry_cnt);
}

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

void AsyncEvents::on_port_down(const Watched& w, int port, PortHealth* health) {
  if (!health->link_down(PortHealth::Clock::now())) return;  // once per outage
  int timeout = 0, retry_cnt = 0;
  const auto budget = port_budget(*health, &timeout, &retry_cnt);
  const int users = health->users(), movable = std::min(health->movable_users(), users);
  const std::string after =
      movable == 0       ? "they fail only if the link is not back by then"
      : movable == users ? "if the link is not back by then, they move their traffic to their virtual NIC's "
                           "other ports (link.failover)"
                         : fmt::format(
                               "if the link is not back by then, {} of them move their traffic to "
                               "their virtual NIC's other ports (link.failover) and the others fail",
                               movable);
  const std::string line = diag::one_line(diag::make(
      "link.down",
      fmt::format("{}:{} reported IBV_EVENT_PORT_ERR (link down) at {}; the {} connection(s) on it keep "
                  "their QPs: retransmissions carry them for {:.1f} s (QP timeout {} = 4.096 us x 2^{} "
                  "per try, retry_cnt {}: {} tries; railscope's budget is at least {} s); {}",
                  w.dev, port, health->last_down_text(), users, seconds(budget), timeout, timeout, retry_cnt,
                  retry_cnt + 1, std::chrono::duration_cast<std::chrono::seconds>(kMinStallBudget).count(),
                  after)));
  // A port no connection uses is news for the node, not for this job: information only.
  if (health->users() > 0)
    RS_WARN("NET/railscope : {}", line);
  else
    RS_INFO(NCCL_NET, "NET/railscope : {}", line);
}

void AsyncEvents::on_port_active(const Watched& w, int port, PortHealth* health) {
  const auto down_for = health->link_up(PortHealth::Clock::now());
  if (down_for == PortHealth::Clock::duration::zero()) {
    RS_INFO(NCCL_NET, "NET/railscope : {}:{} async event IBV_EVENT_PORT_ACTIVE", w.dev, port);
    return;
  }
  RS_INFO(NCCL_NET, "NET/railscope : {}:{} ACTIVE again after {:.1f} s down", w.dev, port, seconds(down_for));
  // With connections on the port the fabric sampler says [link.recovered] once traffic flows again
  // (fabric_watch.h); without the sampler it is said now; without connections it is information.
  PortHealth::Clock::duration d{};
  if (health->users() == 0) {
    health->take_recovered(&d);
  } else if (!sampler_logs_recovery_ && health->take_recovered(&d)) {
    const std::string line = diag::one_line(diag::make(
        "link.recovered", fmt::format("{}:{} is ACTIVE again after {:.1f} s down (link went down at {})",
                                      w.dev, port, seconds(d), health->last_down_text())));
    // One warning per outage: a connection whose traffic came back may have said it first.
    if (health->port_recovery_finding())
      RS_WARN("NET/railscope : {}", line);
    else
      RS_INFO(NCCL_NET, "NET/railscope : {}", line);
  }
}

void AsyncEvents::check_budget(const Watched& w) {
  for (const auto& [port, health] : w.ports) {
    if (!health->is_down() || health->users() == 0) continue;
    int timeout = 0, retry_cnt = 0;
    const auto budget = port_budget(*health, &timeout, &retry_cnt);
    const auto since = health->down_since();
    const auto now = PortHealth::Clock::now();
    if (now - since <= budget) continue;
    // Once per outage: the generation moves once, every connection on the port sees it.
    if (!health->first_failure_of_outage()) continue;
    auto f = diag::make(
        "async.port_error",
        fmt::format(
            "{}:{} went down at {} (IBV_EVENT_PORT_ERR) and has stayed down for {:.1f} s, longer than "
            "the retransmission budget of {:.1f} s (QP timeout {}, retry_cnt {})",
            w.dev, port, health->last_down_text(), seconds(now - since), seconds(budget), timeout,
            retry_cnt));
    // When every connection on the port moves its traffic elsewhere, none fails: each says so
    // (link.failover), and the port's failure is information.
    const int users = health->users();
    const bool all_move = health->movable_users() >= users;
    if (all_move)
      f.detail +=
          fmt::format("; its {} connection(s) move their traffic to their virtual NIC's other ports", users);
    const std::string line = diag::one_line(f);
    health->fail(std::move(f));  // visible to the data path before the line is
    if (all_move)
      RS_INFO(NCCL_NET, "NET/railscope : {}", line);
    else
      RS_WARN("NET/railscope : {}", line);
  }
}

}  // namespace railscope::net::verbs
