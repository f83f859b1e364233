// SPDX-License-Identifier: Apache-2.0
// The net plugin through its ABI, the way NCCL loads it, for every exported version (v8–v12).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "abi/plugin_loader.h"
#include "railscope/nccl/net.h"

namespace railscope::abi_test {
namespace {

LoadedPlugin load_version(int v) {
  auto p = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_30, v);
  EXPECT_TRUE(p) << p.error;
  EXPECT_EQ(p.version, v);
  return p;
}

template <class Table>
void expect_complete_table(const Table* t) {
  ASSERT_NE(t, nullptr);
  EXPECT_STREQ(t->name, "railscope");
  EXPECT_NE(t->init, nullptr);
  EXPECT_NE(t->devices, nullptr);
  EXPECT_NE(t->getProperties, nullptr);
  EXPECT_NE(t->listen, nullptr);
  EXPECT_NE(t->connect, nullptr);
  EXPECT_NE(t->accept, nullptr);
  EXPECT_NE(t->regMr, nullptr);
  EXPECT_NE(t->regMrDmaBuf, nullptr);
  EXPECT_NE(t->deregMr, nullptr);
  EXPECT_NE(t->isend, nullptr);
  EXPECT_NE(t->irecv, nullptr);
  EXPECT_NE(t->iflush, nullptr);
  EXPECT_NE(t->test, nullptr);
  EXPECT_NE(t->closeSend, nullptr);
  EXPECT_NE(t->closeRecv, nullptr);
  EXPECT_NE(t->closeListen, nullptr);
  EXPECT_EQ(t->getDeviceMr, nullptr);  // host plugin: no device offload
  EXPECT_NE(t->irecvConsumed, nullptr);
  if constexpr (requires { t->makeVDevice; }) {
    EXPECT_NE(t->makeVDevice, nullptr);
  }
  if constexpr (requires { t->finalize; }) {
    EXPECT_NE(t->finalize, nullptr);
    EXPECT_NE(t->setNetAttr, nullptr);
  }
}

// After init: either it failed with a diagnosis line naming why (no RDMA here), or devices >= 1.
template <class Table>
void check_devices_after_init(const Table* t, ncclResult_t init_rc) {
  int n = -1;
  ncclResult_t rc = t->devices(&n);
  if (init_rc != ncclSuccess) {
    EXPECT_EQ(init_rc, ncclSystemError);
    if (const char* want = std::getenv("RAILSCOPE_TEST_EXPECT_DIAG"); want != nullptr && *want != 0)
      EXPECT_TRUE(CapturedLog::contains(std::string("[") + want + "]")) << "expected [" << want << "]";
    else
      EXPECT_TRUE(CapturedLog::contains("[device.none]") || CapturedLog::contains("[port.down]") ||
                  CapturedLog::contains("[device.filtered_out]"))
          << "init failed without a diagnosis line";
    EXPECT_TRUE(rc != ncclSuccess || n == 0);
    EXPECT_EQ(n, 0);
    return;
  }
  EXPECT_EQ(rc, ncclSuccess);
  EXPECT_GE(n, 1);
}

template <class Table>
void init_old(int v) {
  auto p = load_version(v);
  auto* t = static_cast<const Table*>(p.table);
  expect_complete_table(t);
  CapturedLog::clear();
  ncclResult_t rc;
  if constexpr (requires { t->init(CapturedLog::logger, nullptr); })
    rc = t->init(CapturedLog::logger, nullptr);
  else
    rc = t->init(CapturedLog::logger);
  check_devices_after_init(t, rc);
}

template <class Table, class Config>
void init_new(int v) {
  auto p = load_version(v);
  auto* t = static_cast<const Table*>(p.table);
  expect_complete_table(t);
  CapturedLog::clear();
  void* ctx = reinterpret_cast<void*>(0x1);  // must be overwritten (NULL on failure)
  Config config{-1};
  ncclResult_t rc = t->init(&ctx, 0x1234, &config, CapturedLog::logger, nullptr);
  check_devices_after_init(t, rc);
  if (rc != ncclSuccess) {
    EXPECT_EQ(ctx, nullptr);
  }
  // NCCL 2.28.9 calls finalize even after a failed init.
  EXPECT_EQ(t->finalize(ctx), ncclSuccess);
  EXPECT_EQ(t->finalize(nullptr), ncclSuccess);
}

TEST(NetAbi, V8InitAndDevices) { init_old<ncclNet_v8_t>(8); }
TEST(NetAbi, V9InitAndDevices) { init_old<ncclNet_v9_t>(9); }
TEST(NetAbi, V10InitAndDevices) { init_old<ncclNet_v10_t>(10); }
TEST(NetAbi, V11InitDevicesFinalize) { init_new<ncclNet_v11_t, ncclNetCommConfig_v11_t>(11); }
TEST(NetAbi, V12InitDevicesFinalize) { init_new<ncclNet_v12_t, ncclNetCommConfig_v12_t>(12); }

TEST(NetAbi, LoaderPicksNewestForEachRelease) {
  auto p30 = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_30);
  ASSERT_TRUE(p30) << p30.error;
  EXPECT_EQ(p30.symbol, "ncclNetPlugin_v12");
  auto p28 = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_28_9);
  ASSERT_TRUE(p28) << p28.error;
  EXPECT_EQ(p28.symbol, "ncclNetPlugin_v11");
}

