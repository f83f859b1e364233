// What a send and a receive connection share: the local devices ("lanes", one CQ each), the RC QPs
// striped over them, the out-of-band channel kept open for liveness, link parameters, the negotiated
// path, registered control buffers, statistics, and the first error (once a connection failed, every
// later call reports that failure).
#pragma once

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin/net/common/stats.h"
#include "plugin/net/transport.h"
#include "plugin/net/verbs/handshake.h"
#include "plugin/net/verbs/link_params.h"
#include "plugin/net/verbs/oob_channel.h"
#include "plugin/net/verbs/port_health.h"
#include "plugin/net/verbs/qp_events.h"
#include "railscope/ibv/handles.h"
#include "railscope/nccl/net.h"

namespace railscope::net::verbs {

using ibv::CqPtr;
using ibv::MrPtr;
using ibv::QpPtr;
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
inline constexpr uint64_t kWrRing = 4ull << 56;  // eager protocol: a ring message
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
  PortHealth* health = nullptr;
  uint32_t health_generation = 0;
  MrCache* mr_cache = nullptr;
  CqPtr cq;
  // Once the QPs are connected: the port knows this connection uses it (PortHealth::attach), with
  // the largest path MTU of its QPs on this lane, and its counter totals at that moment.
  bool attached = false;
  uint8_t path_mtu = 0;
  CategoryTotals totals_at_attach{};
  // The port's large-transfer totals at this connection's previous stats line (its rate per line).
  RailRateAccumulator::Totals rate_at_line{};
};

struct QpLane {
  QpPtr qp;
  int lane = 0;        // local lane index
  int remote_dev = 0;  // index into the peer's device list
  uint32_t max_inline = 0;
};

class Connection {
 public:
  using Clock = std::chrono::steady_clock;

  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  virtual ~Connection();

  // Resources, in handshake order.
  Status open_lanes(const std::vector<const NetPort*>& ports, const std::vector<PortHealth*>& health,
                    const std::vector<MrCache*>& caches);
  // Page-aligned, zeroed and registered on every lane; what *out held before is released first.
  Status register_buffer(size_t size, int access, RegisteredBuffer* out);
  // Creates each lane's completion queue of `cqe` entries (once the protocol, and so the queue depths,
  // are agreed), then the QPs.
  Status create_qps(int nqps, int remote_ndevs, const QpCaps& caps, int cqe);
  // Checks every (local lane, remote device) pair used, logs mtu warnings, moves QPs to RTR and RTS.
  Status connect_qps(const std::vector<uint32_t>& remote_qpns);
  std::vector<uint32_t> qpns() const;
  EndInfo local_end(const std::vector<uint32_t>& rkeys_per_lane, uint64_t addr) const;

