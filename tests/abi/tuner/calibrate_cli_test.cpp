// SPDX-License-Identifier: Apache-2.0
// `railscope tuner calibrate --preflight REPORT.json`: the cluster's fingerprint from a report written by
// preflight's own writer (tools/preflight/verdict.h, schema railscope.preflight/2), and every report that
// is not one refused with exit 65, the calibration file left as it was.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "cli_run.h"
#include "verdict.h"

namespace railscope::abi_test {
namespace {

const std::string kFixtures = RAILSCOPE_TUNER_FIXTURES;

// What `railscope preflight --json` writes for `hosts` nodes of `nics` active 400 Gb/s ports each.
preflight::Verdict healthy_cluster(int hosts, int nics) {
  preflight::Verdict v;
  v.world = hosts;
  v.launcher = "slurm";
  v.authenticated = true;
  v.authentication = "munge";
  for (int h = 0; h < hosts; ++h) {
    preflight::NodeReport r;
    r.rank = h;
    r.host = "n" + std::to_string(h + 1);
    for (int i = 0; i < nics; ++i) {
      preflight::NicSummary n;
      n.device = "mlx5_" + std::to_string(i);
      n.state = "ACTIVE";
      n.link_layer = "InfiniBand";
      n.active_mtu = 4096;
      n.speed_mbps = 400000;
      r.nics.push_back(n);
    }
    preflight::NicSummary down;  // a port NCCL_IB_HCA selects but that is down is no rail
    down.device = "mlx5_" + std::to_string(nics);
    down.state = "DOWN";
    down.link_layer = "InfiniBand";
    r.nics.push_back(down);
    v.nodes.push_back(r);
  }
  v.links_measured = true;
  for (int i = 0; i < nics; ++i) {
    preflight::RailStats s;
    s.rail = i;
    s.links = 2;
    s.median_GBps = 48.5;
    s.reference_GBps = 48.5;
    s.line_GBps = 50;
    v.rails.push_back(s);
  }
  return v;
}

struct Files {
  std::string dir = ::testing::TempDir() + "/calibrate_cli." + std::to_string(::getpid());
  Files() { std::system(("mkdir -p " + dir).c_str()); }
  ~Files() { std::system(("rm -rf " + dir).c_str()); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

std::string calibrate(const std::string& report, const std::string& out, const std::string& extra = "") {
  return "tuner calibrate " + kFixtures + "/calibration_2x8 -o " + out + " --gpu H100 --preflight " + report +
         extra;
}

TEST(TunerCalibratePreflight, FingerprintComesFromTheReport) {
  Files f;
  const std::string report = f.write("preflight.json", preflight::to_json(healthy_cluster(2, 8)).dump(2));
  const std::string cal = f.dir + "/cal.txt";
  const CliRun made = run_cli(calibrate(report, cal));
  ASSERT_EQ(made.rc, 0) << made.out;
  EXPECT_EQ(made.out.find("warning"), std::string::npos) << made.out;  // a healthy report: no warning
  const std::string text = Files::read(cal);
  EXPECT_NE(
      text.find("\ncluster nodes=2 ranks_per_node=8 gpu=H100 nic=mlx5 nic_gbit=400 nics=8 rail_GBps=48.5\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("# cluster facts: railscope preflight report preflight.json (verdict ok): 2 nodes, 8 "
                      "active NICs per node at 400 Gbit/s; rails' measured median GB/s: 48.5"),
            std::string::npos)
      << text;
  // The fingerprint is what the tuner checks: the same NICs are accepted, another rate is refused.
  const std::string explain = "tuner explain --nodes 2 --gpus-per-node 8 --nics 8 --calibration " + cal;
  EXPECT_EQ(run_cli(explain + " --nic-gbit 400").rc, 0);
  const CliRun other = run_cli(explain + " --nic-gbit 200");
  EXPECT_EQ(other.rc, 65) << other.out;
  EXPECT_NE(other.out.find("tuner.calibration_other_cluster"), std::string::npos) << other.out;
}

// The rate preflight measured per rail (the median of its rails') is the network bandwidth the model
// prices, and explain says so; without a report, or with a rate above the line rate, the nominal one.
TEST(TunerCalibratePreflight, TheMeasuredRailRatePricesTheNetwork) {
  Files f;
  const std::string explain =
      "tuner explain --nodes 2 --gpus-per-node 8 --nics 8 --nic-gbit 400 --max-bytes 1M --calibration ";
  preflight::Verdict v = healthy_cluster(2, 8);
  v.rails[0].median_GBps = 40;  // one slow rail does not set the rate: the median does
  const std::string cal = f.dir + "/cal.txt";
  ASSERT_EQ(run_cli(calibrate(f.write("preflight.json", preflight::to_json(v).dump()), cal)).rc, 0);
  EXPECT_NE(Files::read(cal).find(" nics=8 rail_GBps=48.5\n"), std::string::npos) << Files::read(cal);
  const CliRun measured = run_cli(explain + cal);
  ASSERT_EQ(measured.rc, 0) << measured.out;
  EXPECT_NE(
      measured.out.find("\n# network per rail: measured 48.5 GB/s per rail by preflight (calibration '" +
                        cal + "' line 5; line rate 50 GB/s)\n"),
      std::string::npos)
      << measured.out;

  const std::string plain = f.dir + "/plain.txt";
  ASSERT_EQ(
      run_cli("tuner calibrate " + kFixtures + "/calibration_2x8 -o " + plain + " --nic-gbit 400 --nics 8")
          .rc,
      0);
  EXPECT_EQ(Files::read(plain).find("rail_GBps"), std::string::npos);
  const CliRun nominal = run_cli(explain + plain);
  ASSERT_EQ(nominal.rc, 0) << nominal.out;
  EXPECT_NE(nominal.out.find("\n# network per rail: nominal 47.5 GB/s per rail (400 Gbit/s x NIC efficiency "
                             "0.95)\n"),
            std::string::npos)
      << nominal.out;

  for (preflight::RailStats& r : v.rails) r.median_GBps = 60;  // above 400 Gbit/s: not these NICs
  const std::string fast = f.dir + "/fast.txt";
  ASSERT_EQ(run_cli(calibrate(f.write("fast.json", preflight::to_json(v).dump()), fast)).rc, 0);
  const CliRun above = run_cli(explain + fast);
  ASSERT_EQ(above.rc, 0) << above.out;
  EXPECT_NE(
      above.out.find("# network per rail: nominal 47.5 GB/s per rail (400 Gbit/s x NIC efficiency 0.95); "
                     "the measured 60 GB/s per rail (calibration '" +
                     fast + "' line 5) is above the line rate 50 GB/s: ignored\n"),
      std::string::npos)
      << above.out;
}

TEST(TunerCalibratePreflight, UnevenNodesAreNamedAndTheMostCommonCountKept) {
  Files f;
  preflight::Verdict v = healthy_cluster(2, 8);
  v.nodes[1].nics[7].state = "DOWN";
  const std::string report = f.write("preflight.json", preflight::to_json(v).dump());
  const std::string cal = f.dir + "/cal.txt";
  const CliRun made = run_cli(calibrate(report, cal));
  ASSERT_EQ(made.rc, 0) << made.out;
  EXPECT_NE(made.out.find("nodes differ in active NICs: most have 8, not n2 (7)"), std::string::npos)
      << made.out;
  EXPECT_NE(Files::read(cal).find(" nics=8 rail_GBps=48.5\n"), std::string::npos);
}

// Every report that is not preflight's: exit 65 naming what is wrong, and the file -o names untouched.
TEST(TunerCalibratePreflight, OtherSchemasAndCorruptReportsAreRefusedAndLoseNothing) {
  Files f;
  const nlohmann::json good = preflight::to_json(healthy_cluster(2, 8));
  struct Case {
    std::string name;
    std::function<std::string()> text;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"older schema",
       [&] {
         auto j = good;
         j["schema"] = "railscope.preflight/1";
         return j.dump();
       },
       "schema \"railscope.preflight/1\" is not railscope.preflight/2 (an older railscope"},
      {"a rank's verdict", [&] { return preflight::rank_verdict(healthy_cluster(2, 8), 0).dump(); },
       "schema \"railscope.preflight.verdict/1\" is not railscope.preflight/2"},
      {"no schema",
       [&] {
         auto j = good;
         j.erase("schema");
         return j.dump();
       },
       "no \"schema\": not a `railscope preflight --json` report"},
      {"cut short", [&] { return good.dump(2).substr(0, 400); }, "not JSON: parse error at line"},
      {"a profile", [&] { return Files::read(kFixtures + "/calibration_2x8/rank0.jsonl"); }, "not JSON"},
      {"a node's field of another type",
       [&] {
         auto j = good;
         j["nodes"][1]["nics"][0]["speed_mbps"] = "400G";
         return j.dump();
       },
       "nodes[1].nics[0].speed_mbps: not an integer"},
      {"no node",
       [&] {
         auto j = good;
         j["nodes"] = nlohmann::json::array();
         return j.dump();
       },
       "nodes: missing, not an array, or empty"},
      {"rails not a list",
       [&] {
         auto j = good;
         j["rails"] = 3;
         return j.dump();
       },
       "rails: not an array"},
      {"another cluster's nodes", [&] { return preflight::to_json(healthy_cluster(4, 8)).dump(); },
       "covers 4 nodes, the profiles measured 2"},
  };
  const std::string cal = f.write("cal.txt", "# an earlier calibration\n");
  for (const Case& c : cases) {
    const std::string report = f.write("bad.json", c.text());
    const CliRun r = run_cli(calibrate(report, cal));
    EXPECT_EQ(r.rc, 65) << c.name << ": " << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.name << ": " << r.out;
    EXPECT_NE(r.out.find("nothing written"), std::string::npos) << c.name << ": " << r.out;
    EXPECT_EQ(Files::read(cal), "# an earlier calibration\n") << c.name;
  }
  const CliRun missing = run_cli(calibrate(f.dir + "/none.json", cal));
  EXPECT_EQ(missing.rc, 65) << missing.out;
  // The NIC facts come from the report or from flags, not both.
  const std::string report = f.write("preflight.json", good.dump());
  EXPECT_EQ(run_cli(calibrate(report, cal, " --nics 8")).rc, 64);
  EXPECT_EQ(run_cli(calibrate(report, cal, " --nic-gbit 400")).rc, 64);
  EXPECT_EQ(Files::read(cal), "# an earlier calibration\n");
}

}  // namespace
}  // namespace railscope::abi_test
