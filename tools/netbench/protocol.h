// SPDX-License-Identifier: Apache-2.0
// Messages the two netbench processes exchange out of band (oob.h frames them). Plain structs:
// both ends are the same netbench build, and the magic + version in Hello catch anything else.
#pragma once

#include <cstdint>

namespace railscope::netbench {

enum MsgType : uint32_t {
  kMsgHello = 1,      // client -> server: RunParams
  kMsgHelloAck = 2,   // server -> client: PeerInfo
  kMsgHandle = 3,     // both ways: the plugin's 128-byte listen handle
  kMsgConnected = 4,  // both ways: send and receive comms are up
  kMsgSizeBegin = 5,  // client -> server: SizePlan
  kMsgReady = 6,      // server -> client: receive buffers prepared
  kMsgBwResult = 7,   // server -> client: PhaseResult of the bandwidth phase
  kMsgLatResult = 8,  // server -> client: PhaseResult of the latency phase
  kMsgDone = 9,       // client -> server: no more sizes
  kMsgError = 10,     // either way: text of a failure
};

constexpr uint32_t kProtocolMagic = 0x4e424e52;  // "RNBN"
constexpr uint32_t kProtocolVersion = 1;

enum ModeBits : uint32_t { kModeBandwidth = 1, kModeLatency = 2 };

// What the client decides for the whole run (the server follows).
struct RunParams {
  uint32_t magic = kProtocolMagic;
  uint32_t version = kProtocolVersion;
  uint64_t seed = 0;
  uint64_t buffer_bytes = 0;  // registered region per direction
  uint32_t verify = 1;
  uint32_t modes = kModeBandwidth | kModeLatency;
  uint32_t timeout_s = 60;
  uint32_t reserved = 0;
};

struct PeerInfo {
  char device[64] = {};
  char host[64] = {};
  char plugin[64] = {};
  int32_t version = 0;
  int32_t max_recvs = 1;
};

// One message size.
struct SizePlan {
  uint64_t size = 0;
  uint32_t recvs = 1;      // buffers per grouped receive
  uint32_t window = 1;     // receive requests in flight (sends in flight = window * recvs)
  uint32_t messages = 0;   // bandwidth phase, warmup included (a multiple of recvs)
  uint32_t warmup = 0;     // messages not timed
  uint32_t lat_iters = 0;  // ping-pong round trips (0: no latency phase)
  uint32_t lat_warmup = 0;
};

struct PhaseResult {
  uint64_t elapsed_ns = 0;  // receiver's view (after warmup)
  uint32_t messages_ok = 0;
  uint32_t mismatches = 0;
  char first_mismatch[200] = {};
};

}  // namespace railscope::netbench
