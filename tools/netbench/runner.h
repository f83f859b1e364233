// SPDX-License-Identifier: Apache-2.0
// The two roles of a netbench run. The client drives (sizes, parameters), sends, measures and prints;
// the server receives, verifies and echoes. Both return a process exit status:
// 0 ok, 1 failure (plugin error, peer gone, timeout), 3 data verification failed.
#pragma once

#include "options.h"

namespace railscope::netbench {

int run_server(const Options& o);
int run_client(const Options& o);
// --pair A,B: a server on A and a client on B, two child processes of this one.
int run_pair(const Options& o, const char* self_exe);

// NCCL's logger signature: plugin log lines go to stderr as "netbench <role>: NCCL <LEVEL> <text>".
void set_log_role(const char* role, bool verbose);

}  // namespace railscope::netbench
