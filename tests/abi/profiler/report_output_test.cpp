// `railscope report`'s outputs: the --html page is written whole and renamed into place, so a symbolic
// link planted at its name is replaced, never written through.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "abi/profiler/profile_json.h"

namespace railscope::abi_test {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string one_profile() {
  const std::string dir = fresh_profile_dir("report-out");
  ProfilerDriver drv(6);
  EXPECT_TRUE(drv.loaded()) << drv.load_error();
  EXPECT_EQ(drv.init(0xbeef, 0, 2, 1), ncclSuccess);
  drv.run_coll({}, 1000);
  EXPECT_EQ(drv.finalize(), ncclSuccess);
  return dir;
}

TEST(ReportOutput, HtmlReplacesALinkPlantedAtItsNameAndLeavesTheTargetAlone) {
  const std::string dir = one_profile();
  const fs::path victim = fs::path(dir) / "victim";
  std::ofstream(victim) << "keep me\n";
  const fs::path out = fs::path(dir) / "out";
  fs::create_directories(out);
  const fs::path page = out / "report.html";
  fs::create_symlink(victim, page);
  ASSERT_EQ(run(std::string(RAILSCOPE_CLI) + " report " + dir + " --html " + page.string() + " > /dev/null"),
            0);
  EXPECT_EQ(slurp(victim), "keep me\n");
  EXPECT_FALSE(fs::is_symlink(page));
  EXPECT_NE(slurp(page).find("<svg"), std::string::npos);
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator{}), 1)
      << "no temporary file left";
}

TEST(ReportOutput, HtmlToAFolderThatCannotBeWrittenIsAClearError) {
  const std::string dir = one_profile();
  const std::string err = dir + "/stderr";
  EXPECT_EQ(run(std::string(RAILSCOPE_CLI) + " report " + dir + " --html " + dir +
                "/missing/report.html > /dev/null 2> " + err),
            2);
  EXPECT_NE(slurp(err).find("missing"), std::string::npos) << slurp(err);
}

}  // namespace
}  // namespace railscope::abi_test
