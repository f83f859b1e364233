// SPDX-License-Identifier: Apache-2.0
// `railscope report DIR... [--json] [--html FILE] [--baseline DIR]`
// `railscope report --follow DIR... [--interval S] [--hang-after S] [--once]`
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "railscope/cli/exit_status.h"
#include "railscope/cli/output_file.h"
#include "railscope/core/safe_file.h"
#include "tools/report/analysis.h"
#include "tools/report/follow.h"
#include "tools/report/render.h"

namespace railscope::cli {

void add_report(CLI::App& app) {
  struct Options {
    std::vector<std::string> dirs;
    std::vector<std::string> baseline;
    bool json = false;
    std::string html;
    bool follow = false;
    report::FollowOptions watch;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Merge railscope profiles of all ranks: busbw per (op, size), stragglers, wait matrix, diagnoses");
  cmd->add_option("dirs", opt->dirs,
                  "Profile directories (RAILSCOPE_PROFILE_DIR of each node) or .jsonl files; net stats "
                  "files (RAILSCOPE_NET_STATS) of several nodes give a rail-rate table")
      ->required();
  cmd->add_option("--baseline", opt->baseline,
                  "Profiles of a baseline run to compare with (e.g. NCCL_NET=IB)");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text tables");
  auto* html =
      cmd->add_option("--html", opt->html, "Also write a self-contained HTML page with SVG plots to FILE");
  auto* follow =
      cmd->add_flag("--follow", opt->follow,
                    "Watch a running job: every --interval s read what was appended, print one line "
                    "(progressing / waiting / hang / mismatch / finished) and exit 0 when every rank "
                    "finalized, 3 on a hang, 4 on a mismatch (docs/profiler.md)");
  follow->excludes(html)->excludes("--baseline")->excludes("--json");
  cmd->add_option("--interval", opt->watch.interval_s, "--follow: seconds between passes (default 10)")
      ->check(CLI::Range(0.05, 86400.0))
      ->needs(follow);
  cmd->add_option("--hang-after", opt->watch.hang_after_s,
                  "--follow: a collective some ranks wait in for this many seconds is a hang (default 300)")
      ->check(CLI::Range(0.0, 1e7))
      ->needs(follow);
  cmd->add_flag("--once", opt->watch.once, "--follow: one pass, then exit with its status (1: still running)")
      ->needs(follow);
  cmd->callback([opt] {
    if (opt->follow) {
      opt->watch.paths = opt->dirs;
      int status = 0;
      try {
        status = report::follow(opt->watch, stdout);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "railscope report: %s\n", e.what());
        throw CLI::RuntimeError(2);
      }
      if (status != 0) throw CLI::RuntimeError(status);
      return;
    }
    // Before anything is read or printed: a page that cannot be written costs no output.
    if (!opt->html.empty()) require_writable_output("railscope report", "--html", opt->html);
    report::ProfileSet run, base;
    try {
      run = report::read_profiles(opt->dirs, /*fold_waits=*/true);
      if (!opt->baseline.empty()) base = report::read_profiles(opt->baseline, /*fold_waits=*/true);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "railscope report: %s\n", e.what());
      throw CLI::RuntimeError(2);
    }
    spdlog::debug(
        "report: read {} profile path(s){}: {} collective record(s), {} diagnosis record(s), {} rail "
        "rate(s)",
        opt->dirs.size(), opt->baseline.empty() ? "" : " and a baseline", run.colls.size(), run.diags.size(),
        run.rail_rates.size());
    for (const std::string& p : run.problems) spdlog::warn("report: {}", p);
    for (const std::string& p : base.problems) spdlog::warn("report: baseline: {}", p);
    if (run.colls.empty() && run.diags.empty() && run.rail_rates.empty()) {
      // Say why: lines may have been skipped (not JSON, or a number out of range).
      std::fprintf(stderr, "railscope report: the profiles hold no collective or diagnosis record%s\n",
                   run.problems.empty() ? "" : " that could be read (see the warnings above)");
      throw CLI::RuntimeError(2);
    }
    const report::Report r = report::analyse(run, opt->baseline.empty() ? nullptr : &base);
    spdlog::debug("report: {} (op, size) row(s), {} diagnosis(es); rendering {}{}", r.sizes.size(),
                  r.diags.size(), opt->json ? "JSON" : "text",
                  opt->html.empty() ? "" : " and the HTML page " + opt->html);
    if (!opt->html.empty()) {
      std::string why;
      if (!core::write_file_atomically(opt->html, report::render_html(r), &why)) {
        std::fprintf(stderr, "railscope report: --html %s\n", why.c_str());
        throw CLI::RuntimeError(kExitCannotCreate);
      }
    }
    const std::string text = opt->json ? report::render_json(r) : report::render_text(r);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace railscope::cli
