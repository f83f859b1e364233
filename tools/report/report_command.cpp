// `railscope report DIR... [--json] [--html FILE] [--baseline DIR]`
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "railscope/core/safe_file.h"
#include "tools/report/analysis.h"
#include "tools/report/render.h"

namespace railscope::cli {

void add_report(CLI::App& app) {
  struct Options {
    std::vector<std::string> dirs;
    std::vector<std::string> baseline;
    bool json = false;
    std::string html;
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
  cmd->add_option("--html", opt->html, "Also write a self-contained HTML page with SVG plots to FILE");
  cmd->callback([opt] {
    report::ProfileSet run, base;
    try {
      run = report::read_profiles(opt->dirs);
      if (!opt->baseline.empty()) base = report::read_profiles(opt->baseline);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "railscope report: %s\n", e.what());
      throw CLI::RuntimeError(2);
    }
    if (run.colls.empty() && run.diags.empty() && run.rail_rates.empty()) {
      // Say why: lines may have been skipped (not JSON, or a number out of range).
      for (const std::string& p : run.problems)
        std::fprintf(stderr, "railscope report: warning: %s\n", p.c_str());
      std::fprintf(stderr, "railscope report: the profiles hold no collective or diagnosis record%s\n",
                   run.problems.empty() ? "" : " that could be read (see the warnings above)");
      throw CLI::RuntimeError(2);
    }
    const report::Report r = report::analyse(run, opt->baseline.empty() ? nullptr : &base);
    const std::string text = opt->json ? report::render_json(r) : report::render_text(r);
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (!opt->html.empty()) {
      std::string why;
      if (!core::write_file_atomically(opt->html, report::render_html(r), &why)) {
        std::fprintf(stderr, "railscope report: %s\n", why.c_str());
        throw CLI::RuntimeError(2);
      }
    }
  });
}

}  // namespace railscope::cli
