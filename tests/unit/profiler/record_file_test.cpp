// SPDX-License-Identifier: Apache-2.0
// The JSONL profile on a full disk (plugin/profiler/core/record_file.h): a write that fails part-way never
// leaves a torn line, the records not written are counted, and writing resumes when space returns.
#include "plugin/profiler/core/record_file.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace railscope::profiler {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  const std::string all = s.str();
  EXPECT_TRUE(all.empty() || all.back() == '\n') << "the file ends inside a record";
  std::vector<std::string> out;
  std::string line;
  std::istringstream in(all);
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// A record of exactly `bytes` bytes with its newline: {"type":"coll","seq":N,"pad":"xxx"}
std::string record(int seq, size_t bytes) {
  std::string r = "{\"type\":\"coll\",\"seq\":" + std::to_string(seq) + ",\"pad\":\"";
  const size_t tail = 3;  // "}\n and the closing quote
  r.append(bytes - r.size() - tail, 'x');
  return r + "\"}\n";
}

bool whole(const std::string& line) {
  return line.rfind("{\"type\":\"coll\",\"seq\":", 0) == 0 && line.size() > 2 &&
         line.compare(line.size() - 2, 2, "\"}") == 0 && line.find('{', 1) == std::string::npos;
}

class RecordFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("railscope-record-file-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (mounted_) ::umount(dir_.c_str());
    fs::remove_all(dir_);
  }
  fs::path dir_;
  bool mounted_ = false;
};

TEST_F(RecordFileTest, WritesEveryRecordWhenThereIsRoom) {
  RecordFile f;
  std::string error;
  ASSERT_TRUE(f.open(dir_ / "p.jsonl", &error)) << error;
  EXPECT_TRUE(f.append(record(1, 64) + record(2, 64), &error));
  EXPECT_TRUE(f.append(record(3, 64), &error));
  f.close();
  const auto lines = lines_of(dir_ / "p.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& l : lines) EXPECT_TRUE(whole(l)) << l;
  EXPECT_EQ(f.lost(), 0u);
}

// A file size limit makes write() stop part-way through a record, as a full disk does.
TEST_F(RecordFileTest, AShortWriteIsCutBackToTheLastWholeRecordAndCounted) {
  std::signal(SIGXFSZ, SIG_IGN);
  RecordFile f;
  std::string error;
  ASSERT_TRUE(f.open(dir_ / "p.jsonl", &error)) << error;
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit small = old;
  small.rlim_cur = 130;  // room for three 40-byte records and a quarter of a fourth
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string four = record(1, 40) + record(2, 40) + record(3, 40) + record(4, 40);
  const std::string fifth = record(5, 40);
  const bool written = f.append(four, &error);
  const bool written_again = f.append(fifth, &error);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old), 0);
  EXPECT_FALSE(written);
  EXPECT_FALSE(written_again);
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(f.lost(), 2u);
  EXPECT_EQ(fs::file_size(dir_ / "p.jsonl"), 120u);

  EXPECT_TRUE(f.append(record(6, 40), &error)) << "writing works again once there is room";
  EXPECT_EQ(f.take_lost(), 2u);
  EXPECT_EQ(f.lost(), 0u);
  f.close();
  const auto lines = lines_of(dir_ / "p.jsonl");
  ASSERT_EQ(lines.size(), 4u);
  for (const auto& l : lines) EXPECT_TRUE(whole(l)) << l;
  EXPECT_NE(lines.back().find("\"seq\":6"), std::string::npos);
}

// A real full file system: a 64 KiB tmpfs filled by another file.
TEST_F(RecordFileTest, AFullFileSystemNeverLeavesATornLine) {
  if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  mounted_ = true;
  RecordFile f;
  std::string error;
  ASSERT_TRUE(f.open(dir_ / "p.jsonl", &error)) << error;
  std::ofstream(dir_ / "filler") << std::string(56 * 1024, 'f');
  int seq = 0;
  uint64_t failed_batches = 0;
  for (int batch = 0; batch < 20; ++batch) {
    std::string records;
    for (int i = 0; i < 5; ++i) records += record(++seq, 300);  // 1500 bytes: never a page's multiple
    if (!f.append(records, &error)) ++failed_batches;
  }
  EXPECT_GT(failed_batches, 0u) << "the tmpfs should have filled up";
  EXPECT_GT(f.lost(), 0u);
  const uint64_t kept = lines_of(dir_ / "p.jsonl").size();
  EXPECT_EQ(kept + f.lost(), static_cast<uint64_t>(seq));

  fs::remove(dir_ / "filler");  // space returns
  ASSERT_TRUE(f.append(record(++seq, 300), &error)) << error;
  f.close();
  const auto lines = lines_of(dir_ / "p.jsonl");
  EXPECT_EQ(lines.size(), kept + 1);
  for (const auto& l : lines) EXPECT_TRUE(whole(l)) << l;
}

}  // namespace
}  // namespace railscope::profiler
