// SPDX-License-Identifier: Apache-2.0
// The node's rail board file (railscope/node/rail_board.h).
#include "railscope/node/rail_board.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "railscope/core/params.h"

namespace railscope::node {
namespace {

// The whole file, read at once: header then slots.
struct Image {
  RailBoardFileHeader header{};
  RailBoardFileSlot slots[kRailBoardSlots]{};
};
static_assert(sizeof(Image) == kRailBoardFileBytes, "no padding between header and slots");

constexpr off_t slot_offset(size_t i) {
  return static_cast<off_t>(sizeof(RailBoardFileHeader) + i * sizeof(RailBoardFileSlot));
}

RailBoardFileHeader fresh_header() {
  RailBoardFileHeader h{};
  std::memcpy(h.magic, kRailBoardMagic, sizeof h.magic);
  h.version = kRailBoardVersion;
  h.slots = kRailBoardSlots;
  h.slot_bytes = sizeof(RailBoardFileSlot);
  return h;
}

std::string header_problem(const RailBoardFileHeader& h) {
  if (std::memcmp(h.magic, kRailBoardMagic, sizeof h.magic) != 0) return "not a rail board (magic)";
  if (h.version != kRailBoardVersion || h.slots != kRailBoardSlots ||
      h.slot_bytes != sizeof(RailBoardFileSlot))
    return fmt::format(
        "a rail board of another layout (version {}, {} slots of {} bytes; expected {}, {}, {})", h.version,
        h.slots, h.slot_bytes, kRailBoardVersion, kRailBoardSlots, sizeof(RailBoardFileSlot));
  return {};
}

// A lock held for one read or write; never waits (a sampler thread must not hang on another process).
class Flock {
 public:
  Flock(int fd, int op) : fd_(fd), held_(::flock(fd, op | LOCK_NB) == 0) {}
  ~Flock() {
    if (held_) ::flock(fd_, LOCK_UN);
  }
  Flock(const Flock&) = delete;
  Flock& operator=(const Flock&) = delete;
  bool held() const { return held_; }

