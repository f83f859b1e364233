// SPDX-License-Identifier: Apache-2.0
// What a send and a receive connection share: the two ends as the handshake described them, the link
// parameters, the out-of-band channel kept open for liveness, and three parts it composes: the lanes,
// QPs and completion queues (qp_set.h), the connection's health and first error
// (connection_health.h), and its statistics and profiler events (connection_telemetry.h). It ties
// them together: a completion's failure goes to the health, a first error to the telemetry.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "plugin/net/transport.h"
#include "plugin/net/verbs/connection_health.h"
#include "plugin/net/verbs/connection_telemetry.h"
#include "plugin/net/verbs/qp_set.h"
#include "plugin/net/verbs/setup/handshake.h"
#include "plugin/net/verbs/setup/link_params.h"
#include "plugin/net/verbs/setup/oob_channel.h"
#include "railscope/nccl/net.h"

namespace railscope::net::verbs {

struct NetPort;  // discovery.h
class MrCache;   // mr_cache.h
struct QpCaps;   // qp.h

// Receives in flight per connection (each of up to kMaxRecvs buffers): NCCL_NET_MAX_REQUESTS, as NCCL
// keeps per comm and as the receiver-driven protocol has clear-to-send slots (receiver_driven_queues.h).
// A receive beyond them is answered "call again". Each slot is resident (RecvSlot, and the eager
// receiver's Targets): 64 of them made a 19 KiB receive comm and a 22 KiB eager receiver.
inline constexpr int kFifoDepth = 32;
inline constexpr int kMaxRecvs = 8;
inline constexpr uint64_t kWrSend = 1ull << 56, kWrRecv = 2ull << 56, kWrCts = 3ull << 56;
inline constexpr uint64_t kWrRing = 4ull << 56;   // eager protocol: a ring message
inline constexpr uint64_t kWrProbe = 5ull << 56;  // failover: the probe of a recovered port's QP
inline constexpr uint64_t kWrKindMask = 0xffull << 56;

// The tester (transport.h) of a protocol's requests: a request of type Req (SendReq, RecvSlot) names
// its comm, the comm its protocol. Instantiated in the file that defines Protocol::test, which is
// inlined into it: NCCL's polling loop goes through one call of the plugin's own before the
// completion queue's. Protocol::test returns NCCL's code as a tester does (Connection::idle_result).
template <class Protocol, class Req>
ncclResult_t protocol_tester(Request* r, int* done, int* sizes) {
  auto* req = static_cast<Req*>(r);
  return static_cast<Protocol*>(req->comm->protocol())->test(req, done, sizes);
}

// A registered memory handle as NCCL sees it: one MR per local device of the connection.
struct VerbsMr : MemHandle {
  int type = NCCL_PTR_HOST;  // NCCL_PTR_HOST, NCCL_PTR_CUDA or NCCL_PTR_DMABUF (regMrDmaBuf)
  int ndevs = 0;
  ibv_mr* mr[kMaxDevsPerEnd] = {};
  MrPtr owned[kMaxDevsPerEnd];  // registrations outside the MR cache (DMA-BUF)
  MrCache* cache[kMaxDevsPerEnd] = {};
  void* token[kMaxDevsPerEnd] = {};
  ~VerbsMr() override;
};

class Connection {
 public:
  using Clock = std::chrono::steady_clock;

  // `role`: "send" or "recv" (statistics); `requests`: the comm's request slots, each of which can
  // carry QP events (the subclass says what a slot is).
  Connection(const char* role, size_t requests) : role_(role), telemetry_(requests) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  virtual ~Connection();

  // What the handshake (connect.cpp) learns and decides, as it does.
  void set_link(const LinkParams& link) { link_ = link; }
  void set_local(EndInfo local) { local_ = std::move(local); }
  void set_remote(EndInfo remote) { remote_ = std::move(remote); }
  void set_oob(Channel oob) { oob_ = std::move(oob); }
  void set_profiler(ncclProfilerCallback_t profiler) { telemetry_.set_profiler(profiler); }
  // The protocol moves traffic off a failed port (both do, from prepare(); docs/failover.md): decided with
  // RAILSCOPE_NET_FAILOVER and the QP count at connect_qps (can_fail_over).
  void offer_failover() { failover_offered_ = true; }
  const LinkParams& link() const { return link_; }
  const EndInfo& local() const { return local_; }
  const EndInfo& remote() const { return remote_; }
  Channel& oob() { return oob_; }
  const Channel& oob() const { return oob_; }

