// SPDX-License-Identifier: Apache-2.0
// The node's rail board (rail skew across processes): in a job each GPU's process drives one
// rail, so no process alone can see one rail slower than the others. The processes of one user on one
// node publish their ports' large-transfer totals (railscope/node/rail_skew.h) to one small file,
// /dev/shm/railscope-rails-<uid>[-job-<id>] (the job's id where the scheduler gives one, so two jobs of
// a user keep apart), and each reads everyone's once a second to judge the node's rails together
// (node_rail_skew.h).
//
// A board is laid out under a unique name beside its path (its pages reserved, so a full /dev/shm fails
// the layout rather than a later write) and linked into place whole: no process ever sees a board half
// laid out. An empty or all-zero file at the path (a layout an older railscope cut short) is replaced by a
// new board. A board removed while in use (by hand, a cleaner of /dev/shm) is noticed by its link count
// and the path opened again, so the processes of a node do not split over two boards.
//
// The file: a header (magic, version, slot count and size) and kRailBoardSlots fixed-size slots, one
// per (process, port): owner token (0 = free), the writer's pid, the time it last wrote (steady clock,
// CLOCK_MONOTONIC, one clock for every process of the node), the port name (NUL-terminated), the
// port's cumulative bytes, busy time and transfers, and the same totals when the writer's current rate
// window began. Access is pread/pwrite under flock(2) (shared to
// read, exclusive to write; never waiting: a busy board is skipped for a second), so no reader sees a
// half-written slot and a file truncated under us gives a short read, never a SIGBUS. Only the fabric
// sampler's once-a-second judgement touches it: the data path never does.
//
// Anything in the file may have been written by another program of the same user: a board that is a
// symlink, not a regular file, another user's, open to group or others, of the wrong size or with a
// foreign header is refused whole (open() says why); each slot is copied once and checked (name
// NUL-terminated and of port characters, pid and counts sane, time not in the future) before use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace railscope::node {

// 64 (process, port) pairs of 104 bytes: 8 GPUs' processes on a node of 8 NICs use 8, with room for several
// processes per port and for slots of processes that ended without releasing theirs.
inline constexpr size_t kRailBoardSlots = 64;
// A writer publishes once a second while it has connections: older entries are left out of a
// judgement, and after kRailBoardReclaimNs their slot may be taken by another writer.
inline constexpr int64_t kRailBoardFreshNs = 3'000'000'000;
inline constexpr int64_t kRailBoardReclaimNs = 30'000'000'000;
// A port name as the plugin writes it ("mlx5_10:1"), NUL included.
inline constexpr size_t kRailBoardPortBytes = 32;

// The file's layout (native byte order: the file never leaves the node).
struct RailBoardFileHeader {
  char magic[8];  // kRailBoardMagic
  uint32_t version;
  uint32_t slots;       // kRailBoardSlots
  uint32_t slot_bytes;  // sizeof(RailBoardFileSlot)
  uint32_t reserved[9];
};
struct RailBoardFileSlot {
  uint64_t owner;  // 0: free
  int64_t updated_ns;
  int32_t pid;
  uint32_t reserved;
  char port[kRailBoardPortBytes];
  uint64_t bytes;
  uint64_t busy_ns;
  uint64_t transfers;
  // The same totals when the writer's current rate window began (a reader that first sees the writer
  // counts from there: its sends before the first sighting are not lost).
  uint64_t start_bytes;
  uint64_t start_busy_ns;
  uint64_t start_transfers;
};
static_assert(sizeof(RailBoardFileHeader) == 56 && sizeof(RailBoardFileSlot) == 104);
inline constexpr char kRailBoardMagic[8] = {'R', 'S', 'R', 'A', 'I', 'L', 'B', 'D'};
inline constexpr uint32_t kRailBoardVersion = 1;
inline constexpr size_t kRailBoardFileBytes =
    sizeof(RailBoardFileHeader) + kRailBoardSlots * sizeof(RailBoardFileSlot);

// One port's cumulative large-transfer totals as one process published them.
struct RailBoardEntry {
  std::string port;
  int32_t pid = 0;
  uint64_t owner = 0;  // the writer's token (unique per board opened)
  int64_t updated_ns = 0;
  uint64_t bytes = 0;
  uint64_t busy_ns = 0;
  uint64_t transfers = 0;
  // At the start of the writer's current rate window (each at most the total above).
  uint64_t start_bytes = 0;
  uint64_t start_busy_ns = 0;
  uint64_t start_transfers = 0;
};

class RailBoard {
 public:
  struct Identity {
    int32_t pid = 0;
    uint64_t owner = 0;  // non-zero
  };
  // This process's pid and a token no other writer of the node has (pid, clock and a counter).
  static Identity this_process();
  // /dev/shm/railscope-rails-<effective uid>, with -job-<id> from SLURM_JOB_ID, PBS_JOBID or LSB_JOBID
  // (the first set; characters other than [A-Za-z0-9._-] as '_').
  static std::string default_path();
  // Opens the board at `path`, creating it (0600) when absent (or replacing an empty one); nullptr with `why`
  // when it is refused (see above) or cannot be opened. `uid`: whose board it must be (the effective uid in
  // the plugin).
  static std::unique_ptr<RailBoard> open(const std::string& path, Identity me, uint32_t uid,
                                         std::string* why);
  ~RailBoard();  // frees this writer's slots (best effort) and closes the file
  RailBoard(const RailBoard&) = delete;
  RailBoard& operator=(const RailBoard&) = delete;

  // Writes `mine` (this writer's ports; owner and pid are taken from the identity) at `now_ns`, each
  // into this writer's slot for the port or a free or abandoned one. false with `why` when the board
  // is refused on re-reading or full (the ports that found no slot are not published), false with an
  // empty `why` when another writer holds it at this instant.
  bool publish(const std::vector<RailBoardEntry>& mine, int64_t now_ns, std::string* why);
  // Every other writer's fresh entry, each slot copied once and checked; slots that fail the checks
  // are left out and counted in `refused` with the first reason in `why`. Empty with `why` when the
  // file is no longer a board, empty without `why` when a writer holds it at this instant.
  std::vector<RailBoardEntry> read_others(int64_t now_ns, int* refused, std::string* why);

  const Identity& identity() const { return me_; }
  const std::string& path() const { return path_; }

 private:
  RailBoard(int fd, std::string path, Identity me, uint32_t uid)
      : fd_(fd), path_(std::move(path)), me_(me), uid_(uid) {}
  // false with `why` when the board was removed under us and cannot be reopened; otherwise fd_ is the
  // board at path_ (reopened when the old one was removed).
  bool still_linked(std::string* why);
  int fd_ = -1;
  std::string path_;
  Identity me_;
  uint32_t uid_ = 0;
};

}  // namespace railscope::node
