// SPDX-License-Identifier: Apache-2.0
// [link.degraded] from the running plugin: a port the job's connections use that retrains to a lower
// rate or fewer lanes while the job runs (a lane lost to a bad cable, optic or connector, a switch
// port forced down) slows every collective to that rail's pace, although NCCL planned with the rate
// the port had at init. `railscope doctor` and the profiler's start see it only when they run; the
// fabric sampler (fabric_watch.h) reads each used port's rate every tick, as the kernel states it in
// class/infiniband/<dev>/ports/<port>/rate (rate_show(): active_speed × active_width), and this judge
// compares it with the rate the port had at its first look in this process.
#pragma once

#include <optional>
#include <string>

#include "railscope/core/diagnosis.h"
#include "railscope/node/link_health.h"

namespace railscope::net::verbs {

class LinkRateWatch {
 public:
  struct Change {
    std::optional<diag::Finding> degraded;  // link.degraded: once per lower rate
    std::string restored;                   // back at its first rate (an INFO line); empty = no news
  };
  // `port` names it ("mlx5_0:1"); `rate_text` is the sysfs answer, nullopt when it cannot be read (the
  // look then says nothing). A rate above the first becomes the new reference silently.
  Change look(const std::string& port, const std::optional<std::string>& rate_text);

 private:
  static bool below(const node::RateText& now, const node::RateText& ref);
  node::RateText first_;     // mbps 0 until a rate was read
  std::string first_text_;   // as the kernel wrote it
  node::RateText reported_;  // the lower rate last named; mbps 0 = none named
};

}  // namespace railscope::net::verbs