// Misuse and calls on an engine that never came up return codes and log; nothing crashes.
TEST(NetAbi, BadCallsReturnErrors) {
  auto p = load_version(11);
  auto* t = static_cast<const ncclNet_v11_t*>(p.table);
  void* ctx = nullptr;
  ncclNetCommConfig_v11_t config{-1};
  ncclResult_t init_rc = t->init(&ctx, 1, &config, CapturedLog::logger, nullptr);
  EXPECT_EQ(t->devices(nullptr), ncclInternalError);
  EXPECT_NE(t->getProperties(0, nullptr), ncclSuccess);
  ncclNetProperties_v11_t props{};
  EXPECT_NE(t->getProperties(1 << 20, &props), ncclSuccess);  // out of range device (or no engine)
  void* request = reinterpret_cast<void*>(0x1);
  void* data[9] = {};
  size_t sizes[9] = {};
  int tags[9] = {};
  void* mh[9] = {};
  CapturedLog::clear();
  EXPECT_EQ(t->irecv(reinterpret_cast<void*>(0x10), 9, data, sizes, tags, mh, nullptr, &request),
            ncclInternalError);
  EXPECT_EQ(request, nullptr);
  EXPECT_TRUE(CapturedLog::contains("[internal.bad_argument]"));
  EXPECT_EQ(t->irecv(nullptr, 1, data, sizes, tags, mh, nullptr, &request), ncclInternalError);
  EXPECT_EQ(t->isend(nullptr, nullptr, 0, 0, nullptr, nullptr, &request), ncclInternalError);
  int done = 0;
  EXPECT_EQ(t->test(nullptr, &done, nullptr), ncclInternalError);
  EXPECT_EQ(t->closeSend(nullptr), ncclSuccess);
  EXPECT_EQ(t->closeRecv(nullptr), ncclSuccess);
  EXPECT_EQ(t->closeListen(nullptr), ncclSuccess);
  EXPECT_EQ(t->setNetAttr(ctx, nullptr), ncclSuccess);
  ncclNetVDeviceProps_v11_t vp{};
  vp.ndevs = 5;
  int d = -1;
  EXPECT_NE(t->makeVDevice(&d, &vp), ncclSuccess);
  EXPECT_EQ(t->finalize(ctx), ncclSuccess);
  (void)init_rc;
}

// setNetAttr as NCCL 2.28-2.30 calls it (src/transport/net.cc): all undefined, then the hints of a
// point-to-point and of a collective connector at connect, then one transfer's exact counts with its
// collective, algorithm and protocol bits. Each is accepted without a warning, and the engine goes on.
template <class Table, class Config, class Attr>
void set_net_attr_as_nccl(int v) {
  auto p = load_version(v);
  auto* t = static_cast<const Table*>(p.table);
  void* ctx = nullptr;
  Config config{-1};
  CapturedLog::clear();
  if (t->init(&ctx, 0x1234, &config, CapturedLog::logger, nullptr) != ncclSuccess) {
    t->finalize(ctx);
    GTEST_SKIP() << "no engine on this host";
  }
  auto flows = [](int32_t min_peers, int32_t max_peers, int32_t min_flows, int32_t max_flows) {
    return decltype(Attr::sendCommAttr){max_peers, min_peers, max_flows, min_flows};
  };
  constexpr uint32_t kUndef = ~0u;
  Attr undefined{flows(-1, -1, -1, -1), flows(-1, -1, -1, -1), kUndef, kUndef, kUndef};
  // 16 ranks, 4 point-to-point channels, 2 per peer: Send, Recv, AlltoAll, Scatter, Gather.
  Attr p2p{flows(1, 16, 1, 2), flows(1, 16, 1, 2), (1u << 0) | (1u << 1) | (1u << 4) | (1u << 5) | (1u << 6),
           kUndef, kUndef};
  Attr coll{flows(1, 4, 1, 8), flows(1, 4, 1, 8), kUndef, kUndef, kUndef};  // tree arity 3, 8 channels
  Attr transfer{flows(2, 2, 4, 4), flows(-1, -1, -1, -1), 1u << 4, 1u << 1,
                1u << 2};  // AllReduce ring Simple
  for (Attr* a : {&undefined, &p2p, &coll, &transfer}) EXPECT_EQ(t->setNetAttr(ctx, a), ncclSuccess);
  int n = 0;
  EXPECT_EQ(t->devices(&n), ncclSuccess);
  EXPECT_GE(n, 1);
  for (const auto& line : CapturedLog::lines()) EXPECT_NE(line.level, NCCL_LOG_WARN) << line.text;
  EXPECT_EQ(t->finalize(ctx), ncclSuccess);
}

TEST(NetAbi, SetNetAttrTakesWhatNcclPasses) {
  set_net_attr_as_nccl<ncclNet_v11_t, ncclNetCommConfig_v11_t, ncclNetAttr_v11_t>(11);
  set_net_attr_as_nccl<ncclNet_v12_t, ncclNetCommConfig_v12_t, ncclNetAttr_v12_t>(12);
}

}  // namespace
}  // namespace railscope::abi_test
