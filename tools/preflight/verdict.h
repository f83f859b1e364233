// SPDX-License-Identifier: Apache-2.0
// Rank 0's verdict: every node's own doctor findings (warnings and errors, named by host), the
// consistency findings, the ranks that never joined, the refused connections; exit 0 ok / 1 warnings /
// 2 a node or link that will slow or fail the job. Text and JSON renderings, and the short verdict rank 0
// sends back to each rank.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "link_stats.h"
#include "node_report.h"
#include "railscope/core/diagnosis.h"

namespace railscope::preflight {

struct Verdict {
  int world = 0;
  std::string launcher;
  std::vector<NodeReport> nodes;  // by rank; the ranks that joined
  std::vector<int> missing;       // ranks that never joined
  std::vector<diag::Finding> findings;
  std::vector<std::vector<int>> concerns;  // per finding: the ranks it is about (sent to those only)
  int exit_code = 0;
  bool authenticated = false;           // every rank's frames carried the job secret's tag (frame_auth.h)
  std::string authentication = "none";  // how: "token", "munge" or "none" (JobSecret::kind)
  bool links_measured = false;
  std::vector<LinkMeasurement> links;
  std::vector<RailStats> rails;
};

// Builds the findings and exit code from nodes, missing ranks and extra findings (refusals, about no
// rank).
Verdict decide(int world, std::string launcher, std::vector<NodeReport> nodes, std::vector<int> missing,
               std::vector<diag::Finding> extra, int timeout_s);
// Adds the judged links (their findings and the exit code with them; a link's finding is about the ranks
// of its two ends, LinkMeasurement::src_rank and dst_rank).
void add_links(Verdict* v, std::vector<LinkMeasurement> links, const LinkPolicy& policy);
// Adds findings, each sent to the ranks of about[i], and raises the exit code with them.
void add_findings(Verdict* v, std::vector<diag::Finding> findings, std::vector<std::vector<int>> about);

nlohmann::json to_json(const Verdict& v);
std::string to_text(const Verdict& v);
// "ok", "warning", "error" for exit code 0, 1, 2.
std::string_view status_word(int code);
// What rank 0 sends to a rank: status, counts and the findings about that rank (Verdict::concerns; at
// most 64 lines). Another rank's findings are not sent, whatever the host names.
nlohmann::json rank_verdict(const Verdict& v, int rank);
// The one line a rank prints from rank_verdict(); false when the JSON is not a verdict.
bool rank_summary(const nlohmann::json& j, int rank, const std::string& host, std::string* line,
                  int* exit_code);

}  // namespace railscope::preflight