  // Resources, in handshake order.
  Status open_lanes(const std::vector<const NetPort*>& ports, const std::vector<PortHealth*>& health,
                    const std::vector<MrCache*>& caches);
  // Page-aligned, zeroed and registered on every lane; what *out held before is released first.
  Status register_buffer(size_t size, int access, RegisteredBuffer* out) const {
    return qps_.register_buffer(size, access, out);
  }
  // Creates each lane's completion queue of `cqe` entries (once the protocol, and so the queue depths,
  // are agreed), then the QPs.
  Status create_qps(int nqps, int remote_ndevs, const QpCaps& caps, int cqe) {
    return qps_.create(nqps, remote_ndevs, caps, cqe, where());
  }
  // Checks every (local lane, remote device) pair used, logs mtu warnings, moves QPs to RTR and RTS,
  // then attaches the ports (health) and starts the statistics.
  Status connect_qps(const std::vector<uint32_t>& remote_qpns);
  std::vector<uint32_t> qpns() const { return qps_.qpns(); }
  EndInfo local_end(const std::vector<uint32_t>& rkeys_per_lane, uint64_t addr) const;

  const std::vector<Lane>& lanes() const { return qps_.lanes(); }
  const std::vector<QpLane>& qps() const { return qps_.qps(); }
  int path_mtu() const { return path_mtu_; }  // bytes
  ConnStats& stats() { return telemetry_.stats(); }
  bool stats_on() const { return telemetry_.stats_on(); }
  bool profiler_on() const { return telemetry_.profiler_on(); }
  std::chrono::microseconds stall_budget() const { return health_.stall_budget(); }

  // Failover (docs/failover.md), all off the data path. Whether this connection may fail over
  // (offer_failover, RAILSCOPE_NET_FAILOVER, at most failover::kMaxQps QPs, more than one port).
  bool can_fail_over() const { return can_fail_over_; }
  // The index of the QP of lane `lane` whose number is `qpn`; qps().size() when none is.
  size_t qp_index(size_t lane, uint32_t qpn) const;
  // The QPs that use local lane `lane`.
  uint64_t lane_qps(size_t lane) const;
  // Moves the QPs of `mask` to the error state: their queues flush, and nothing more lands through them.
  Status stop_qps(uint64_t mask);
  // Brings the stopped QPs of `mask` back to RTS towards the same peer QPs (a recovered port).
  Status restart_qps(uint64_t mask) {
    return qps_.reconnect(mask, remote_qpns_, local_, remote_, link_, where());
  }
  // The local lanes the QPs of `mask` use, one bit each.
  uint64_t qp_lanes(uint64_t mask) const;
  // Traffic is back on the QPs of `mask`: a later failure of their ports fails over again.
  void ports_restored(uint64_t mask) { moved_lanes_ &= ~qp_lanes(mask); }
  // Whether local lane `lane`'s port is down now (its last async event).
  bool lane_down(size_t lane) const;
  // "rxe2:1" for the local port of QP q; the ports of the QPs not in `failed`, joined by "+".
  std::string qp_port(size_t q) const;
  std::string live_ports(uint64_t failed) const;

