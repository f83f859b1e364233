// SPDX-License-Identifier: Apache-2.0
// The bytes of one sealed frame handed to the other end as the reader reads them: header, then body.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "frame_auth.h"

namespace railscope::preflight {

inline std::optional<Frame> deliver(FrameAuth& to, std::string_view bytes, std::string* e) {
  if (bytes.size() < kHeaderBytes) return *e = "short", std::nullopt;
  return to.open(bytes.substr(0, kHeaderBytes), bytes.substr(kHeaderBytes), e);
}

}  // namespace railscope::preflight
