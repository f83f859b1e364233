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
    {"RAILSCOPE_TOPO_FILE", T::Path, "", 0, 0, "doctor",
     "hwloc XML topology to use instead of this system's (`lstopo --of xml`)"},
    // Shared with lib/node (same name, default and meaning): keep one entry when merging.
    {"RAILSCOPE_SYSFS_ROOT", T::Path, "/sys", 0, 0, "doctor",
     "Root of the sysfs tree read for devices, ports, GIDs and netdev MTUs (tests point it at a fake "
     "tree; libibverbs is only queried with the real /sys)"},
};

}  // namespace

std::span<const Spec> registry_entries() { return kSpecs; }

}  // namespace railscope::params::detail
