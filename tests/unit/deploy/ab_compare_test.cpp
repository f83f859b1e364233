// SPDX-License-Identifier: Apache-2.0
// Unit tests of `railscope ab`'s pieces: run plan and environment per variant, profile reading,
// percentile and comparison (including the refusal of runs with different op/size sets).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ab_compare.h"
#include "ab_plan.h"
#include "calibration_verdict.h"
#include "child_process.h"
#include "profile_samples.h"

namespace railscope::ab {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("railscope-ab-test-" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// An op's record as the comparison reads it: op, size, busbw, time.
struct Op {
  std::string op;
  std::uint64_t bytes;
  double busbw_gbs, time_us;
};

RunSamples run_of(const std::string& label, const std::vector<Op>& ops) {
  RunSamples run{label, "/x/" + label, {}};
  std::uint64_t ordinal = 0;
  for (const Op& o : ops) {
    OpSample s{o.op, o.bytes, o.busbw_gbs, o.time_us, "0xc1", ordinal++, "", ""};
    run.samples.push_back(s);
  }
  return run;
}

TEST(AbPlan, RailscopeVariantSelectsAllThreePluginsAndPinsTheNetLibrary) {
  VariantOptions opt;
  opt.plugins = PluginRefs{"/opt/railscope/lib/libnccl-net-railscope.so", "/t.so", "/p.so"};
  const Variant v = railscope_variant(opt);
  EXPECT_EQ(v.label, "railscope");
  EXPECT_EQ(v.env.at("NCCL_NET_PLUGIN"), "/opt/railscope/lib/libnccl-net-railscope.so");
  EXPECT_EQ(v.env.at("NCCL_NET"), "railscope");
  EXPECT_EQ(v.env.at("NCCL_TUNER_PLUGIN"), "/t.so");
  EXPECT_EQ(v.env.at("NCCL_PROFILER_PLUGIN"), "/p.so");
  EXPECT_EQ(v.env.at("NCCL_NET_PLUGIN_REF_COUNT"), "1");
  opt.with_tuner = false;
  EXPECT_EQ(railscope_variant(opt).env.at("NCCL_TUNER_PLUGIN"), "none");
}

TEST(AbPlan, BaselineKeepsTheProfilerAndUsesNcclsBuiltInNet) {
  VariantOptions opt;
  opt.baseline_net = "Socket";
  const Variant v = baseline_variant(opt);
  EXPECT_EQ(v.label, "nccl-socket");
  EXPECT_EQ(v.env.at("NCCL_NET"), "Socket");
  EXPECT_EQ(v.env.at("NCCL_NET_PLUGIN"), "none");
  EXPECT_EQ(v.env.at("NCCL_TUNER_PLUGIN"), "none");
  EXPECT_EQ(v.env.at("NCCL_PROFILER_PLUGIN"), "railscope");
  EXPECT_FALSE(v.env.at("NCCL_NET_PLUGIN_REF_COUNT").has_value());
}

TEST(AbPlan, CalibrationVariantsDifferOnlyInTheCalibration) {
  VariantOptions opt;
  const Variant cal = calibrated_variant(opt, "/c/cal.txt");
  const Variant uncal = uncalibrated_variant(opt);
  EXPECT_EQ(cal.label, "calibrated");
  EXPECT_EQ(uncal.label, "uncalibrated");
  EXPECT_EQ(cal.env.at("RAILSCOPE_TUNER_CALIBRATION"), "/c/cal.txt");
  EXPECT_FALSE(uncal.env.at("RAILSCOPE_TUNER_CALIBRATION").has_value());  // removed, not inherited
  EnvChanges rest = cal.env;
  rest.erase("RAILSCOPE_TUNER_CALIBRATION");
  EnvChanges uncal_rest = uncal.env;
  uncal_rest.erase("RAILSCOPE_TUNER_CALIBRATION");
  EXPECT_EQ(rest, uncal_rest);
  EXPECT_EQ(rest, railscope_variant(opt).env);
}

// A side whose spread reaches down to 0 has no upper bound on the ratio; nothing is claimed then unless
// the other side is beyond it.
TEST(AbCalibration, RatioIntervalWithoutAnUpperBound) {
  auto runs = [](const std::string& label, std::vector<double> busbw) {
    RunSamples run{label, "/x/" + label, {}};
    std::uint64_t ord = 0;
    for (double b : busbw) run.samples.push_back({"AllReduce", 1024, b, 1, "0xc1", ord++, "RING", "LL"});
    return std::vector<RunSamples>{run};
  };
  auto cal = runs("calibrated", {10, 10, 10, 10});
  for (auto& s : cal[0].samples) s.algo = "TREE";
  const auto rows = judge_calibration(cal, runs("uncalibrated", {0.01, 0.01, 0.01, 0.01, 1, 100, 100, 100}));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].ratio_high.has_value());
  EXPECT_EQ(rows[0].calibrated.choice, "tree/ll");
  EXPECT_EQ(rows[0].uncalibrated.choice, "ring/ll");
  EXPECT_EQ(rows[0].verdict, CalibrationVerdict::WithinSpread);
  const auto won = judge_calibration(cal, runs("uncalibrated", {4, 4, 4, 4}));
  EXPECT_EQ(won[0].verdict, CalibrationVerdict::Won);
}

