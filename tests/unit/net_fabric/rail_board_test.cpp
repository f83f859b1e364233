// SPDX-License-Identifier: Apache-2.0
// The node's rail board file (railscope/node/rail_board.h): several writers on one file, and every
// kind of file that must be refused — a symlink, another user's, open to others, truncated, of a
// foreign layout, slots of garbage — without a crash; a board left empty (a layout cut short, a full
// /dev/shm) replaced, and one removed while in use noticed and reopened. Each test works in its own temp
// folder.
#include "railscope/node/rail_board.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace railscope::node {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSecond = 1'000'000'000;

class RailBoardTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("railscope-board-" + std::to_string(::getpid()) + "-" +
                                        testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "railscope-rails").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<RailBoard> open_as(int32_t pid, uint64_t owner, std::string* why) {
    return RailBoard::open(path_, {pid, owner}, static_cast<uint32_t>(::geteuid()), why);
  }
  void write_file(const std::string& bytes, mode_t mode = 0600) {
    {
      std::ofstream out(path_, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
  }
  // Overwrites slot `i` of an existing board with `s`.
  void put_slot(size_t i, const RailBoardFileSlot& s) {
    const int fd = ::open(path_.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const auto at = static_cast<off_t>(sizeof(RailBoardFileHeader) + i * sizeof(RailBoardFileSlot));
    ASSERT_EQ(::pwrite(fd, &s, sizeof s, at), static_cast<ssize_t>(sizeof s));
    ::close(fd);
  }

  fs::path dir_;
  std::string path_;
};

RailBoardEntry entry(const std::string& port, uint64_t bytes, uint64_t busy_ns, uint64_t transfers) {
  RailBoardEntry e;
  e.port = port;
  e.bytes = bytes;
  e.busy_ns = busy_ns;
  e.transfers = transfers;
  return e;
}

RailBoardFileSlot good_slot(int64_t now) {
  RailBoardFileSlot s{};
  s.owner = 77;
  s.updated_ns = now;
  s.pid = 4242;
  std::strcpy(s.port, "mlx5_5:1");
  s.bytes = 1 << 30;
  s.busy_ns = kSecond;
  s.transfers = 1024;
  return s;
}

TEST_F(RailBoardTest, TwoWritersSeeEachOthersPortsAndNotTheirOwn) {
  std::string why;
  auto a = open_as(100, 1001, &why);
  ASSERT_TRUE(a) << why;
  auto b = open_as(200, 2002, &why);
  ASSERT_TRUE(b) << why;
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(static_cast<size_t>(st.st_size), kRailBoardFileBytes);

  const int64_t now = 50 * kSecond;
  RailBoardEntry first = entry("rxe1:1", 4 << 20, kSecond / 2, 16);
  first.start_bytes = 1 << 20;
  first.start_busy_ns = kSecond / 8;
  first.start_transfers = 4;
  ASSERT_TRUE(a->publish({first}, now, &why)) << why;
  ASSERT_TRUE(b->publish({entry("rxe3:1", 1 << 20, kSecond, 8), entry("rxe5:1", 64, 10, 1)}, now, &why))
      << why;
  // Published again: the same slots, new figures.
  RailBoardEntry second = first;
  second.bytes = 8 << 20;
  second.busy_ns = kSecond;
  second.transfers = 32;
  ASSERT_TRUE(a->publish({second}, now + kSecond, &why)) << why;

  int refused = -1;
  const auto seen_by_a = a->read_others(now + kSecond, &refused, &why);
  EXPECT_EQ(refused, 0);
  ASSERT_EQ(seen_by_a.size(), 2u);
  EXPECT_EQ(seen_by_a[0].port, "rxe3:1");
  EXPECT_EQ(seen_by_a[0].pid, 200);
  EXPECT_EQ(seen_by_a[0].owner, 2002u);
  EXPECT_EQ(seen_by_a[0].bytes, 1u << 20);
  EXPECT_EQ(seen_by_a[1].port, "rxe5:1");
  const auto seen_by_b = b->read_others(now + kSecond, &refused, &why);
  ASSERT_EQ(seen_by_b.size(), 1u);
  EXPECT_EQ(seen_by_b[0].port, "rxe1:1");
  EXPECT_EQ(seen_by_b[0].bytes, 8u << 20);  // one slot per (writer, port): the latest figures
  EXPECT_EQ(seen_by_b[0].transfers, 32u);
  EXPECT_EQ(seen_by_b[0].start_bytes, 1u << 20);  // the writer's window start travels with the totals
  EXPECT_EQ(seen_by_b[0].start_busy_ns, static_cast<uint64_t>(kSecond / 8));
  EXPECT_EQ(seen_by_b[0].start_transfers, 4u);

  // A writer that stopped publishing is left out once its entry is older than kRailBoardFreshNs.
  EXPECT_TRUE(b->read_others(now + kSecond + kRailBoardFreshNs + 1, &refused, &why).empty());
  // A writer that closes frees its slots.
  b.reset();
  EXPECT_TRUE(a->read_others(now + kSecond, &refused, &why).empty());
}

TEST_F(RailBoardTest, FullBoardPublishesWhatFitsAndReclaimsAbandonedSlots) {
  std::string why;
  auto a = open_as(100, 1001, &why);
  ASSERT_TRUE(a);
  const int64_t now = 100 * kSecond;
  std::vector<RailBoardEntry> many;
  for (size_t i = 0; i < kRailBoardSlots; ++i)
    many.push_back(entry("p" + std::to_string(i) + ":1", 10, 1, 1));
  ASSERT_TRUE(a->publish(many, now, &why)) << why;
  auto b = open_as(200, 2002, &why);
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->publish({entry("rxe3:1", 10, 1, 1)}, now, &why));
  EXPECT_NE(why.find("slots are taken"), std::string::npos) << why;
  // a's slots are abandoned after kRailBoardReclaimNs: b takes one.
  ASSERT_TRUE(b->publish({entry("rxe3:1", 10, 1, 1)}, now + kRailBoardReclaimNs + kSecond, &why)) << why;
  int refused = 0;
  const auto seen = a->read_others(now + kRailBoardReclaimNs + kSecond, &refused, &why);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].port, "rxe3:1");
}

