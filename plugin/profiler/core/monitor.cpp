// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/monitor.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "plugin/profiler/core/clock.h"
#include "plugin/profiler/core/comm_expectation.h"
#include "plugin/profiler/core/hang_report.h"
#include "plugin/profiler/core/profiler_core.h"
#include "plugin/profiler/core/prom.h"
#include "plugin/profiler/core/slot_scan.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/core/safe_file.h"

namespace railscope::profiler {
namespace {

constexpr uint64_t kTickNs = 10'000'000;          // scan period
constexpr uint64_t kGraceNs = 20'000'000;         // a completed collective waits this long for late children
constexpr uint64_t kChildlessNs = 1'000'000'000;  // see scan_action
constexpr size_t kMaxRetiredComms = 64;           // finalized communicators kept in the textfile

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

int64_t unix_offset_ns() {
  static const int64_t offset = [] {
    timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    const uint64_t mono = now_ns();
    const int64_t real = static_cast<int64_t>(rt.tv_sec) * 1000000000ll + rt.tv_nsec;
    return real - static_cast<int64_t>(mono);
  }();
  return offset;
}

MonitorConfig read_monitor_config() {
  MonitorConfig c;
  c.dir = params::get_string("RAILSCOPE_PROFILE_DIR");
  c.prom = params::get_string("RAILSCOPE_PROFILE_PROM");
  c.prom_ns = static_cast<uint64_t>(params::get_int("RAILSCOPE_PROFILE_PROM_SECONDS")) * 1000000000ull;
  c.prom_keep = params::get_int("RAILSCOPE_PROFILE_PROM_KEEP") != 0;
  c.tag = params::get_string("RAILSCOPE_PROFILE_TAG");
  c.hang_ns = static_cast<uint64_t>(params::get_int("RAILSCOPE_HANG_SECONDS")) * 1000000000ull;
  c.fabric_ns = static_cast<uint64_t>(params::get_int("RAILSCOPE_PROFILE_FABRIC_SECONDS")) * 1000000000ull;
  c.slow.rails = static_cast<int>(params::get_int("RAILSCOPE_EXPECTED_RAILS"));
  c.slow.fraction = static_cast<double>(params::get_int("RAILSCOPE_SLOW_PERCENT")) / 100.0;
  c.slow.consecutive = static_cast<int>(params::get_int("RAILSCOPE_SLOW_COUNT"));
  c.slow.min_bytes = static_cast<uint64_t>(params::get_int("RAILSCOPE_SLOW_MIN_BYTES"));
  const std::string expected = params::get_string("RAILSCOPE_EXPECTED_BUSBW");
  if (!expected.empty()) {
    char* end = nullptr;
    const double v = std::strtod(expected.c_str(), &end);
    if (end == expected.c_str() || *end != '\0' || !(v > 0.0) || v > 1e6) {
      RS_WARN("{}",
              diag::one_line(diag::make(
                  "config.bad_env",
                  fmt::format("RAILSCOPE_EXPECTED_BUSBW={}: not a positive number of GB/s; slow-collective "
                              "diagnosis disabled",
                              expected))));
    } else {
      c.slow.expected_gbs = v;
    }
  } else {
    c.node_ceiling = node_ceiling_from_system();
  }
  return c;
}

Monitor& Monitor::instance() {
  // Destroyed when the library is unloaded (or at exit): see ~Monitor.
  static Monitor m;
  return m;
}

Monitor::~Monitor() {
  // Normally the last finalize already stopped the thread; this covers a process that exits (or
  // unloads the plugin) with communicators still alive: stop the thread, flush, close.
  std::unique_lock lock(mu_);
  stop_ = true;
  running_ = false;
  cv_.notify_all();
  std::thread t = std::move(thread_);
  lock.unlock();
  if (t.joinable()) t.join();
  lock.lock();
  flush_locked();
  warn_lost_records_locked("at exit");
  file_.close();
}

std::string Monitor::path() const {
  std::lock_guard lock(mu_);
  return path_;
}

void Monitor::add(CommState* c) {
  std::unique_lock lock(mu_);
  if (!running_) {
    cfg_ = read_monitor_config();
    path_ = fmt::format("{}/{}-{}.jsonl", cfg_.dir, hostname(), getpid());
    std::error_code ec;
    std::filesystem::create_directories(cfg_.dir, ec);
    const bool existed = std::filesystem::exists(path_, ec);
    // (Re)opening closes a previous session's file, if its remove() raced with us.
    std::string why;
    file_failed_ = !file_.open(path_, &why);
    if (file_failed_) {
      RS_WARN("{}", diag::one_line(diag::make("profile.write_failed", why)));
    } else if (!existed) {
      HeaderInfo h;
      h.hostname = hostname();
      h.pid = getpid();
      h.start_unix_ns = to_unix_ns(now_ns());
      h.tag = cfg_.tag;
      h.net = params::raw("NCCL_NET").value_or("");
      h.net_plugin = params::raw("NCCL_NET_PLUGIN").value_or("");
      pending_ += format_header(h);
    }
    prom_path_.clear();
    prom_failed_ = false;
    prom_ports_.clear();
    if (!cfg_.prom.empty()) {
      prom_id_ = core::prom_identity_from_env(hostname());
      const core::PromTarget t = core::prom_target(cfg_.prom, "railscope", prom_id_.host, getpid());
      prom_path_ = t.path;
      if (!t.error.empty())
        RS_WARN("{}", diag::one_line(diag::make(
                          "profile.write_failed",
                          fmt::format("no Prometheus textfile (RAILSCOPE_PROFILE_PROM): {}", t.error))));
    }
    start_fabric_locked();
    stop_ = false;
    running_ = true;
    last_prom_ns_ = now_ns();
    thread_ = std::thread([this] { run(); });
  }
  apply_expectation(cfg_.slow, cfg_.node_ceiling, c);
  if (c->ident.nnodes > 1) report_rails_locked(c);
  c->monitor.series.comm = comm_hex(c->ident.hash);
  c->monitor.series.name = c->ident.name;
  c->monitor.series.rank = c->ident.rank;
  c->monitor.series.nranks = c->ident.nranks;
  c->monitor.series.nnodes = c->ident.nnodes;
  comms_.push_back(c);
  pending_ += format_comm(c->ident, c->mask, to_unix_ns(now_ns()));
  write_prom_locked();  // the file exists from the start (drop counters at 0)
  flush_locked();
}

void Monitor::remove(CommState* c) {
  std::unique_lock lock(mu_);
  scan_locked(c, now_ns(), /*force=*/true);
  drain_net_errors_locked(c);
  for (const QpStats& q : c->qps)
    if (q.key.load() != 0) pending_ += format_qp(c->ident, q);
  uint64_t dropped = 0;
  for (size_t i = 0; i < static_cast<size_t>(DropKind::Count); ++i) {
    const uint64_t n = c->dropped[i].load();
    dropped += n;
  }
  if (dropped > 0)
    emit_diag_locked(
        c,
        diag::make("profile.dropped", fmt::format("{} profiler events dropped because a fixed pool was "
                                                  "full (per kind in the summary record)",
                                                  dropped)),
        {}, 0, nullptr);
  pending_ += format_summary(*c, to_unix_ns(now_ns()));
  log_summary_locked(c);
  std::erase(comms_, c);
  retire_series_locked(c);
  write_prom_locked();  // the communicator's final values
  flush_locked();
  if (comms_.empty() && running_) {
    if (fabric_.active()) fabric_window_locked();  // the last (partial) window
    flush_locked();
    stop_ = true;
    running_ = false;
    cv_.notify_all();
    std::thread t = std::move(thread_);
    lock.unlock();
    t.join();
    lock.lock();
    if (!running_) {
      warn_lost_records_locked("when the last communicator was finalized");
      file_.close();
      remove_prom_locked();
    }
  }
}

void Monitor::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::nanoseconds(kTickNs));
    if (stop_) break;
    tick_locked(false);
  }
}