  // Data-path helpers.
  // Drains every lane's CQ, handing each completion to the comm's on_completion(). Fails on the first
  // error. For the cold paths (a close, a stall's check); a protocol's data path drains with
  // drain_cqs(protocol).
  Status poll() { return drain_all_cqs() ? Status::success() : error_; }
  // Drains the CQs from the connection's own protocol: a connection on one lane polls inline, and each
  // completion goes to the protocol's on_completion by a direct call, with no virtual dispatch (this runs
  // for every completion of the data path; bench/net_instructions). A connection on one lane
  // is not striped, so its completions need no poll time (take_completions). Returns whether the
  // connection is still healthy (error() says why not): on an idle test() a Status would be pure cost.
  // Several lanes, or a connection already failed: drain_all_cqs(), through the comm's on_completion.
  template <class Protocol>
  [[gnu::always_inline]] bool drain_cqs(Protocol& protocol) {
    if (solo_ == nullptr || !error_.ok()) return drain_all_cqs();
    ibv_cq* cq = solo_->cq.get();
    if (cq == nullptr) return true;
    ibv_wc wcs[kPollBatch];
    const int n = ibv_poll_cq(cq, kPollBatch, wcs);
    if (n == 0) return true;
    if (n < 0) return poll_failed();
    poll_lane_ = 0;
    for (int i = 0; i < n; ++i)
      if (Status st = protocol.on_completion(wcs[i]); !st.ok())
        return completion_failed(0, wcs[i], std::move(st));
    return n < kPollBatch || drain_all_cqs();  // a full batch: there may be more
  }
  // Checks that cannot wait for a completion: port health, peer liveness (rate-limited).
  Status watch(Clock::time_point now);
  // The same from a polling loop that found nothing: port health on every call, the clock-based
  // checks one call in kClockEvery (a clock read costs more than a CQ poll on hosts without a vDSO
  // clock, the soft-RoCE test bed among them, and the loop is NCCL's proxy thread spinning on test()).
  // Inline, as health(): every test() that finds nothing comes here (bench/net_instructions).
  Status watch() { return clock_due() ? watch(Clock::now()) : health(); }
  // isend/irecv answering "call again" (counted): the watch's checks decide whether that is all.
  Status not_ready() {
    ++stats.not_ready;
    return watch();
  }
  bool clock_due() { return ++idle_calls_ % kClockEvery == 0; }
  // The same three as a tester returns them (NCCL's code, a failure logged: tested_result in
  // transport.h). On a test() that finds its request not done, the usual case, no Status is built.
  ncclResult_t idle_result() { return clock_due() ? tested_result(watch(Clock::now())) : health_result(); }
  ncclResult_t health_result() { return healthy() ? ncclSuccess : tested_result(health_failure()); }
  ncclResult_t error_result() const { return tested_result(error_); }
  // The first error, or a port failure recorded since this connection attached to its ports (which
  // fails the connection). The check inline, the failure out of line.
  Status health() { return healthy() ? Status::success() : health_failure(); }
  bool healthy() const {
    if (!error_.ok()) return false;
    if (solo_ != nullptr) return solo_->health->generation() == solo_->health_generation;
    for (const auto& lane : lanes)
      if (lane.health->generation() != lane.health_generation) return false;
    return true;
  }
  Status health_failure();
  Status fail(Status st);  // records the first error (and counts it), returns it
  const Status& error() const { return error_; }
  std::string where() const;  // "host:rxe0:1 GID … -> peer host:rxe1:1 GID …"
  // One JSON stats line (RAILSCOPE_NET_STATS): `final` at close, otherwise a periodic one
  // (RAILSCOPE_NET_STATS_INTERVAL), written from watch(now) on the thread that drives the connection.
  void emit_stats(const char* role, bool final = true);
  // A send of `bytes` posted at `start` and seen done at `end`: a large one adds to the rate of the
  // ports it used (rail_rate.h; each lane its share of the bytes). Lock-free, no clock read.
  void record_transfer(size_t bytes, Clock::time_point start, Clock::time_point end);
  // The same for a connection striped over several lanes (ports), part by part: a large send of
  // `bytes` posted at `posted_at` whose parts on lane l (chunk_of over the QPs, QP q on qps[q].lane)
  // completed at lane_done[l] adds to each port its parts' bytes over [posted_at, lane_done[l]], so
  // a slow port of a striped connection shows its own rate. Lock-free, no clock read.
  void record_parts(size_t bytes, Clock::time_point posted_at, const Clock::time_point* lane_done);
  // Whether completions are timed per lane (record_parts): the connection has several lanes.
  bool striped() const { return lanes.size() > 1; }
  // In on_completion(): the lane whose completion queue gave the completion, and when the poll that
  // drained it found it (one clock read per poll() that finds completions, striped connections only).
  size_t completion_lane() const { return poll_lane_; }
  Clock::time_point completion_time() const { return poll_time_; }
  // Starts the QP events (NCCL's IB QP descriptor, qp_events.h) of the message in request slot
  // `request` (message `seq` of `size` bytes, `opcode` as NCCL's IB transport reports it) when NCCL
  // gave a parent handle and a profiler callback: one per part chunk_of gives each QP, naming that QP
  // and its local device (its lane), with the part's length; one on QP 0 when the message has no
  // bytes or goes `whole` through QP 0 (an eager ring message).
  // Inline: without a profiler (most runs) the call is the comparison, as profile_stop's.
  void profile_start(size_t request, void* phandle, int opcode, uint64_t seq, size_t size,
                     bool whole = false) {
    if (profiler != nullptr && phandle != nullptr)
      profile_start_events(request, phandle, opcode, seq, size, whole);
  }
  void profile_start_events(size_t request, void* phandle, int opcode, uint64_t seq, size_t size, bool whole);
  // Once per connection, before its first QP events: one railscope NetPlugin event per lane naming the
  // port, its rate and whether NCCL stages its traffic through host memory (RailscopeNetPort_v1), what
  // the profiler's expected busbw and its GPUDirect evidence come from (docs/profiler.md).
  void announce_ports(void* phandle);
  // Ends the request slot's QP events (NCCL's Stop) and forgets them. Inline: without a profiler,
  // or with NCCL's callback but no event ever started (no parent handle: net events off), the call
  // is two comparisons.
  void profile_stop(size_t request) {
    if (profiler != nullptr && qp_events.allocated()) profile_stop_events(request);
  }
  void profile_stop_events(size_t request);
  bool profiling(size_t request) const { return qp_events.live(request); }
  // The connection failed: the request slot's QP events end, and one railscope NetPlugin event
  // (docs/profiler.md: pluginId kNetTypeRailscope | 1, RailscopeNetQp_v1 naming the QP that failed
  // and its device, then UpdateAndStop with RailscopeNetCompletion_v1: the completion status, vendor
  // error and the diagnosis id) carries the error to the profiler under the same parent.
  void profile_failure(size_t request, void* phandle, size_t bytes);

