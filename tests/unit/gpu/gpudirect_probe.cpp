// SPDX-License-Identifier: Apache-2.0
// gpudirect_probe: prints the GPUDirect report (what `railscope doctor`'s gpudirect section prints)
// without the CLI, so the report can be checked before doctor integrates it and on GPU machines by
// tools/gpu-check.sh.  Usage:
//   gpudirect_probe [--topo FILE] [--sysfs ROOT] [--cuda LIB] [--no-cuda] [--probe-verbs] [--json]
// --probe-verbs opens every RDMA device (libibverbs) to name it and probe DMA-BUF, as doctor does.
#include <cstdio>
#include <cstring>
#include <string>

#include "railscope/gpu/gpudirect_json.h"
#include "railscope/gpu/gpudirect_report.h"
#include "railscope/gpu/verbs_inventory.h"

int main(int argc, char** argv) {
  auto options = railscope::gpu::ReportOptions::from_env();
  bool json = false;
  bool probe_verbs = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpudirect_probe: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--topo")
      options.topo_file = value();
    else if (a == "--sysfs")
      options.fs = railscope::gpu::SysfsRoot(value());
    else if (a == "--cuda")
      options.cuda_library = value();
    else if (a == "--no-cuda")
      options.query_cuda = false;
    else if (a == "--probe-verbs")
      probe_verbs = true;
    else if (a == "--json")
      json = true;
    else {
      std::fprintf(stderr,
                   "usage: gpudirect_probe [--topo FILE] [--sysfs ROOT] [--cuda LIB] [--no-cuda] "
                   "[--probe-verbs] [--json]\n");
      return 2;
    }
  }
  if (probe_verbs) railscope::gpu::add_verbs_nics(options, railscope::gpu::probe_verbs_nics(options.fs));
  auto report = railscope::gpu::build_report(options);
  std::string out =
      json ? railscope::gpu::to_json(report).dump(2) + "\n" : railscope::gpu::render_text(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return report.topology_error.empty() ? 0 : 1;
}
