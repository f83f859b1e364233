// SPDX-License-Identifier: Apache-2.0
// The profiler's QP events name the QP and local device each part of a message goes through, and the
// error event the QP (and device) whose completion failed (docs/fabric-health-net.md, "To the
// profiler"). A connection with four QPs striped over two lanes, fake QP objects and a fake profiler
// callback; the QP numbers repeat across the lanes as they can on two devices.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/send_comm.h"
#include "plugin/net/verbs/setup/discovery.h"
#include "plugin/net/verbs/watch/port_health.h"

namespace railscope::net::verbs {
namespace {

struct Call {
  int type = 0;
  int64_t plugin_id = 0;
  int device = -1, qp_num = -1;
  size_t length = 0;
  int status = 0;
  std::string diag;
};
std::vector<Call> g_calls;
int g_handle = 0;
struct PortSeen {
  std::string device, reason;
  int port = 0, speed_mbps = 0, host_staged = 0;
};
std::vector<PortSeen> g_ports;  // kRailscopeNetPort starts: the whole event, kept apart from the QP events

ncclResult_t fake_profiler(void** handle, int type, void* /*parent*/, int64_t plugin_id, void* data) {
  Call c;
  c.type = type;
  c.plugin_id = plugin_id;
  if (type == ncclProfilerNetEventStart && plugin_id == nccl::kNetRailscopePluginId &&
      *static_cast<const uint8_t*>(data) == nccl::kRailscopeNetPort) {
    const auto* d = static_cast<const nccl::RailscopeNetPort_v1*>(data);
    g_ports.push_back({std::string(d->device, strnlen(d->device, sizeof d->device)),
                       d->reason != nullptr ? d->reason : "", d->port, d->speedMbps, d->hostStaged});
    *handle = nullptr;
    return ncclSuccess;
  }
  if (type == ncclProfilerNetEventStart) {
    if (plugin_id == nccl::kNetRailscopePluginId) {
      const auto* d = static_cast<const nccl::RailscopeNetQp_v1*>(data);
      c.device = d->device;
      c.qp_num = d->qpNum;
      c.length = d->length;
    } else {
      const auto* d = static_cast<const ncclProfilerNetIbDescr_v1_t*>(data);
      c.device = d->qp.device;
      c.qp_num = d->qp.qpNum;
      c.length = d->qp.length;
    }
    *handle = &g_handle;
  } else if (type == ncclProfilerNetEventUpdateAndStop) {
    const auto* d = static_cast<const nccl::RailscopeNetCompletion_v1*>(data);
    c.status = d->status;
    c.diag = d->diag_id != nullptr ? d->diag_id : "";
  }
  g_calls.push_back(c);
  return ncclSuccess;
}

class FakeConnection : public Connection {
 public:
  // QP q on lane q % 2 with QP number 100 + q / 2: lane 0 has 100, 101; lane 1 has 100, 101 too.
  explicit FakeConnection(size_t nqps) : Connection("send", 4) {
    std::vector<Lane>& lanes = qp_set().lanes();
    lanes.resize(2);
    // Lane 0 offers GPU memory (GPUDirect RDMA); lane 1 only host memory, refused for want of peer memory.
    ports_[0].dev_name = "mlx5_0";
    ports_[0].speed_mbps = 400000;
    ports_[0].gdr.ptr_support = NCCL_PTR_HOST | NCCL_PTR_CUDA;
    ports_[1].dev_name = "mlx5_1";
    ports_[1].speed_mbps = 200000;
    ports_[1].gdr.refusals.push_back(diag::make("gdr.no_peermem", "test"));
    ports_[1].gdr.no_cuda = 0;
    for (size_t i = 0; i < 2; ++i) lanes[i].port = &ports_[i];
    for (size_t q = 0; q < nqps; ++q) {
      fake_[q].qp_num = static_cast<uint32_t>(100 + q / 2);
      QpLane ql;
      ql.qp.reset(&fake_[q]);
      ql.lane = static_cast<int>(q % 2);
      qp_set().qps().push_back(std::move(ql));
    }
    set_profiler(fake_profiler);
  }
  ~FakeConnection() override {
    for (auto& q : qp_set().qps()) (void)q.qp.release();  // not libibverbs objects
  }
  Lane& lane(size_t i) { return qp_set().lanes()[i]; }
  void completion_failed(size_t lane, uint32_t qp_num) {
    ibv_wc wc{};
    wc.status = IBV_WC_RETRY_EXC_ERR;
    wc.qp_num = qp_num;
    note_failed_completion(lane, wc);
    fail(Status::fail(ncclRemoteError, "wc.retry_exceeded", "test"));
  }
  void* phandle = &g_handle;
  size_t failed_request = 0, failed_bytes = 0;

 protected:
  Status on_completion(const ibv_wc&) override { return Status::success(); }
  void profile_in_flight_failure() override {
    if (profiling(failed_request)) profile_failure(failed_request, phandle, failed_bytes);
  }

