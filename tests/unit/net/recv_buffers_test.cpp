// SPDX-License-Identifier: Apache-2.0
// The ABI adapters' receive buffers (plugin/net/abi/recv_buffers.h): the engine sees exactly the n
// buffers an irecv or iflush filled, in order and with their values, whatever the unused room holds.
#include "plugin/net/abi/recv_buffers.h"

#include <gtest/gtest.h>

namespace railscope::net::abi {
namespace {

RecvBuffer buffer(int i) {
  return RecvBuffer{reinterpret_cast<void*>(0x1000 + i), static_cast<size_t>(64 * i), 100 + i,
                    reinterpret_cast<MemHandle*>(0x2000 + i),
                    i % 2 == 0 ? nullptr : reinterpret_cast<void*>(0x3000)};
}

void expect_buffer(const RecvBuffer& got, int i) {
  const RecvBuffer want = buffer(i);
  EXPECT_EQ(got.data, want.data) << i;
  EXPECT_EQ(got.size, want.size) << i;
  EXPECT_EQ(got.tag, want.tag) << i;
  EXPECT_EQ(got.mr, want.mr) << i;
  EXPECT_EQ(got.phandle, want.phandle) << i;
}

TEST(AbiRecvBuffers, TheEngineSeesExactlyTheBuffersFilled) {
  for (int n = 0; n <= kMaxRecvs; ++n) {
    RecvBuffers bufs;
    for (int i = 0; i < n; ++i) bufs.set(i, buffer(i));
    const std::span<const RecvBuffer> got = bufs.first(n);
    ASSERT_EQ(got.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) expect_buffer(got[static_cast<size_t>(i)], i);
  }
}

TEST(AbiRecvBuffers, ASecondCallOverwritesWhatTheFirstLeft) {
  RecvBuffers bufs;
  for (int i = 0; i < kMaxRecvs; ++i) bufs.set(i, buffer(kMaxRecvs - i));
  bufs.set(0, buffer(0));
  bufs.set(1, buffer(1));
  const std::span<const RecvBuffer> got = bufs.first(2);
  ASSERT_EQ(got.size(), 2u);
  expect_buffer(got[0], 0);
  expect_buffer(got[1], 1);
}

}  // namespace
}  // namespace railscope::net::abi
