// SPDX-License-Identifier: Apache-2.0
// The ABI adapter's data path (plugin/net/abi/adapter.h): isend, irecv and iflush hand a comm to the
// sender, receiver or flusher its engine set (transport.h SendFn, RecvFn, FlushFn), with NCCL's
// arguments converted and its result code and request passed back unchanged, after the adapter's own
// argument checks; a comm without one is an internal error (internal.no_data_path), never a call
// through null. No engine is installed here: the data path never looks one up.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "plugin/net/abi/adapter.h"
#include "railscope/core/log.h"

namespace railscope::net {
namespace {

// Engine is the control path only: no data-path call is there for an adapter to fall back on.
template <class E>
concept HasDataPath = requires {
  &E::isend;
}
|| requires { &E::irecv; }
|| requires { &E::iflush; }
|| requires { &E::irecv_consumed; }
|| requires { &E::test; };
static_assert(!HasDataPath<Engine>);

struct FakeRequest : Request {};

struct SendCall {
  int calls = 0;
  SendComm* comm = nullptr;
  void* data = nullptr;
  size_t size = 0;
  int tag = 0;
  MemHandle* mhandle = nullptr;
  void* phandle = nullptr;
};
SendCall g_send;
ncclResult_t g_send_result = ncclSuccess;
Request* g_send_request = nullptr;

ncclResult_t fake_sender(SendComm* comm, void* data, size_t size, int tag, MemHandle* mhandle, void* phandle,
                         Request** out) {
  g_send = SendCall{g_send.calls + 1, comm, data, size, tag, mhandle, phandle};
  *out = g_send_request;
  return g_send_result;
}

struct RecvCall {
  int calls = 0;
  RecvComm* comm = nullptr;
  std::vector<RecvBuffer> bufs;
};
RecvCall g_recv;
ncclResult_t g_recv_result = ncclSuccess;
Request* g_recv_request = nullptr;

ncclResult_t fake_receiver(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out) {
  g_recv = RecvCall{g_recv.calls + 1, comm, std::vector<RecvBuffer>(bufs.begin(), bufs.end())};
  *out = g_recv_request;
  return g_recv_result;
}

int g_flush_calls = 0;
std::vector<RecvBuffer> g_flush_bufs;
Request* g_flush_request = nullptr;

ncclResult_t fake_flusher(RecvComm* /*comm*/, std::span<const RecvBuffer> bufs, Request** out) {
  ++g_flush_calls;
  g_flush_bufs.assign(bufs.begin(), bufs.end());
  *out = g_flush_request;
  return ncclSuccess;
}

struct FakeMr : MemHandle {};

// The plugin's WARN lines while a test runs.
std::vector<std::string> g_warnings;
void keep_warning(log::Level level, std::string_view line) {
  if (level == log::Level::Warn) g_warnings.emplace_back(line);
}

class AbiDispatch : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(abi::current_engine.load(), nullptr);
    g_send = {};
    g_recv = {};
    g_send_result = g_recv_result = ncclSuccess;
    g_send_request = g_recv_request = nullptr;
    g_flush_calls = 0;
    g_flush_bufs.clear();
    g_flush_request = nullptr;
    g_warnings.clear();
    log::set_extra_sink(&keep_warning);
  }
  void TearDown() override { log::set_extra_sink(nullptr); }
  static int warnings_naming(const std::string& what) {
    int n = 0;
    for (const auto& w : g_warnings) n += w.find(what) != std::string::npos ? 1 : 0;
    return n;
  }
};

TEST_F(AbiDispatch, IsendGoesToTheCommsSenderWithItsArgumentsAndReturnsWhatItSays) {
  SendComm comm;
  comm.sender = &fake_sender;
  FakeRequest req;
  FakeMr mr;
  char buf[64];
  int phandle = 0;
  g_send_request = &req;
  void* request = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(abi::isend(static_cast<void*>(&comm), buf, size_t{48}, 7,
                       static_cast<void*>(static_cast<MemHandle*>(&mr)), &phandle, &request),
            ncclSuccess);
  ASSERT_EQ(g_send.calls, 1);
  EXPECT_EQ(g_send.comm, &comm);
  EXPECT_EQ(g_send.data, buf);
  EXPECT_EQ(g_send.size, 48u);
  EXPECT_EQ(g_send.tag, 7);
  EXPECT_EQ(g_send.mhandle, &mr);
  EXPECT_EQ(g_send.phandle, &phandle);
  EXPECT_EQ(request, static_cast<void*>(static_cast<Request*>(&req)));

  // "Not now" (success, no request) and a failure pass through as the sender said them.
  g_send_request = nullptr;
  request = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(abi::isend(static_cast<void*>(&comm), buf, 16, 1, nullptr, nullptr, &request), ncclSuccess);
  EXPECT_EQ(request, nullptr);
  g_send_result = ncclRemoteError;
  EXPECT_EQ(abi::isend(static_cast<void*>(&comm), buf, 16, 1, nullptr, nullptr, &request), ncclRemoteError);
  EXPECT_EQ(request, nullptr);
  EXPECT_EQ(g_send.calls, 3);
}

