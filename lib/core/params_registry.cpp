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
    {"NCCL_IB_ROUTABLE_FLID_GID_INDEX", T::Int, "1", 0, 1023, "net",
     "InfiniBand: GID index used when it carries a routable FLID (else index 0)"},

    // --- net plugin: engine selection and the TCP engine (NCCL's socket-transport meanings where named
    // NCCL_*)
    {"RAILSCOPE_TRANSPORT", T::String, "auto", 0, 0, "net",
     "Net engine: auto (verbs when an RDMA port is active, else TCP), verbs, or tcp"},
    {"NCCL_SOCKET_IFNAME", T::String, "", 0, 0, "net",
     "TCP engine interfaces: name prefixes, `^` excludes, `=` exact names; unset = ib*, else not "
     "docker/lo/virbr"},
    {"NCCL_SOCKET_FAMILY", T::String, "", 0, 0, "net",
     "TCP engine address family: AF_INET or AF_INET6; unset = either"},
    {"NCCL_SOCKET_NTHREADS", T::Int, "-2", -2, 16, "net",
     "TCP engine helper threads per connection; -2 (auto) = 4"},
    {"NCCL_NSOCKS_PERTHREAD", T::Int, "-2", -2, 64, "net",
     "TCP engine data sockets per helper thread; -2 (auto) = 1; threads x sockets capped at 64"},
    {"RAILSCOPE_TCP_SOCKBUF", T::Int, "0", 0, 1073741824, "net",
     "TCP engine SO_SNDBUF/SO_RCVBUF bytes per socket; 0 = kernel autotuning (tcp_wmem/tcp_rmem)"},
    {"RAILSCOPE_TCP_TIMEOUT", T::Int, "60", 1, 3600, "net",
     "TCP engine: seconds before a silent peer, unacknowledged data or an unfinished handshake is an error"},
    {"RAILSCOPE_TCP_MIN_CHUNK", T::Int, "65536", 4096, 67108864, "net",
     "TCP engine: smallest piece a large message is cut into across the data sockets"},
    {"RAILSCOPE_TCP_INLINE", T::Int, "8192", 0, 1048576, "net",
     "TCP engine: messages up to this size travel on the control socket (no helper-thread hop)"},

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
};

}  // namespace

std::span<const Spec> registry_entries() { return kSpecs; }

}  // namespace railscope::params::detail
