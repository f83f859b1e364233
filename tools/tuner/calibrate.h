// SPDX-License-Identifier: Apache-2.0
// `railscope tuner calibrate`: profiles of real runs (the profiler's `coll` records, with the algorithm,
// protocol and channels NCCL used) become a calibration file the tuner reads (RAILSCOPE_TUNER_CALIBRATION,
// docs/tuner.md): per (collective, size, algorithm, protocol, ranks, nodes) the median bus bandwidth of
// its runs, their spread and count, and the profile files they came from; and the cluster's fingerprint.
#pragma once

#include <string>
#include <vector>

#include "plugin/tuner/config/config.h"
#include "tools/report/profile_reader.h"

namespace railscope::cli::tuner_calibrate {

struct Fingerprint {
  std::string gpu, nic;  // "" = not given
  double nic_gbit = 0;
  int nics = 0;
  double rail_gbs = 0;  // measured per rail (preflight), GB/s; 0 = not measured
  // Where the NIC facts came from, for the file's header ("" = flags): e.g. the preflight report's name,
  // its verdict and its rails' measured rates.
  std::string origin;
};

struct Calibrated {
  railscope::tuner::ClusterPrint cluster;
  std::vector<railscope::tuner::CalibrationPoint> points;
  size_t records_used = 0;
  size_t records_skipped = 0;  // p2p, incomplete, no busbw, or no algorithm/protocol recorded
  std::string origin;          // Fingerprint::origin
};

// One sample per collective (a communicator's `ord`, else its `seq`): the slowest rank's busbw, since
// the collective ends when its last rank does. The median of the samples, and half their interquartile
// range as the spread. The cluster's nodes and ranks per node are those of the shape with most samples.
Calibrated calibrate(const report::ProfileSet& profiles, const Fingerprint& print);

// The calibration file's text: a header comment, the cluster line, one point line per measured entry.
std::string render(const Calibrated& c);

}  // namespace railscope::cli::tuner_calibrate
