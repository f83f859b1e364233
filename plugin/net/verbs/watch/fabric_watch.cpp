// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/watch/fabric_watch.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>

#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/watch/link_rate_watch.h"
#include "plugin/net/verbs/watch/net_prom.h"
#include "plugin/net/verbs/watch/port_health.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/ibv/ibv.h"
#include "railscope/node/ethtool_stats.h"
#include "railscope/node/fabric_findings.h"
#include "railscope/node/mtu.h"
#include "railscope/node/node_rail_skew.h"
#include "railscope/node/port_counters.h"
#include "railscope/node/port_sampler.h"
#include "railscope/node/rail_skew.h"
#include "railscope/node/sysfs.h"

namespace railscope::net::verbs {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTick = std::chrono::seconds(1);
// A window collects deltas until it is this long, then starts again: a finding names the figures of
// at most this many seconds.
constexpr auto kWindow = std::chrono::seconds(10);

double to_seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A rail board that cannot be used, or entries of it that were left out: INFO, never fatal.
void log_board_refused(const std::string& detail) {
  RS_INFO(NCCL_NET, "NET/railscope : {}",
          diag::one_line(diag::make("fabric.rail_board_refused", diag::Severity::Info, detail)));
}

// The board itself cannot be used (another user's file at its name, a foreign file, a full /dev/shm):
// the feature asked for is off until someone acts, so this is said at WARN.
void warn_board_unusable(const std::string& detail) {
  RS_WARN("NET/railscope : {}",
          diag::one_line(diag::make("fabric.rail_board_refused", diag::Severity::Warning, detail)));
}

}  // namespace

struct FabricWatch::Port {
  const NetPort* port = nullptr;
  PortHealth* health = nullptr;
  std::string name;             // "rxe1:1"
  bool sampling = false;        // a baseline was read while connections use the port
  node::PortCounters previous;  // last tick
  Clock::time_point previous_at{};
  node::PortCounters window_start;
  Clock::time_point window_at{};
  std::set<std::string> reported;  // finding ids already logged for this port
  int active_mtu = 0;              // bytes, last seen
  int mtu_reported = 0;            // active MTU already reported as below the path MTU
  bool recovering = false;
  Clock::duration down_for{};
  RailRateAccumulator::Totals rate_start;  // large-send totals when the rate window began (published)
  LinkRateWatch trained;                   // the port's trained rate against its first (link.degraded)
};

bool FabricWatch::enabled() { return params::get_int("RAILSCOPE_NET_FABRIC_SAMPLING") != 0; }

FabricWatch::FabricWatch(const std::vector<NetPort>& ports,
                         std::vector<std::unique_ptr<PortHealth>>& health) {
  for (size_t i = 0; i < ports.size(); ++i) {
    auto p = std::make_unique<Port>();
    p->port = &ports[i];
    p->health = health[i].get();
    p->name = fmt::format("{}:{}", ports[i].dev_name, ports[i].port);
    p->active_mtu = ports[i].active_mtu;
    ports_.push_back(std::move(p));
  }
  // The rate window starts now, at every port's totals (zero: nothing was sent yet).
  std::vector<node::RailBoardEntry> start;
  for (auto& p : ports_) start.push_back({p->name, me_.pid, me_.owner, 0, 0, 0, 0});
  rail_window_.restart(start);
  prom_ = NetPromFile::from_env(ports);
  for (auto& p : ports_) p->health->set_attach_hook([this] { wake(); });
  thread_ = std::thread([this] { run(); });
}

FabricWatch::~FabricWatch() {
  for (auto& p : ports_) p->health->set_attach_hook({});
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FabricWatch::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  cv_.notify_all();
}

