// SPDX-License-Identifier: Apache-2.0
// The verdict as one self-contained HTML page (`railscope preflight --html FILE`): per rail a node × node
// heat map of the measured links (row: the sender, column: the receiver), each cell coloured by its
// bandwidth as a percentage of the link's line rate (or of the rail's median when no line rate is known),
// outliers outlined, failed links crossed; then the rail statistics, the nodes and the findings. Inline
// CSS, SVG and a few lines of script that record on <body> what was drawn (for the headless-browser
// test, as `railscope report` does); no network.
#pragma once

#include <string>

#include "verdict.h"

namespace railscope::preflight {

// The colour basis of a rail's cells: "line rate" when every measured link has one, else "rail median"
// (its reference median), else "" (nothing to compare with: cells are grey).
std::string heat_basis(const Verdict& v, int rail);

std::string render_html(const Verdict& v);

}  // namespace railscope::preflight
