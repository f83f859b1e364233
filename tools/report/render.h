// SPDX-License-Identifier: Apache-2.0
// The three outputs of `railscope report`: a text table (default), JSON, and one self-contained
// HTML page with inline SVG plots.
#pragma once

#include <cstdint>
#include <string>

#include "tools/report/analysis.h"

namespace railscope::report {

std::string human_bytes(uint64_t bytes);  // "8 B", "4 KiB", "256 MiB"
std::string render_text(const Report& r);
std::string render_json(const Report& r);
std::string render_html(const Report& r);

}  // namespace railscope::report
