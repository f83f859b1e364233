// SPDX-License-Identifier: Apache-2.0
// `railscope ab -- CMD...`: runs a job with railscope's plugins and with NCCL's built-in transport
// (railscope's profiler loaded in both), then compares busbw per (op, size).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "ab_compare.h"
#include "ab_plan.h"
#include "calibration_verdict.h"
#include "child_process.h"
#include "plugin/tuner/config/config.h"
#include "profile_samples.h"
#include "railscope/cli/exit_status.h"
#include "railscope/cli/output_file.h"
#include "railscope/cli/usage.h"
#include "railscope/core/safe_file.h"

namespace railscope::cli {
namespace {

namespace fs = std::filesystem;
using namespace railscope::ab;

// Exit codes (documented in docs/pytorch.md and docs/cli.md). A usage error is railscope::cli::kExitUsage
// and an output file that cannot be written kExitCannotCreate, as in every command.
constexpr int kExitRunFailed = 2;
constexpr int kExitRefused = 3;
constexpr int kExitReportFailed = 4;
constexpr int kExitInterrupted = 130;

struct AbOptions {
  int runs = 1;
  std::string baseline_net = "IB";
  std::string out = "railscope-ab";
  std::string plugin_dir;
  bool no_tuner = false;
  std::string html;
  std::string json;
  std::string calibration;  // --calibration FILE: calibrated vs uncalibrated tuner
  bool baseline_net_given = false;
};

[[noreturn]] void fail(int code, const std::string& msg) {
  std::fprintf(stderr, "railscope ab: %s\n", msg.c_str());
  throw CLI::RuntimeError(code);
}

fs::path self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("railscope") : p;
}

void check_fresh_folders(const std::vector<PlannedRun>& runs) {
  for (const auto& run : runs) {
    std::error_code ec;
    if (fs::exists(run.folder, ec) && !fs::is_empty(run.folder, ec))
      fail(1, fmt::format("{} already exists and is not empty; choose another --out or remove it "
                          "(old profile files would be mixed into this comparison)",
                          run.folder.string()));
  }
}

void write_html(const AbOptions& opt, const std::vector<PlannedRun>& runs) {
  // Reuse the profiler's report (railscope report --baseline) rather than drawing a second page.
  std::vector<std::string> argv{self_exe().string(), "report"};
  for (const auto& run : runs)
    if (run.variant == 1) argv.insert(argv.end(), {"--baseline", run.folder.string()});
  argv.insert(argv.end(), {"--html", opt.html});
  for (const auto& run : runs)
    if (run.variant == 0) argv.push_back(run.folder.string());
  // Only the page is wanted: report's own text tables would repeat ours.
  const ChildResult r = run_child(argv, environment_with({}), /*discard_stdout=*/true);
  if (!r.ok())
    fail(kExitReportFailed,
         fmt::format("writing {} with `railscope report --baseline` failed ({})", opt.html, r.describe()));
  spdlog::info("ab: wrote {}", opt.html);
}

// The file the calibrated runs' tuner will read, checked as the tuner checks it: a file that is not a
// calibration would fail every calibrated run (strict mode) or judge nothing.
std::string checked_calibration(const AbOptions& opt) {
  if (opt.no_tuner) fail(kExitUsage, "--calibration needs railscope's tuner: drop --no-tuner");
  if (opt.baseline_net_given)
    fail(kExitUsage,
         "--baseline-net has no meaning with --calibration: both variants run railscope's plugins");
  std::error_code ec;
  const std::string path = fs::absolute(opt.calibration, ec).string();  // the job may change folder
  const tuner::ParsedConfig parsed = tuner::load_config_file(path);
  if (!parsed.errors.empty()) {
    std::string listed;
    for (std::size_t i = 0; i < parsed.errors.size() && i < 5; ++i)
      listed += (i ? "; " : "") + parsed.errors[i].to_string();
    fail(kExitDataError,
         fmt::format("--calibration {}: not a valid calibration: {}", opt.calibration, listed));
  }
  if (parsed.config.points.empty())
    fail(kExitDataError,
         fmt::format("--calibration {}: holds no `point` line (railscope tuner calibrate writes "
                     "them): not a calibration",
                     opt.calibration));
  return path;
}

void run_ab(const AbOptions& opt, const std::vector<std::string>& command) {
  if (command.empty()) fail(kExitUsage, "no command given; usage: railscope ab [options] -- CMD [ARGS...]");
  // Found out before the runs, which may take hours.
  if (!opt.json.empty()) require_writable_output("railscope ab", "--json", opt.json);
  if (!opt.html.empty()) require_writable_output("railscope ab", "--html", opt.html);

  VariantOptions vopt;
  vopt.baseline_net = opt.baseline_net;
  vopt.with_tuner = !opt.no_tuner;
  if (!opt.plugin_dir.empty()) {
    if (auto err = plugin_refs_from_dir(opt.plugin_dir, vopt.plugins); !err.empty()) fail(kExitUsage, err);
  } else {
    vopt.plugins = find_plugin_refs(self_exe());
  }
  const std::string calibration = opt.calibration.empty() ? "" : checked_calibration(opt);
  if (const char* inherited = std::getenv("RAILSCOPE_TUNER_CALIBRATION");
      calibration.empty() && !opt.no_tuner && inherited != nullptr && *inherited != '\0')
    spdlog::info(
        "ab: the railscope runs' tuner reads RAILSCOPE_TUNER_CALIBRATION={} from this environment; "
        "--calibration FILE compares it with the tuner without it",
        inherited);
  const std::vector<Variant> variants =
      calibration.empty()
          ? std::vector<Variant>{railscope_variant(vopt), baseline_variant(vopt)}
          : std::vector<Variant>{calibrated_variant(vopt, calibration), uncalibrated_variant(vopt)};
  const auto runs = plan_runs(variants, opt.runs, opt.out);
  check_fresh_folders(runs);

  std::vector<RunSamples> per_variant[2];
  std::size_t n = 0;
  for (const auto& run : runs) {
    ++n;
    std::error_code ec;
    fs::create_directories(run.folder, ec);
    if (ec) fail(kExitRunFailed, fmt::format("cannot create {}: {}", run.folder.string(), ec.message()));
    const fs::path folder = fs::absolute(run.folder, ec);
    EnvChanges env = variants[run.variant].env;
    env["RAILSCOPE_PROFILE_DIR"] = folder.string();
    env["RAILSCOPE_PROFILE_TAG"] = variants[run.variant].label;
    spdlog::info("ab: run {}/{}: {}-{} -> {}", n, runs.size(), variants[run.variant].label, run.index,
                 folder.string());
    for (const auto& [name, value] : env)
      spdlog::debug("ab: run {}-{}: {}", variants[run.variant].label, run.index,
                    value ? name + "=" + *value : "unset " + name);
    const ChildResult r = run_child(command, environment_with(env));
    if (r.interrupted) fail(kExitInterrupted, "interrupted; stopping without comparing");
    if (!r.ok())
      fail(kExitRunFailed, fmt::format("run {}-{} failed: {} ({})", variants[run.variant].label, run.index,
                                       r.describe(), fmt::join(command, " ")));
    ProfileRead read = read_profile_samples(folder);
    if (!read.error.empty())
      fail(kExitRefused, fmt::format("run {}-{}: {} (was the profiler loaded? NCCL_DEBUG=INFO shows "
                                     "'PROFILER/Plugin: Loaded')",
                                     variants[run.variant].label, run.index, read.error));
    for (const auto& w : read.warnings)
      spdlog::warn("ab: run {}-{}: {}", variants[run.variant].label, run.index, w);
    if (read.samples.empty() && read.untimed > 0)
      fail(kExitRefused, fmt::format("run {}-{}: all {} op records in {} lack a completion time (timing "
                                     "'enqueue' or incomplete), so no busbw can be compared",
                                     variants[run.variant].label, run.index, read.untimed, folder.string()));
    per_variant[run.variant].push_back(
        RunSamples{fmt::format("{}-{}", variants[run.variant].label, run.index), folder.string(),
                   std::move(read.samples)});
  }

  Comparison cmp;
  if (auto err = compare_runs(per_variant[0], per_variant[1], cmp); !err.empty()) fail(kExitRefused, err);
  cmp.label_a = variants[0].label;
  cmp.label_b = variants[1].label;
  nlohmann::json extra;
  std::string text = format_table(cmp);
  if (!calibration.empty()) {
    const auto rows = judge_calibration(per_variant[0], per_variant[1]);
    extra = {{"calibration", calibration_json(calibration, rows)}};
    text += format_calibration_table(rows);
  }
  if (!opt.json.empty()) {
    std::string why;
    if (!core::write_file_atomically(opt.json, format_json(cmp, extra), &why)) fail(kExitCannotCreate, why);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  if (!opt.html.empty()) write_html(opt, runs);
}

}  // namespace

void add_ab(CLI::App& app) {
  auto opt = std::make_shared<AbOptions>();
  auto* sub = app.add_subcommand(
      "ab", "Run a job with railscope's plugins and with NCCL's built-in transport, then compare busbw");
  sub->add_option("--runs", opt->runs, "Runs per variant, alternating (A B, B A, ...), 1 to 1000")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--baseline-net", opt->baseline_net, "NCCL's built-in net for the baseline")
      ->check(CLI::IsMember({"IB", "Socket"}));
  sub->add_option("--out", opt->out, "Folder for the per-run profile folders <out>/<label>-<i>");
  sub->add_option("--plugin-dir", opt->plugin_dir,
                  "Folder holding libnccl-{net,tuner,profiler}-railscope.so (default: next to this binary, "
                  "else NCCL's library search path)");
  sub->add_flag("--no-tuner", opt->no_tuner, "Do not load railscope's tuner in the railscope runs");
  sub->add_option("--html", opt->html, "Also write the comparison page (railscope report --baseline)");
  sub->add_option("--json", opt->json, "Also write the comparison as JSON to this file");
  sub->add_option("--calibration", opt->calibration,
                  "Compare the tuner with this calibration (railscope tuner calibrate) against the tuner "
                  "without one, both with railscope's plugins, and judge per size whether the calibrated "
                  "choice won beyond both runs' spreads");
  // Everything after `--` (or from the first non-option argument) is the job's command line.
  auto command = std::make_shared<std::vector<std::string>>();
  sub->add_option("command", *command, "The job to run, after --");
  sub->positionals_at_end(true);
  sub->callback([opt, command, sub] {
    opt->baseline_net_given = sub->count("--baseline-net") > 0;
    run_ab(*opt, *command);
  });
}

}  // namespace railscope::cli
