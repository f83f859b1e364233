// SPDX-License-Identifier: Apache-2.0
// Output files in shared folders (railscope/core/safe_file.h): a symbolic link another user planted at the
// name written is replaced or refused, never written through, and the file it points at stays as it was.
#include "railscope/core/safe_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace railscope::core {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class SafeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("railscope-safe-file-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "shared");
    fs::create_directories(dir_ / "home");
    fs::permissions(dir_ / "shared", fs::perms::all | fs::perms::sticky_bit);  // like /tmp
    victim_ = dir_ / "home" / "precious";
    std::ofstream(victim_) << "keep me\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  fs::path victim_;
};

TEST_F(SafeFile, AtomicWriteCreatesTheFileWithItsContent) {
  const fs::path out = dir_ / "shared" / "page.html";
  std::string error;
  ASSERT_TRUE(write_file_atomically(out, "<p>hi</p>\n", &error)) << error;
  EXPECT_EQ(slurp(out), "<p>hi</p>\n");
  ASSERT_TRUE(write_file_atomically(out, "second\n", &error)) << error;
  EXPECT_EQ(slurp(out), "second\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "shared"), fs::directory_iterator{}), 1)
      << "no temporary file is left behind";
}

TEST_F(SafeFile, AtomicWriteReplacesAPlantedLinkInsteadOfFollowingIt) {
  const fs::path out = dir_ / "shared" / "page.html";
  fs::create_symlink(victim_, out);
  std::string error;
  ASSERT_TRUE(write_file_atomically(out, "page\n", &error)) << error;
  EXPECT_EQ(slurp(victim_), "keep me\n");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_EQ(slurp(out), "page\n");
}

TEST_F(SafeFile, AtomicWriteGivesTheFileMode0644LessTheUmask) {
  const fs::path out = dir_ / "shared" / "m.prom";
  std::string error;
  const mode_t old = ::umask(022);
  ASSERT_TRUE(write_file_atomically(out, "x\n", &error)) << error;
  EXPECT_EQ(fs::status(out).permissions(), static_cast<fs::perms>(0644));
  ::umask(077);
  ASSERT_TRUE(write_file_atomically(out, "x\n", &error)) << error;
  EXPECT_EQ(fs::status(out).permissions(), static_cast<fs::perms>(0600));
  ::umask(old);
}

TEST_F(SafeFile, AFolderEveryoneMayWriteWithoutTheStickyBitIsRefused) {
  const fs::path open_dir = dir_ / "open";
  fs::create_directories(open_dir);
  fs::permissions(open_dir, fs::perms::all);
  std::string error;
  EXPECT_FALSE(write_file_atomically(open_dir / "f", "x", &error));
  EXPECT_NE(error.find("sticky"), std::string::npos) << error;
  error.clear();
  EXPECT_EQ(open_for_append(open_dir / "f", &error), -1);
  EXPECT_NE(error.find("sticky"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(open_dir / "f"));
  EXPECT_EQ(unsafe_output_folder(dir_ / "shared" / "f"), "") << "a sticky folder (like /tmp) is fine";
  EXPECT_EQ(unsafe_output_folder("relative-name"), "");
}

TEST_F(SafeFile, AtomicWriteToAMissingFolderSaysWhich) {
  std::string error;
  EXPECT_FALSE(write_file_atomically(dir_ / "nope" / "f", "x", &error));
  EXPECT_NE(error.find("nope"), std::string::npos) << error;
  EXPECT_FALSE(can_write_atomically(dir_ / "nope" / "f", &error));
  EXPECT_TRUE(can_write_atomically(dir_ / "shared" / "f", &error)) << error;
  EXPECT_FALSE(fs::exists(dir_ / "shared" / "f"));
}

TEST_F(SafeFile, AppendAddsToTheUsersOwnFile) {
  const fs::path out = dir_ / "shared" / "stats.jsonl";
  std::string error;
  for (const char* line : {"one\n", "two\n"}) {
    const int fd = open_for_append(out, &error);
    ASSERT_GE(fd, 0) << error;
    ASSERT_EQ(::write(fd, line, 4), 4);
    ::close(fd);
  }
  EXPECT_EQ(slurp(out), "one\ntwo\n");
}

TEST_F(SafeFile, AppendRefusesAPlantedLinkAndLeavesItsTargetAlone) {
  const fs::path out = dir_ / "shared" / "stats.jsonl";
  fs::create_symlink(victim_, out);
  std::string error;
  EXPECT_EQ(open_for_append(out, &error), -1);
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
  EXPECT_EQ(slurp(victim_), "keep me\n");

  const fs::path dangling = dir_ / "shared" / "other.jsonl";
  fs::create_symlink(dir_ / "home" / "created-by-the-link", dangling);
  EXPECT_EQ(open_for_append(dangling, &error), -1);
  EXPECT_FALSE(fs::exists(dir_ / "home" / "created-by-the-link"));
}

TEST_F(SafeFile, AppendRefusesAFifoWithoutWaitingForAReader) {
  const fs::path out = dir_ / "shared" / "fifo.jsonl";
  ASSERT_EQ(::mkfifo(out.c_str(), 0666), 0);
  std::string error;
  EXPECT_EQ(open_for_append(out, &error), -1);  // would block forever without O_NONBLOCK
}

TEST_F(SafeFile, AppendRefusesAFileOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  const fs::path out = dir_ / "shared" / "theirs.jsonl";
  std::ofstream(out) << "theirs\n";
  ASSERT_EQ(::chown(out.c_str(), 65534, 65534), 0);
  fs::permissions(out, fs::perms::all);
  std::string error;
  EXPECT_EQ(open_for_append(out, &error), -1);
  EXPECT_NE(error.find("another user"), std::string::npos) << error;
  EXPECT_EQ(slurp(out), "theirs\n");
}

}  // namespace
}  // namespace railscope::core