TEST(AbPlan, RunsAlternateAndEachGetsItsOwnFolder) {
  VariantOptions opt;
  const std::vector<Variant> vs{railscope_variant(opt), baseline_variant(opt)};
  const auto runs = plan_runs(vs, 3, "out");
  ASSERT_EQ(runs.size(), 6u);
  const std::vector<std::string> expected{"out/railscope-0", "out/nccl-ib-0",   "out/nccl-ib-1",
                                          "out/railscope-1", "out/railscope-2", "out/nccl-ib-2"};
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].folder.string(), expected[i]);
}

TEST(AbPlan, PluginDirMustHoldAllThreeLibraries) {
  const fs::path dir = fresh_dir("plugins");
  std::ofstream(dir / "libnccl-net-railscope.so") << "x";
  PluginRefs refs;
  EXPECT_NE(plugin_refs_from_dir(dir, refs).find("libnccl-tuner-railscope.so"), std::string::npos);
  std::ofstream(dir / "libnccl-tuner-railscope.so") << "x";
  std::ofstream(dir / "libnccl-profiler-railscope.so") << "x";
  EXPECT_EQ(plugin_refs_from_dir(dir, refs), "");
  EXPECT_EQ(refs.net, (dir / "libnccl-net-railscope.so").string());
}

TEST(AbPlan, FindsEachPluginNextToTheBinaryOrKeepsTheShortName) {
  const fs::path root = fresh_dir("install");
  fs::create_directories(root / "bin");
  fs::create_directories(root / "lib");
  fs::create_directories(root / "plugin" / "profiler");
  std::ofstream(root / "lib" / "libnccl-net-railscope.so") << "x";
  std::ofstream(root / "plugin" / "profiler" / "libnccl-profiler-railscope.so") << "x";
  const PluginRefs refs = find_plugin_refs(root / "bin" / "railscope");
  EXPECT_EQ(refs.net, fs::canonical(root / "lib" / "libnccl-net-railscope.so").string());
  EXPECT_EQ(refs.tuner, "railscope");
  EXPECT_EQ(refs.profiler,
            fs::canonical(root / "plugin" / "profiler" / "libnccl-profiler-railscope.so").string());
}

TEST(AbEnv, ChangesSetAndRemoveVariables) {
  setenv("RS_AB_TEST_KEEP", "1", 1);
  setenv("RS_AB_TEST_DROP", "1", 1);
  const auto env = environment_with({{"RS_AB_TEST_DROP", std::nullopt}, {"RS_AB_TEST_NEW", "v=w"}});
  auto has = [&](const std::string& e) { return std::find(env.begin(), env.end(), e) != env.end(); };
  EXPECT_TRUE(has("RS_AB_TEST_KEEP=1"));
  EXPECT_TRUE(has("RS_AB_TEST_NEW=v=w"));
  for (const auto& e : env) EXPECT_NE(e.rfind("RS_AB_TEST_DROP=", 0), 0u) << e;
}

TEST(AbChild, ReportsExitStatusSignalAndStartFailure) {
  const auto env = environment_with({{"RS_AB_CODE", "7"}});
  auto r = run_child({"sh", "-c", "exit $RS_AB_CODE"}, env);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.describe(), "exit status 7");
  r = run_child({"sh", "-c", "kill -9 $$"}, env);
  EXPECT_EQ(r.signal, 9);
  EXPECT_FALSE(r.ok());
  r = run_child({"/nonexistent/railscope-job"}, env);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.describe().find("No such file"), std::string::npos);
}

