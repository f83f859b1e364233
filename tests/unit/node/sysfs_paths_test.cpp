// SPDX-License-Identifier: Apache-2.0
// Every sysfs read goes through a root-aware reader (node::Sysfs, or gpu::SysfsRoot for lib/gpu), so
// RAILSCOPE_SYSFS_ROOT points all of railscope at a fake tree. This scans lib/, plugin/ and tools/ for
// string literals naming a /sys/ path that is not handed straight to such a reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The readers themselves (they own the "/sys" root and its mapping).
const std::set<std::string> kReaders = {"lib/node/sysfs.cpp", "lib/gpu/sysfs_root.cpp"};

// Literals read through gpu::SysfsRoot one step removed (a list whose entries go to fs.read_text).
const std::map<std::string, std::set<std::string>> kReadThroughAList = {
    {"lib/gpu/platform_support.cpp",
     {"/sys/module/nvidia_peermem/version", "/sys/kernel/mm/memory_peers/nv_mem/version",
      "/sys/kernel/mm/memory_peers/nv_mem_nc/version", "/sys/module/nv_peer_mem/version"}}};

// The string literals of one line of C++ with their start column (comments and char literals skipped;
// good enough for this code base, which has no raw strings spanning lines with /sys/ in them).
std::vector<std::pair<size_t, std::string>> literals(const std::string& line) {
  std::vector<std::pair<size_t, std::string>> out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '/' && i + 1 < line.size() && line[i + 1] == '/') break;
    if (line[i] == '\'') {
      for (++i; i < line.size() && line[i] != '\''; ++i)
        if (line[i] == '\\') ++i;
      continue;
    }
    if (line[i] != '"') continue;
    const size_t start = i;
    std::string text;
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      text += line[i];
    }
    out.emplace_back(start, text);
  }
  return out;
}

// "file:line: literal" for every literal path starting with /sys/ not handed straight to a root-aware
// reader.
std::vector<std::string> direct_sysfs_paths(const std::string& rel, std::istream& in) {
  static const std::regex through_reader(
      R"((\bfs|sysfs|root)\s*\.\s*(path|exists|read_text|read_bytes|list_dir|read|read_int|list|resolve)\s*\(\s*$)");
  std::vector<std::string> out;
  if (kReaders.count(rel) != 0) return out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    for (const auto& [col, text] : literals(line)) {
      if (!text.starts_with("/sys/")) continue;  // a path; prose naming one ("no /sys/...") is fine
      if (std::regex_search(line.substr(0, col), through_reader)) continue;
      if (auto it = kReadThroughAList.find(rel); it != kReadThroughAList.end() && it->second.count(text) != 0)
        continue;
      out.push_back(rel + ":" + std::to_string(n) + ": \"" + text + "\"");
    }
  }
  return out;
}

std::vector<std::string> scan(const std::string& rel, const std::string& source) {
  std::istringstream in(source);
  return direct_sysfs_paths(rel, in);
}

TEST(SysfsPaths, ScannerFlagsDirectOpensOnly) {
  // What plugin/net/verbs/setup/discovery.cpp did before it read through lib/node.
  EXPECT_EQ(scan("plugin/x.cpp", "  std::ifstream f(\"/sys/class/net/\" + netdev + \"/mtu\");\n").size(), 1u);
  EXPECT_EQ(
      scan("plugin/x.cpp", "  std::string link = \"/sys/class/infiniband/\" + dev + \"/device\";\n").size(),
      1u);
  EXPECT_TRUE(scan("lib/gpu/x.cpp", "  bool m = fs.exists(\"/sys/module/nvidia_peermem\");\n").empty());
  EXPECT_TRUE(scan("lib/x.cpp", "  auto r = canonical(fs.path(\"/sys/class/infiniband/\" + n));\n").empty());
  EXPECT_TRUE(scan("lib/x.cpp", "  // realpath of /sys/class/infiniband/<dev>/device\n").empty());
  EXPECT_TRUE(scan("lib/x.cpp", "  auto v = sysfs.read(base + \"/sys_image_guid\");\n").empty());
  EXPECT_TRUE(scan("lib/node/sysfs.cpp", "  p = \"/sys/\" + rel;\n").empty());
  EXPECT_TRUE(scan("lib/x.cpp", "  note(\"no /sys/class/iommu units\");\n").empty());
}

TEST(SysfsPaths, NoSysfsPathOpenedDirectly) {
  const fs::path src = RAILSCOPE_SOURCE_DIR;
  std::vector<std::string> found;
  size_t files = 0;
  for (const char* top : {"lib", "plugin", "tools"}) {
    for (const auto& e : fs::recursive_directory_iterator(src / top)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".c" && ext != ".hpp")) continue;
      std::ifstream in(e.path());
      auto hits = direct_sysfs_paths(fs::relative(e.path(), src).generic_string(), in);
      found.insert(found.end(), hits.begin(), hits.end());
      ++files;
    }
  }
  EXPECT_GT(files, 50u);
  std::string list;
  for (const auto& f : found) list += "\n  " + f;
  EXPECT_TRUE(found.empty()) << "read these through node::Sysfs (RAILSCOPE_SYSFS_ROOT):" << list;
}

}  // namespace
