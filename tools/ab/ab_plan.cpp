// SPDX-License-Identifier: Apache-2.0
#include "ab_plan.h"

#include <fmt/format.h>

#include <system_error>

#include "tools/ab/ascii_lower.h"

namespace railscope::ab {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNetLib = "libnccl-net-railscope.so";
constexpr const char* kTunerLib = "libnccl-tuner-railscope.so";
constexpr const char* kProfilerLib = "libnccl-profiler-railscope.so";

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

std::string plugin_refs_from_dir(const fs::path& dir, PluginRefs& out) {
  std::error_code ec;
  const fs::path abs = fs::absolute(dir, ec);
  for (const char* lib : {kNetLib, kTunerLib, kProfilerLib}) {
    if (!is_file(abs / lib)) return fmt::format("--plugin-dir {}: {} not found there", dir.string(), lib);
  }
  out = PluginRefs{(abs / kNetLib).string(), (abs / kTunerLib).string(), (abs / kProfilerLib).string()};
  return {};
}

PluginRefs find_plugin_refs(const fs::path& self_exe) {
  const fs::path bin = self_exe.parent_path();
  // Each plugin on its own: an install has all three in ../lib; a build tree has
  // build/plugin/<kind>/ next to build/tools/railscope, possibly with only some built.
  auto locate = [&](const char* kind, const char* lib) -> std::string {
    std::error_code ec;
    for (const fs::path& candidate : {bin / ".." / "lib" / lib, bin / ".." / "plugin" / kind / lib}) {
      if (is_file(candidate)) return fs::canonical(candidate, ec).string();
    }
    return "railscope";
  };
  return PluginRefs{locate("net", kNetLib), locate("tuner", kTunerLib), locate("profiler", kProfilerLib)};
}

Variant railscope_variant(const VariantOptions& opts) {
  Variant v{"railscope", {}};
  v.env["NCCL_NET_PLUGIN"] = opts.plugins.net;
  // Select it by name so a plugin that fails to initialise fails the run instead of silently falling
  // back to NCCL's IB transport (which would make the comparison meaningless).
  v.env["NCCL_NET"] = std::string("railscope");
  v.env["NCCL_TUNER_PLUGIN"] = opts.with_tuner ? opts.plugins.tuner : std::string("none");
  v.env["NCCL_PROFILER_PLUGIN"] = opts.plugins.profiler;
  // NCCL 2.28.9 forgets NCCL_NET_PLUGIN once every communicator is destroyed; pin the library.
  v.env["NCCL_NET_PLUGIN_REF_COUNT"] = std::string("1");
  return v;
}

Variant baseline_variant(const VariantOptions& opts) {
  Variant v{"nccl-" + ascii_lower(opts.baseline_net), {}};
  v.env["NCCL_NET_PLUGIN"] = std::string("none");
  v.env["NCCL_NET"] = opts.baseline_net;
  v.env["NCCL_TUNER_PLUGIN"] = std::string("none");
  v.env["NCCL_PROFILER_PLUGIN"] = opts.plugins.profiler;
  v.env["NCCL_NET_PLUGIN_REF_COUNT"] = std::nullopt;
  return v;
}

Variant calibrated_variant(const VariantOptions& opts, const std::string& calibration) {
  Variant v = railscope_variant(opts);
  v.label = "calibrated";
  v.env["RAILSCOPE_TUNER_CALIBRATION"] = calibration;
  return v;
}

Variant uncalibrated_variant(const VariantOptions& opts) {
  Variant v = railscope_variant(opts);
  v.label = "uncalibrated";
  v.env["RAILSCOPE_TUNER_CALIBRATION"] = std::nullopt;
  return v;
}

std::vector<PlannedRun> plan_runs(const std::vector<Variant>& variants, int runs_per_variant,
                                  const fs::path& out) {
  std::vector<PlannedRun> runs;
  for (int i = 0; i < runs_per_variant; ++i) {
    for (std::size_t k = 0; k < variants.size(); ++k) {
      const std::size_t v = (i % 2 == 0) ? k : variants.size() - 1 - k;
      runs.push_back(PlannedRun{v, i, out / fmt::format("{}-{}", variants[v].label, i)});
    }
  }
  return runs;
}

}  // namespace railscope::ab
