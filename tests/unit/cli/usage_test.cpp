// SPDX-License-Identifier: Apache-2.0
// The usage-error policy (railscope/cli/usage.h): closest command names, and which word of a command
// line names an unknown command.
#include "railscope/cli/usage.h"

#include <gtest/gtest.h>

namespace railscope::cli {
namespace {

TEST(CliUsage, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("doctor", "doctor"), 0u);
  EXPECT_EQ(edit_distance("doktor", "doctor"), 1u);
  EXPECT_EQ(edit_distance("explian", "explain"), 2u);  // a swap is two edits
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(CliUsage, ClosestMatchOnlyForTypos) {
  const std::vector<std::string> names = {"ab", "doctor", "netbench", "report", "tuner"};
  EXPECT_EQ(closest_match("doktor", names), "doctor");
  EXPECT_EQ(closest_match("netbnch", names), "netbench");
  EXPECT_EQ(closest_match("tunr", names), "tuner");
  EXPECT_EQ(closest_match("reprot", names), "report");
  EXPECT_EQ(closest_match("xyzzy", names), "");
  EXPECT_EQ(closest_match("a", names), "");  // one letter is no evidence
  EXPECT_EQ(closest_match("doctor", {}), "");
}

struct Apps {
  CLI::App app{"test", "railscope"};
  int value = 0;
  std::vector<std::string> files;
  Apps() {
    app.add_option("--log-level", value);
    auto* nb = app.add_subcommand("netbench");
    nb->add_option("--min-size", value);
    nb->add_flag("--json");
    nb->add_subcommand("server");
    nb->add_subcommand("client");
    app.add_subcommand("report")->add_option("dirs", files);
    app.add_subcommand("doctor");
  }
};

TEST(CliUsage, UnknownCommandAtEachLevel) {
  Apps a;
  EXPECT_EQ(unknown_command_message(a.app, {"doktor"}),
            "railscope: unknown command 'doktor'; did you mean 'doctor'?");
  EXPECT_EQ(unknown_command_message(a.app, {"netbench", "servr"}),
            "railscope netbench: unknown command 'servr'; did you mean 'server'?");
  EXPECT_EQ(unknown_command_message(a.app, {"frobnicate"}),
            "railscope: unknown command 'frobnicate'; the commands are: doctor, netbench, report");
  // Option values are not command words, wherever the option is defined.
  EXPECT_EQ(unknown_command_message(a.app, {"netbench", "--min-size", "8", "client"}), "");
  EXPECT_EQ(unknown_command_message(a.app, {"--log-level", "3", "netbench", "--log-level", "2", "server"}),
            "");
  EXPECT_EQ(unknown_command_message(a.app, {"netbench", "--min-size=8", "clinet"}),
            "railscope netbench: unknown command 'clinet'; did you mean 'client'?");
  EXPECT_EQ(unknown_command_message(a.app, {"netbench", "--json", "clinet"}),
            "railscope netbench: unknown command 'clinet'; did you mean 'client'?");
  // Unknown options, wherever they are, with the closest name of this app or the apps above it.
  EXPECT_EQ(unknown_command_message(a.app, {"--bogus"}), "railscope: unknown option '--bogus'");
  EXPECT_EQ(unknown_command_message(a.app, {"netbench", "--jsn"}),
            "railscope netbench: unknown option '--jsn'; did you mean '--json'?");
  EXPECT_EQ(unknown_command_message(a.app, {"netbench", "--log-levle=2"}),
            "railscope netbench: unknown option '--log-levle'; did you mean '--log-level'?");
  // Positional arguments and what follows `--` are not commands.
  EXPECT_EQ(unknown_command_message(a.app, {"report", "dir1", "dir2"}), "");
  EXPECT_EQ(unknown_command_message(a.app, {"--", "doktor"}), "");
  EXPECT_EQ(unknown_command_message(a.app, {"report", "--bogus"}),
            "railscope report: unknown option '--bogus'");
  EXPECT_EQ(unknown_command_message(a.app, {"report", "dir", "--bogus"}), "");  // CLI11's own error then
  EXPECT_EQ(unknown_command_message(a.app, {"doctor", "extra"}), "");           // CLI11's own error then
}

TEST(CliUsage, RunMapsEveryUsageErrorToExUsage) {
  static_assert(kExitUsage == 64, "EX_USAGE, distinct from every command's verdict (0 to 4)");
  Apps a;
  a.app.require_subcommand(1);
  const char* unknown[] = {"railscope", "doktor"};
  EXPECT_EQ(run(a.app, 2, unknown), kExitUsage);
  Apps b;
  b.app.require_subcommand(1);
  const char* none[] = {"railscope"};
  EXPECT_EQ(run(b.app, 1, none), kExitUsage);  // CLI11: RequiredError (106)
  Apps c;
  const char* bad_value[] = {"railscope", "netbench", "--min-size", "x"};
  EXPECT_EQ(run(c.app, 4, bad_value), kExitUsage);  // ConversionError (101)
  Apps d;
  const char* extra[] = {"railscope", "doctor", "extra"};
  EXPECT_EQ(run(d.app, 3, extra), kExitUsage);  // ExtrasError (109)
  Apps e;
  const char* bogus[] = {"railscope", "doctor", "--bogus"};
  EXPECT_EQ(run(e.app, 3, bogus), kExitUsage);
  Apps f;
  f.app.get_subcommand("doctor")->callback([] { throw CLI::RuntimeError(7); });
  const char* own[] = {"railscope", "doctor"};
  EXPECT_EQ(run(f.app, 2, own), 7);  // a command's own status passes through
  Apps g;
  const char* help[] = {"railscope", "--help"};
  testing::internal::CaptureStdout();
  EXPECT_EQ(run(g.app, 2, help), 0);
  testing::internal::GetCapturedStdout();
}

}  // namespace
}  // namespace railscope::cli
