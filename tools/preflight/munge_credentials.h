// SPDX-License-Identifier: Apache-2.0
// MUNGE as the job's credential service (job_credentials.h). libmunge is loaded with dlopen when a job
// uses it, so the CLI runs on hosts without MUNGE. MUNGE encrypts each credential under the cluster's
// key, restricts it here to this user, and refuses to decode one twice (replay).
#pragma once

#include <memory>
#include <string>

#include "job_credentials.h"

namespace railscope::preflight {

// MUNGE at `socket` (empty: libmunge's default, /run/munge/munge.socket.2), checked by sealing and
// opening one credential; nullptr with *error naming what is missing (libmunge, munged, the key).
std::shared_ptr<const CredentialService> open_munge(const std::string& socket, std::string* error);

}  // namespace railscope::preflight
