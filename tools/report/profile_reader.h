// SPDX-License-Identifier: Apache-2.0
// Reads railscope profiles (docs/profile-format.md) and the net plugin's stats lines
// (RAILSCOPE_NET_STATS, their "rail_rate"): every *.jsonl file in the given directories (or the files
// themselves). Unknown record types and members are ignored; a line that is not valid
// JSON, or holds a number its member cannot take (an integer out of range, a negative or implausibly
// large time or bandwidth), is reported with its file and line number and skipped, never fatal. Each
// file lists its first 5 skipped lines, then how many there were in all.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace railscope::report {

struct WaitRow {
  int channel = 0;
  int peer = -1;
  bool is_send = false;
  uint64_t bytes = 0;
  double peer_wait_us = 0;
  double net_us = 0;
  double gpu_wait_us = 0;
};

struct CollRow {
  std::string comm;
  int rank = -1;
  int nranks = 0;
  uint64_t seq = 0;
  // The communicator's ordinal over all its collectives (`ord`): the same collective on every rank.
  // Absent in profiles written before it was recorded, and for p2p.
  std::optional<uint64_t> ord;
  std::string op;
  bool p2p = false;
  int peer = -1;
  uint64_t bytes = 0;
  uint64_t count = 0;  // elements, as NCCL reports them (nccl-tests' "count")
  std::string dtype;   // NCCL's datatype name, e.g. "ncclFloat32"
  std::string redop;   // reduction op when the profile records one ("" otherwise: see docs/profiler.md)
  // What NCCL ran it with (`algo`, `proto`: "RING", "SIMPLE"; "" in p2p records and older profiles),
  // its channels and the communicator's node count (0 when not recorded).
  std::string algo, proto;
  int channels = 0;
  int nnodes = 0;
  std::optional<double> time_us;
  std::optional<double> busbw_gbs;
  std::optional<double> algbw_gbs;
  uint64_t start_unix_ns = 0;
  uint64_t end_unix_ns = 0;
  bool complete = true;
  std::string timing;
  std::vector<WaitRow> waits;
  uint32_t file = 0;  // index into ProfileSet::files (its host and pid)
};

struct DiagRow {
  std::string id;
  std::string severity;
  std::string comm;
  int rank = -1;
  std::string op;
  std::optional<uint64_t> seq;
  std::string detail;
  std::string fix;
  uint64_t unix_ns = 0;
  std::string host;
  // coll.hang: the collective stuck in flight (absent in profiles written before they were recorded).
  std::optional<uint64_t> ord;
  uint64_t count = 0;
  std::string dtype;
  uint64_t bytes = 0;
  uint64_t start_unix_ns = 0;
  uint32_t file = 0;
};

// A communicator's rank that finalized (its `summary` record).
struct FinishedRank {
  std::string comm;
  int rank = -1;
};

// One port over one reporting window of a `fabric` record.
struct FabricRow {
  std::string host;
  std::string port;  // "mlx5_0:1"
  std::string state;
  uint64_t start_unix_ns = 0, end_unix_ns = 0;
  // loss, congestion, pause, link, discard, traffic, other (docs/profile-format.md)
  std::array<uint64_t, 7> counts{};
};
inline constexpr const char* kFabricCategories[7] = {"loss",    "congestion", "pause", "link",
                                                     "discard", "traffic",    "other"};

// One port's large sends in one net plugin stats line (RAILSCOPE_NET_STATS, docs/fabric-health-net.md
// "Statistics"): a verbs connection's "rail_rate" entry, the whole port's figures (every connection of
// the process on it) since that connection's previous line.
struct RailRateSample {
  std::string host;  // the line's local.host
  int64_t pid = 0;
  std::string connection;  // role, local.dev and peer.addr: which connection wrote the line
  std::string port;        // "mlx5_0:1"
  uint64_t bytes = 0;
  double busy_s = 0;
  uint64_t transfers = 0;
};

// Plausible bounds of the float members (docs/profile-format.md): a duration of more than a million
// seconds or a bandwidth above 10 PB/s is not a measurement; sums of many of them stay finite.
inline constexpr double kMaxMicroseconds = 1e12;
inline constexpr double kMaxGbs = 1e7;

// A deque: millions of records grow it without a vector's doubling, whose old and new arrays together
// were the report's peak memory.
using CollRows = std::deque<CollRow>;

// One rank's waits on one peer, summed over records (see ProfileSet::folded_waits).
struct WaitSum {
  double peer_wait_us = 0;
  double net_us = 0;
};

struct ProfileSet {
  std::vector<std::string> files;
  std::vector<std::string> file_hosts;  // per file: its header's hostname ("" before the header)
  std::vector<int64_t> file_pids;       // per file: its header's pid (0 when absent)
  std::vector<std::string> hosts;
  std::vector<std::string> tags;
  std::vector<std::string> nets;         // NCCL_NET of each header, when set
  std::vector<std::string> net_plugins;  // NCCL_NET_PLUGIN of each header, when set
  std::vector<std::string> paths;        // as given on the command line
  CollRows colls;
  // With `fold_waits` (read_profiles), the records' `waits` are summed here per (rank, peer) as they are
  // read and the records kept without them: all the report needs of them, at a fraction of the memory.
  bool fold_waits = false;
  std::map<std::pair<int, int>, WaitSum> folded_waits;
  std::vector<FabricRow> fabric;
  std::vector<DiagRow> diags;
  std::vector<RailRateSample> rail_rates;  // from net stats lines (their files may be given too)
  uint64_t dropped_events = 0;
  std::vector<FinishedRank> finished;
  std::vector<std::string>
      problems;  // "file:line: why" for the first skipped lines of each file, then a count
};

// Throws std::runtime_error when a path does not exist or holds no profile file. `fold_waits`: see
// ProfileSet::folded_waits.
ProfileSet read_profiles(const std::vector<std::string>& paths, bool fold_waits = false);

// The profile files a path names: the file itself, or a directory's *.jsonl files in name order (none
// yet is not an error). Throws std::runtime_error when the path does not exist.
std::vector<std::string> profile_files(const std::string& path);

// One file read line by line, whole or in pieces as it grows (`railscope report --follow`).
struct FileCursor {
  uint32_t index = 0;  // the file's index in ProfileSet::files
  std::string path;
  std::string host;  // from the header, once read
  int64_t pid = 0;
  int line = 0;
  size_t skipped = 0;
};

// Adds the records of one whole line (without its newline) to `out`; a line that is not JSON or
// holds a number out of range adds nothing and is listed in out.problems (the first few per file).
void read_profile_line(const std::string& line, FileCursor& cur, ProfileSet& out);
// The last line of a file that ends without a newline: the writer was stopped while writing it.
void report_torn_line(const std::string& line, FileCursor& cur, ProfileSet& out);

}  // namespace railscope::report
