// SPDX-License-Identifier: Apache-2.0
// What `railscope ab` runs: the two variants (railscope's plugins vs. NCCL's built-in transport, both
// with railscope's profiler), their environment changes, their profile folders and the run order.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "child_process.h"

namespace railscope::ab {

// How NCCL should find each plugin: an absolute path, or the short name "railscope" that NCCL turns
// into libnccl-<kind>-railscope.so through the loader's search path (LD_LIBRARY_PATH, ld.so.cache).
struct PluginRefs {
  std::string net = "railscope";
  std::string tuner = "railscope";
  std::string profiler = "railscope";
};

// Absolute paths from `dir` when it holds the three libraries; an error message otherwise.
std::string plugin_refs_from_dir(const std::filesystem::path& dir, PluginRefs& out);

// Looks for each library next to the running railscope binary (../lib for an install,
// ../plugin/<kind>/ for a build tree); a library not found there keeps its short name "railscope".
PluginRefs find_plugin_refs(const std::filesystem::path& self_exe);

struct Variant {
  std::string label;  // "railscope" or "nccl-ib" / "nccl-socket"
  EnvChanges env;
};

struct VariantOptions {
  PluginRefs plugins;
  std::string baseline_net = "IB";  // NCCL's internal net names: "IB" or "Socket"
  bool with_tuner = true;           // load railscope's tuner in the railscope variant
};

Variant railscope_variant(const VariantOptions& opts);
Variant baseline_variant(const VariantOptions& opts);
// `ab --calibration FILE`: railscope's plugins in both variants, the tuner reading FILE
// (RAILSCOPE_TUNER_CALIBRATION) in "calibrated" and no calibration in "uncalibrated", so the calibration
// is the only difference.
Variant calibrated_variant(const VariantOptions& opts, const std::string& calibration);
Variant uncalibrated_variant(const VariantOptions& opts);

struct PlannedRun {
  std::size_t variant;  // 0 = railscope, 1 = baseline
  int index;            // 0-based run number within the variant
  std::filesystem::path folder;
};

// runs_per_variant pairs in alternating order (A B, B A, A B, ...) so slow drift of the machine hits
// both variants alike. Folders are <out>/<label>-<index>.
std::vector<PlannedRun> plan_runs(const std::vector<Variant>& variants, int runs_per_variant,
                                  const std::filesystem::path& out);

}  // namespace railscope::ab
