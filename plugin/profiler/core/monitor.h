// SPDX-License-Identifier: Apache-2.0
// The profiler's one background thread per process: finalizes completed collectives (after a short
// grace so a late child can still attach), runs the hang watchdog and the slow-collective
// detector, drains transport errors reported by the net plugin, and is the only writer of the
// JSONL profile and the Prometheus textfile. NCCL's threads never wait for it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "plugin/profiler/core/comm_state.h"
#include "plugin/profiler/core/fabric_sampler.h"
#include "plugin/profiler/core/jsonl_format.h"
#include "plugin/profiler/core/node_ceiling.h"
#include "plugin/profiler/core/prom.h"
#include "plugin/profiler/core/record_file.h"

namespace railscope::profiler {

struct MonitorConfig {
  std::string dir;
  std::string prom;  // RAILSCOPE_PROFILE_PROM: folder of the per-process textfiles, or one file (".prom")
  uint64_t prom_ns = 10ull * 1000000000ull;  // RAILSCOPE_PROFILE_PROM_SECONDS
  bool prom_keep = false;                    // RAILSCOPE_PROFILE_PROM_KEEP
  std::string tag;
  uint64_t hang_ns = 300ull * 1000000000ull;
  uint64_t fabric_ns = 10ull * 1000000000ull;  // RAILSCOPE_PROFILE_FABRIC_SECONDS; 0 = no sampling
  SlowConfig slow;
  // The node's RDMA ports, when RAILSCOPE_EXPECTED_BUSBW is not set (comm_expectation.h).
  std::optional<NodeCeiling> node_ceiling;
};
MonitorConfig read_monitor_config();

class Monitor {
 public:
  static Monitor& instance();
  // Registers a communicator (opens the file and starts the thread for the first one).
  void add(CommState* c);
  // Drains everything left for the communicator, writes its summary, logs the summary table, and
  // unregisters it; stops the thread and closes the file after the last one.
  void remove(CommState* c);
  // Path of this process's profile file ("" before the first communicator).
  std::string path() const;
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

 private:
  Monitor() = default;
  void run();
  void tick_locked(bool force_all);
  void scan_locked(CommState* c, uint64_t now, bool force);
  void finalize_slot_locked(CommState* c, CollSlot* s, bool complete);
  void report_hang_locked(CommState* c, CollSlot* s, uint64_t now);
  void drain_net_errors_locked(CommState* c);
  void emit_diag_locked(CommState* c, const diag::Finding& f, std::string_view op, uint64_t seq,
                        const std::vector<WaitingOp>* waiting, int rank = -1,
                        const StuckColl* stuck = nullptr);
  void log_summary_locked(const CommState* c);
  void write_prom_locked();
  void remove_prom_locked();
  void refresh_drops_locked(CommState* c);
  void retire_series_locked(CommState* c);
  void flush_locked();
  void warn_lost_records_locked(const char* when);
  void start_fabric_locked();
  void fabric_window_locked();
  void report_rails_locked(CommState* c);
  void add_fabric_context_locked(diag::Finding* f);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool stop_ = false;
  bool running_ = false;
  std::vector<CommState*> comms_;
  MonitorConfig cfg_;
  std::string path_;
  RecordFile file_;
  bool file_failed_ = false;  // the last write failed (said once until one works again)
  std::string pending_;
  std::string prom_path_;  // this process's textfile ("" when RAILSCOPE_PROFILE_PROM is unset)
  bool prom_failed_ = false;
  core::PromIdentity prom_id_;
  std::vector<PromPortSeries> prom_ports_;  // the sampled ports' totals since sampling began
  // Series of finalized communicators, kept (the newest kMaxRetiredComms) so their last values stay in
  // the textfile.
  std::deque<PromCommSeries> retired_;
  uint64_t last_prom_ns_ = 0;
  FabricSampler fabric_;
  uint64_t last_fabric_ns_ = 0;
  bool rails_reported_ = false;  // the rails down/degraded at start: named once per session
};

}  // namespace railscope::profiler