void Monitor::tick_locked(bool force_all) {
  const uint64_t now = now_ns();
  for (CommState* c : comms_) {
    scan_locked(c, now, force_all);
    drain_net_errors_locked(c);
  }
  if (!prom_path_.empty() && now - last_prom_ns_ >= cfg_.prom_ns) write_prom_locked();
  if (fabric_.active() && now - last_fabric_ns_ >= cfg_.fabric_ns) fabric_window_locked();
  flush_locked();
}

void Monitor::scan_locked(CommState* c, uint64_t now, bool force) {
  ScanRules rules;
  rules.grace_ns = kGraceNs;
  rules.childless_ns = kChildlessNs;
  rules.hang_ns = cfg_.hang_ns;
  rules.tracks_kernel = c->tracks_kernel();
  rules.force = force;
  uint64_t oldest_ns = 0;  // start of the oldest operation still in flight
  for (uint32_t i = 0; i < c->colls.capacity(); ++i) {
    CollSlot& s = c->colls.at(i);
    const Kind k = s.h.kind.load(std::memory_order_acquire);
    if (k != Kind::Coll && k != Kind::P2p) continue;
    const SlotStamps stamps = read_stamps(s);
    switch (scan_action(stamps, now, rules)) {
      case SlotAction::Keep: break;
      case SlotAction::WriteComplete: finalize_slot_locked(c, &s, true); break;
      case SlotAction::WriteIncomplete: finalize_slot_locked(c, &s, false); break;
      case SlotAction::ReportHang: report_hang_locked(c, &s, now); break;
    }
    const Kind after = s.h.kind.load(std::memory_order_acquire);
    if ((after == Kind::Coll || after == Kind::P2p) && stamps.candidate_ns == 0 &&
        (oldest_ns == 0 || stamps.start_ns < oldest_ns))
      oldest_ns = stamps.start_ns;
  }
  c->monitor.series.wait_seconds =
      oldest_ns == 0 ? 0.0 : static_cast<double>(elapsed_ns(now, oldest_ns)) / 1e9;
}

