// SPDX-License-Identifier: Apache-2.0
// The README's environment-variable table and the params registry must list the same variables.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "railscope/core/params.h"

TEST(Readme, EnvTableMatchesRegistry) {
  std::ifstream in(std::string(RAILSCOPE_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md not found";
  std::set<std::string> documented;
  const std::regex row(
      R"(^\|\s*`((NCCL|RAILSCOPE)_[A-Z0-9_]+|SLURM_JOB_ID|PBS_JOBID|LSB_JOBID|TORCHELASTIC_RUN_ID|RANK|OMPI_COMM_WORLD_RANK|PMIX_RANK|PMI_RANK|SLURM_PROCID|LOCAL_RANK|OMPI_COMM_WORLD_LOCAL_RANK|MPI_LOCALRANKID|SLURM_LOCALID)`\s*\|)");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) documented.insert(m[1]);
  }
  std::set<std::string> registered;
  for (const auto& s : railscope::params::registry()) registered.emplace(s.name);
  for (const auto& n : registered) EXPECT_TRUE(documented.count(n)) << n << " is missing from README's table";
  for (const auto& n : documented)
    EXPECT_TRUE(registered.count(n)) << n << " is in README but not registered";
}