namespace {

void check_mtu(const NetPort& np, PortHealth& h, const std::string& name, int* last_active, int* reported) {
  if (!np.ctx) return;  // a port without an open device (the sampler's unit tests) has no MTU to ask
  ibv_port_attr attr{};
  if (ibv::query_port(*ibv::api(), np.ctx.get(), static_cast<uint8_t>(np.port), &attr) != 0) return;
  const int active = node::ib_mtu_bytes(static_cast<int>(attr.active_mtu));
  const int path = h.path_mtu();
  if (active >= path) {
    if (*reported != 0)
      RS_INFO(NCCL_NET, "NET/railscope : {} active_mtu {} again, the QPs' path MTU {} fits", name, active,
              path);
    *reported = 0;
  } else if (active != *reported) {
    *reported = active;
    RS_WARN(
        "NET/railscope : {}",
        diag::one_line(diag::make(
            "mtu.changed",
            fmt::format("{}: active_mtu {} → {} after connect{}; QPs use {}: every larger packet is dropped, "
                        "transfers on this port stall",
                        name, *last_active, active,
                        np.netdev.empty() ? "" : fmt::format(" (netdev {})", np.netdev), path),
            fmt::format(
                "Set the netdev MTU back{} on both ends (the QPs keep the MTU they were set up with), "
                "or restart the job so connections are made with the new MTU; keep MTUs equal on "
                "every node and switch (`railscope doctor`)",
                np.netdev.empty() ? "" : fmt::format(" (ip link set {} mtu ...)", np.netdev)))));
  }
  *last_active = active;
}

// link.degraded when the port retrained below the rate it had at the first look; INFO when it is back.
void check_rate(const node::Sysfs& sysfs, const NetPort& np, const std::string& name,
                LinkRateWatch* trained) {
  const LinkRateWatch::Change c =
      trained->look(name, sysfs.read(fmt::format("class/infiniband/{}/ports/{}/rate", np.dev_name, np.port)));
  if (c.degraded) RS_WARN("NET/railscope : {}", diag::one_line(*c.degraded));
  if (!c.restored.empty()) RS_INFO(NCCL_NET, "NET/railscope : {}", c.restored);
}

}  // namespace

// fabric.rail_skew on the rate window so far (so it can come after a second or two of a slow rail),
// once per episode, over this process's ports and, through the node's rail board
// (railscope/node/rail_board.h), those of the other processes of this user on the node: the process
// whose port is slow names it (node_rail_skew.h), the others stay silent.
void FabricWatch::judge_rates(Clock::time_point now) {
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  // Cumulative totals; the window takes its deltas. Every port of this process is in the window
  // from its start, also one whose connections have closed since (its figures are the window's);
  // only those that ever moved large sends go on the board.
  std::vector<node::RailBoardEntry> entries;
  std::vector<node::RailBoardEntry> sending;
  for (auto& p : ports_) {
    const auto t = p->health->rail_rate().totals();
    const auto& s = p->rate_start;
    entries.push_back({p->name, me_.pid, me_.owner, now_ns, t.bytes, t.busy_ns, t.transfers, s.bytes,
                       s.busy_ns, s.transfers});
    if (t.transfers > 0) sending.push_back(entries.back());
  }
  if (!board_tried_ && !sending.empty()) {
    board_tried_ = true;
    if (params::get_int("RAILSCOPE_NET_RAIL_BOARD") != 0) {
      std::string why;
      const std::string path = node::RailBoard::default_path();
      board_ = node::RailBoard::open(path, me_, static_cast<uint32_t>(::geteuid()), &why);
      if (!board_)
        warn_board_unusable(fmt::format("{}: rail skew is judged on this process's ports only", why));
    }
  }
  if (board_) {
    std::string why;
    if (!board_->publish(sending, now_ns, &why) && !why.empty() && !board_logged_) {
      board_logged_ = true;
      log_board_refused(fmt::format("{}: {}", board_->path(), why));
    }
    int refused = 0;
    why.clear();
    std::vector<node::RailBoardEntry> others = board_->read_others(now_ns, &refused, &why);
    if ((refused > 0 || (others.empty() && !why.empty())) && !board_logged_) {
      board_logged_ = true;
      log_board_refused(fmt::format("{}: {} slot(s) refused, the first: {}", board_->path(), refused, why));
    }
    entries.insert(entries.end(), others.begin(), others.end());
  }
  int left_out = 0;
  const std::vector<node::NodeRail> rails = rail_window_.update(
      entries, std::chrono::duration_cast<std::chrono::nanoseconds>(now - rate_at_).count(), &left_out);
  if (left_out > 0 && !board_logged_) {
    board_logged_ = true;
    log_board_refused(
        fmt::format("{} rail board entries with impossible figures (busy a minute longer than "
                    "the window, over 10 TB/s) left out",
                    left_out));
  }
  const double window_s = to_seconds(now - rate_at_);
  const node::NodeRailSkew skew = node::node_rail_skew(rails, window_s, me_.owner);
  if (skew.finding && skew.mine) {
    skew_in_window_ = true;
    if (!skew_episode_) RS_WARN("NET/railscope : {}", diag::one_line(*skew.finding));
    skew_episode_ = true;
  }
  if (now - rate_at_ < kWindow) return;
  // The window ends: its rates at INFO (other processes' ports with their pid), and an episode ends
  // with a window without skew.
  std::string text;
  for (const auto& r : rails) {
    if (r.rate.transfers == 0) continue;
    std::string who;
    if (r.pids.size() != 1 || r.pids[0] != me_.pid)
      for (int32_t pid : r.pids) who += fmt::format("{}{}", who.empty() ? " pid " : ",", pid);
    text += fmt::format("{}{}{} {:.4g} GB/s ({} transfers, busy {:.2f} s)", text.empty() ? "" : ", ",
                        r.rate.port, who, r.rate.bytes_per_second() / 1e9, r.rate.transfers,
                        static_cast<double>(r.rate.busy_ns) / 1e9);
  }
  if (!text.empty()) RS_INFO(NCCL_NET, "NET/railscope : rail rates over {:.1f} s: {}", window_s, text);
  if (!skew_in_window_) skew_episode_ = false;
  skew_in_window_ = false;
  rate_at_ = now;
  rail_window_.restart(entries);
  for (size_t i = 0; i < ports_.size(); ++i)  // entries begin with this process's ports, in order
    ports_[i]->rate_start = {entries[i].bytes, entries[i].busy_ns, entries[i].transfers};
}

