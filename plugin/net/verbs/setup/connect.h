// SPDX-License-Identifier: Apache-2.0
// Non-blocking connection setup. connect() and accept() are polled by NCCL; each call advances
// these state machines as far as the sockets allow and returns a finished comm once both ends'
// QPs are in RTS. The link checks (link layer, GID type/family/link-local, path MTU) run before any
// QP moves to RTR; a receiver that finds the sender incompatible tells it so, and both ends report
// the same diagnosis.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/recv_comm.h"
#include "plugin/net/verbs/send_comm.h"

namespace railscope::net::verbs {

// What connection setup needs from the engine about the (virtual) device used.
struct LocalDevice {
  std::vector<const NetPort*> ports;
  std::vector<PortHealth*> health;
  std::vector<MrCache*> caches;
  ncclProfilerCallback_t profiler = nullptr;
  std::string host;
};

inline constexpr std::chrono::seconds kHandshakeTimeout{60};

class SendConnector {
 public:
  SendConnector(const ListenHandle& handle, LocalDevice dev, LinkParams link);
  Status start();
  // Advances; *out receives the finished comm (ownership passes to the caller).
  Status step(VerbsSendComm** out);

 private:
  enum class Stage { Connecting, AwaitReply, AwaitReady };
  Status on_reply(const Message& m);
  Stage stage_ = Stage::Connecting;
  ListenHandle handle_;
  LocalDevice dev_;
  std::unique_ptr<VerbsSendComm> comm_;
  Connection::Clock::time_point deadline_;
};

class RecvAcceptor {
 public:
  RecvAcceptor(Fd fd, std::string peer, uint64_t nonce, LocalDevice dev, LinkParams link);
  Status step(VerbsRecvComm** out);
  // Whether the connection proved it was meant for this listener (a HELLO carrying its nonce). A
  // failure before that is a stray connection (port scanner, HTTP probe, a stale handle's peer):
  // the listener drops it and keeps serving; a failure after it is the real peer's and fails accept.
  bool verified() const { return verified_; }
  // What the stray connection did, for logging once per cause: "closed", "malformed",
  // "wrong_listener", "version" (railscope of another release) or "silent"; empty while it has not
  // failed or once verified.
  const char* refusal() const { return refusal_; }

 private:
  enum class Stage { AwaitHello, AwaitQpns, SendReady };
  Status on_hello(const Message& m);
  Status reject(uint8_t code, Status why);
  Status refuse_unverified(const char* cause, Status why);
  Stage stage_ = Stage::AwaitHello;
  bool verified_ = false;
  const char* refusal_ = "";
  uint64_t nonce_;
  LocalDevice dev_;
  std::unique_ptr<VerbsRecvComm> comm_;
  Connection::Clock::time_point deadline_;
};

std::string local_host_name();
std::string peer_text(const ListenHandle& h);

}  // namespace railscope::net::verbs
