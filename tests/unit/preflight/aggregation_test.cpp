// SPDX-License-Identifier: Apache-2.0
// Rank 0's whole aggregation at 512 nodes, as in a run: 512 reports of 8 rails arrive as JSON and are
// parsed and checked, the verdict is decided (consistency), the links of the O(log N) schedule are judged
// (each with its two ends' counter deltas, as the ranks send them), and the verdict is rendered as JSON,
// text and the HTML page. Prints the time and the heap it takes; the bounds are generous (a loaded shared
// 2-core host), the figures go to docs/preflight.md.
#include <gtest/gtest.h>
#include <malloc.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "html_page.h"
#include "link_plan.h"
#include "synthetic_node.h"

namespace railscope::preflight {
namespace {

// The counters of one end of a healthy 256 MiB test on a 400 Gb/s RoCE port (mlx5-shaped).
EndCounters port_counters(const std::string& dev, bool lossy) {
  node::PortCounters a, b;
  a.device = b.device = dev;
  a.port = b.port = 1;
  const std::pair<const char*, uint64_t> moved[] = {
      {"port_xmit_data", 67108864}, {"port_rcv_data", 1048576},
      {"port_xmit_packets", 65536}, {"port_rcv_packets", 4096},
      {"rx_write_requests", 0},     {"np_cnp_sent", 3},
      {"rp_cnp_handled", 2},        {"out_of_sequence", lossy ? 412u : 0u}};
  for (const auto& [name, d] : moved) {
    a.counters.push_back({name, node::counter_category(name), 1000, true, node::CounterSource::Hw});
    b.counters.push_back({name, node::counter_category(name), 1000 + d, true, node::CounterSource::Hw});
  }
  return end_counters(a, b, true, false, 0.7);
}

size_t heap_in_use() { return mallinfo2().uordblks; }

TEST(Aggregation, FiveHundredTwelveNodesReportsLinksVerdictAndPage) {
  constexpr int kNodes = 512;
  std::vector<std::string> wire;
  for (int i = 0; i < kNodes; ++i) {
    NodeReport r = healthy_node(i);
    if (i == 300) r.nics[3].active_mtu = 1024;
    wire.push_back(to_json(r).dump());
  }
  const size_t heap0 = heap_in_use();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<NodeReport> nodes;
  for (const auto& w : wire) {
    std::string error;
    auto r = node_report_from_json(nlohmann::json::parse(w), &error);
    ASSERT_TRUE(r) << error;
    nodes.push_back(std::move(*r));
  }
  Verdict v = decide(kNodes, "slurm", std::move(nodes), {}, {}, 60);
  const auto t1 = std::chrono::steady_clock::now();

  // The links of the schedule with their results. Rank 0 reads them from the wire one step at a time
  // (a frame per rank and step): the first bandwidth step's results go through JSON and are timed, the
  // others are the same size and are built directly (keeping the test's own cost down).
  const LinkPlan plan = plan_links(v.nodes, false, true, 29555);
  std::vector<LinkMeasurement> links;
  size_t wire_results = 0;
  std::chrono::steady_clock::duration wire_time{};
  for (const auto& pl : plan.links) {
    if (pl.measure != Measure::Bandwidth) continue;
    const bool slow = pl.client == 77 && pl.rail == 5;  // node077's rail 5 sends at 40 %
    std::vector<TaskResult> res(2);
    res[0].ok = res[1].ok = true;
    res[0].gbs = slow ? 20 : 46.5 + 0.001 * static_cast<double>(links.size() % 97);
    res[0].counters = port_counters(v.nodes[pl.client].nics[size_t(pl.rail)].device, slow);
    res[1].counters = port_counters(v.nodes[pl.server].nics[size_t(pl.rail)].device, false);
    if (pl.step == 0) {
      const std::string text = results_to_json(0, res).dump();
      const auto w0 = std::chrono::steady_clock::now();
      std::string error;
      auto back = results_from_json(nlohmann::json::parse(text), 0, 2, &error);
      wire_time += std::chrono::steady_clock::now() - w0;
      ASSERT_TRUE(back) << error;
      res = std::move(*back);
      wire_results += 2;
    }
    LinkMeasurement m;
    m.rail = pl.rail;
    m.src_node = v.nodes[pl.client].host;
    m.dst_node = v.nodes[pl.server].host;
    m.src_nic = v.nodes[pl.client].nics[size_t(pl.rail)].name();
    m.dst_nic = v.nodes[pl.server].nics[size_t(pl.rail)].name();
    m.GBps = res[0].gbs;
    m.line_GBps = 50;
    m.src_counters = std::move(res[0].counters);
    m.dst_counters = std::move(res[1].counters);
    links.push_back(std::move(m));
  }
  const size_t n_links = links.size();
  const auto t2 = std::chrono::steady_clock::now();
  add_links(&v, std::move(links), {});
  const auto t3 = std::chrono::steady_clock::now();
  const std::string json = to_json(v).dump(2);
  const auto t4a = std::chrono::steady_clock::now();
  const std::string text = to_text(v);
  const std::string page = render_html(v);
  const auto t4 = std::chrono::steady_clock::now();
  const size_t heap1 = std::max(heap_in_use(), heap0);

  // Two links from node077 on rail 5 (a ring round sends to both neighbours) and more in later rounds:
  // every one named slow with its loss; the MTU fault named; nothing else.
  size_t slow = 0, mtu = 0;
  for (const auto& f : v.findings) {
    if (f.id() == "link.slow") {
      ++slow;
      EXPECT_EQ(f.detail.find("node077/mlx5_5:1 → "), 0u) << f.detail;
      EXPECT_NE(f.detail.find("counters: node077/mlx5_5:1 (sender): 412 lost-packet events"),
                std::string::npos)
          << f.detail;
    } else if (f.id() == "preflight.rail_mtu") {
      ++mtu;
    } else {
      ADD_FAILURE() << diag::one_line(f);
    }
  }
  EXPECT_GE(slow, 2u);
  EXPECT_EQ(mtu, 1u);
  size_t maps = 0;
  for (size_t p = page.find("class=\"rail-heatmap\""); p != std::string::npos;
       p = page.find("class=\"rail-heatmap\"", p + 1))
    ++maps;
  EXPECT_EQ(maps, 8u);

  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  size_t report_bytes = 0;
  for (const auto& w : wire) report_bytes += w.size();
  std::printf(
      "512 nodes x 8 rails, %d steps: reports (%zu KiB of JSON) parsed, checked and compared in %.1f ms; %zu "
      "links judged with both ends' counters in %.1f ms; results read from JSON: %.3f ms each (%zu of step "
      "0 timed: %.1f ms for all %zu); verdict JSON %zu KiB in %.1f ms, text %zu KiB and HTML %zu KiB in "
      "%.1f ms; heap held %zu KiB\n",
      plan.steps, report_bytes / 1024, ms(t1 - t0), n_links, ms(t3 - t2),
      ms(wire_time) / double(wire_results), wire_results,
      ms(wire_time) / double(wire_results) * double(2 * n_links), 2 * n_links, json.size() / 1024,
      ms(t4a - t3), text.size() / 1024, page.size() / 1024, ms(t4 - t4a), (heap1 - heap0) / 1024);
  // Generous bounds for a loaded shared host (docs/preflight.md has the figures).
  EXPECT_LT(ms(t1 - t0) + ms(t4 - t2), 120000);
  EXPECT_LT(heap1 - heap0, size_t(1) << 30);
}

}  // namespace
}  // namespace railscope::preflight