TEST_F(AbiDispatch, IsendChecksNcclsArgumentsBeforeTheSender) {
  SendComm comm;
  comm.sender = &fake_sender;
  char buf[8];
  void* request = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(abi::isend(static_cast<void*>(&comm), buf, -1, 0, nullptr, nullptr, &request), ncclInternalError);
  EXPECT_EQ(request, nullptr);
  EXPECT_EQ(abi::isend(static_cast<void*>(&comm), buf, kMaxMessageBytes + 1, 0, nullptr, nullptr, &request),
            ncclInvalidArgument);
  EXPECT_EQ(abi::isend(static_cast<void*>(&comm), buf, size_t{8}, 0, nullptr, nullptr, nullptr),
            ncclInternalError);
  EXPECT_EQ(g_send.calls, 0);
}

TEST_F(AbiDispatch, IrecvGoesToTheCommsReceiverWithOneBufferPerEntry) {
  RecvComm comm;
  comm.receiver = &fake_receiver;
  FakeRequest req;
  FakeMr mr0, mr1;
  char a[32], b[64];
  int ph0 = 0, ph1 = 0;
  std::array<void*, 2> data{a, b};
  std::array<int, 2> sizes{32, 64};
  std::array<int, 2> tags{3, 4};
  std::array<void*, 2> mhandles{static_cast<MemHandle*>(&mr0), static_cast<MemHandle*>(&mr1)};
  std::array<void*, 2> phandles{&ph0, &ph1};
  g_recv_request = &req;
  void* request = nullptr;
  EXPECT_EQ(abi::irecv(static_cast<void*>(&comm), 2, data.data(), sizes.data(), tags.data(), mhandles.data(),
                       phandles.data(), &request),
            ncclSuccess);
  ASSERT_EQ(g_recv.calls, 1);
  EXPECT_EQ(g_recv.comm, &comm);
  ASSERT_EQ(g_recv.bufs.size(), 2u);
  EXPECT_EQ(g_recv.bufs[0].data, a);
  EXPECT_EQ(g_recv.bufs[0].size, 32u);
  EXPECT_EQ(g_recv.bufs[0].tag, 3);
  EXPECT_EQ(g_recv.bufs[0].mr, &mr0);
  EXPECT_EQ(g_recv.bufs[0].phandle, &ph0);
  EXPECT_EQ(g_recv.bufs[1].data, b);
  EXPECT_EQ(g_recv.bufs[1].size, 64u);
  EXPECT_EQ(g_recv.bufs[1].tag, 4);
  EXPECT_EQ(g_recv.bufs[1].mr, &mr1);
  EXPECT_EQ(g_recv.bufs[1].phandle, &ph1);
  EXPECT_EQ(request, static_cast<void*>(static_cast<Request*>(&req)));

  // No profiler handles: none reach the receiver. A failure passes through.
  g_recv_result = ncclSystemError;
  g_recv_request = nullptr;
  EXPECT_EQ(abi::irecv(static_cast<void*>(&comm), 1, data.data(), sizes.data(), tags.data(), mhandles.data(),
                       nullptr, &request),
            ncclSystemError);
  EXPECT_EQ(request, nullptr);
  ASSERT_EQ(g_recv.bufs.size(), 1u);
  EXPECT_EQ(g_recv.bufs[0].phandle, nullptr);

  // NCCL's misuse is refused before the receiver.
  sizes[0] = -1;
  EXPECT_EQ(abi::irecv(static_cast<void*>(&comm), 1, data.data(), sizes.data(), tags.data(), mhandles.data(),
                       nullptr, &request),
            ncclInternalError);
  EXPECT_EQ(abi::irecv(static_cast<void*>(&comm), 9, data.data(), sizes.data(), tags.data(), mhandles.data(),
                       nullptr, &request),
            ncclInternalError);
  EXPECT_EQ(g_recv.calls, 2);
}

