// SPDX-License-Identifier: Apache-2.0
// Launcher environments -> rank, world size, rendezvous (tools/preflight/launch_env.h).
#include <gtest/gtest.h>

// Flags are written as designated initializers naming only what a case sets.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <map>

#include "launch_env.h"

namespace railscope::preflight {
namespace {

Env env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Launch ok(const std::map<std::string, std::string>& vars, LaunchFlags flags = {}) {
  const LaunchResult r = resolve_launch(env_of(vars), flags);
  EXPECT_TRUE(r.launch) << r.error;
  return r.launch.value_or(Launch{});
}

std::string err(const std::map<std::string, std::string>& vars, LaunchFlags flags = {}) {
  const LaunchResult r = resolve_launch(env_of(vars), flags);
  EXPECT_FALSE(r.launch) << "accepted rank " << (r.launch ? r.launch->rank : -1);
  EXPECT_FALSE(r.error.empty());
  return r.error;
}

TEST(LaunchEnv, Torchrun) {
  const Launch l =
      ok({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"MASTER_ADDR", "node01"}, {"MASTER_PORT", "29400"}});
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.world, 8);
  EXPECT_EQ(l.host, "node01");
  EXPECT_EQ(l.port, 29400);
  EXPECT_EQ(l.source, "torchrun");
  EXPECT_EQ(ok({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.1"}}).port, kDefaultPort);
}

TEST(LaunchEnv, OpenMpiPmiSlurm) {
  Launch l = ok({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}});
  EXPECT_EQ(l.source, "openmpi");
  EXPECT_EQ(l.rank, 1);
  l = ok({{"PMI_RANK", "5"}, {"PMI_SIZE", "6"}}, {.rendezvous = "head:1234"});
  EXPECT_EQ(l.source, "pmi");
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.host, "head");
  EXPECT_EQ(l.port, 1234);
  l = ok({{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "16"}, {"SLURM_JOB_NODELIST", "gpu[003-010,012],login1"}});
  EXPECT_EQ(l.source, "slurm");
  EXPECT_EQ(l.rank, 7);
  EXPECT_EQ(l.world, 16);
  EXPECT_EQ(l.host, "gpu003");
  // The step's node list wins over the job's.
  l = ok({{"SLURM_PROCID", "0"},
          {"SLURM_NTASKS", "2"},
          {"SLURM_JOB_NODELIST", "a[1-4]"},
          {"SLURM_STEP_NODELIST", "a[3-4]"}});
  EXPECT_EQ(l.host, "a3");
}

TEST(LaunchEnv, InnermostLauncherWins) {
  // mpirun inside an sbatch script: the batch step's SLURM_PROCID=0 is inherited by every rank.
  Launch l = ok({{"SLURM_PROCID", "0"},
                 {"SLURM_NTASKS", "1"},
                 {"OMPI_COMM_WORLD_RANK", "3"},
                 {"OMPI_COMM_WORLD_SIZE", "4"},
                 {"MASTER_ADDR", "h"}});
  EXPECT_EQ(l.source, "openmpi");
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.world, 4);
  // torchrun under srun: RANK is the global rank, SLURM_PROCID the node.
  l = ok({{"SLURM_PROCID", "1"},
          {"SLURM_NTASKS", "2"},
          {"RANK", "9"},
          {"WORLD_SIZE", "16"},
          {"MASTER_ADDR", "h"}});
  EXPECT_EQ(l.source, "torchrun");
  EXPECT_EQ(l.rank, 9);
}

TEST(LaunchEnv, KubernetesIndexedJob) {
  const Launch l = ok({{"JOB_COMPLETION_INDEX", "4"}},
                      {.world = 8, .k8s_service = "preflight", .own_hostname = "rs-preflight-4"});
  EXPECT_EQ(l.source, "kubernetes");
  EXPECT_EQ(l.rank, 4);
  EXPECT_EQ(l.world, 8);
  EXPECT_EQ(l.host, "rs-preflight-0.preflight");
  EXPECT_EQ(l.port, kDefaultPort);
  // WORLD_SIZE alone (no RANK) is the Indexed Job's world size.
  EXPECT_EQ(ok({{"JOB_COMPLETION_INDEX", "1"}, {"WORLD_SIZE", "3"}, {"MASTER_ADDR", "x"}}).world, 3);
  EXPECT_NE(
      err({{"JOB_COMPLETION_INDEX", "1"}}, {.k8s_service = "s", .own_hostname = "j-1"}).find("world size"),
      std::string::npos);
  EXPECT_NE(err({{"JOB_COMPLETION_INDEX", "1"}}, {.world = 2, .k8s_service = "s", .own_hostname = "laptop"})
                .find("not <job-name>-<index>"),
            std::string::npos);
}

