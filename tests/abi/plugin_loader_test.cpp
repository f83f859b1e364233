// SPDX-License-Identifier: Apache-2.0
#include "abi/plugin_loader.h"

#include <gtest/gtest.h>

namespace railscope::abi_test {
namespace {

using Names = std::vector<std::string>;

TEST(PluginLoader, NameRulesFollowNccl) {
  EXPECT_EQ(candidate_names(PluginKind::Net, std::nullopt), Names{"libnccl-net.so"});
  EXPECT_EQ(candidate_names(PluginKind::Net, std::string("")), Names{"libnccl-net.so"});
  EXPECT_EQ(candidate_names(PluginKind::Net, std::string("railscope")),
            (Names{"railscope", "libnccl-net-railscope.so"}));
  EXPECT_EQ(candidate_names(PluginKind::Tuner, std::string("railscope")),
            (Names{"railscope", "libnccl-tuner-railscope.so"}));
  EXPECT_EQ(candidate_names(PluginKind::Profiler, std::string("railscope")),
            (Names{"railscope", "libnccl-profiler-railscope.so"}));
  EXPECT_EQ(candidate_names(PluginKind::Net, std::string("/opt/x/libnccl-net-railscope.so")),
            Names{"/opt/x/libnccl-net-railscope.so"});
  EXPECT_EQ(candidate_names(PluginKind::Net, std::string("libfoo.so")), Names{"libfoo.so"});
  EXPECT_TRUE(candidate_names(PluginKind::Net, std::string("none")).empty());
  EXPECT_TRUE(candidate_names(PluginKind::Tuner, std::string("NONE")).empty());
}

TEST(PluginLoader, SymbolsNewestFirst) {
  auto net28 = candidate_symbols(PluginKind::Net, NcclRelease::V2_28_9);
  ASSERT_EQ(net28.size(), 6u);
  EXPECT_EQ(net28.front().first, "ncclNetPlugin_v11");
  EXPECT_EQ(net28.back().first, "ncclNetPlugin_v6");
  EXPECT_EQ(candidate_symbols(PluginKind::Net, NcclRelease::V2_30).front().first, "ncclNetPlugin_v12");
  EXPECT_EQ(candidate_symbols(PluginKind::Tuner, NcclRelease::V2_28_9).front().first, "ncclTunerPlugin_v5");
  EXPECT_EQ(candidate_symbols(PluginKind::Profiler, NcclRelease::V2_30).front().first, "ncclProfiler_v6");
  EXPECT_EQ(candidate_symbols(PluginKind::Profiler, NcclRelease::V2_30).back().first, "ncclProfiler_v1");
}

TEST(PluginLoader, MissingLibraryReportsEveryTry) {
  auto p = load(PluginKind::Net, std::string("does-not-exist"));
  EXPECT_FALSE(p);
  EXPECT_EQ(p.tried, (Names{"does-not-exist", "libnccl-net-does-not-exist.so"}));
  EXPECT_NE(p.error.find("libnccl-net-does-not-exist.so"), std::string::npos);
}

TEST(PluginLoader, LibraryWithoutAbiSymbolIsRejected) {
  // libc is loadable but exports no plugin symbol: NCCL calls such a library "unsupported".
  auto p = load(PluginKind::Tuner, std::string("libc.so.6"));
  EXPECT_FALSE(p);
  EXPECT_NE(p.error.find("no supported symbol"), std::string::npos);
}

}  // namespace
}  // namespace railscope::abi_test
