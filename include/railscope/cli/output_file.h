// SPDX-License-Identifier: Apache-2.0
// An output file named on the command line is checked before the command prints or measures anything,
// so a typo in `--html /nonexistent/x.html` costs no run and leaves stdout empty.
#pragma once

#include <string>
#include <string_view>

namespace railscope::cli {

// Returns when `path` can be written (a unique temporary file is made beside it and removed); else one
// line on stderr ("railscope report: --html /x/y.html: cannot write there: ...") and CLI::RuntimeError
// with kExitCannotCreate. `command` is the command's path as the user typed it ("railscope report").
void require_writable_output(std::string_view command, std::string_view flag, const std::string& path);

}  // namespace railscope::cli
