// SPDX-License-Identifier: Apache-2.0
// The TCP engine's tunables, read once from the environment (params registry) when the engine is
// created: sockets and helper threads per connection (NCCL's NCCL_SOCKET_NTHREADS and
// NCCL_NSOCKS_PERTHREAD meanings), socket buffer size, the dead-peer bound, the chunk size large
// messages are cut into, the inline limit for small messages, and MSG_ZEROCOPY sends.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace railscope::net::tcp {

// RAILSCOPE_TCP_ZEROCOPY: Auto uses MSG_ZEROCOPY until the kernel reports it copied the data anyway
// (loopback, veth: no gain), then that connection goes back to copy sends; On keeps using it.
enum class ZeroCopyMode { Off, Auto, On };
const char* zerocopy_mode_name(ZeroCopyMode m);

struct TcpOptions {
  int nthreads = 4;           // helper threads per connection and side (one per socket measured best)
  int nsocks_per_thread = 1;  // data sockets each helper thread serves
  int sockbuf = 0;            // SO_SNDBUF/SO_RCVBUF bytes; 0 = kernel autotuning
  int timeout_s = 60;         // unacknowledged data / silent peer / handshake bound
  uint32_t min_chunk = 512 * 1024;
  uint32_t inline_max = 8 * 1024;
  ZeroCopyMode zerocopy = ZeroCopyMode::Auto;
  uint32_t zerocopy_min = 16 * 1024;  // smallest send() that uses MSG_ZEROCOPY
  // NCCL_SOCKET_NTHREADS=0: no helper threads, NCCL's proxy thread moves the bytes of
  // nsocks_per_thread sockets itself in isend/irecv/test.
  int nsocks() const { return std::max(nthreads, 1) * nsocks_per_thread; }
};

// Reads RAILSCOPE_TCP_* and NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD (-2 = auto: railscope's
// defaults above). The product is capped at kMaxSockets, as NCCL does.
TcpOptions options_from_env();

}  // namespace railscope::net::tcp