 private:
  std::array<ibv_qp, 4> fake_{};
  std::array<NetPort, 2> ports_{};
};

std::vector<Call> starts() {
  std::vector<Call> out;
  for (const auto& c : g_calls)
    if (c.type == ncclProfilerNetEventStart) out.push_back(c);
  return out;
}

TEST(QpEvents, EachPartNamesItsQpAndDevice) {
  g_calls.clear();
  FakeConnection c(4);
  const size_t size = 1 << 20;
  c.profile_start(1, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 7, size);
  auto s = starts();
  ASSERT_EQ(s.size(), 4u);
  size_t total = 0;
  for (size_t q = 0; q < 4; ++q) {
    size_t off = 0, len = 0;
    chunk_of(size, q, 4, &off, &len);
    EXPECT_EQ(s[q].plugin_id, static_cast<int64_t>(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER));
    EXPECT_EQ(s[q].device, static_cast<int>(q % 2)) << "part " << q;
    EXPECT_EQ(s[q].qp_num, static_cast<int>(100 + q / 2)) << "part " << q;
    EXPECT_EQ(s[q].length, len);
    total += s[q].length;
  }
  EXPECT_EQ(total, size);
  EXPECT_TRUE(c.profiling(1));
  EXPECT_FALSE(c.profiling(0));
  c.profile_stop(1);
  EXPECT_EQ(g_calls.size(), 8u);  // four stops
  EXPECT_FALSE(c.profiling(1));
}

TEST(QpEvents, EachLaneNamesItsPortOnceBeforeTheFirstQpEvent) {
  g_calls.clear();
  g_ports.clear();
  FakeConnection c(4);
  c.profile_start(0, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 1, 8);
  ASSERT_EQ(g_ports.size(), 2u);
  EXPECT_EQ(g_ports[0].device, "mlx5_0");
  EXPECT_EQ(g_ports[0].port, 1);
  EXPECT_EQ(g_ports[0].speed_mbps, 400000);
  EXPECT_EQ(g_ports[0].host_staged, 0) << "a port offering NCCL_PTR_CUDA is not host staged";
  EXPECT_EQ(g_ports[0].reason, "");
  EXPECT_EQ(g_ports[1].device, "mlx5_1");
  EXPECT_EQ(g_ports[1].host_staged, 1);
  EXPECT_EQ(g_ports[1].reason, "gdr.no_peermem");
  c.profile_stop(0);
  c.profile_start(1, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 2, 1 << 20);
  EXPECT_EQ(g_ports.size(), 2u) << "the ports are named once per connection";
  c.profile_stop(1);
}

TEST(QpEvents, SmallAndWholeMessagesGoOnQpZero) {
  g_calls.clear();
  FakeConnection c(4);
  c.profile_start(0, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 1, 8);           // one 128-byte-aligned part
  c.profile_start(1, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 2, 4096, true);  // an eager ring message
  c.profile_start(2, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 3, 0);
  c.profile_start(3, nullptr, IBV_WR_RDMA_WRITE_WITH_IMM, 4, 1 << 20);  // no parent: no event
  auto s = starts();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].length, 8u);
  EXPECT_EQ(s[1].length, 4096u);
  EXPECT_EQ(s[2].length, 0u);
  for (const auto& e : s) {
    EXPECT_EQ(e.device, 0);
    EXPECT_EQ(e.qp_num, 100);
  }
  EXPECT_FALSE(c.profiling(3));
}

TEST(QpEvents, ErrorNamesTheFailedQpOnItsDevice) {
  g_calls.clear();
  FakeConnection c(4);
  c.failed_request = 2;
  c.failed_bytes = 1 << 20;
  c.profile_start(2, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 9, 1 << 20);
  c.completion_failed(1, 101);  // QP 3: lane 1, QP number 101 (lane 0 has a QP 101 too)
  std::vector<Call> err;
  int stops = 0;
  for (const auto& e : g_calls) {
    if (e.plugin_id == nccl::kNetRailscopePluginId) err.push_back(e);
    if (e.type == ncclProfilerNetEventStop) ++stops;
  }
  EXPECT_EQ(stops, 4);  // every part's event ends
  ASSERT_EQ(err.size(), 2u);
  EXPECT_EQ(err[0].type, ncclProfilerNetEventStart);
  EXPECT_EQ(err[0].device, 1);
  EXPECT_EQ(err[0].qp_num, 101);
  EXPECT_EQ(err[0].length, size_t{1} << 20);
  EXPECT_EQ(err[1].type, ncclProfilerNetEventUpdateAndStop);
  EXPECT_EQ(err[1].status, static_cast<int>(IBV_WC_RETRY_EXC_ERR));
  EXPECT_EQ(err[1].diag, "wc.retry_exceeded");
  EXPECT_FALSE(c.profiling(2));
}

TEST(QpEvents, ErrorWithoutACompletionNamesQpZero) {
  g_calls.clear();
  FakeConnection c(2);
  c.profile_start(0, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 1, 1 << 16);
  c.fail(Status::fail(ncclRemoteError, "progress.stalled", "test"));
  std::vector<Call> err;
  for (const auto& e : g_calls)
    if (e.plugin_id == nccl::kNetRailscopePluginId) err.push_back(e);
  ASSERT_EQ(err.size(), 2u);
  EXPECT_EQ(err[0].device, 0);
  EXPECT_EQ(err[0].qp_num, 100);
  EXPECT_EQ(err[1].status, static_cast<int>(IBV_WC_GENERAL_ERR));
  EXPECT_EQ(err[1].diag, "progress.stalled");
}

TEST(QpEvents, ErrorOfAPortDownNamesAQpOnThatPort) {
  g_calls.clear();
  FakeConnection c(4);
  PortHealth up, down;
  c.lane(0).health = &up;
  c.lane(1).health = &down;
  c.profile_start(0, c.phandle, IBV_WR_RDMA_WRITE_WITH_IMM, 1, 1 << 16);
  ASSERT_TRUE(down.link_down(PortHealth::Clock::now()));
  c.fail(Status::fail(ncclSystemError, "async.port_error", "test"));
  std::vector<Call> err;
  for (const auto& e : g_calls)
    if (e.plugin_id == nccl::kNetRailscopePluginId) err.push_back(e);
  ASSERT_EQ(err.size(), 2u);
  EXPECT_EQ(err[0].device, 1);
  EXPECT_EQ(err[0].qp_num, 100);
  c.lane(0).health = c.lane(1).health = nullptr;
}

}  // namespace
}  // namespace railscope::net::verbs