TEST_F(AbiDispatch, IflushGoesToTheCommsFlusherAndReturnsItsRequest) {
  RecvComm comm;
  comm.receiver = &fake_receiver;
  comm.flusher = &fake_flusher;
  FakeRequest req;
  FakeMr mr;
  char a[16];
  void* data = a;
  int size = 16;
  void* mh = static_cast<MemHandle*>(&mr);
  g_flush_request = &req;
  void* request = nullptr;
  EXPECT_EQ(abi::iflush(static_cast<void*>(&comm), 1, &data, &size, &mh, &request), ncclSuccess);
  ASSERT_EQ(g_flush_calls, 1);
  ASSERT_EQ(g_flush_bufs.size(), 1u);
  EXPECT_EQ(g_flush_bufs[0].data, a);
  EXPECT_EQ(g_flush_bufs[0].size, 16u);
  EXPECT_EQ(g_flush_bufs[0].mr, &mr);
  EXPECT_EQ(request, static_cast<void*>(static_cast<Request*>(&req)));
  // Nothing to flush: no request.
  g_flush_request = nullptr;
  EXPECT_EQ(abi::iflush(static_cast<void*>(&comm), 0, nullptr, nullptr, nullptr, &request), ncclSuccess);
  EXPECT_EQ(request, nullptr);
  EXPECT_EQ(g_flush_calls, 2);
  EXPECT_EQ(g_recv.calls, 0);
}

TEST_F(AbiDispatch, ACommWithoutItsDataPathIsAnInternalErrorNotACall) {
  SendComm send;
  RecvComm recv;
  char buf[8];
  int size = 8, tag = 0;
  void* data = buf;
  void* mh = nullptr;
  void* request = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(abi::isend(static_cast<void*>(&send), buf, size_t{8}, 0, nullptr, nullptr, &request),
            ncclInternalError);
  EXPECT_EQ(request, nullptr);
  request = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(abi::irecv(static_cast<void*>(&recv), 1, &data, &size, &tag, &mh, nullptr, &request),
            ncclInternalError);
  EXPECT_EQ(request, nullptr);
  request = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(abi::iflush(static_cast<void*>(&recv), 1, &data, &size, &mh, &request), ncclInternalError);
  EXPECT_EQ(request, nullptr);
  // One finding per call, naming the call and what the comm lacks.
  EXPECT_EQ(warnings_naming("[internal.no_data_path]"), 3);
  EXPECT_EQ(warnings_naming("isend on a comm without its sender"), 1);
  EXPECT_EQ(warnings_naming("irecv on a comm without its receiver"), 1);
  EXPECT_EQ(warnings_naming("iflush on a comm without its flusher"), 1);
  // A receiver does not stand in for a missing flusher.
  recv.receiver = &fake_receiver;
  EXPECT_EQ(abi::iflush(static_cast<void*>(&recv), 1, &data, &size, &mh, &request), ncclInternalError);
  EXPECT_EQ(g_send.calls + g_recv.calls + g_flush_calls, 0);
}

TEST_F(AbiDispatch, ACommWithItsDataPathLogsNothing) {
  SendComm send;
  send.sender = &fake_sender;
  RecvComm recv;
  recv.receiver = &fake_receiver;
  recv.flusher = &fake_flusher;
  char buf[8];
  int size = 8, tag = 0;
  void* data = buf;
  void* mh = nullptr;
  void* request = nullptr;
  EXPECT_EQ(abi::isend(static_cast<void*>(&send), buf, size_t{8}, 0, nullptr, nullptr, &request),
            ncclSuccess);
  EXPECT_EQ(abi::irecv(static_cast<void*>(&recv), 1, &data, &size, &tag, &mh, nullptr, &request),
            ncclSuccess);
  EXPECT_EQ(abi::iflush(static_cast<void*>(&recv), 1, &data, &size, &mh, &request), ncclSuccess);
  EXPECT_EQ(g_send.calls + g_recv.calls + g_flush_calls, 3);
  EXPECT_TRUE(g_warnings.empty()) << g_warnings.front();
}

TEST_F(AbiDispatch, IrecvConsumedHasNothingToReleaseAndRefusesANullComm) {
  RecvComm recv;
  FakeRequest req;
  EXPECT_EQ(abi::irecv_consumed(static_cast<void*>(&recv), 1, static_cast<Request*>(&req)), ncclSuccess);
  EXPECT_TRUE(g_warnings.empty());
  EXPECT_EQ(abi::irecv_consumed(nullptr, 1, static_cast<Request*>(&req)), ncclInternalError);
  EXPECT_EQ(warnings_naming("[internal.bad_argument]"), 1);
}

}  // namespace
}  // namespace railscope::net