void FabricWatch::run() {
  const node::Sysfs sysfs(node::Sysfs::default_root());
  // The RoCE netdev's ethtool statistics: on mlx5 the PFC pause and ECN/CNP counters live there, not
  // in hw_counters/ (ethtool_stats.h). The ioctl source on the real /sys, fixture files under another root.
  const std::unique_ptr<node::EthtoolSource> ethtool = node::ethtool_source_for(sysfs);
  std::unique_lock lock(mutex_);
  while (!stop_) {
    bool any = false;
    for (auto& p : ports_) any = any || p->health->users() > 0;
    if (!any) {
      // Idle: no reads, no wake-ups until a connection attaches (or finalize).
      cv_.wait(lock, [&] { return stop_ || woken_; });
      woken_ = false;
      continue;
    }
    cv_.wait_for(lock, kTick, [&] { return stop_; });
    if (stop_) break;
    lock.unlock();
    const auto now = Clock::now();
    for (size_t i = 0; i < ports_.size(); ++i) {
      Port& p = *ports_[i];
      if (p.health->users() == 0) {
        if (p.sampling) conclude_recovery(p, sysfs, ethtool.get());
        continue;
      }
      node::PortCounters cur = sample(p, sysfs, ethtool.get());
      const auto tick =
          p.sampling ? node::counter_deltas(p.previous, cur) : std::vector<node::CounterDelta>{};
      if (prom_) prom_->add(i, tick, sysfs, p.health->rail_rate().totals());
      if (!p.sampling) {
        p.sampling = true;
        p.previous = cur;
        p.previous_at = now;
        p.window_start = cur;
        p.window_at = now;
        check_mtu(*p.port, *p.health, p.name, &p.active_mtu, &p.mtu_reported);
        check_rate(sysfs, *p.port, p.name, &p.trained);
        continue;
      }
      CategoryTotals add{};
      for (const auto& d : tick) add[static_cast<size_t>(d.category)] += d.delta;
      p.health->add_totals(add);

      node::FabricWindow w{p.name, p.port->link_layer, to_seconds(now - p.window_at),
                           node::counter_deltas(p.window_start, cur)};
      int timeout = 0, retry_cnt = 0;
      if (p.health->budget(&timeout, &retry_cnt).count() > 0)
        w.ack_timeout_s = node::ack_timeout_seconds(timeout);
      // Retransmissions in and just after a link outage are the outage's ([link.down] said so): loss
      // and discards are not judged until two windows after the link came back; link errors are.
      const bool outage = p.health->down_within(now, 2 * kWindow);
      for (auto& f : node::fabric_findings(w)) {
        if (outage && (f.id() == "fabric.packet_loss" || f.id() == "fabric.discards")) continue;
        if (p.reported.insert(std::string(f.id())).second) RS_WARN("NET/railscope : {}", diag::one_line(f));
      }
      if (now - p.window_at >= kWindow) {
        p.window_start = cur;
        p.window_at = now;
      }
      check_mtu(*p.port, *p.health, p.name, &p.active_mtu, &p.mtu_reported);
      check_rate(sysfs, *p.port, p.name, &p.trained);

      judge_recovery(p, tick, !cur.counters.empty(), now - p.previous_at);
      p.previous = std::move(cur);
      p.previous_at = now;
    }
    judge_rates(now);
    if (prom_) prom_->write();
    lock.lock();
  }
  lock.unlock();
  // Finalize: a port that came back and carried the job's last messages between two ticks is
  // recovered too; without this last look the job's log would end on [link.down].
  for (auto& p : ports_)
    if (p->sampling) conclude_recovery(*p, sysfs, ethtool.get());
}

