// SPDX-License-Identifier: Apache-2.0
// This node's report for rank 0, built from the doctor's facts and findings (tools/doctor).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "doctor.h"
#include "node_report.h"

namespace railscope::preflight {

// Prefix length of the IPv4 address `ipv4` on `netdev`; -1 when unknown.
using PrefixLookup = std::function<int(const std::string& netdev, const std::string& ipv4)>;
PrefixLookup system_prefixes();  // getifaddrs()

NodeReport summarize(const doctor::NodeFacts& facts, const doctor::Report& report, int rank,
                     const std::string& host, const std::map<std::string, std::string>& nccl_env,
                     const PrefixLookup& prefixes);

// The process's NCCL_* variables (bounded: the first kMaxEnv names, values cut at kMaxField bytes).
std::map<std::string, std::string> process_nccl_env();

}  // namespace railscope::preflight
