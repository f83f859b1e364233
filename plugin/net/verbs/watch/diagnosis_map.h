// SPDX-License-Identifier: Apache-2.0
// The one place the verbs engine turns a low-level failure into a diagnosis: completion status
// (+ vendor_err) and the phase it happened in, ibv_modify_qp's errno at RTR/RTS, ibv_reg_mr's errno.
// The ids come from the shared catalogue (lib/core/diagnosis_catalogue.cpp), so `railscope doctor`
// and the plugin name a fault the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "railscope/core/diagnosis.h"

namespace railscope::net::verbs {

enum class Phase { Send, Recv, Cts, Flush };
std::string_view to_string(Phase p);

// Catalogue id for a work-completion status (an ibv_wc_status value).
std::string_view wc_status_id(int status);
// One finding: status name and number, vendor_err, phase, and `where` (devices, peer, GIDs).
diag::Finding wc_finding(int status, uint32_t vendor_err, Phase phase, size_t bytes,
                         const std::string& where);

// ibv_modify_qp failed with errno `err` moving to `state` ("INIT", "RTR", "RTS").
std::string_view modify_qp_id(int err, std::string_view state);
diag::Finding modify_qp_finding(int err, std::string_view state, const std::string& where);

// ibv_post_send / ibv_post_recv returned `rc` (an errno value); `call` names the verb and what was
// being posted, e.g. "ibv_post_send (eager)".
diag::Finding post_finding(std::string_view call, int rc, const std::string& where);

// ibv_reg_mr (or QP/CQ creation) failed with errno `err` for `size` bytes. memlock_kib is the
// current RLIMIT_MEMLOCK soft limit in KiB (-1 = unlimited).
std::string_view reg_mr_id(int err);
diag::Finding reg_mr_finding(int err, size_t size, long long memlock_kib, const std::string& where);
// The process's RLIMIT_MEMLOCK soft limit in KiB, -1 when unlimited.
long long memlock_limit_kib();

}  // namespace railscope::net::verbs