TEST(LaunchEnv, FlagsOverride) {
  const Launch l = ok({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"MASTER_ADDR", "env-host"}},
                      {.rank = 1, .world = 2, .rendezvous = "[fd00::1]:99"});
  EXPECT_EQ(l.rank, 1);
  EXPECT_EQ(l.world, 2);
  EXPECT_EQ(l.host, "fd00::1");
  EXPECT_EQ(l.port, 99);
  EXPECT_EQ(ok({}, {.rank = 0, .world = 2, .rendezvous = "h"}).source, "flags");
  const Launch single = ok({});
  EXPECT_EQ(single.world, 1);
  EXPECT_EQ(single.source, "single");
}

TEST(LaunchEnv, BadValuesAndContradictions) {
  EXPECT_NE(err({{"RANK", "3"}, {"MASTER_ADDR", "h"}}).find("WORLD_SIZE is not"), std::string::npos);
  EXPECT_NE(err({{"WORLD_SIZE", "3"}, {"MASTER_ADDR", "h"}}).find("RANK is not"), std::string::npos);
  EXPECT_NE(err({{"RANK", "-1"}, {"WORLD_SIZE", "2"}}).find("RANK='-1'"), std::string::npos);
  EXPECT_NE(err({{"RANK", "1x"}, {"WORLD_SIZE", "2"}}).find("not a non-negative integer"), std::string::npos);
  EXPECT_NE(err({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}).find("not below the world size"),
            std::string::npos);
  EXPECT_NE(err({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("out of range"), std::string::npos);
  EXPECT_NE(err({{"RANK", "0"}, {"WORLD_SIZE", "99999"}}).find("out of range"), std::string::npos);
  EXPECT_NE(err({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}).find("no rendezvous address"),
            std::string::npos);
  EXPECT_NE(err({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}})
                .find("MASTER_PORT"),
            std::string::npos);
  EXPECT_NE(err({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h;rm -rf"}}).find("invalid character"),
            std::string::npos);
  EXPECT_NE(err({}, {.rank = 1}).find("no world size"), std::string::npos);
  EXPECT_NE(err({}, {.world = 4}).find("no rank"), std::string::npos);
  EXPECT_NE(err({}, {.rank = 5, .world = 4, .rendezvous = "h"}).find("not below"), std::string::npos);
  EXPECT_NE(err({}, {.rank = 0, .world = 2, .rendezvous = "h", .k8s_service = "s", .own_hostname = "j-0"})
                .find("give one"),
            std::string::npos);
}

TEST(LaunchEnv, HostPortAndSlurmHostlist) {
  std::string host;
  uint16_t port = 7;
  std::string e;
  EXPECT_TRUE(parse_host_port("n1", &host, &port, &e));
  EXPECT_EQ(port, 7);
  EXPECT_TRUE(parse_host_port("n1:80", &host, &port, &e));
  EXPECT_EQ(port, 80);
  for (const char* bad : {"", ":80", "n1:", "n1:0", "n1:65536", "fd00::1:80", "[fd00::1", "[::1]x", "a b:1"})
    EXPECT_FALSE(parse_host_port(bad, &host, &port, &e)) << bad;
  EXPECT_EQ(first_slurm_host("node01"), "node01");
  EXPECT_EQ(first_slurm_host("node01,node02"), "node01");
  EXPECT_EQ(first_slurm_host("rack2-gpu[0007-0010]-ib,x"), "rack2-gpu0007-ib");
  EXPECT_EQ(first_slurm_host("gpu[12,3]"), "gpu12");
  EXPECT_EQ(first_slurm_host("gpu[x-1]"), "");
  EXPECT_EQ(first_slurm_host("gpu[1-2"), "");
  EXPECT_EQ(first_slurm_host("a;b"), "");
}

}  // namespace
}  // namespace railscope::preflight