void Monitor::finalize_slot_locked(CommState* c, CollSlot* s, bool complete) {
  CollRecord r;
  r.is_p2p = s->h.kind.load() == Kind::P2p;
  r.op = s->op;
  r.datatype = s->datatype;
  r.algo = s->algo;
  r.proto = s->proto;
  r.seq = s->seq;
  r.ord = s->ord;
  r.count = s->count;
  r.root = s->root;
  r.peer = s->peer;
  r.channels = s->channels;
  r.rank = s->rank;
  r.graph = s->graph;
  r.complete = complete;
  r.bytes = message_bytes(s->op, s->count, datatype_size(s->datatype), c->ident.nranks);
  r.start_unix_ns = to_unix_ns(s->start_ns);
  const uint64_t gpu_start = s->gpu_min_start.load(), gpu_stop = s->gpu_max_stop.load();
  const uint64_t kcpu_start = s->kcpu_min_start.load(), kcpu_stop = s->kcpu_max_stop.load();
  const uint64_t last_child = s->last_child_stop_ns.load();
  const bool has_children = s->children_seen.load() > 0;
  uint64_t end_mono = last_child != 0 ? last_child : s->start_ns;
  if (complete && gpu_stop != 0 && gpu_start != UINT64_MAX && gpu_stop > gpu_start) {
    r.timing = "gpu";
    r.time_us = static_cast<double>(gpu_stop - gpu_start) / 1e3;
  } else if (complete && kcpu_stop != 0 && kcpu_start != UINT64_MAX && kcpu_stop > kcpu_start) {
    r.timing = "cpu_kernel";
    r.time_us = static_cast<double>(kcpu_stop - kcpu_start) / 1e3;
  } else if (complete && has_children && last_child > s->start_ns) {
    r.timing = "cpu_proxy";
    r.time_us = static_cast<double>(last_child - s->start_ns) / 1e3;
  } else {
    r.timing = "enqueue";
  }
  r.end_unix_ns = to_unix_ns(end_mono);
  if (r.time_us) {
    r.algbw_gbs = algbw_gbs(r.bytes, *r.time_us);
    if (auto f = busbw_factor(r.op, c->ident.nranks); f && r.algbw_gbs) r.busbw_gbs = *r.algbw_gbs * *f;
  }
  // Collect and recycle the proxy ops.
  for (ProxyOpSlot* op = s->ops_head.load(); op != nullptr;) {
    ProxyOpSlot* next = op->next;
    if (r.waits.size() < kMaxWaitsPerRecord) {
      WaitEntry w;
      w.channel = op->channel;
      w.peer = op->peer;
      w.is_send = op->is_send;
      w.steps = op->steps.load();
      w.bytes = op->bytes.load();
      w.peer_ns = op->peer_ns.load();
      w.net_ns = op->net_ns.load();
      w.gpu_ns = op->gpu_ns.load();
      if (!complete && !op->stopped.load()) {
        // Still waiting when written (hang, or finalize mid-flight): count the current wait too.
        const uint8_t st = op->cur_state.load();
        const uint64_t since = op->cur_since_ns.load();
        const uint64_t dt = elapsed_ns(now_ns(), since);
        switch (classify_wait(st)) {
          case WaitKind::PeerLateOrDead: w.peer_ns += dt; break;
          case WaitKind::NetworkPath: w.net_ns += dt; break;
          case WaitKind::LocalGpu: w.gpu_ns += dt; break;
          case WaitKind::Unknown: break;
        }
      }
      r.waits.push_back(w);
    } else {
      ++r.waits_dropped;
    }
    op->h.kind.store(Kind::None, std::memory_order_release);
    c->ops.release(op);
    op = next;
  }
  s->ops_head.store(nullptr);
  s->h.kind.store(Kind::None, std::memory_order_release);
  c->colls.release(s);

  pending_ += format_record(c->ident, r);
  if (r.is_p2p)
    ++c->monitor.p2ps_written;
  else
    ++c->monitor.colls_written;
  if (!complete) ++c->monitor.incomplete;
  PromCommSeries& series = c->monitor.series;
  if (series.rank < 0) series.rank = r.rank;  // ABI v1..v3: the rank comes with the descriptors
  ++series.records[r.op];
  if (r.busbw_gbs && r.time_us) {
    series.stats[{r.op, size_bucket(r.bytes)}].add(*r.busbw_gbs, *r.time_us);
    if (!r.is_p2p && c->net_ports.generation() != c->monitor.net_ports_generation)
      apply_expectation(cfg_.slow, cfg_.node_ceiling, c);  // the net plugin named a port or host staging
    if (!r.is_p2p)
      if (auto f = c->monitor.slow.feed(r.op, r.bytes, *r.busbw_gbs, r.proto)) {
        add_fabric_context_locked(&*f);
        emit_diag_locked(c, *f, op_name(r.op), r.seq, nullptr, r.rank);
      }
  }
}

