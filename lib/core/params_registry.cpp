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
    {"NCCL_IB_ROUTABLE_FLID_GID_INDEX", T::Int, "1", 0, 1023, "net",
     "InfiniBand: GID index used when it carries a routable FLID (else index 0)"},

    // --- node inspection (doctor, net, tuner)
    {"RAILSCOPE_SYSFS_ROOT", T::Path, "/sys", 0, 0, "doctor",
     "Root of the sysfs tree read for devices, ports, GIDs and netdev MTUs (tests point it at a fake "
     "tree; libibverbs is only queried with the real /sys)"},
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

    // --- tuner
    {"RAILSCOPE_TUNER_CONFIG", T::Path, "", 0, 0, "tuner",
     "Tuner rules file: `rule`/`measure`/`node` lines and/or NCCL example-tuner CSV rules (docs/tuner.md)"},
    {"RAILSCOPE_TUNER_STRICT", T::Bool, "1", 0, 0, "tuner",
     "1: a config error fails communicator creation; 0: warn and ignore the bad line"},
    {"RAILSCOPE_TUNER_NICS", T::Int, "0", 0, 64, "tuner",
     "NICs (rails) per node for the cost model; 0 = read the node"},
    {"RAILSCOPE_TUNER_NIC_GBPS", T::Int, "0", 0, 100000, "tuner",
     "Line rate of each NIC in Gbit/s for the cost model; 0 = read the node"},
    {"RAILSCOPE_TUNER_INTRA_GBPS", T::Int, "0", 0, 100000, "tuner",
     "Per-GPU intra-node bus bandwidth in GB/s; 0 = standard figure for NVLink (360) or PCIe (24)"},
};

}  // namespace

std::span<const Spec> registry_entries() { return kSpecs; }

}  // namespace railscope::params::detail
