// SPDX-License-Identifier: Apache-2.0
// The profile and the Prometheus textfile in a folder other users can write, through the real plugin:
// symbolic links planted at the names the profiler writes (the profile, the textfile, the temporary name the
// textfile was once written through) are never written through, and the files they point at stay as they
// were. On a full disk the profile loses whole records, never part of one, and says how many once it can
// write again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "abi/profiler/profile_json.h"

namespace railscope::abi_test {
namespace {

namespace fs = std::filesystem;

std::string host() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

size_t warnings_with(const std::string& text) {
  size_t n = 0;
  for (const auto& l : CapturedLog::lines())
    if (l.text.find(text) != std::string::npos) ++n;
  return n;
}

void run_one_comm() {
  setenv("RAILSCOPE_PROFILE_PROM_KEEP", "1", 1);  // the textfile is read after finalize
  ProfilerDriver drv(6);
  ASSERT_TRUE(drv.loaded()) << drv.load_error();
  ASSERT_EQ(drv.init(0x5afe, 0, 2, 1), ncclSuccess);
  drv.run_coll({}, 1000);
  ASSERT_EQ(drv.finalize(), ncclSuccess);
  unsetenv("RAILSCOPE_PROFILE_PROM_KEEP");
}

TEST(ProfilerOutputFiles, LinksPlantedAtTheOutputNamesAreNotFollowed) {
  const std::string dir = fresh_profile_dir("planted");
  const fs::path prom_dir = fs::path(dir) / "textfiles";
  const fs::path home = fs::path(dir) / "home";
  fs::create_directories(prom_dir);
  fs::create_directories(home);
  const std::string pid = std::to_string(getpid());
  const fs::path profile = fs::path(dir) / (host() + "-" + pid + ".jsonl");
  const fs::path textfile = prom_dir / ("railscope-" + host() + "-" + pid + ".prom");
  const fs::path old_temp = fs::path(textfile.string() + "." + pid + ".tmp");
  for (const char* victim : {"profile-victim", "prom-victim", "temp-victim"})
    std::ofstream(home / victim) << "keep me\n";
  fs::create_symlink(home / "profile-victim", profile);
  fs::create_symlink(home / "prom-victim", textfile);
  fs::create_symlink(home / "temp-victim", old_temp);
  setenv("RAILSCOPE_PROFILE_PROM", prom_dir.c_str(), 1);
  CapturedLog::clear();
  run_one_comm();
  unsetenv("RAILSCOPE_PROFILE_PROM");

  for (const char* victim : {"profile-victim", "prom-victim", "temp-victim"})
    EXPECT_EQ(slurp(home / victim), "keep me\n") << victim;
  EXPECT_TRUE(fs::is_symlink(profile)) << "refused, not replaced: the profile is appended to";
  EXPECT_EQ(warnings_with("[profile.write_failed] " + profile.string() + " is a symbolic link"), 1u);
  EXPECT_FALSE(fs::is_symlink(textfile)) << "the textfile is written whole and renamed over the link";
  EXPECT_NE(slurp(textfile).find("railscope_profiler_last_write_timestamp_seconds"), std::string::npos);
  EXPECT_EQ(fs::status(textfile).permissions() & (fs::perms::group_write | fs::perms::others_write),
            fs::perms::none);
}

TEST(ProfilerOutputFiles, WithoutPlantedLinksBothFilesAreWrittenAndNothingIsSaid) {
  const std::string dir = fresh_profile_dir("unplanted");
  const fs::path prom_dir = fs::path(dir) / "textfiles";
  setenv("RAILSCOPE_PROFILE_PROM", prom_dir.c_str(), 1);
  CapturedLog::clear();
  run_one_comm();
  unsetenv("RAILSCOPE_PROFILE_PROM");
  EXPECT_EQ(warnings_with("profile.write_failed"), 0u);
  EXPECT_EQ(of_type(parse_profile(dir), "coll").size(), 1u);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(prom_dir)) {
    EXPECT_EQ(e.path().extension(), ".prom") << "no temporary file left behind: " << e.path();
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST(ProfilerOutputFiles, AFullDiskLosesWholeRecordsAndCountsThem) {
  const std::string dir = fresh_profile_dir("full");
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount(dir.c_str()); }
  } unmount{dir};
  CapturedLog::clear();
  {
    ProfilerDriver drv(6);
    ASSERT_TRUE(drv.loaded()) << drv.load_error();
    ASSERT_EQ(drv.init(0xf0110, 0, 2, 1), ncclSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the header and comm records are written
    const std::string filler = dir + "/filler";
    const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const std::string block(1000, 'f');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
    for (uint64_t i = 0; i < 20; ++i) {
      CollSpec s;
      s.seq = i;
      drv.run_coll(s, 1000);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // finalized and dropped on the full disk
    ::unlink(filler.c_str());
    for (uint64_t i = 20; i < 25; ++i) {
      CollSpec s;
      s.seq = i;
      drv.run_coll(s, 1000);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(drv.finalize(), ncclSuccess);
  }
  const std::vector<nlohmann::json> all = parse_profile(dir);  // throws on a torn line
  const auto colls = of_type(all, "coll");
  std::vector<std::string> lost_details;
  for (const auto& d : of_type(all, "diag"))
    if (d.value("id", "") == "profile.records_lost") lost_details.push_back(d.value("detail", ""));
  // The last page of the profile may have had room for a few records before the disk was full.
  ASSERT_EQ(lost_details.size(), 1u);
  const int lost = std::atoi(lost_details[0].c_str());
  EXPECT_GT(lost, 0) << lost_details[0];
  EXPECT_EQ(colls.size() + static_cast<size_t>(lost), 25u) << lost_details[0];
  std::set<uint64_t> seqs;
  for (const auto& c : colls) seqs.insert(c.value("seq", uint64_t{0}));
  for (uint64_t i = 20; i < 25; ++i) EXPECT_EQ(seqs.count(i), 1u) << "written after space came back: " << i;
  EXPECT_EQ(warnings_with("[profile.write_failed] write to"), 1u) << "the failure is said once";
  EXPECT_EQ(warnings_with("[profile.records_lost] " + std::to_string(lost) + " profile records were lost"),
            1u);
}

}  // namespace
}  // namespace railscope::abi_test
