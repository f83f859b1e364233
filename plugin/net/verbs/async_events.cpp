#include "plugin/net/verbs/async_events.h"

#include "plugin/net/verbs/discovery.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>

#include "railscope/core/log.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {

void PortHealth::fail(diag::Finding f) {
  {
    std::lock_guard lock(mutex_);
    last_ = std::move(f);
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

diag::Finding PortHealth::last() const {
  std::lock_guard lock(mutex_);
  return last_;
}

AsyncEvents::AsyncEvents(const std::vector<NetPort>& ports,
                         std::vector<std::unique_ptr<PortHealth>>& health) {
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
    pollfd p{w.ctx->async_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ibv_async_event ev{};
    if (ibv::api()->get_async_event(w.ctx, &ev) != 0) continue;
    auto type = ev.event_type;
    switch (type) {
      case IBV_EVENT_PORT_ERR:
        for (auto& [port, health] : w.ports)
          if (port == static_cast<int>(ev.element.port_num)) {
            auto f = diag::make("async.port_error",
                                fmt::format("{}:{} reported IBV_EVENT_PORT_ERR (link down)", w.dev, port));
            const std::string line = diag::one_line(f);
            health->fail(std::move(f));  // visible to the data path before the line is
            RS_WARN("NET/railscope : {}", line);
          }
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

}  // namespace railscope::net::verbs