  LinkParams link;
  EndInfo local, remote;
  Channel oob;
  std::vector<Lane> lanes;
  std::vector<QpLane> qps;
  ConnStats stats;
  uint8_t path_mtu = 0;
  std::chrono::microseconds stall_budget{0};
  ncclProfilerCallback_t profiler = nullptr;
  QpEvents qp_events;  // the subclass sets its request slots
  Clock::time_point opened = Clock::now();
  const char* role = "";  // "send" / "recv" (statistics)
  // RAILSCOPE_NET_STATS is set (once connected): its lines carry the receives' latency histogram, the
  // one use of a receive's two clock reads, which are spared otherwise (bench/net_instructions).
  bool stats_on = false;

 protected:
  virtual Status on_completion(const ibv_wc& wc) = 0;
  // Called once, when the connection records its first error and a profiler is present: every
  // request in flight with a profiler event calls profile_failure().
  virtual void profile_in_flight_failure() {}
  // Remembers the failed completion `wc` polled from lane `lane`'s CQ (the first one only): QP numbers
  // are unique per device, so the QP that failed is (lane, wc.qp_num).
  void note_failed_completion(size_t lane, const ibv_wc& wc);
  // What drain_all_cqs() does with a poll of lane `lane` that found n completions, or failed (n < 0):
  // false when the connection failed. Inlined there.
  [[gnu::always_inline]] inline bool take_completions(size_t lane, const ibv_wc* wcs, int n, bool* timed);
  // Its failures, out of line and cold (they build strings): the connection fails; false.
  [[gnu::cold, gnu::noinline]] bool poll_failed();
  [[gnu::cold, gnu::noinline]] bool completion_failed(size_t lane, const ibv_wc& wc, Status st);
  // Every lane's CQ until it is empty, each completion to the comm's on_completion (virtual).
  bool drain_all_cqs();

 private:
  Status explain(Status st);
  std::optional<Status> port_cause(const Status& st) const;
  // The QP an error event names (profile_failure).
  const QpLane* failed_qp() const;
  static constexpr uint32_t kClockEvery = 16;
  static constexpr int kPollBatch = 16;  // completions taken per ibv_poll_cq
  Status error_;
  // The failed completion behind error_ (status 0: the error was not a completion's).
  int failed_status_ = 0;
  bool ports_announced_ = false;
  uint32_t failed_vendor_err_ = 0;
  uint32_t failed_qpn_ = 0;
  size_t failed_lane_ = 0;
  Clock::time_point next_liveness_{};
  Clock::time_point next_stats_ = Clock::time_point::max();  // periodic stats line; max = never
  std::chrono::seconds stats_period_{0};
  StatsChange stats_seen_;  // what the last periodic line showed
  uint32_t idle_calls_ = 0;
  // lanes[0] when the connection has exactly one lane (most do), else null: set once the lanes are
  // (open_lanes), so that drain_cqs(protocol) and healthy(), on every idle test(), read one pointer rather
  // than walk the vector.
  const Lane* solo_ = nullptr;
  size_t poll_lane_ = 0;           // completion_lane()
  Clock::time_point poll_time_{};  // completion_time()
};

// A MemHandle from reg_mr on a connection's lanes.
Status register_on_lanes(Connection& c, void* data, size_t size, int type, VerbsMr** out);

}  // namespace railscope::net::verbs
