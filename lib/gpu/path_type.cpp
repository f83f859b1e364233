// SPDX-License-Identifier: Apache-2.0
// NCCL_NET_GDR_LEVEL parsing with NCCL's semantics (src/graph/paths.cc ncclGetLevel, 2.28.9):
// exact upper-case names LOC..SYS, else a leading digit is read as strtol does and mapped through the
// old numbering; anything else behaves as if unset.
#include "railscope/gpu/path_type.h"

#include <array>
#include <cstdlib>

#include "railscope/core/params.h"

namespace railscope::gpu {
namespace {

constexpr std::array<std::string_view, 10> kNames = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                                     "PXB", "P2C", "PXN", "PHB", "SYS"};
constexpr std::array<PathType, 5> kOldLevels = {PathType::Loc, PathType::Pix, PathType::Pxb, PathType::Phb,
                                                PathType::Sys};

}  // namespace

std::string_view to_string(PathType p) {
  auto i = static_cast<size_t>(p);
  return i < kNames.size() ? kNames[i] : std::string_view("???");
}

GdrLevel parse_gdr_level(std::optional<std::string_view> text) {
  GdrLevel out;
  if (!text) return out;
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (*text == kNames[i]) {
      out.level = static_cast<PathType>(i);
      out.from_env = true;
      return out;
    }
  }
  if (!text->empty() && (*text)[0] >= '0' && (*text)[0] <= '9') {
    // strtol semantics: leading digits (base auto-detected) count, trailing junk is ignored.
    std::string copy(*text);
    long old = std::strtol(copy.c_str(), nullptr, 0);
    if (old < 0) old = 0;
    size_t idx =
        static_cast<size_t>(old) >= kOldLevels.size() ? kOldLevels.size() - 1 : static_cast<size_t>(old);
    out.level = kOldLevels[idx];
    out.from_env = true;
    return out;
  }
  out.note = "NCCL_NET_GDR_LEVEL='" + std::string(*text) +
             "' is not a level NCCL knows (LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS or 0-5, case-sensitive); "
             "NCCL ignores it and uses PXB";
  return out;
}

GdrLevel gdr_level_from_env() {
  auto raw = params::raw("NCCL_NET_GDR_LEVEL");
  if (!raw) return {};
  return parse_gdr_level(std::string_view(*raw));
}

}  // namespace railscope::gpu