TEST_F(RailBoardTest, SymlinkIsRefused) {
  const std::string target = (dir_ / "elsewhere").string();
  write_file("");
  fs::rename(path_, target);
  fs::create_symlink(target, path_);
  std::string why;
  EXPECT_FALSE(open_as(100, 1, &why));
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  EXPECT_EQ(fs::file_size(target), 0u);  // not written through the link
}

TEST_F(RailBoardTest, AnotherUsersBoardIsRefused) {
  std::string why;
  ASSERT_TRUE(open_as(100, 1, &why));  // a valid board, ours
  // The same file judged for another uid: the owner check (chown needs root; the uid is injected).
  EXPECT_FALSE(RailBoard::open(path_, {100, 1}, static_cast<uint32_t>(::geteuid()) + 1, &why));
  EXPECT_NE(why.find("owned by uid"), std::string::npos) << why;
}

TEST_F(RailBoardTest, BoardOpenToOthersIsRefused) {
  std::string why;
  ASSERT_TRUE(open_as(100, 1, &why));
  ASSERT_EQ(::chmod(path_.c_str(), 0666), 0);
  EXPECT_FALSE(open_as(100, 1, &why));
  EXPECT_NE(why.find("open to group or others"), std::string::npos) << why;
}

TEST_F(RailBoardTest, NotARegularFileIsRefused) {
  fs::create_directories(path_);
  std::string why;
  EXPECT_FALSE(open_as(100, 1, &why));
  EXPECT_FALSE(why.empty());
  fs::remove(path_);
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  EXPECT_FALSE(open_as(100, 1, &why));  // and does not block on the FIFO
  EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
}

TEST_F(RailBoardTest, TruncatedBoardIsRefused) {
  std::string why;
  ASSERT_TRUE(open_as(100, 1, &why));
  fs::resize_file(path_, kRailBoardFileBytes - 8);
  EXPECT_FALSE(open_as(100, 1, &why));
  EXPECT_NE(why.find("bytes where a board has"), std::string::npos) << why;
}

TEST_F(RailBoardTest, TruncatedUnderAnOpenBoardGivesNothingAndNoCrash) {
  std::string why;
  auto a = open_as(100, 1001, &why);
  ASSERT_TRUE(a);
  fs::resize_file(path_, 100);
  int refused = 0;
  EXPECT_TRUE(a->read_others(kSecond, &refused, &why).empty());
  EXPECT_NE(why.find("bytes where the board has"), std::string::npos) << why;
  EXPECT_FALSE(a->publish({entry("rxe1:1", 10, 1, 1)}, kSecond, &why));
  EXPECT_FALSE(why.empty());
}

TEST_F(RailBoardTest, GarbageOfTheRightSizeIsRefused) {
  std::string garbage(kRailBoardFileBytes, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 131 + 7) & 0xff);
  write_file(garbage);
  std::string why;
  EXPECT_FALSE(open_as(100, 1, &why));
  EXPECT_NE(why.find("not a rail board"), std::string::npos) << why;
  // The right magic, another layout.
  RailBoardFileHeader h{};
  std::memcpy(h.magic, kRailBoardMagic, sizeof h.magic);
  h.version = kRailBoardVersion;
  h.slots = 1000000;
  h.slot_bytes = sizeof(RailBoardFileSlot);
  std::memcpy(garbage.data(), &h, sizeof h);
  write_file(garbage);
  EXPECT_FALSE(open_as(100, 1, &why));
  EXPECT_NE(why.find("another layout"), std::string::npos) << why;
}