void Monitor::report_hang_locked(CommState* c, CollSlot* s, uint64_t now) {
  s->hang_reported = true;
  const uint64_t bytes = message_bytes(s->op, s->count, datatype_size(s->datatype), c->ident.nranks);
  const std::vector<WaitingOp> waiting = collect_waiting(*s, now);
  diag::Finding f = diag::make(
      "coll.hang", hang_detail(*s, bytes, c->ident.rank >= 0 ? c->ident.rank : s->rank, now, waiting));
  const StuckColl stuck = stuck_coll(*s, bytes);
  emit_diag_locked(c, f, op_name(s->op), s->seq, &waiting, s->rank, &stuck);
}

void Monitor::drain_net_errors_locked(CommState* c) {
  NetError e;
  while (c->net_errors.pop(&e)) {
    const char* id = e.diag_id != nullptr && diag::find(e.diag_id) != nullptr ? e.diag_id : "wc.error";
    diag::Finding f = diag::make(
        id,
        fmt::format("net plugin reported a failed completion on device {} QP {} (status {}, vendor_err {}{})",
                    e.device, e.qp, e.status, e.vendor_err,
                    e.peer >= 0 ? fmt::format(", peer rank {}", e.peer) : std::string()));
    emit_diag_locked(c, f, {}, 0, nullptr);
  }
}

