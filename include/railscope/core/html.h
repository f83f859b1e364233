// SPDX-License-Identifier: Apache-2.0
// Text placed in an HTML or SVG page (report's plots, preflight's heat map): the five markup characters
// as entities, and control characters, which XML 1.0 does not allow, as '?'.
#pragma once

#include <string>
#include <string_view>

namespace railscope::core {

std::string html_escape(std::string_view s);

}  // namespace railscope::core
