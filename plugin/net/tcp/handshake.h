// SPDX-License-Identifier: Apache-2.0
// Non-blocking connection setup (NCCL polls connect/accept until they hand out a comm).
// Sender: opens the control socket and nsocks data sockets to the listener, sends a hello on each
// (listener nonce, connection id, socket index and count, chunk and inline sizes, host name) and
// waits for the receiver's answer on the control socket. Receiver (the listen comm): accepts
// sockets, reads and validates each hello, groups them by connection id, and once the control and
// every data socket of a connection are in, answers OK and returns the comm. A hello that fails
// validation gets a refusal where possible and the socket is dropped (logged as peer.bad_handshake);
// the sender reports the refusal as peer.bad_handshake. Both sides give up after the timeout.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/net/common/unverified_connections.h"
#include "plugin/net/tcp/options.h"
#include "plugin/net/tcp/wire.h"
#include "railscope/nccl/common.h"
#include "railscope/socket/fd.h"

namespace railscope::net::tcp {

class TcpSendComm;  // send_comm.h
class TcpRecvComm;  // recv_comm.h

// What the engine knows about the local end.
struct LocalEnd {
  std::string host;
  std::string dev;   // interface name
  std::string addr;  // its address
  int mtu = 0;
  TcpOptions options;
  ncclProfilerCallback_t profiler = nullptr;
};

class TcpConnector {
 public:
  TcpConnector(const ListenHandle& handle, LocalEnd local, uint64_t conn_id);
  Status start();
  // Advances as far as the sockets allow; *out receives the finished comm.
  Status step(TcpSendComm** out);

 private:
  struct Pending {
    Fd fd;
    std::array<std::byte, kHelloSize> hello{};
    size_t sent = 0;
    bool connected = false;
  };
  Status timed_out(const char* stage) const;
  ListenHandle handle_;
  LocalEnd local_;
  uint64_t conn_id_;
  std::string peer_;
  std::vector<Pending> socks_;  // [0] control, then data
  std::array<std::byte, kAckSize> ack_{};
  size_t ack_got_ = 0;
  std::chrono::steady_clock::time_point deadline_;
};

class TcpListen : public ListenComm {
 public:
  TcpListen(Fd fd, uint64_t nonce, LocalEnd local)
      : fd_(std::move(fd)),
        nonce_(nonce),
        local_(std::move(local)),
        refusals_(local_.dev),
        incoming_(&refusals_) {}
  Status accept(TcpRecvComm** out);

 private:
  struct Incoming {
    Fd fd;
    std::string peer;
    std::array<std::byte, kHelloSize> hello{};
    size_t got = 0;
    Hello decoded;  // once verified
  };
  struct Group {
    uint64_t conn_id = 0;
    Hello first;  // the control socket's hello
    Fd ctrl;
    std::vector<Fd> data;
    int have = 0;
    std::string peer;
    std::chrono::steady_clock::time_point deadline;
  };
  Status read_hello(Incoming* in, bool* finished);
  // One non-blocking step of an unverified socket: its hello read and checked.
  Verdict advance(Incoming& in);
  void place(Incoming* in, const Hello& h);
  // A socket whose hello named this listener and still does not fit its connection.
  void refuse(int fd, AckCode code, const std::string& peer, const std::string& why);

  std::mutex mutex_;
  Fd fd_;
  uint64_t nonce_;
  LocalEnd local_;
  RefusalLog refusals_;
  UnverifiedConnections<Incoming> incoming_;
  std::vector<Group> groups_;
};

}  // namespace railscope::net::tcp