void Monitor::emit_diag_locked(CommState* c, const diag::Finding& f, std::string_view op, uint64_t seq,
                               const std::vector<WaitingOp>* waiting, int rank, const StuckColl* stuck) {
  if (c->ident.rank >= 0 || rank < 0) rank = c->ident.rank;
  DiagContext ctx;
  ctx.comm = &c->ident;
  ctx.rank = rank;
  ctx.op = op;
  ctx.seq = seq;
  ctx.unix_ns = to_unix_ns(now_ns());
  ctx.waiting = waiting;
  ctx.stuck = stuck;
  pending_ += format_diag(f, ctx);
  ++c->monitor.diagnoses;
  ++c->monitor.series.diagnoses[std::string(f.id())];
  RS_WARN("railscope profiler: comm {} rank {}: {}", comm_hex(c->ident.hash), rank, diag::one_line(f));
}

void Monitor::log_summary_locked(const CommState* c) {
  const auto& m = c->monitor;
  RS_INFO(NCCL_INIT | NCCL_PROFILE,
          "railscope profiler: comm {} rank {}/{}: {} collectives, {} p2p, {} incomplete, {} diagnoses; "
          "profile {}",
          comm_hex(c->ident.hash), c->ident.rank, c->ident.nranks, m.colls_written, m.p2ps_written,
          m.incomplete, m.diagnoses, path_);
  if (m.series.stats.empty()) return;
  RS_INFO(NCCL_INIT | NCCL_PROFILE, "railscope profiler: {:<14} {:>10} {:>7} {:>11} {:>11} {:>11} {:>11}",
          "op", "size>=", "count", "time us", "busbw p50", "busbw min", "busbw max");
  for (const auto& [key, s] : m.series.stats)
    RS_INFO(NCCL_INIT | NCCL_PROFILE,
            "railscope profiler: {:<14} {:>10} {:>7} {:>11.1f} {:>11.2f} {:>11.2f} {:>11.2f}",
            op_name(key.first), uint64_t{1} << key.second, s.count,
            s.time_sum_us / static_cast<double>(s.count), s.busbw_quantile(0.5), s.busbw_min, s.busbw_max);
}

// The drop counters live in the communicator's atomics; the series copies them when written.
void Monitor::refresh_drops_locked(CommState* c) {
  for (size_t i = 0; i < static_cast<size_t>(DropKind::Count); ++i)
    c->monitor.series.drops[kDropNames[i]] = c->dropped[i].load(std::memory_order_relaxed);
}

void Monitor::retire_series_locked(CommState* c) {
  if (prom_path_.empty()) return;
  refresh_drops_locked(c);
  retired_.push_back(c->monitor.series);
  retired_.back().live = false;
  while (retired_.size() > kMaxRetiredComms) retired_.pop_front();
}

void Monitor::write_prom_locked() {
  last_prom_ns_ = now_ns();
  if (prom_path_.empty()) return;
  std::vector<const PromCommSeries*> series;
  for (const PromCommSeries& s : retired_) series.push_back(&s);
  for (CommState* c : comms_) {
    refresh_drops_locked(c);
    series.push_back(&c->monitor.series);
  }
  PromProcess p;
  p.id = prom_id_;
  p.pid = getpid();
  p.unix_seconds = static_cast<double>(to_unix_ns(last_prom_ns_)) / 1e9;
  p.ports = prom_ports_;
  std::string why;
  if (core::write_prom_textfile(prom_path_, format_prometheus(p, series), &why)) {
    prom_failed_ = false;
  } else if (!prom_failed_) {  // once until a write succeeds again
    prom_failed_ = true;
    RS_WARN("{}", diag::one_line(diag::make(
                      "profile.write_failed",
                      fmt::format("cannot write the Prometheus textfile {} (RAILSCOPE_PROFILE_PROM): {}",
                                  prom_path_, why))));
  }
}

