// SPDX-License-Identifier: Apache-2.0
// Formats the records of docs/profile-format.md (schema railscope.profile v1) as single JSON lines
// (each ends in '\n'). Runs on the monitor thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/profiler/core/comm_state.h"
#include "plugin/profiler/core/fabric_sampler.h"
#include "plugin/profiler/core/record.h"
#include "plugin/profiler/core/wait_state.h"
#include "railscope/core/diagnosis.h"

namespace railscope::profiler {

inline constexpr int kSchemaVersion = 1;

struct HeaderInfo {
  std::string hostname;
  int pid = 0;
  uint64_t start_unix_ns = 0;
  std::string tag;
  std::string net;
  std::string net_plugin;
};

// One "waiting" entry of a coll.hang diagnosis.
struct WaitingOp {
  int channel = 0;
  int peer = -1;
  bool is_send = false;
  std::string state;  // "SendPeerWait", ...
  uint64_t since_ns = 0;
  WaitKind meaning = WaitKind::Unknown;  // written as wait_kind_name()
};

// The collective a coll.hang diagnosis is about, so that a reader can match it across ranks before
// any of them completes it.
struct StuckColl {
  std::optional<uint64_t> ord;  // collectives only (not p2p)
  uint64_t count = 0;
  const char* dtype = nullptr;
  uint64_t bytes = 0;
  uint64_t start_unix_ns = 0;
};

struct DiagContext {
  const CommIdentity* comm = nullptr;
  int rank = -1;        // the record's rank (the comm's, or the descriptor's with ABI v1..v3)
  std::string_view op;  // empty: not about one collective
  uint64_t seq = 0;
  uint64_t unix_ns = 0;
  const std::vector<WaitingOp>* waiting = nullptr;
  const StuckColl* stuck = nullptr;
};

std::string json_escape(std::string_view s);
std::string comm_hex(uint64_t hash);

std::string format_header(const HeaderInfo& h);
std::string format_comm(const CommIdentity& c, int mask, uint64_t unix_ns);
std::string format_record(const CommIdentity& c, const CollRecord& r);
std::string format_diag(const diag::Finding& f, const DiagContext& ctx);
std::string format_qp(const CommIdentity& c, const QpStats& q);
std::string format_summary(const CommState& c, uint64_t unix_ns);
// One `fabric` record: the node's sampled ports over one reporting window.
std::string format_fabric(const FabricWindow& w);

}  // namespace railscope::profiler