TEST_F(RailBoardTest, GarbageSlotsAreLeftOutAndCounted) {
  std::string why;
  auto a = open_as(100, 1001, &why);
  ASSERT_TRUE(a);
  const int64_t now = 20 * kSecond;
  put_slot(0, good_slot(now));
  RailBoardFileSlot unterminated = good_slot(now);
  std::memset(unterminated.port, 'x', sizeof unterminated.port);
  put_slot(1, unterminated);
  RailBoardFileSlot control = good_slot(now);
  std::strcpy(control.port, "rxe\n1");
  put_slot(2, control);
  RailBoardFileSlot bad_pid = good_slot(now);
  bad_pid.pid = -5;
  put_slot(3, bad_pid);
  RailBoardFileSlot future = good_slot(now);
  future.updated_ns = now + 60 * kSecond;
  put_slot(4, future);
  RailBoardFileSlot impossible = good_slot(now);
  impossible.bytes = 3;
  impossible.transfers = 1000;
  put_slot(5, impossible);
  RailBoardFileSlot empty_name = good_slot(now);
  empty_name.port[0] = '\0';
  put_slot(6, empty_name);
  RailBoardFileSlot start_above = good_slot(now);
  start_above.start_transfers = start_above.transfers + 1;
  put_slot(7, start_above);
  int refused = 0;
  const auto seen = a->read_others(now, &refused, &why);
  EXPECT_EQ(refused, 7);
  EXPECT_EQ(why, "port name not NUL-terminated");  // the first
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].port, "mlx5_5:1");
  EXPECT_EQ(seen[0].pid, 4242);
  // Publishing still works around the garbage (it takes free slots).
  EXPECT_TRUE(a->publish({entry("rxe1:1", 10, 1, 1)}, now, &why)) << why;
}

TEST_F(RailBoardTest, AnEmptyOrZeroFilledBoardIsReplacedByANewOne) {
  for (const size_t bytes : {size_t{0}, kRailBoardFileBytes}) {
    write_file(std::string(bytes, '\0'));
    std::string why;
    auto a = open_as(100, 1001, &why);
    ASSERT_TRUE(a) << bytes << " bytes: " << why;
    auto b = open_as(200, 2002, &why);
    ASSERT_TRUE(b) << why;
    ASSERT_TRUE(a->publish({entry("rxe1:1", 64, 10, 1)}, kSecond, &why)) << why;
    int refused = 0;
    const auto seen = b->read_others(kSecond, &refused, &why);
    ASSERT_EQ(seen.size(), 1u) << "both on the new board";
    EXPECT_EQ(fs::file_size(path_), kRailBoardFileBytes);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 1) << "no layout left";
    a.reset();
    b.reset();
    fs::remove(path_);
  }
}

TEST_F(RailBoardTest, ARemovedBoardIsNoticedAndReopened) {
  std::string why;
  auto a = open_as(100, 1001, &why);
  ASSERT_TRUE(a) << why;
  fs::remove(path_);
  auto b = open_as(200, 2002, &why);  // a process that starts now lays out a new board
  ASSERT_TRUE(b) << why;
  ASSERT_TRUE(a->publish({entry("rxe1:1", 64, 10, 1)}, kSecond, &why)) << why;
  int refused = 0;
  const auto seen = b->read_others(kSecond, &refused, &why);
  ASSERT_EQ(seen.size(), 1u) << "the two processes meet on one board";
  EXPECT_EQ(seen[0].pid, 100);
}

TEST_F(RailBoardTest, AFullFileSystemLeavesNoBoardBehind) {
  if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount(dir.c_str()); }
  } unmount{dir_.string()};
  {
    std::ofstream filler(dir_ / "filler", std::ios::binary);
    const std::string block(4096, 'f');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size()))) filler.flush();
  }
  std::string why;
  EXPECT_FALSE(open_as(100, 1001, &why));
  EXPECT_NE(why.find(std::strerror(ENOSPC)), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(path_)) << "a board that could not be laid out is not left at its name";
  fs::remove(dir_ / "filler");
  auto a = open_as(100, 1001, &why);
  EXPECT_TRUE(a) << "space came back: " << why;
}

TEST(RailBoardPath, ScopedToTheUserAndTheJob) {
  const std::string user = "/dev/shm/railscope-rails-" + std::to_string(::geteuid());
  for (const char* v : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"}) ::unsetenv(v);
  EXPECT_EQ(RailBoard::default_path(), user);
  ::setenv("PBS_JOBID", "4711.pbs/x y", 1);
  EXPECT_EQ(RailBoard::default_path(), user + "-job-4711.pbs_x_y");
  ::setenv("SLURM_JOB_ID", "123", 1);
  EXPECT_EQ(RailBoard::default_path(), user + "-job-123");
  for (const char* v : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"}) ::unsetenv(v);
}

}  // namespace
}  // namespace railscope::node