// The textfile goes with the process unless asked to stay (RAILSCOPE_PROFILE_PROM_KEEP): a file left
// behind would keep a finished job's series alive in every scrape.
void Monitor::remove_prom_locked() {
  if (prom_path_.empty() || cfg_.prom_keep) return;
  std::error_code ec;
  std::filesystem::remove(prom_path_, ec);
  retired_.clear();
}

// Sampling the node's ports happens here, on the monitor thread: a few dozen sysfs reads per
// port and window, never on NCCL's threads.
void Monitor::start_fabric_locked() {
  rails_reported_ = false;
  fabric_ = FabricSampler();
  if (cfg_.fabric_ns == 0) return;
  const std::string root = node::Sysfs::default_root();
  fabric_.start(node::discover_sysfs(root), node::parse_hca_filter(params::get_string("NCCL_IB_HCA")), root,
                to_unix_ns(now_ns()));
  last_fabric_ns_ = now_ns();
}

void Monitor::fabric_window_locked() {
  last_fabric_ns_ = now_ns();
  const FabricWindow w = fabric_.next_window(to_unix_ns(last_fabric_ns_));
  if (!prom_path_.empty()) add_window(prom_ports_, w);
  pending_ += format_fabric(w);
}

// A rail already down, or slower than its siblings, when the job starts: named once, on the first
// communicator that spans nodes (only those use the rails).
void Monitor::report_rails_locked(CommState* c) {
  if (rails_reported_) return;
  rails_reported_ = true;
  for (const RailProblem& p : fabric_.problems_at_start())
    emit_diag_locked(c, diag::make(p.id, p.detail), {}, 0, nullptr);
}

// A slow-collective finding says what the fabric showed meanwhile: errors, loss, pause, congestion or
// discards on a port, a port no longer ACTIVE, or a rail that was down or degraded from the start.
void Monitor::add_fabric_context_locked(diag::Finding* f) {
  if (!fabric_.active() && fabric_.problems_at_start().empty()) return;
  std::string seen = fabric_.active() ? fabric_trouble(fabric_.recent(to_unix_ns(now_ns()))) : std::string();
  for (const RailProblem& p : fabric_.problems_at_start()) seen += (seen.empty() ? "" : "; ") + p.detail;
  if (!seen.empty()) f->detail += "; meanwhile the fabric shows: " + seen;
}

// Records that cannot be written (a full disk) are dropped, never held: memory stays bounded. The first
// failure is said at once; when a write works again the count of records lost goes into the profile and
// the log, and a count still unreported is logged when the file is closed.
void Monitor::flush_locked() {
  if (pending_.empty()) return;
  std::string why;
  const bool written = !file_.is_open() || file_.append(pending_, &why);
  pending_.clear();
  if (!written) {
    if (!file_failed_)
      RS_WARN("{}", diag::one_line(diag::make(
                        "profile.write_failed",
                        fmt::format("write to {} failed: {}; records are dropped (and counted) until writing "
                                    "works again",
                                    path_, why))));
    file_failed_ = true;
    return;
  }
  if (!file_failed_ || !file_.is_open()) return;
  file_failed_ = false;
  const diag::Finding f = diag::make(
      "profile.records_lost",
      fmt::format("{} profile records were lost while {} could not be written; writing works again",
                  file_.take_lost(), path_));
  DiagContext ctx;
  ctx.unix_ns = to_unix_ns(now_ns());
  if (!file_.append(format_diag(f, ctx), &why)) file_failed_ = true;
  RS_WARN("railscope profiler: {}", diag::one_line(f));
}

void Monitor::warn_lost_records_locked(const char* when) {
  if (file_.lost() == 0) return;
  RS_WARN("railscope profiler: {}",
          diag::one_line(diag::make("profile.records_lost",
                                    fmt::format("{} profile records were lost because {} could not be "
                                                "written (still failing {})",
                                                file_.take_lost(), path_, when))));
}

}  // namespace railscope::profiler
