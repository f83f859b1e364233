// SPDX-License-Identifier: Apache-2.0
// Chooses and creates the transport engine for this process. Today only verbs exists; the TCP
// engine (RAILSCOPE_TRANSPORT=tcp|auto) plugs in here without touching the ABI adapters.
#pragma once

#include <memory>

#include "plugin/net/transport.h"

namespace railscope::net {

// Returns the engine, or nullptr with *status saying why none is usable (e.g. device.none).
std::unique_ptr<Engine> make_engine(const InitArgs& args, Status* status);

}  // namespace railscope::net
