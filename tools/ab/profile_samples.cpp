// SPDX-License-Identifier: Apache-2.0
#include "profile_samples.h"

#include <exception>

#include "tools/report/profile_reader.h"

namespace railscope::ab {

ProfileRead read_profile_samples(const std::filesystem::path& dir) {
  ProfileRead result;
  report::ProfileSet set;
  try {
    set = report::read_profiles({dir.string()});
  } catch (const std::exception& e) {
    result.error = e.what();
    return result;
  }
  result.files = set.files.size();
  result.warnings = std::move(set.problems);
  for (const auto& row : set.colls) {
    if (!row.time_us || !row.busbw_gbs || !row.complete) {
      ++result.untimed;
      continue;
    }
    result.samples.push_back(OpSample{row.op, row.bytes, *row.busbw_gbs, *row.time_us, row.comm,
                                      row.ord.value_or(row.seq), row.algo, row.proto});
  }
  return result;
}

}  // namespace railscope::ab
