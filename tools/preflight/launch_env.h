// SPDX-License-Identifier: Apache-2.0
// Who am I in this job: rank, world size and the rendezvous address (rank 0's host and port), read from
// the environment of the launcher that started this process, or from flags. Pure: the environment is a
// lookup function, so tests give any launcher's variables.
//
// Launchers and their variables (public documentation):
// - torchrun / torch.distributed: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   (https://pytorch.org/docs/stable/elastic/run.html, "Environment Variables").
// - Open MPI's mpirun: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE
//   (https://docs.open-mpi.org/en/v5.0.x/tuning-apps/environment-var.html).
// - MPICH/Hydra and Slurm's PMI plugins: PMI_RANK, PMI_SIZE.
// - Slurm's srun: SLURM_PROCID, SLURM_NTASKS, SLURM_JOB_NODELIST (https://slurm.schedmd.com/srun.html,
//   "OUTPUT ENVIRONMENT VARIABLES").
// - Kubernetes Indexed Job: JOB_COMPLETION_INDEX; each pod's hostname is <job-name>-<index> and, with a
//   headless service as the pod's subdomain, resolves as <job-name>-<index>.<service>
//   (https://kubernetes.io/docs/concepts/workloads/controllers/job/#completion-mode).
//
// When several launchers' variables are present (torchrun inside an srun step, mpirun inside an sbatch
// script), the innermost launcher wins: RANK/WORLD_SIZE, then Open MPI, then PMI, then the Indexed Job,
// then Slurm. Flags override every variable.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace railscope::preflight {

using Env = std::function<std::optional<std::string>(std::string_view name)>;

constexpr uint16_t kDefaultPort = 29555;  // rendezvous port when no launcher or flag gives one
constexpr int kMaxWorld = 65536;

struct LaunchFlags {
  std::optional<int> rank;   // --rank
  std::optional<int> world;  // --world-size
  std::string rendezvous;    // --rendezvous HOST[:PORT]
  std::string k8s_service;   // --k8s-service NAME: Indexed Job, rank 0 is <job>-0.NAME
  std::string own_hostname;  // this pod's hostname (for --k8s-service: "<job>-<index>")
};

struct Launch {
  int rank = 0;
  int world = 1;
  std::string host;  // rank 0's address
  uint16_t port = kDefaultPort;
  std::string source;  // "flags", "torchrun", "openmpi", "pmi", "kubernetes", "slurm"
};

struct LaunchResult {
  std::optional<Launch> launch;
  std::string error;  // one sentence naming the variable or flag; set when launch is empty
};

LaunchResult resolve_launch(const Env& env, const LaunchFlags& flags);

// "HOST", "HOST:PORT", "[v6]:PORT"; false with *error set on anything else.
bool parse_host_port(std::string_view text, std::string* host, uint16_t* port, std::string* error);

// The first host of a Slurm hostlist ("gpu[003-010,012],login1" -> "gpu003"); empty when malformed.
std::string first_slurm_host(std::string_view nodelist);

}  // namespace railscope::preflight
