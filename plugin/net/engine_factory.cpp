// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/engine_factory.h"

#include "plugin/net/tcp/tcp_engine.h"
#include "plugin/net/verbs/verbs_engine.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"

namespace railscope::net {

// RAILSCOPE_TRANSPORT: verbs, tcp, or auto (verbs when an RDMA port is active, else TCP on the
// interfaces NCCL's socket transport would use).
std::unique_ptr<Engine> make_engine(const InitArgs& args, Status* status) {
  std::string mode = params::get_string("RAILSCOPE_TRANSPORT");
  if (mode == "tcp") return tcp::TcpEngine::create(args, status);
  if (mode == "verbs") return verbs::VerbsEngine::create(args, status);
  if (mode != "auto")
    RS_WARN("NET/railscope : {}", diag::one_line(diag::make("config.bad_env", "RAILSCOPE_TRANSPORT=" + mode +
                                                                                  " (auto, verbs or tcp)")));
  Status verbs_status;
  if (auto e = verbs::VerbsEngine::create(args, &verbs_status)) {
    int n = 0;
    if (e->devices(&n).ok() && n > 0) return e;
  }
  RS_INFO(NCCL_INIT | NCCL_NET, "NET/railscope : no active RDMA port ({}); using the TCP engine",
          verbs_status.ok() ? "no device" : diag::one_line(verbs_status.finding()));
  return tcp::TcpEngine::create(args, status);
}

}  // namespace railscope::net
