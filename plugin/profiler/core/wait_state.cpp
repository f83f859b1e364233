// SPDX-License-Identifier: Apache-2.0
#include "plugin/profiler/core/wait_state.h"

#include "railscope/nccl/profiler.h"

namespace railscope::profiler {

WaitKind classify_wait(uint8_t state) {
  switch (state) {
    case ncclProfilerProxyStepSendPeerWait_v4:
    case ncclProfilerProxyOpSendRemFifoWait:
    case ncclProfilerProxyStepRecvWait:
    case ncclProfilerProxyOpRecvPosted: return WaitKind::PeerLateOrDead;
    case ncclProfilerProxyStepSendWait:
    case ncclProfilerProxyOpSendTransmitted:
    case ncclProfilerProxyStepRecvFlushWait: return WaitKind::NetworkPath;
    case ncclProfilerProxyStepSendGPUWait:
    case ncclProfilerProxyStepRecvGPUWait: return WaitKind::LocalGpu;
    default: return WaitKind::Unknown;
  }
}

const char* wait_kind_name(WaitKind kind) {
  switch (kind) {
    case WaitKind::PeerLateOrDead: return "peer_late_or_dead";
    case WaitKind::NetworkPath: return "network_path";
    case WaitKind::LocalGpu: return "local_gpu";
    case WaitKind::Unknown: break;
  }
  return "unknown";
}

const char* state_name(uint8_t state) {
  switch (state) {
    case ncclProfilerProxyOpSendPosted: return "SendPosted";
    case ncclProfilerProxyOpSendRemFifoWait: return "SendRemFifoWait";
    case ncclProfilerProxyOpSendTransmitted: return "SendTransmitted";
    case ncclProfilerProxyOpSendDone: return "SendDone";
    case ncclProfilerProxyOpRecvPosted: return "RecvPosted";
    case ncclProfilerProxyOpRecvReceived: return "RecvReceived";
    case ncclProfilerProxyOpRecvTransmitted: return "RecvTransmitted";
    case ncclProfilerProxyOpRecvDone: return "RecvDone";
    case ncclProfilerProxyStepSendGPUWait: return "SendGPUWait";
    case ncclProfilerProxyStepSendWait: return "SendWait";
    case ncclProfilerProxyStepRecvWait: return "RecvWait";
    case ncclProfilerProxyStepRecvFlushWait: return "RecvFlushWait";
    case ncclProfilerProxyStepRecvGPUWait: return "RecvGPUWait";
    case ncclProfilerProxyStepSendPeerWait_v4: return "SendPeerWait";
    default: return "Idle";
  }
}

const char* state_meaning(uint8_t state) { return wait_kind_name(classify_wait(state)); }

}  // namespace railscope::profiler
