// SPDX-License-Identifier: Apache-2.0
// The GPUDirect report as JSON, for `railscope doctor --json` and other tools (not for the plugin).
#pragma once

#include <nlohmann/json.hpp>

#include "railscope/gpu/gpudirect_report.h"

namespace railscope::gpu {

nlohmann::json to_json(const GpuDirectReport& report);

}  // namespace railscope::gpu
