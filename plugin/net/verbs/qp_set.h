// SPDX-License-Identifier: Apache-2.0
// The transport of one verbs connection: its local devices ("lanes", one completion queue each), the
// RC QPs striped over them, buffers registered on every lane, and the draining of the completion
// queues. Knows nothing of health, statistics or the profiler: a drain hands each completion, and each
// failure, to a sink the connection supplies (Connection::drain_cqs).
#pragma once

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "plugin/net/transport.h"
#include "railscope/ibv/handles.h"

namespace railscope::net::verbs {

using ibv::CqPtr;
using ibv::MrPtr;
using ibv::QpPtr;
struct NetPort;     // discovery.h
class MrCache;      // mr_cache.h
class PortHealth;   // port_health.h
struct QpCaps;      // qp.h
struct EndInfo;     // handshake.h
struct LinkParams;  // link_params.h

// Page-aligned memory registered on every lane of a connection.
struct RegisteredBuffer {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> mem;
  size_t size = 0;
  std::vector<MrPtr> mrs;  // per lane
  void* get() const { return mem.get(); }
};

struct Lane {
  const NetPort* port = nullptr;
  PortHealth* health = nullptr;  // the port's, shared by every connection on it
  MrCache* mr_cache = nullptr;
  CqPtr cq;
  // The largest path MTU of this connection's QPs on this lane (0: no QP on it).
  int path_mtu = 0;  // bytes
  // The port knows this connection uses it (PortHealth::attach, ConnectionHealth::attach).
  bool attached = false;
  // The connection moves its traffic off this lane's port when the port fails (PortHealth::movable_users).
  bool movable = false;
};

struct QpLane {
  QpPtr qp;
  int lane = 0;        // local lane index
  int remote_dev = 0;  // index into the peer's device list
  uint32_t max_inline = 0;
};

class QpSet {
 public:
  using Clock = std::chrono::steady_clock;

  QpSet() = default;
  QpSet(const QpSet&) = delete;
  QpSet& operator=(const QpSet&) = delete;
  ~QpSet();

  // One lane per port, in handshake order.
  void open(const std::vector<const NetPort*>& ports, const std::vector<PortHealth*>& health,
            const std::vector<MrCache*>& caches);
  // Page-aligned, zeroed and registered on every lane; what *out held before is released first.
  Status register_buffer(size_t size, int access, RegisteredBuffer* out) const;
  // Creates each lane's completion queue of `cqe` entries, then `nqps` QPs: QP q on lane q % lanes and
  // towards the peer's device q % remote_ndevs. `where` names the connection in failures.
  Status create(int nqps, int remote_ndevs, const QpCaps& caps, int cqe, const std::string& where);
  // Checks every (local lane, remote device) pair used, logs mtu warnings, moves the QPs to RTR and
  // RTS; each lane's path_mtu is then its QPs' largest, and the connection's (the smallest) is
  // returned in *path_mtu.
  Status connect(const std::vector<uint32_t>& remote_qpns, const EndInfo& local, const EndInfo& remote,
                 const LinkParams& link, const std::string& peer, const std::string& where, int* path_mtu);
  // Brings the QPs of `mask` (bit q: QP q) back from the error state to RTS towards the same remote QPs,
  // the path checked again: a port that failed and is ACTIVE again (docs/failover.md, recovery).
  Status reconnect(uint64_t mask, const std::vector<uint32_t>& remote_qpns, const EndInfo& local,
                   const EndInfo& remote, const LinkParams& link, const std::string& where);
  std::vector<uint32_t> qpns() const;
  // QP q to `state` alone (ERR: a failover stops it; RESET: a recovery restarts it).
  Status move_to(size_t q, ibv_qp_state state, const std::string& where);

  const std::vector<Lane>& lanes() const { return lanes_; }
  std::vector<Lane>& lanes() { return lanes_; }
  const std::vector<QpLane>& qps() const { return qps_; }
  std::vector<QpLane>& qps() { return qps_; }
  // lanes()[0] when there is exactly one lane, else null.
  const Lane* solo() const { return solo_; }
  // Whether completions are timed per lane (record_parts): the connection has several lanes.
  bool striped() const { return lanes_.size() > 1; }
  // In a sink's on_completion(): the lane whose completion queue gave the completion, and when the
  // poll that drained it found it (one clock read per drain that finds completions, striped only).
  size_t completion_lane() const { return poll_lane_; }
  Clock::time_point completion_time() const { return poll_time_; }

  // A sink has: Status on_completion(const ibv_wc&); bool poll_failed(); bool completion_failed(size_t
  // lane, const ibv_wc&, Status) (both false: the connection failed); bool drain_all() (every lane).
  // drain_solo: the one lane's CQ, one batch (a full batch: sink.drain_all()); solo() must be set.
  // Not striped, so its completions need no poll time. Inline: it runs on every test().
  template <class Sink>
  [[gnu::always_inline]] bool drain_solo(Sink& sink) {
    ibv_cq* cq = solo_->cq.get();
    if (cq == nullptr) return true;
    ibv_wc wcs[kPollBatch];
    const int n = ibv_poll_cq(cq, kPollBatch, wcs);
    if (n == 0) return true;
    if (n < 0) return sink.poll_failed();
    poll_lane_ = 0;
    for (int i = 0; i < n; ++i)
      if (Status st = sink.on_completion(wcs[i]); !st.ok())
        return sink.completion_failed(0, wcs[i], std::move(st));
    return n < kPollBatch || sink.drain_all();  // a full batch: there may be more
  }
  // Every lane's CQ until it is empty. False when the sink reported the connection failed.
  template <class Sink>
  bool drain_all(Sink& sink) {
    ibv_wc wcs[kPollBatch];
    bool timed = false;
    for (size_t l = 0; l < lanes_.size(); ++l) {
      ibv_cq* cq = lanes_[l].cq.get();
      if (cq == nullptr) continue;  // the handshake did not get as far as creating it
      for (;;) {
        const int n = ibv_poll_cq(cq, kPollBatch, wcs);
        if (n == 0) break;
        if (n < 0) return sink.poll_failed();
        poll_lane_ = l;
        // A striped connection times its parts per lane (record_parts): one clock read per drain.
        if (!timed && striped()) {
          poll_time_ = Clock::now();
          timed = true;
        }
        for (int i = 0; i < n; ++i)
          if (Status st = sink.on_completion(wcs[i]); !st.ok())
            return sink.completion_failed(l, wcs[i], std::move(st));
        if (n < kPollBatch) break;
      }
    }
    return true;
  }

 private:
  // QP q to RTR and RTS towards remote_qpn; *path_mtu the path's (bytes); `warn`: log path warnings.
  Status connect_one(size_t q, uint32_t remote_qpn, const EndInfo& local, const EndInfo& remote,
                     const LinkParams& link, const std::string& where, bool warn, int* path_mtu);
  static constexpr int kPollBatch = 16;  // completions taken per ibv_poll_cq
  std::vector<Lane> lanes_;
  std::vector<QpLane> qps_;
  // lanes_[0] when the connection has exactly one lane (most do): set once the lanes are (open), so
  // that the drain on every idle test() reads one pointer rather than walk the vector.
  const Lane* solo_ = nullptr;
  size_t poll_lane_ = 0;           // completion_lane()
  Clock::time_point poll_time_{};  // completion_time()
};

}  // namespace railscope::net::verbs
