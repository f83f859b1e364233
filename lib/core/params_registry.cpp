// SPDX-License-Identifier: Apache-2.0
// Every environment variable railscope reads, in one place. Sections by component; add, never
// duplicate. NCCL_* variables keep NCCL's names, defaults and meanings.
#include <cstdint>

#include "railscope/core/params.h"

namespace railscope::params::detail {
namespace {

using T = Type;

constexpr Spec kSpecs[] = {
    // --- all components
    {"NCCL_DEBUG", T::String, "WARN", 0, 0, "all",
     "Log level when NCCL gives no logger (VERSION, WARN, INFO, TRACE); NCCL's own meaning"},

    // --- device selection and RoCE addressing (net, doctor, tuner)
    {"NCCL_IB_HCA", T::String, "", 0, 0, "net",
     "RDMA devices/ports to use: `dev[:port],...`; `^` excludes, `=` exact names (NCCL syntax)"},
    {"NCCL_IB_GID_INDEX", T::Int, "-1", -1, 1023, "net",
     "Force a RoCE GID index; -1 selects automatically (ignored on InfiniBand)"},
    {"NCCL_IB_ROCE_VERSION_NUM", T::Int, "2", 1, 2, "net", "RoCE version wanted by GID selection"},
    {"NCCL_IB_ADDR_FAMILY", T::String, "AF_INET", 0, 0, "net",
     "Address family wanted by GID selection: AF_INET or AF_INET6"},
    {"NCCL_IB_ADDR_RANGE", T::String, "", 0, 0, "net",
     "CIDR range the selected GID's address must lie in (e.g. 10.0.0.0/16)"},

    // --- GPUDirect RDMA (net, doctor)
    {"NCCL_NET_GDR_LEVEL", T::String, "PXB", 0, 0, "net",
     "Farthest GPU↔NIC path allowing GPUDirect RDMA: LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS, or 0-5 "
     "(NCCL's meaning)"},
    {"NCCL_NET_GDR_READ", T::Int, "-2", -2, 1, "net",
     "GPUDirect for sends: -2 default (on for compute capability >= 8.0), 0 off, 1 on (NCCL's meaning)"},
    {"NCCL_DMABUF_ENABLE", T::Bool, "1", 0, 0, "net",
     "Allow DMA-BUF registration of GPU memory (NCCL's meaning)"},
    {"NCCL_GDR_FLUSH_DISABLE", T::Bool, "0", 0, 0, "net",
     "Do not flush GPUDirect receives with a loopback RDMA read (NCCL's IB transport meaning)"},
    {"RAILSCOPE_NET_FLUSH", T::String, "auto", 0, 0, "net",
     "iflush in the verbs engine: auto (loopback RDMA read for GPUDirect receives unless "
     "NCCL_GDR_FLUSH_DISABLE=1), force (every receive NCCL flushes, host memory too; overrides "
     "NCCL_GDR_FLUSH_DISABLE), off (never)"},
    {"RAILSCOPE_TOPO_FILE", T::Path, "", 0, 0, "doctor",
     "hwloc XML topology to use instead of this system's (`lstopo --of xml`)"},
    {"RAILSCOPE_PREFLIGHT_TOKEN", T::String, "", 0, 0, "preflight",
     "The job's secret for `railscope preflight` (16..4096 bytes, the same on every rank; --token-file "
     "FILE overrides): every frame of the rendezvous is authenticated with it; unset and no --token-file: "
     "the run is unauthenticated and rank 0 listens on loopback only unless --unauthenticated"},
    {"RAILSCOPE_MUNGE_SOCKET", T::Path, "", 0, 0, "preflight",
     "MUNGE's socket for `railscope preflight` under Slurm without a token (empty: libmunge's default, "
     "/run/munge/munge.socket.2)"},
    // Shared with lib/node (same name, default and meaning): keep one entry when merging.
    {"RAILSCOPE_SYSFS_ROOT", T::Path, "/sys", 0, 0, "all",
     "Root of the sysfs tree lib/node reads for devices, ports, GIDs, speeds, netdev MTUs and port "
     "counters (tests point it at a fake tree; libibverbs is only queried with the real /sys)"},
    // --- net plugin: QP tuning (NCCL's meanings) and railscope's own
    {"NCCL_IB_TIMEOUT", T::Int, "20", 1, 31, "net",
     "IB local ACK timeout exponent: 4.096 us x 2^N per try; also sets railscope's stall budget"},
    {"NCCL_IB_RETRY_CNT", T::Int, "7", 0, 7, "net", "QP transport retry count (7 = infinite on rxe)"},
    {"NCCL_IB_TC", T::Int, "-1", -1, 255, "net", "RoCE traffic class; -1 = the communicator's, else 0"},
    {"NCCL_IB_SL", T::Int, "-1", -1, 15, "net", "InfiniBand service level; -1 = the communicator's, else 0"},
    {"NCCL_IB_FIFO_TC", T::Int, "-1", -1, 255, "net",
     "RoCE traffic class of the receiver's QPs (clear-to-sends); -1 = the sender's"},
    {"NCCL_IB_QPS_PER_CONNECTION", T::Int, "1", 1, 16, "net",
     "RC QPs per connection and device; large messages are split across them"},
    {"RAILSCOPE_NET_EAGER_MAX", T::Int, "4096", 0, 65536, "net",
     "Verbs engine, host memory at both ends: messages up to N bytes go without a clear-to-send, into "
     "a receiver ring (copied out), larger ones ask first; 0 = always the receiver-driven protocol"},
    {"RAILSCOPE_NET_EAGER_AHEAD", T::Bool, "1", 0, 0, "net",
     "Verbs eager protocol, receiving end: a receive of one buffer above RAILSCOPE_NET_EAGER_MAX writes "
     "its clear-to-send at once, so its send needs no request-to-send when it comes after the receive; "
     "0 = large messages always ask first"},
    {"RAILSCOPE_NET_FAILOVER", T::Bool, "1", 0, 0, "net",
     "Verbs over a virtual NIC: when a port other than the first fails, its traffic moves to the "
     "connection's other ports (link.failover; docs/failover.md), and back once it passes a probe; "
     "0 = the connection fails (async.port_error)"},
    {"RAILSCOPE_NET_FAILOVER_LIMIT", T::Int, "3", 1, 1000, "net",
     "Failures of one port (failovers and failed probes) after which a connection keeps its traffic off "
     "that port until it closes (link.failover says so); before that, a port ACTIVE again is probed and "
     "traffic returns to it (link.recovered; docs/failover.md)"},
    {"RAILSCOPE_NET_STATS", T::Path, "", 0, 0, "net",
     "File or folder receiving one JSON line of statistics per net connection at close; unset = off"},
    {"RAILSCOPE_NET_STATS_INTERVAL", T::Int, "10", 0, 86400, "net",
     "Seconds between the periodic stats lines of a live connection (RAILSCOPE_NET_STATS); 0 = at close "
     "only"},
    {"RAILSCOPE_NET_FABRIC_SAMPLING", T::Int, "1", 0, 1, "net",
     "Verbs: sample the used ports' counters and active MTU once a second on a helper thread (fabric.*, "
     "mtu.changed, link.recovered findings); 0 = off"},
    {"RAILSCOPE_NET_PROM", T::Path, "", 0, 0, "net",
     "Verbs: folder for node_exporter's textfile collector, one railscope-net-<host>-<pid>.prom per process "
     "with the used ports' series (railscope_net_port_*), rewritten each second; a name ending in .prom is "
     "the file; unset = off"},
    {"RAILSCOPE_NET_PROM_KEEP", T::Int, "0", 0, 1, "net",
     "1 = keep the net plugin's Prometheus textfile after the engine finalizes; 0 = remove it"},
    {"RAILSCOPE_NET_RAIL_BOARD", T::Int, "0", 0, 1, "net",
     "Verbs, 1 = the processes of one user on a node compare their ports' large-send rates through "
     "/dev/shm/railscope-rails-<uid>[-job-<id>] (fabric.rail_skew across processes, one GPU per process): "
     "for jobs "
     "whose ranks run the same collectives in lockstep; 0 (default) = each process judges its own ports"},
    {"SLURM_JOB_ID", T::String, "", 0, 0, "net",
     "Slurm's job id: the rail board (RAILSCOPE_NET_RAIL_BOARD) is the job's, "
     "/dev/shm/railscope-rails-<uid>-job-<id>"},
    {"PBS_JOBID", T::String, "", 0, 0, "net", "PBS's job id, when SLURM_JOB_ID is unset: as SLURM_JOB_ID"},
    {"LSB_JOBID", T::String, "", 0, 0, "net",
     "LSF's job id, when SLURM_JOB_ID and PBS_JOBID are unset: as SLURM_JOB_ID"},
    {"NCCL_IB_ROUTABLE_FLID_GID_INDEX", T::Int, "1", 0, 1023, "net",
     "InfiniBand: GID index used when it carries a routable FLID (else index 0)"},

    // --- net plugin: engine selection and the TCP engine (NCCL's socket-transport meanings where named
    // NCCL_*)
    {"RAILSCOPE_TRANSPORT", T::String, "auto", 0, 0, "net",
     "Net engine: auto (verbs when an RDMA port is active, else TCP), verbs, or tcp"},
    {"RAILSCOPE_IBVERBS_LIB", T::String, "libibverbs.so.1", 0, 0, "net",
     "libibverbs to dlopen (a name the loader searches or a path); without it the verbs engine is off"},
    {"NCCL_SOCKET_IFNAME", T::String, "", 0, 0, "net",
     "TCP engine interfaces: name prefixes, `^` excludes, `=` exact names; unset = ib*, else not "
     "docker/lo/virbr"},
    {"NCCL_SOCKET_FAMILY", T::String, "", 0, 0, "net",
     "TCP engine address family: AF_INET or AF_INET6; unset = either"},
    {"NCCL_SOCKET_NTHREADS", T::Int, "-2", -2, 16, "net",
     "TCP engine helper threads per connection; -2 (auto) = 4; 0 = none, the proxy thread moves the bytes"},
    {"NCCL_NSOCKS_PERTHREAD", T::Int, "-2", -2, 64, "net",
     "TCP engine data sockets per helper thread; -2 (auto) = 1; threads x sockets capped at 64"},
    {"RAILSCOPE_TCP_SOCKBUF", T::Int, "0", 0, 1073741824, "net",
     "TCP engine SO_SNDBUF/SO_RCVBUF bytes per socket; 0 = kernel autotuning (tcp_wmem/tcp_rmem)"},
    {"RAILSCOPE_TCP_TIMEOUT", T::Int, "60", 1, 3600, "net",
     "TCP engine: seconds before a silent peer, unacknowledged data or an unfinished handshake is an error"},
    {"RAILSCOPE_TCP_MIN_CHUNK", T::Int, "524288", 4096, 67108864, "net",
     "TCP engine: smallest piece a large message is cut into across the data sockets"},
    {"RAILSCOPE_TCP_INLINE", T::Int, "8192", 0, 1048576, "net",
     "TCP engine: messages up to this size travel on the control socket (no helper-thread hop)"},
    {"RAILSCOPE_TCP_ZEROCOPY", T::String, "auto", 0, 0, "net",
     "TCP engine MSG_ZEROCOPY sends: auto (on, but a connection whose kernel copies anyway, e.g. "
     "loopback/veth, goes back to copy sends), on (always where the kernel supports it), or off"},
    {"RAILSCOPE_TCP_ZEROCOPY_MIN", T::Int, "16384", 4096, 1073741824, "net",
     "TCP engine: smallest send (bytes) that uses MSG_ZEROCOPY; smaller ones are copied"},

    // --- node inspection (doctor, net, tuner)
    // NCCL tuning variables doctor reports when set (env hygiene); railscope reads them, never applies them.
    {"NCCL_ALGO", T::String, "", 0, 0, "doctor", "NCCL's algorithm override; reported by doctor when set"},
    {"NCCL_PROTO", T::String, "", 0, 0, "doctor", "NCCL's protocol override; reported by doctor when set"},
    {"NCCL_MIN_NCHANNELS", T::String, "", 0, 0, "doctor",
     "NCCL's channel floor; reported by doctor when set"},
    {"NCCL_MAX_NCHANNELS", T::String, "", 0, 0, "doctor",
     "NCCL's channel ceiling; reported by doctor when set"},
    {"NCCL_MIN_CTAS", T::String, "", 0, 0, "doctor", "NCCL's CTA floor; reported by doctor when set"},
    {"NCCL_MAX_CTAS", T::String, "", 0, 0, "doctor", "NCCL's CTA ceiling; reported by doctor when set"},
    {"NCCL_NTHREADS", T::String, "", 0, 0, "doctor", "NCCL's threads per block; reported by doctor when set"},
    {"NCCL_BUFFSIZE", T::String, "", 0, 0, "doctor",
     "NCCL's Simple buffer size; reported by doctor when set"},
    {"NCCL_LL_BUFFSIZE", T::String, "", 0, 0, "doctor", "NCCL's LL buffer size; reported by doctor when set"},
    {"NCCL_LL128_BUFFSIZE", T::String, "", 0, 0, "doctor",
     "NCCL's LL128 buffer size; reported by doctor when set"},
    // --- profiler
    {"RAILSCOPE_PROFILE_DIR", T::Path, "./railscope-profile", 0, 0, "profiler",
     "Directory of the per-process JSONL profile (<host>-<pid>.jsonl); created if missing"},
    {"RAILSCOPE_PROFILE_PROM", T::Path, "", 0, 0, "profiler",
     "Folder for node_exporter's textfile collector: one railscope-<host>-<pid>.prom per process; a name "
     "ending in .prom is this process's file (unset: none)"},
    {"RAILSCOPE_PROFILE_PROM_SECONDS", T::Int, "10", 1, 3600, "profiler",
     "Period of the Prometheus textfile's rewrite while communicators are alive"},
    {"RAILSCOPE_PROFILE_PROM_KEEP", T::Int, "0", 0, 1, "profiler",
     "1 = keep the Prometheus textfile when the last communicator is finalized; 0 = remove it"},
    {"RAILSCOPE_K8S_JOB_NAME", T::String, "", 0, 0, "profiler",
     "Job label of the textfiles when no scheduler names the job: set it from the pod's "
     "batch.kubernetes.io/job-name label (downward API)"},
    {"TORCHELASTIC_RUN_ID", T::String, "", 0, 0, "profiler",
     "torchrun's run id: the textfiles' job label when no RAILSCOPE_PROFILE_TAG or scheduler job id is set"},
    {"RANK", T::String, "", 0, 0, "profiler", "torchrun's global rank: the textfiles' rank label"},
    {"OMPI_COMM_WORLD_RANK", T::String, "", 0, 0, "profiler", "Open MPI's global rank, when RANK is unset"},
    {"PMIX_RANK", T::String, "", 0, 0, "profiler", "PMIx's global rank, when the above are unset"},
    {"PMI_RANK", T::String, "", 0, 0, "profiler",
     "PMI's (MPICH, Intel MPI) global rank, when the above are unset"},
    {"SLURM_PROCID", T::String, "", 0, 0, "profiler", "Slurm's task rank, when the above are unset"},
    {"LOCAL_RANK", T::String, "", 0, 0, "profiler",
     "torchrun's rank on the node: the textfiles' local_rank label"},
    {"OMPI_COMM_WORLD_LOCAL_RANK", T::String, "", 0, 0, "profiler",
     "Open MPI's rank on the node, when LOCAL_RANK is unset"},
    {"MPI_LOCALRANKID", T::String, "", 0, 0, "profiler",
     "MPICH/Intel MPI's rank on the node, when the above are unset"},
    {"SLURM_LOCALID", T::String, "", 0, 0, "profiler",
     "Slurm's task rank on the node, when the above are unset"},
    {"RAILSCOPE_PROFILE_FABRIC_SECONDS", T::Int, "10", 0, 3600, "profiler",
     "Reporting window of the fabric records: the node's RDMA port counter deltas (0 = no sampling)"},
    {"RAILSCOPE_PROFILE_TAG", T::String, "", 0, 0, "profiler",
     "Free label written in the profile header (e.g. the transport of an A/B run); the textfiles' job label "
     "when set"},
    {"RAILSCOPE_PROFILE_MASK", T::Int, "222", 0, 32767, "profiler",
     "NCCL profiler activation mask (default Coll|P2p|ProxyOp|ProxyStep|KernelCh|NetPlugin)"},
    {"RAILSCOPE_PROFILE_POOL_COLLS", T::Int, "256", 4, 65536, "profiler",
     "Collectives/p2p in flight tracked per communicator; beyond it events are dropped and counted"},
    {"RAILSCOPE_PROFILE_POOL_PROXY", T::Int, "4096", 16, 1048576, "profiler",
     "ProxyOp/ProxyStep/NetPlugin events in flight tracked per communicator (drop-and-count beyond)"},
    {"RAILSCOPE_HANG_SECONDS", T::Int, "300", 1, 604800, "profiler",
     "A collective in flight longer than this raises a coll.hang diagnosis naming who it waits for"},
    {"RAILSCOPE_EXPECTED_BUSBW", T::String, "", 0, 0, "profiler",
     "Expected busbw in GB/s for every communicator's collectives; unset: per communicator, from its "
     "ranks per node and the RDMA ports they drive (NCCL_IB_HCA applies; none for one-node communicators)"},
    {"RAILSCOPE_EXPECTED_RAILS", T::Int, "0", 0, 64, "profiler",
     "NICs (rails) behind the expected busbw, to recognise one rail down ((k-1)/k); 0 = as derived"},
    {"RAILSCOPE_SLOW_PERCENT", T::Int, "80", 1, 100, "profiler",
     "busbw below this percentage of the expected busbw counts as slow"},
    {"RAILSCOPE_SLOW_COUNT", T::Int, "5", 1, 1000000, "profiler",
     "Consecutive slow large collectives before coll.slow is raised"},
    {"RAILSCOPE_SLOW_MIN_BYTES", T::Int, "16777216", 0, 1099511627776, "profiler",
     "Only collectives of at least this size (nccl-tests bytes) are judged slow or not"},
    {"NCCL_NET", T::String, "", 0, 0, "profiler",
     "NCCL's choice of network (IB, Socket, or a plugin's name); recorded in the profile header"},
    {"NCCL_NET_PLUGIN", T::String, "", 0, 0, "profiler",
     "NCCL's net plugin selection; recorded in the profile header"},

    // --- tuner
    {"RAILSCOPE_TUNER_CONFIG", T::Path, "", 0, 0, "tuner",
     "Tuner rules file: `rule`/`measure`/`node` lines and/or NCCL example-tuner CSV rules (docs/tuner.md)"},
    {"RAILSCOPE_TUNER_CALIBRATION", T::Path, "", 0, 0, "tuner",
     "Tuner calibration file (`railscope tuner calibrate`): measured busbw per size, algorithm and protocol "
     "for communicators of the measured shape (docs/tuner.md)"},
    {"RAILSCOPE_TUNER_STRICT", T::Bool, "1", 0, 0, "tuner",
     "1: a config error fails communicator creation; 0: warn and ignore the bad line"},
    {"RAILSCOPE_TUNER_NICS", T::Int, "0", 0, 64, "tuner",
     "NICs (rails) per node for the cost model; 0 = read the node"},
    {"RAILSCOPE_TUNER_NIC_GBIT", T::Int, "0", 0, 100000, "tuner",
     "Line rate of each NIC in Gbit/s for the cost model; 0 = read the node"},
    {"RAILSCOPE_TUNER_NIC_GBPS", T::Int, "0", 0, 100000, "tuner",
     "Deprecated name of RAILSCOPE_TUNER_NIC_GBIT (read as Gbit/s when that is not set)"},
    {"RAILSCOPE_TUNER_INTRA_GBPS", T::Int, "0", 0, 100000, "tuner",
     "Per-GPU intra-node bus bandwidth in GB/s; 0 = standard figure for NVLink (360) or PCIe (24)"},
    // --- doctor's plugins section: would NCCL load the plugins here (docs/compatibility.md) ---
    {"NCCL_TUNER_PLUGIN", T::String, "", 0, 0, "doctor",
     "NCCL's tuner plugin selection; doctor opens it as NCCL would"},
    {"NCCL_PROFILER_PLUGIN", T::String, "", 0, 0, "doctor",
     "NCCL's profiler plugin selection; doctor opens it as NCCL would"},
    {"NCCL_NET_PLUGIN_REF_COUNT", T::String, "", 0, 0, "doctor",
     "NCCL's initial reference count of the net plugin; doctor warns when NCCL 2.28 or 2.29 needs it at 1"},
    {"RAILSCOPE_PLUGIN_DIR", T::Path, "", 0, 0, "doctor",
     "Folder of railscope's plugins that doctor checks; unset = the installed lib folder next to the "
     "railscope binary"},
};

}  // namespace

std::span<const Spec> registry_entries() { return kSpecs; }

}  // namespace railscope::params::detail
