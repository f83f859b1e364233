// SPDX-License-Identifier: Apache-2.0
#include "railscope/cli/output_file.h"

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "railscope/cli/exit_status.h"
#include "railscope/core/safe_file.h"

namespace railscope::cli {

void require_writable_output(std::string_view command, std::string_view flag, const std::string& path) {
  std::string why;
  if (core::can_write_atomically(path, &why)) {
    spdlog::debug("{}: {} {} is writable", command, flag, path);
    return;
  }
  std::fprintf(stderr, "%.*s: %.*s %s: cannot write there: %s\n", static_cast<int>(command.size()),
               command.data(), static_cast<int>(flag.size()), flag.data(), path.c_str(), why.c_str());
  throw CLI::RuntimeError(kExitCannotCreate);
}

}  // namespace railscope::cli
