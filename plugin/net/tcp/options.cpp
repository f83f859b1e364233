// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/options.h"

#include <algorithm>
#include <string>

#include "plugin/net/tcp/wire.h"
#include "railscope/core/diagnosis.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"

namespace railscope::net::tcp {

const char* zerocopy_mode_name(ZeroCopyMode m) {
  switch (m) {
    case ZeroCopyMode::Off: return "off";
    case ZeroCopyMode::On: return "on";
    case ZeroCopyMode::Auto: break;
  }
  return "auto";
}

TcpOptions options_from_env() {
  TcpOptions o;
  auto nt = params::get_int("NCCL_SOCKET_NTHREADS");
  auto ns = params::get_int("NCCL_NSOCKS_PERTHREAD");
  if (nt >= 0) o.nthreads = static_cast<int>(nt);
  if (ns > 0) o.nsocks_per_thread = static_cast<int>(ns);
  if (o.nthreads > kMaxThreads) o.nthreads = kMaxThreads;
  if (o.nsocks() > kMaxSockets) {
    const int per_thread = kMaxSockets / std::max(o.nthreads, 1);  // 0 threads: the caller's, one
    RS_WARN(
        "NET/railscope : NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD = {} x {} exceeds {} sockets; "
        "using {} sockets per thread",
        o.nthreads, o.nsocks_per_thread, kMaxSockets, per_thread);
    o.nsocks_per_thread = per_thread;
  }
  o.sockbuf = static_cast<int>(params::get_int("RAILSCOPE_TCP_SOCKBUF"));
  o.timeout_s = static_cast<int>(params::get_int("RAILSCOPE_TCP_TIMEOUT"));
  o.min_chunk = static_cast<uint32_t>(params::get_int("RAILSCOPE_TCP_MIN_CHUNK"));
  o.inline_max = static_cast<uint32_t>(params::get_int("RAILSCOPE_TCP_INLINE"));
  o.zerocopy_min = static_cast<uint32_t>(params::get_int("RAILSCOPE_TCP_ZEROCOPY_MIN"));
  std::string zc = params::get_string("RAILSCOPE_TCP_ZEROCOPY");
  if (zc == "on") {
    o.zerocopy = ZeroCopyMode::On;
  } else if (zc == "off") {
    o.zerocopy = ZeroCopyMode::Off;
  } else if (zc != "auto") {
    RS_WARN("NET/railscope : {}", diag::one_line(diag::make("config.bad_env", "RAILSCOPE_TCP_ZEROCOPY=" + zc +
                                                                                  " (auto, on or off)")));
  }
  return o;
}

}  // namespace railscope::net::tcp