// The port's counters now. A sampler per read: the counter files are opened and closed within it, so a
// process whose connections are closed holds no descriptor of ours (NCCL's proxy and tests count them).
node::PortCounters FabricWatch::sample(const Port& p, const node::Sysfs& sysfs,
                                       node::EthtoolSource* ethtool) {
  const bool roce = p.port->link_layer == node::LinkLayer::Ethernet;
  return node::PortSampler(sysfs, p.port->dev_name, p.port->port, roce ? p.port->netdev : std::string(),
                           ethtool)
      .sample();
}

// Whether the port came back from an outage (the async-event thread's link_up) and is up, not yet
// called recovered.
bool FabricWatch::recovery_pending(Port& p) {
  if (!p.recovering && p.health->take_recovered(&p.down_for)) p.recovering = true;
  return p.recovering && !p.health->is_down();
}

// [link.recovered] once a port that went down is ACTIVE again and received packets in `tick`
// (or its counters cannot be read: ACTIVE is then the only sign there is).
void FabricWatch::judge_recovery(Port& p, const std::vector<node::CounterDelta>& tick, bool counts_traffic,
                                 Clock::duration over) {
  if (!recovery_pending(p)) return;
  const node::Traffic moved = node::traffic_of(tick);
  if (moved.received_packets == 0 && counts_traffic) return;
  p.recovering = false;
  const std::string line = diag::one_line(diag::make(
      "link.recovered",
      fmt::format("{} after {:.1f} s: ACTIVE again and receiving ({} packets in the last {:.1f} s); "
                  "the link went down at {}",
                  p.name, to_seconds(p.down_for), moved.received_packets, to_seconds(over),
                  p.health->last_down_text())));
  // One warning per outage: after a failover, a connection whose traffic came back may have said it.
  if (p.health->port_recovery_finding())
    RS_WARN("NET/railscope : {}", line);
  else
    RS_INFO(NCCL_NET, "NET/railscope : {}", line);
}

// The port's last connection closed (or the engine finalizes) while it was sampled: if it is still
// waiting to be called recovered, one more sample judges the traffic since the last tick.
void FabricWatch::conclude_recovery(Port& p, const node::Sysfs& sysfs, node::EthtoolSource* ethtool) {
  p.sampling = false;  // the next connection starts a new baseline
  if (!recovery_pending(p)) return;
  const node::PortCounters cur = sample(p, sysfs, ethtool);
  judge_recovery(p, node::counter_deltas(p.previous, cur), !cur.counters.empty(),
                 Clock::now() - p.previous_at);
}

}  // namespace railscope::net::verbs
