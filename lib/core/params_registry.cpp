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

    // --- net plugin: QP tuning (NCCL's meanings) and railscope's own
    {"NCCL_IB_TIMEOUT", T::Int, "20", 1, 31, "net",
     "IB local ACK timeout exponent: 4.096 us x 2^N per try; also sets railscope's stall budget"},
    {"NCCL_IB_RETRY_CNT", T::Int, "7", 0, 7, "net", "QP transport retry count (7 = infinite on rxe)"},
    {"NCCL_IB_TC", T::Int, "-1", -1, 255, "net", "RoCE traffic class; -1 = the communicator's, else 0"},
    {"NCCL_IB_SL", T::Int, "-1", -1, 15, "net", "InfiniBand service level; -1 = the communicator's, else 0"},
    {"NCCL_IB_QPS_PER_CONNECTION", T::Int, "1", 1, 16, "net",
     "RC QPs per connection and device; large messages are split across them"},
    {"RAILSCOPE_NET_STATS", T::Path, "", 0, 0, "net",
     "File or folder receiving one JSON line of statistics per net connection at close; unset = off"},
};

}  // namespace

std::span<const Spec> registry_entries() { return kSpecs; }

}  // namespace railscope::params::detail
