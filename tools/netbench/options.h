// SPDX-License-Identifier: Apache-2.0
// Everything `railscope netbench` can be told, and how one run is planned from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol.h"

namespace railscope::netbench {

struct Options {
  std::string plugin;                  // --plugin PATH|NAME ("" = railscope's)
  std::string dev = "0";               // --dev NAME|INDEX
  std::string oob_host = "127.0.0.1";  // client: the server's address
  std::string oob_bind;                // server: the address it listens on ("" = all addresses)
  uint16_t oob_port = 18515;
  int oob_fd = -1;       // --oob-fd (the --pair driver's listening socket)
  std::string pair;      // --pair DEV_A,DEV_B
  std::string pin_cpus;  // --pin-cpus A,B (--pair: the server runs on CPU A only, the client on CPU B)
  uint64_t min_size = 8;
  uint64_t max_size = 64ULL << 20;
  uint32_t iters = 1000;  // bandwidth messages per size (capped by --bytes-per-size)
  uint32_t warmup = 16;
  uint32_t lat_iters = 1000;  // round trips per size (capped by a quarter of --bytes-per-size)
  uint64_t bytes_per_size = 32ULL << 20;
  // Each size's phases run at least this many timed messages (round trips) and, by a second run of the
  // phase when the first was shorter, at least this long: --bytes-per-size alone left 2 to 8 messages
  // at 1 to 4 MiB. Rows below either minimum are marked.
  uint32_t min_messages = 16;
  double min_time_s = 0.2;
  uint32_t window = 32;                // receive requests in flight
  uint32_t recvs = 1;                  // buffers per grouped receive
  uint64_t buffer_cap = 128ULL << 20;  // registered bytes per direction, at most
  bool verify = true;
  bool json = false;
  std::string mode = "both";  // bw | lat | both
  uint64_t seed = 0;          // 0 = random
  uint32_t timeout_s = 60;
  bool verbose = false;
  std::string poll = "yield";  // yield | spin | sleep: what a waiting loop does after a pass made no progress

  uint32_t modes() const;
  // Command-line arguments that reproduce these options for a child process (server/client).
  std::vector<std::string> forward_args() const;
};

// Message sizes of a run: 0 (if min is 0), then powers of two from max(min,1) to max.
std::vector<uint64_t> run_sizes(uint64_t min_size, uint64_t max_size);

// Why run_sizes(min, max) is empty ("" when it is not): no power of two lies between them.
std::string no_size_reason(uint64_t min_size, uint64_t max_size);
// One line per bound that run_sizes moved to a power of two (--min-size 3K measures from 4K).
std::vector<std::string> size_rounding_notes(uint64_t min_size, uint64_t max_size);

// Registered bytes per direction for a run.
uint64_t region_bytes(const Options& o);

// The plan of one size (window and grouping clamped to what fits the region; counts capped so a
// size takes about --bytes-per-size of traffic).
SizePlan plan_size(const Options& o, uint64_t size, uint64_t region);

// Timed messages (or round trips) a phase of `done` timed ones that took `seconds` needs to last
// --min-time, at most 64 times as many and never fewer than `done`; `done` when it already lasted.
uint64_t messages_for_min_time(const Options& o, uint64_t done, double seconds);

}  // namespace railscope::netbench