  // Data-path helpers.
  // Drains every lane's CQ, handing each completion to the comm's on_completion(). Fails on the first
  // error. For the cold paths (a close, a stall's check); a protocol's data path drains with
  // drain_cqs(protocol).
  Status poll() { return drain_all_cqs() ? Status::success() : health_.error(); }
  // Drains the CQs from the connection's own protocol: a connection on one lane polls inline, and each
  // completion goes to the protocol's on_completion by a direct call, with no virtual dispatch (this runs
  // for every completion of the data path). Returns whether the connection is still healthy (error()
  // says why not): on an idle test() a Status would be pure cost. Several lanes, or a connection
  // already failed: drain_all_cqs(), through the comm's on_completion.
  template <class Protocol>
  [[gnu::always_inline]] bool drain_cqs(Protocol& protocol) {
    if (qps_.solo() == nullptr || !health_.ok()) return drain_all_cqs();
    DrainSink<Protocol> sink{*this, protocol};
    return qps_.drain_solo(sink);
  }
  // Checks that cannot wait for a completion: port health, peer liveness (rate-limited), and the
  // periodic stats line when due.
  Status watch(Clock::time_point now);
  // The same from a polling loop that found nothing: port health on every call, the clock-based
  // checks one call in ConnectionHealth::clock_due. Inline, as health(): every test() that finds
  // nothing comes here.
  Status watch() { return clock_due() ? watch(Clock::now()) : health(); }
  // isend/irecv answering "call again" (counted): the watch's checks decide whether that is all.
  Status not_ready() {
    ++stats().not_ready;
    return watch();
  }
  bool clock_due() { return health_.clock_due(); }
  // The same three as a tester returns them (NCCL's code, a failure logged: tested_result in
  // transport.h). On a test() that finds its request not done, the usual case, no Status is built.
  ncclResult_t idle_result() { return clock_due() ? tested_result(watch(Clock::now())) : health_result(); }
  ncclResult_t health_result() { return healthy() ? ncclSuccess : tested_result(health_failure()); }
  ncclResult_t error_result() const { return tested_result(health_.error()); }
  // The first error, or a port failure recorded since this connection opened its lanes (which fails
  // the connection). The check inline, the failure out of line.
  Status health() { return healthy() ? Status::success() : health_failure(); }
  bool healthy() const { return health_.healthy(); }
  Status health_failure();
  Status fail(Status st);  // records the first error (and counts it), returns the connection's error
  const Status& error() const { return health_.error(); }
  std::string where() const;  // "host:rxe0:1 GID … -> peer host:rxe1:1 GID …"
  // A send posted at posted_at and not acknowledged within the QPs' retry budget is an error
  // (progress.stalled, or async.port_error naming the port when one of the connection's went down and
  // is still down); otherwise the watch's checks. The budget runs from the post or from the last
  // completion of a send posted before it, whichever is later: a send queued behind others on a lossy
  // path waits for theirs first, as the QPs' retry counts start again with each acknowledgement. A
  // send posted later that completed says nothing of this one (it may have gone on another port).
  Status stall_check(size_t bytes, Clock::time_point posted_at);
  // A send of the connection posted at `posted_at` completed (for stall_check, which notes when it
  // sees it: one store here, on the data path).
  void send_done(Clock::time_point posted_at) { done_from_ = posted_at; }

  // One JSON stats line (RAILSCOPE_NET_STATS): `final` at close, otherwise a periodic one
  // (RAILSCOPE_NET_STATS_INTERVAL), written from watch(now) on the thread that drives the connection.
  void emit_stats(const char* role, bool final = true);
  // A send of `bytes` posted at `start` and seen done at `end`: a large one adds to the rate of the
  // ports it used (ConnectionTelemetry::record_transfer).
  void record_transfer(size_t bytes, Clock::time_point start, Clock::time_point end) {
    ConnectionTelemetry::record_transfer(qps_.lanes(), bytes, start, end);
  }
  // The same part by part on a striped connection (ConnectionTelemetry::record_parts).
  void record_parts(size_t bytes, Clock::time_point posted_at, const Clock::time_point* lane_done) {
    ConnectionTelemetry::record_parts(qps_.lanes(), qps_.qps(), bytes, posted_at, lane_done);
  }
  // Whether completions are timed per lane (record_parts): the connection has several lanes.
  bool striped() const { return qps_.striped(); }
  // In on_completion(): the lane whose completion queue gave the completion, and when the poll that
  // drained it found it (striped connections only).
  size_t completion_lane() const { return qps_.completion_lane(); }
  Clock::time_point completion_time() const { return qps_.completion_time(); }
  // Starts the QP events (NCCL's IB QP descriptor, qp_events.h) of the message in request slot
  // `request` (message `seq` of `size` bytes, `opcode` as NCCL's IB transport reports it) when NCCL
  // gave a parent handle and a profiler callback: one per part chunk_of gives each QP, naming that QP
  // and its local device (its lane), with the part's length; one on QP 0 when the message has no
  // bytes or goes `whole` through QP 0 (an eager ring message). Before the first, the connection's
  // ports are announced (RailscopeNetPort_v1).
  void profile_start(size_t request, void* phandle, int opcode, uint64_t seq, size_t size,
                     bool whole = false) {
    telemetry_.profile_start(qps_.lanes(), qps_.qps(), request, phandle, opcode, seq, size, whole);
  }
  // Ends the request slot's QP events (NCCL's Stop) and forgets them.
  void profile_stop(size_t request) { telemetry_.profile_stop(request, qps_.qps().size()); }
  bool profiling(size_t request) const { return telemetry_.profiling(request); }
  // The connection failed: the request slot's QP events end, and one railscope NetPlugin event
  // (docs/profiler.md: pluginId kNetTypeRailscope | 1, RailscopeNetQp_v1 naming the QP that failed
  // and its device, then UpdateAndStop with RailscopeNetCompletion_v1: the completion status, vendor
  // error and the diagnosis id) carries the error to the profiler under the same parent.
  void profile_failure(size_t request, void* phandle, size_t bytes);

