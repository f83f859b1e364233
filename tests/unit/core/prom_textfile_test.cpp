// SPDX-License-Identifier: Apache-2.0
// The identity every textfile carries (job, rank, local rank from the launcher's variables, in the documented
// order), where the file goes (a folder, or one file when the name ends in .prom) and its mode.
#include "railscope/core/prom_textfile.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "railscope/core/params.h"

namespace railscope::core {
namespace {

namespace fs = std::filesystem;

class PromIdentityFromEnv : public testing::Test {
 protected:
  // Every variable the identity may come from: the launchers' (registered beside NCCL's and railscope's
  // own) and railscope's two.
  void SetUp() override {
    for (const params::Spec& s : params::registry())
      if (!s.name.starts_with("NCCL_") && !s.name.starts_with("RAILSCOPE_"))
        unsetenv(std::string(s.name).c_str());
    unsetenv("RAILSCOPE_PROFILE_TAG");
    unsetenv("RAILSCOPE_K8S_JOB_NAME");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(PromIdentityFromEnv, JobInTheDocumentedOrder) {
  EXPECT_EQ(prom_identity_from_env("h").job, "");
  setenv("RAILSCOPE_K8S_JOB_NAME", "train-llm", 1);
  EXPECT_EQ(prom_identity_from_env("h").job, "train-llm");
  setenv("TORCHELASTIC_RUN_ID", "run7", 1);
  EXPECT_EQ(prom_identity_from_env("h").job, "run7");
  setenv("SLURM_JOB_ID", "4711", 1);
  const PromIdentity slurm = prom_identity_from_env("h");
  EXPECT_EQ(slurm.job, "4711");
  EXPECT_EQ(slurm.job_source, "SLURM_JOB_ID");
  setenv("RAILSCOPE_PROFILE_TAG", "mine", 1);
  EXPECT_EQ(prom_identity_from_env("h").job, "mine");
}

TEST_F(PromIdentityFromEnv, RanksFromTheLauncherAndOnlyWholeNumbers) {
  PromIdentity id = prom_identity_from_env("node-1");
  EXPECT_EQ(id.rank, -1);
  EXPECT_EQ(id.local_rank, -1);
  EXPECT_EQ(prom_identity_labels(id, 3), "job=\"\",host=\"node-1\",rank=\"3\",local_rank=\"\"");
  setenv("SLURM_PROCID", "12", 1);
  setenv("SLURM_LOCALID", "4", 1);
  setenv("RANK", "x7", 1);  // not a number: the next variable counts
  id = prom_identity_from_env("node-1");
  EXPECT_EQ(id.rank, 12);
  EXPECT_EQ(id.local_rank, 4);
  setenv("RANK", "9", 1);
  setenv("LOCAL_RANK", "1", 1);
  id = prom_identity_from_env("n\"1");
  EXPECT_EQ(prom_identity_labels(id, 3), "job=\"\",host=\"n\\\"1\",rank=\"9\",local_rank=\"1\"");
}

TEST(PromTarget, AFolderGetsOneFilePerProcessAndADotPromNameIsTheFile) {
  const fs::path dir = fs::temp_directory_path() / ("railscope-promtarget-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const PromTarget folder = prom_target((dir / "tf").string(), "railscope", "a/b c", 7);
  EXPECT_EQ(folder.error, "");
  EXPECT_EQ(folder.path, (dir / "tf" / "railscope-a_b_c-7.prom").string());
  EXPECT_TRUE(fs::is_directory(dir / "tf"));
  const PromTarget file = prom_target((dir / "tf" / "rank0.prom").string(), "railscope", "h", 7);
  EXPECT_EQ(file.error, "");
  EXPECT_EQ(file.path, (dir / "tf" / "rank0.prom").string());
  EXPECT_FALSE(fs::exists(dir / "tf" / "rank0.prom")) << "no folder made at a .prom name";
  const PromTarget missing = prom_target((dir / "nope" / "x.prom").string(), "railscope", "h", 7);
  EXPECT_EQ(missing.path, "");
  EXPECT_NE(missing.error.find("the folder " + (dir / "nope").string() + " does not exist"),
            std::string::npos)
      << missing.error;
  EXPECT_FALSE(fs::exists(dir / "nope"));
  fs::remove_all(dir);
}

TEST(PromTarget, WrittenReadableByTheCollectorWhateverTheUmask) {
  const fs::path dir = fs::temp_directory_path() / ("railscope-prommode-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const mode_t old = umask(077);
  std::string why;
  const bool ok = write_prom_textfile((dir / "m.prom").string(), "x 1\n", &why);
  umask(old);
  ASSERT_TRUE(ok) << why;
  struct stat st {};
  ASSERT_EQ(stat((dir / "m.prom").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace railscope::core
