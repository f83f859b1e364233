// The ABI adapter's isend and irecv (plugin/net/abi/adapter.h): a comm whose engine set a sender or
// receiver (transport.h SendFn, RecvFn) is handed to it directly, with NCCL's arguments converted and
// its result code and request passed back unchanged, after the adapter's own argument checks; a comm
// with none goes through the engine. No engine is installed here, so a call that looked one up would
// fail with ncclInternalError ("before init").
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "plugin/net/abi/adapter.h"

namespace railscope::net {
namespace {

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

struct FakeMr : MemHandle {};

class AbiDispatch : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(abi::current_engine.load(), nullptr);
    g_send = {};
    g_recv = {};
    g_send_result = g_recv_result = ncclSuccess;
    g_send_request = g_recv_request = nullptr;
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

TEST_F(AbiDispatch, ACommWithoutSenderOrReceiverGoesThroughTheEngine) {
  // No engine is installed: the engine path answers "called before init".
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
  EXPECT_EQ(g_send.calls + g_recv.calls, 0);
}

}  // namespace
}  // namespace railscope::net