TEST(AbProfile, ReadsTimedOpRecordsThroughTheProfilersReader) {
  const fs::path dir = fresh_dir("profile");
  std::ofstream(dir / "node1-42.jsonl")
      << R"({"type":"header","schema":"railscope.profile","version":1,"hostname":"node1","pid":42})"
      << "\n"
      << R"({"type":"coll","op":"AllReduce","bytes":1048576,"busbw_gbs":12.5,"time_us":150.0,"complete":true})"
      << "\n"
      << R"({"type":"diag","id":"mtu.mismatch","severity":"error"})"
      << "\n"
      << R"({"type":"p2p","op":"Send","bytes":8,"busbw_gbs":0.001,"time_us":8})"
      << "\n"
      << R"({"type":"coll","op":"AllReduce","bytes":64,"busbw_gbs":null,"time_us":null,"timing":"enqueue"})"
      << "\n"
      << R"({"type":"coll","op":"AllReduce","bytes":64,"busbw_gbs":1.0,"time_us":3.0,"complete":false})"
      << "\n"
      << R"({"type":"coll","op":"AllRed)";
  std::ofstream(dir / "ignored.txt") << "not a profile";
  const ProfileRead read = read_profile_samples(dir);
  ASSERT_EQ(read.error, "");
  EXPECT_EQ(read.files, 1u);
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].op, "AllReduce");
  EXPECT_EQ(read.samples[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(read.samples[0].busbw_gbps, 12.5);
  EXPECT_DOUBLE_EQ(read.samples[0].time_us, 150.0);
  EXPECT_EQ(read.samples[1].op, "Send");
  EXPECT_EQ(read.untimed, 2u);
  ASSERT_EQ(read.warnings.size(), 1u);  // the torn last line, named with file and line
  EXPECT_NE(read.warnings[0].find("node1-42.jsonl:7"), std::string::npos) << read.warnings[0];
}

TEST(AbProfile, MissingOrEmptyFoldersAreErrors) {
  const fs::path dir = fresh_dir("empty");
  EXPECT_NE(read_profile_samples(dir).error.find("no railscope profile"), std::string::npos);
  EXPECT_NE(read_profile_samples(dir / "missing").error.find("no such file"), std::string::npos);
}

TEST(AbCompare, PercentileIsNearestRank) {
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 3}, 50), 3);
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 50);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 99);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 100);
}

TEST(AbCompare, RatioAndStatsPerOpAndSizeAcrossRuns) {
  std::vector<RunSamples> a{run_of("railscope-0", {{"AllReduce", 1024, 20, 10}, {"AllReduce", 1024, 30, 5}}),
                            run_of("railscope-1", {{"AllReduce", 1024, 40, 4}, {"AllReduce", 1024, 20, 10}})};
  std::vector<RunSamples> b{run_of("nccl-ib-0", {{"AllReduce", 1024, 10, 20}}),
                            run_of("nccl-ib-1", {{"AllReduce", 1024, 10, 22}})};
  Comparison cmp;
  ASSERT_EQ(compare_runs(a, b, cmp), "");
  ASSERT_EQ(cmp.rows.size(), 1u);
  EXPECT_EQ(cmp.rows[0].a.count, 4u);
  EXPECT_DOUBLE_EQ(cmp.rows[0].a.busbw_p50, 20);
  EXPECT_DOUBLE_EQ(cmp.rows[0].a.busbw_p1, 20);  // the slow tail
  EXPECT_DOUBLE_EQ(cmp.rows[0].a.time_p99, 10);
  EXPECT_DOUBLE_EQ(cmp.rows[0].b.time_p99, 22);
  EXPECT_DOUBLE_EQ(cmp.rows[0].ratio, 2.0);
  EXPECT_NE(format_table(cmp).find("2.00x"), std::string::npos);
  EXPECT_NE(format_json(cmp).find("\"ratio\": 2.0"), std::string::npos);
}

TEST(AbCompare, RefusesDifferentOpSizeSetsAndNamesTheDifference) {
  std::vector<RunSamples> a{run_of("railscope-0", {{"AllReduce", 1024, 20, 10}, {"AllGather", 2048, 5, 1}})};
  std::vector<RunSamples> b{run_of("nccl-ib-0", {{"AllReduce", 1024, 10, 20}, {"AllReduce", 4096, 1, 1}})};
  Comparison cmp;
  const std::string err = compare_runs(a, b, cmp);
  EXPECT_NE(err.find("refusing to compare"), std::string::npos) << err;
  EXPECT_NE(err.find("only in railscope-0: AllGather 2 KiB"), std::string::npos) << err;
  EXPECT_NE(err.find("only in nccl-ib-0: AllReduce 4 KiB"), std::string::npos) << err;
}

TEST(AbCompare, RefusesARunWithoutRecords) {
  std::vector<RunSamples> a{run_of("railscope-0", {{"AllReduce", 8, 1, 1}})};
  std::vector<RunSamples> b{run_of("nccl-ib-0", {})};
  Comparison cmp;
  EXPECT_NE(compare_runs(a, b, cmp).find("nccl-ib-0 left no op records"), std::string::npos);
}

TEST(AbCompare, SizesAreShownInBinaryUnits) {
  EXPECT_EQ(format_size(8), "8 B");
  EXPECT_EQ(format_size(1024), "1 KiB");
  EXPECT_EQ(format_size(1ull << 30), "1 GiB");
  EXPECT_EQ(format_size(1536), "1536 B");
}

}  // namespace
}  // namespace railscope::ab