 private:
  int fd_;
  bool held_;
};

// Reads the whole board; `why` on a short read (truncated under us) or a foreign header.
bool read_image(int fd, Image* out, std::string* why) {
  const ssize_t n = ::pread(fd, out, sizeof(Image), 0);
  if (n != static_cast<ssize_t>(sizeof(Image))) {
    *why = n < 0 ? fmt::format("read: {}", std::strerror(errno))
                 : fmt::format("{} bytes where the board has {}", n, sizeof(Image));
    return false;
  }
  *why = header_problem(out->header);
  return why->empty();
}

bool port_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':';
}

// The checks of one copied slot; "" when it may be used.
std::string slot_problem(const RailBoardFileSlot& s, int64_t now_ns) {
  const void* nul = std::memchr(s.port, '\0', sizeof s.port);
  if (nul == nullptr) return "port name not NUL-terminated";
  const size_t len = static_cast<size_t>(static_cast<const char*>(nul) - s.port);
  if (len == 0) return "empty port name";
  for (size_t i = 0; i < len; ++i)
    if (!port_char(s.port[i])) return "port name with characters no port has";
  if (s.pid <= 0) return fmt::format("pid {}", s.pid);
  if (s.updated_ns > now_ns + 1'000'000'000) return "written in the future";
  if (s.bytes < s.transfers) return "fewer bytes than transfers";
  if (s.transfers == 0 && (s.bytes != 0 || s.busy_ns != 0)) return "bytes or busy time without transfers";
  if (s.start_bytes > s.bytes || s.start_busy_ns > s.busy_ns || s.start_transfers > s.transfers)
    return "window start above the totals";
  return {};
}

}  // namespace

RailBoard::Identity RailBoard::this_process() {
  static std::atomic<uint64_t> counter{0};
  const auto pid = static_cast<uint32_t>(::getpid());
  const auto t = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  // pid in the high half, clock and counter mixed into the low half: unique on the node, never 0.
  uint64_t low = (t ^ (t >> 32) ^ (counter.fetch_add(1) * 0x9E3779B97F4A7C15ull)) & 0xffffffffull;
  if (low == 0) low = 1;
  return {static_cast<int32_t>(pid), (static_cast<uint64_t>(pid) << 32) | low};
}

std::string RailBoard::default_path() {
  // Scoped to the job where a scheduler names it, so two jobs of one user on a node keep apart.
  std::string job;
  for (const char* var : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"}) {
    const std::string v = params::get_string(var);
    if (v.empty()) continue;
    for (const char c : v.substr(0, 64)) job += port_char(c) && c != ':' ? c : '_';
    break;
  }
  return job.empty() ? fmt::format("/dev/shm/railscope-rails-{}", ::geteuid())
                     : fmt::format("/dev/shm/railscope-rails-{}-job-{}", ::geteuid(), job);
}

namespace {

// A new board under a unique name beside `path` (0600, its pages reserved, the header written), for
// link() or rename() into place: a board is never seen half laid out, and a full /dev/shm leaves nothing
// behind. The descriptor, with the name in *tmp; -1 with *why.
int lay_out_beside(const std::string& path, std::string* tmp, std::string* why) {
  const size_t slash = path.rfind('/');
  *tmp = (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/." +
         path.substr(slash == std::string::npos ? 0 : slash + 1) + ".XXXXXX";
  const int fd = ::mkostemp(tmp->data(), O_CLOEXEC);
  if (fd < 0) {
    *why = fmt::format("cannot lay out a board beside {}: {}", path, std::strerror(errno));
    return -1;
  }
  const RailBoardFileHeader h = fresh_header();
  int err = ::fchmod(fd, 0600) != 0 ? errno : 0;
  if (err == 0) err = ::posix_fallocate(fd, 0, static_cast<off_t>(kRailBoardFileBytes));
  if (err == 0 && ::pwrite(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) err = errno;
  if (err != 0) {
    *why = fmt::format("cannot lay out a board beside {}: {}", path, std::strerror(err));
    ::close(fd);
    ::unlink(tmp->c_str());
    return -1;
  }
  return fd;
}

bool all_zero(int fd) {
  char buf[4096];
  off_t at = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0) return false;
    if (n == 0) return true;
    for (ssize_t i = 0; i < n; ++i)
      if (buf[i] != 0) return false;
    at += n;
  }
}

}  // namespace

std::unique_ptr<RailBoard> RailBoard::open(const std::string& path, Identity me, uint32_t uid,
                                           std::string* why) {
  // O_NOFOLLOW: a symlink planted at the path is refused (ELOOP); O_NONBLOCK: a FIFO does not block.
  int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  for (int tries = 0; fd < 0 && errno == ENOENT && tries < 3; ++tries) {
    // None yet: laid out aside and linked into place (link() fails when another process won the race,
    // and that board is opened instead).
    std::string tmp;
    const int made = lay_out_beside(path, &tmp, why);
    if (made < 0) return nullptr;
    const bool linked = ::link(tmp.c_str(), path.c_str()) == 0;
    const int link_errno = errno;
    ::unlink(tmp.c_str());
    if (linked) {
      fd = made;
      break;
    }
    ::close(made);
    if (link_errno != EEXIST) {
      *why = fmt::format("{}: {}", path, std::strerror(link_errno));
      return nullptr;
    }
    fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  }
  if (fd < 0) {
    *why = fmt::format("{}: {}", path,
                       errno == ELOOP ? std::string("a symbolic link") : std::string(std::strerror(errno)));
    return nullptr;
  }
  auto refuse = [&](std::string text) {
    ::close(fd);
    *why = fmt::format("{}: {}", path, text);
    return nullptr;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refuse(fmt::format("fstat: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return refuse("not a regular file");
  if (st.st_uid != uid) return refuse(fmt::format("owned by uid {}, not {}", st.st_uid, uid));
  if ((st.st_mode & 077) != 0)
    return refuse(fmt::format("mode {:o}: open to group or others (a board is 0600)", st.st_mode & 0777));
  {
    // Writers hold the lock for microseconds: a lock still busy after ~100 ms is held by something else,
    // and the board is not used.
    std::unique_ptr<Flock> lock;
    for (int tries = 0; tries < 100; ++tries) {
      lock = std::make_unique<Flock>(fd, LOCK_EX);
      if (lock->held()) break;
      ::usleep(1000);
    }
    if (!lock->held()) return refuse("locked by another process for over 100 ms");
    if (::fstat(fd, &st) != 0) return refuse(fmt::format("fstat: {}", std::strerror(errno)));
    if (st.st_size == 0 || (st.st_size == static_cast<off_t>(kRailBoardFileBytes) && all_zero(fd))) {
      // Empty or all zeros: a layout cut short (an older railscope laid boards out in place, and a full
      // /dev/shm left zeros). Nothing can have used it: replaced by a new board, unless another process
      // replaced it already (then that one is opened).
      struct stat now {};
      if (::stat(path.c_str(), &now) == 0 && now.st_ino != st.st_ino) {
        lock.reset();
        ::close(fd);
        return open(path, me, uid, why);
      }
      std::string tmp;
      const int made = lay_out_beside(path, &tmp, why);
      if (made < 0) return refuse(fmt::format("an empty board, and {}", *why));
      if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::close(made);
        ::unlink(tmp.c_str());
        return refuse(fmt::format("an empty board that cannot be replaced: {}", std::strerror(err)));
      }
      lock.reset();
      ::close(fd);
      fd = made;
    } else if (st.st_size != static_cast<off_t>(kRailBoardFileBytes)) {
      return refuse(fmt::format("{} bytes where a board has {}", st.st_size, kRailBoardFileBytes));
    }
    RailBoardFileHeader h{};
    if (::pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) return refuse("short header");
    if (std::string p = header_problem(h); !p.empty()) return refuse(p);
  }
  return std::unique_ptr<RailBoard>(new RailBoard(fd, path, me, uid));
}

bool RailBoard::still_linked(std::string* why) {
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_nlink > 0) return true;
  // Removed while in use (by hand, or a cleaner of /dev/shm): the other processes of the node would
  // meet on a new board while this one wrote to the removed file.
  std::unique_ptr<RailBoard> fresh = open(path_, me_, uid_, why);
  if (!fresh) {
    *why = fmt::format("the board was removed, and reopening it failed: {}", *why);
    return false;
  }
  std::swap(fd_, fresh->fd_);  // `fresh` closes the removed file (its slots went with it)
  return true;
}

RailBoard::~RailBoard() {
  {
    const Flock lock(fd_, LOCK_EX);
    Image img;
    std::string why;
    if (lock.held() && read_image(fd_, &img, &why)) {
      const RailBoardFileSlot free_slot{};
      for (size_t i = 0; i < kRailBoardSlots; ++i)
        if (img.slots[i].owner == me_.owner)
          (void)!::pwrite(fd_, &free_slot, sizeof free_slot, slot_offset(i));
    }
  }
  ::close(fd_);
}

bool RailBoard::publish(const std::vector<RailBoardEntry>& mine, int64_t now_ns, std::string* why) {
  if (!still_linked(why)) return false;
  const Flock lock(fd_, LOCK_EX);
  if (!lock.held()) {
    why->clear();  // another writer at this instant: the next second publishes
    return false;
  }
  Image img;
  if (!read_image(fd_, &img, why)) return false;
  size_t unplaced = 0;
  for (const RailBoardEntry& e : mine) {
    if (e.port.empty() || e.port.size() >= kRailBoardPortBytes) {
      ++unplaced;
      continue;
    }
    // This writer's slot for the port, else a free one, else one abandoned long enough.
    size_t at = kRailBoardSlots;
    for (size_t i = 0; i < kRailBoardSlots && at == kRailBoardSlots; ++i)
      if (img.slots[i].owner == me_.owner &&
          std::strncmp(img.slots[i].port, e.port.c_str(), sizeof img.slots[i].port) == 0)
        at = i;
    for (size_t i = 0; i < kRailBoardSlots && at == kRailBoardSlots; ++i)
      if (img.slots[i].owner == 0) at = i;
    for (size_t i = 0; i < kRailBoardSlots && at == kRailBoardSlots; ++i)
      if (img.slots[i].updated_ns < now_ns - kRailBoardReclaimNs) at = i;
    if (at == kRailBoardSlots) {
      ++unplaced;
      continue;
    }
    RailBoardFileSlot s{};
    s.owner = me_.owner;
    s.updated_ns = now_ns;
    s.pid = me_.pid;
    std::memcpy(s.port, e.port.data(), e.port.size());
    s.bytes = e.bytes;
    s.busy_ns = e.busy_ns;
    s.transfers = e.transfers;
    s.start_bytes = e.start_bytes;
    s.start_busy_ns = e.start_busy_ns;
    s.start_transfers = e.start_transfers;
    img.slots[at] = s;  // taken for the next port of this call
    if (::pwrite(fd_, &s, sizeof s, slot_offset(at)) != static_cast<ssize_t>(sizeof s)) {
      *why = fmt::format("write: {}", std::strerror(errno));
      return false;
    }
  }
  if (unplaced > 0) {
    *why = fmt::format("{} port(s) not published: the board's {} slots are taken or the name is too long",
                       unplaced, kRailBoardSlots);
    return false;
  }
  return true;
}

std::vector<RailBoardEntry> RailBoard::read_others(int64_t now_ns, int* refused, std::string* why) {
  std::vector<RailBoardEntry> out;
  *refused = 0;
  if (!still_linked(why)) return out;
  Image img;
  {
    const Flock lock(fd_, LOCK_SH);
    if (!lock.held()) {
      why->clear();  // a writer at this instant: the next second reads
      return out;
    }
    if (!read_image(fd_, &img, why)) return out;
  }
  // `img` is this reader's copy: every check and use below is of it.
  for (const RailBoardFileSlot& s : img.slots) {
    if (s.owner == 0 || s.owner == me_.owner) continue;
    if (std::string p = slot_problem(s, now_ns); !p.empty()) {
      if ((*refused)++ == 0) *why = p;
      continue;
    }
    if (s.updated_ns < now_ns - kRailBoardFreshNs) continue;  // its writer stopped: not this window's
    out.push_back({std::string(s.port), s.pid, s.owner, s.updated_ns, s.bytes, s.busy_ns, s.transfers,
                   s.start_bytes, s.start_busy_ns, s.start_transfers});
  }
  return out;
}

}  // namespace railscope::node