 protected:
  virtual Status on_completion(const ibv_wc& wc) = 0;
  // Called once, when the connection records its first error and a profiler is present: every
  // request in flight with a profiler event calls profile_failure().
  virtual void profile_in_flight_failure() {}
  // The port of lane `lane` failed (its health recorded it): true when the protocol moves, or has
  // moved, its traffic elsewhere, so that the failure no longer fails the connection.
  virtual bool on_port_lost(size_t /*lane*/) { return false; }
  // Reads what the peer sent out of band since the handshake (a failover notice), and moves a failover
  // or a recovery on, at the peer-liveness checks' pace.
  virtual Status poll_notices() { return Status::success(); }
  // Remembers the failed completion `wc` polled from lane `lane`'s CQ (the first one only).
  void note_failed_completion(size_t lane, const ibv_wc& wc) { health_.note_failed_completion(lane, wc); }
  // Every lane's CQ until it is empty, each completion to the comm's on_completion (virtual).
  bool drain_all_cqs();
  // The lanes and QPs themselves, for a subclass that builds its own (tests).
  QpSet& qp_set() { return qps_; }
  ConnectionHealth& health_state() { return health_; }

 private:
  // What a drain does with each completion and failure (QpSet): each completion to `target`'s
  // on_completion, the protocol's by a direct call or the comm's own (virtual, target = *this).
  template <class Target>
  struct DrainSink {
    Connection& c;
    Target& target;
    Status on_completion(const ibv_wc& wc) { return target.on_completion(wc); }
    bool poll_failed() { return c.poll_failed(); }
    bool completion_failed(size_t lane, const ibv_wc& wc, Status st) {
      return c.completion_failed(lane, wc, std::move(st));
    }
    bool drain_all() { return c.drain_all_cqs(); }
  };
  // A drain's failures: the connection fails; false.
  bool poll_failed();
  // A stall past the budget: the lanes whose port is down (and not moved yet) handed to on_port_lost.
  // True when at least one moved and every one could.
  bool move_off_down_ports();
  bool completion_failed(size_t lane, const ibv_wc& wc, Status st);

  const char* role_;  // "send" / "recv" (statistics)
  LinkParams link_;
  EndInfo local_, remote_;
  Channel oob_;
  int path_mtu_ = 0;
  bool failover_offered_ = false, can_fail_over_ = false;
  uint64_t moved_lanes_ = 0;           // lanes whose traffic the protocol moved (on_port_lost)
  Clock::time_point done_from_{};      // when the send that completed last was posted (send_done)
  Clock::time_point seen_from_{};      // done_from_ as stall_check last saw it
  Clock::time_point progressed_at_{};  // when stall_check saw it change: the last progress it knows
  std::vector<uint32_t> remote_qpns_;  // the peer's QP numbers, in QP order (restart_qps)
  QpSet qps_;
  ConnectionHealth health_;
  ConnectionTelemetry telemetry_;
};

// A MemHandle from reg_mr on a connection's lanes.
Status register_on_lanes(Connection& c, void* data, size_t size, int type, VerbsMr** out);

}  // namespace railscope::net::verbs
