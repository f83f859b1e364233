// SPDX-License-Identifier: Apache-2.0
// The catalogue itself. Grouped by area; order inside the file does not matter (sorted at first use).
// Ids are stable: add new ones, never rename. Causes and fixes follow NCCL's user guide (environment
// variables, troubleshooting) and rdma-core's documentation, and what the soft-RoCE test bed reproduces.
#include <algorithm>
#include <vector>

#include "railscope/core/diagnosis.h"

namespace railscope::diag::detail {
namespace {

using S = Severity;

constexpr Entry kEntries[] = {
    // --- internal
    {"internal.unknown_diagnosis", S::Error, "Unclassified failure",
     "railscope hit a failure it has no catalogue entry for", "Report it with the log line above"},
    {"internal.bad_argument", S::Error, "Invalid argument from the caller",
     "NCCL (or a tool) passed a value railscope cannot use", "Report it with NCCL_DEBUG=INFO output"},
    {"internal.no_data_path", S::Error, "Connection without a data path",
     "isend, irecv or iflush reached a connection whose engine never set the function that carries it: a "
     "railscope bug, or a pointer NCCL (or a tool) passed that is not a connection of this plugin",
     "Report it with NCCL_DEBUG=INFO output"},

    // --- configuration (env vars, files)
    {"config.bad_env", S::Warning, "Invalid environment variable",
     "an environment variable railscope reads has a value it cannot parse or is out of range",
     "Fix or unset the variable; the default is used meanwhile"},
    {"config.bad_file", S::Error, "Invalid configuration file",
     "a configuration file has a syntax or range error", "Fix the file at the line and column given"},

    // --- fabric health, node side (lib/node/link_health.cpp, `railscope doctor` link section and --watch;
    //     docs/fabric-health.md). Causes and fixes follow NVIDIA's InfiniBand/RoCE troubleshooting notes.
    {"link.degraded", S::Warning, "Link trained below its siblings",
     "the port trained at a lower speed or fewer lanes than the other ports of the same kind on this node "
     "(doctor, the profiler's start), or retrained below its own earlier rate while the job runs (the net "
     "plugin) (a bad lane, cable or optic, a dirty connector, or a switch port forced down); the job runs at "
     "the "
     "slowest rail's pace",
     "Reseat or replace the cable/optic of that port and check the switch port (`mlxlink -d <dev>` or the "
     "switch's port status); retrain the link (`ip link set <netdev> down/up`, or `ibportstate ... reset`)"},
    {"link.below_capability", S::Info, "Link below what the NIC supports",
     "the port runs slower than its fastest supported link mode, like its siblings: the switch, cable or "
     "optics (or a forced speed) set the rate",
     "If the fabric is meant to run faster, check the cables/optics and the switch port speed; else nothing"},
    {"link.rail_down", S::Warning, "One rail of the node is down",
     "a port is not ACTIVE while sibling ports of the same kind are: that rail's cable, optic, switch port "
     "or "
     "subnet manager assignment is broken, and NCCL runs on the remaining rails only",
     "Check that port's cable and switch port (`ibstat`, `mlxlink`, `ip link`), then bring it up before "
     "starting the job"},
    {"link.downed_since_boot", S::Info, "Link went down since the counters were cleared",
     "link_downed / link_error_recovery / link_down_events_phy are not zero: the link dropped or retrained "
     "at least once (switch reboot, cable moved, or a marginal link)",
     "Clear the counters (`perfquery -x -R` on InfiniBand) and watch them (`railscope doctor --watch 10`); "
     "if they rise, treat it as a flapping link"},
    {"link.errors_since_boot", S::Info, "Link errors since the counters were cleared",
     "symbol errors, receive errors or integrity errors are not zero: the physical link corrupted packets "
     "at some point",
     "Clear the counters and watch them (`railscope doctor --watch 10`); rising errors mean cable/optic "
     "trouble"},
    {"link.flapping", S::Warning, "Link flapping",
     "the link went down (or into error recovery) during the interval: every QP on it retransmits or fails",
     "Replace the cable/optic or move the port; check the switch port's error log; keep the job off this "
     "rail until it holds"},
    {"link.errors_rising", S::Warning, "Link errors rising",
     "symbol, CRC or receive errors rose during the interval: the physical link corrupts packets, which the "
     "transport must retransmit",
     "Reseat or replace the cable/optic; check the switch side's counters for the same link"},
    // Loss, discards, congestion and pause in a `doctor --watch` interval are the net plugin's fabric.*
    // findings below (node::fabric_findings judges both).
    {"counters.pause_storm", S::Warning, "PFC pause storm",
     "the NIC's pause-storm prevention fired (tx_pause_storm_warning/error_events): a stalled receiver "
     "sent pauses for long enough that the NIC stopped honouring them",
     "Find the stalled host (hung driver or PCIe trouble) behind that port; check its dmesg"},

    // --- node: devices and ports
    {"device.none", S::Error, "No RDMA device",
     "libibverbs found no RDMA device (driver not loaded, container without /dev/infiniband, or no NIC)",
     "Load the NIC driver (mlx5_ib, or rdma_rxe for soft-RoCE), expose /dev/infiniband to the "
     "container, and check `ibv_devices`"},
    {"device.no_libibverbs", S::Error, "libibverbs not installed",
     "libibverbs could not be opened (rdma-core not installed, or RAILSCOPE_IBVERBS_LIB names no library), "
     "so "
     "the verbs engine is off",
     "Install rdma-core (Debian/Ubuntu: libibverbs1 and ibverbs-providers) or set RAILSCOPE_IBVERBS_LIB to "
     "its path; on an Ethernet-only host the TCP engine runs without it (RAILSCOPE_TRANSPORT=auto or tcp)"},
    {"device.filtered_out", S::Error, "NCCL_IB_HCA selects no device",
     "NCCL_IB_HCA names no device/port that exists and is active",
     "Fix NCCL_IB_HCA (see `railscope doctor`)"},
    {"port.down", S::Warning, "Port not active",
     "the port's state is not ACTIVE (cable, switch port, or netdev down)",
     "Bring the link up (`ip link set <netdev> up`, check cable/switch); NCCL skips inactive ports"},
    {"port.none_active", S::Error, "No active port",
     "every RDMA port NCCL_IB_HCA selects is down; NCCL has no IB device to use and falls back to sockets",
     "Bring a link up (`ip link set <netdev> up`, cable, switch) or select an active port with NCCL_IB_HCA"},
    {"port.no_netdev", S::Warning, "RoCE port without a netdev",
     "a RoCE port has no network interface bound to it, so its GIDs cannot be checked",
     "Check the driver binding (`rdma link show`)"},

    // --- GID selection (RoCE)
    {"gid.none_usable", S::Error, "No usable GID",
     "the port has no RoCE GID of the wanted type/family/range (no IP address on the netdev?)",
     "Assign an IP address to the netdev, or relax NCCL_IB_ADDR_FAMILY / NCCL_IB_ADDR_RANGE / "
     "NCCL_IB_ROCE_VERSION_NUM"},
    {"gid.index_invalid", S::Error, "NCCL_IB_GID_INDEX points at an empty or missing GID",
     "the forced GID index does not exist on this port (ibv_modify_qp fails with ENODATA)",
     "Unset NCCL_IB_GID_INDEX (railscope selects automatically) or set the index shown by doctor"},
    {"gid.link_local", S::Warning, "Link-local GID selected",
     "a link-local (fe80::/10) GID is not routable between hosts; connections through a router time out",
     "Use the IPv4-mapped RoCE v2 GID: unset NCCL_IB_GID_INDEX or set it to the index doctor shows"},
    {"gid.roce_v1", S::Warning, "RoCE v1 GID selected",
     "RoCE v1 is not routable and differs from NCCL's default (v2)",
     "Set NCCL_IB_ROCE_VERSION_NUM=2 / NCCL_IB_GID_INDEX to a RoCE v2 entry"},
    {"gid.mismatch", S::Error, "GID type/family mismatch between peers",
     "the two ends chose GIDs of different type (RoCE v1/v2) or address family; RTR fails or packets "
     "are dropped",
     "Make both ends select the same kind of GID: unset NCCL_IB_GID_INDEX on both, or set an index "
     "of the same type on each"},
    {"gid.forced_on_ib", S::Info, "NCCL_IB_GID_INDEX ignored on InfiniBand",
     "NCCL ignores NCCL_IB_GID_INDEX on the InfiniBand link layer", "Unset it on IB clusters"},

    // --- link layer, MTU
    {"link.layer_mismatch", S::Error, "InfiniBand and RoCE mixed",
     "one end is InfiniBand and the other Ethernet (RoCE); they cannot talk",
     "Select NICs of one link type with NCCL_IB_HCA"},
    {"mtu.mismatch", S::Warning, "Path MTU differs between peers",
     "the two ends have different active MTUs (netdev MTUs differ); a QP using the larger one loses "
     "every large packet silently",
     "Set the same MTU on every RoCE netdev (e.g. 9000 → active_mtu 4096); railscope uses the smaller"},
    {"mtu.below_netdev", S::Warning, "active_mtu smaller than the netdev allows",
     "the RDMA port's active_mtu is below what the netdev MTU allows (driver or port MTU setting)",
     "Check the port MTU (`ibv_devinfo`), reload the driver or set the netdev MTU before creating the link"},
    {"mtu.above_netdev", S::Error, "active_mtu larger than the netdev allows",
     "the RDMA port's active_mtu exceeds what the netdev MTU carries; large packets are dropped",
     "Raise the netdev MTU (e.g. 9000) or lower the port MTU"},
    {"mtu.small", S::Info, "Small RoCE MTU",
     "netdev MTU 1500 gives active_mtu 1024; jumbo frames (9000 → 4096) give about 5 % more bandwidth",
     "Set MTU 9000 on the RoCE netdevs and switch ports"},

    // --- memory registration / memlock
    {"memlock.too_low", S::Error, "Locked-memory limit too low",
     "RLIMIT_MEMLOCK is below what NCCL's buffers need and the process lacks CAP_IPC_LOCK; "
     "ibv_reg_mr fails with ENOMEM",
     "Run with `ulimit -l unlimited` (limits.conf `* - memlock unlimited`, Docker `--ulimit "
     "memlock=-1`, Kubernetes: add the IPC_LOCK capability)"},
    {"memlock.finite", S::Info, "Finite locked-memory limit",
     "RLIMIT_MEMLOCK is finite: enough for a small job, but NCCL documents `unlimited` and large jobs "
     "register more",
     "Run with `ulimit -l unlimited` (limits.conf `* - memlock unlimited`)"},
    {"reg.failed", S::Error, "Memory registration failed",
     "ibv_reg_mr failed for a reason other than the memlock limit", "See the errno in the message"},

    // --- QP setup
    {"qp.rtr_einval", S::Error, "QP refused RTR (invalid argument)",
     "ibv_modify_qp to RTR failed with EINVAL: usually the GID index/type does not match the peer's "
     "or the path MTU is larger than the port allows",
     "Unset NCCL_IB_GID_INDEX on every node (or set the same kind of GID on both), check `railscope doctor`"},
    {"qp.rtr_enodata", S::Error, "QP refused RTR (no such GID)",
     "ibv_modify_qp to RTR failed with ENODATA: the selected GID index is empty",
     "Unset NCCL_IB_GID_INDEX or pick an index that holds a GID"},
    {"qp.rtr_timeout", S::Error, "QP setup timed out",
     "ibv_modify_qp failed with ETIMEDOUT: address resolution failed (link-local GID across a router, "
     "unreachable subnet, rail-only fabric)",
     "Use a routable RoCE v2 GID; on rail-only fabrics set NCCL_CROSS_NIC=0"},
    {"qp.modify_failed", S::Error, "QP state change failed", "ibv_modify_qp failed",
     "See the errno in the message"},
    {"qp.create_failed", S::Error, "QP creation failed",
     "ibv_create_qp/create_cq failed: device limits or the memlock limit",
     "Raise `ulimit -l`; reduce NCCL_IB_QPS_PER_CONNECTION"},

    // --- completions
    {"wc.retry_exceeded", S::Error, "Transport retry counter exceeded (IBV_WC_RETRY_EXC_ERR)",
     "the peer stopped acknowledging: peer process died, link down or flapping, wrong GID/route, MTU "
     "larger than the path carries, or the fabric is congested beyond NCCL_IB_TIMEOUT",
     "Check the peer's log and the port counters; `railscope doctor` on both nodes; raise "
     "NCCL_IB_TIMEOUT for large congested jobs"},
    {"wc.rnr_retry_exceeded", S::Error, "Receiver not ready retries exceeded",
     "the peer posted no receive in time", "Report it: railscope posts receives before it advertises them"},
    {"wc.local_protection", S::Error, "Local protection error (IBV_WC_LOC_PROT_ERR)",
     "a buffer was not registered for this access; with GPU memory this is usually ACS or the IOMMU "
     "breaking GPUDirect RDMA (vendor_err 81)",
     "Disable ACS on the PCIe switches, or enable ATS in VMs; confirm with NCCL_NET_GDR_LEVEL=LOC"},
    {"wc.local_length", S::Error, "Local length error (IBV_WC_LOC_LEN_ERR)",
     "a message larger than the posted buffer, or a path-MTU mismatch between the peers",
     "Make the netdev MTUs equal on both ends"},
    {"wc.remote_access", S::Error, "Remote access error (IBV_WC_REM_ACCESS_ERR)",
     "the peer's buffer key or bounds were refused: the peer deregistered or the handshake was corrupted",
     "Check that both ends run the same railscope version"},
    {"wc.remote_invalid", S::Error, "Remote invalid request (IBV_WC_REM_INV_REQ_ERR)",
     "the peer rejected the request (QP not ready, message too long)",
     "Check the peer's log for an earlier error"},
    {"wc.flushed", S::Error, "Work request flushed (IBV_WC_WR_FLUSH_ERR)",
     "the QP went to the error state after an earlier failure; this completion is a consequence",
     "Look for the first error on this connection"},
    {"wc.error", S::Error, "Completion with error", "a work completion failed",
     "See the status and vendor_err in the message"},

    // --- TCP engine
    {"tcp.no_interface", S::Error, "No network interface for the TCP engine",
     "no interface is up with an address that NCCL_SOCKET_IFNAME / NCCL_SOCKET_FAMILY select",
     "Set NCCL_SOCKET_IFNAME to an interface that is up and has an address (`ip -br addr`)"},

    // --- sockets (both engines' listeners and out-of-band connections)
    {"net.listen_failed", S::Error, "Cannot open a listening socket",
     "socket(), bind() or listen() failed on the address the connection handle advertises: the address "
     "is not (or no longer) assigned to a local interface, no port is free, or the process ran out of "
     "file descriptors",
     "Check the interface's address (`ip -br addr`) and `ulimit -n`; for the TCP engine, "
     "NCCL_SOCKET_IFNAME"},
    {"net.prom_write_failed", S::Warning, "Net plugin's Prometheus textfile cannot be written",
     "the folder RAILSCOPE_NET_PROM names is missing or not writable (permissions, full disk), or the name "
     "is taken by a symbolic link or another user's file, or the folder is writable by every user without "
     "the sticky bit (such files are never written through)",
     "Point RAILSCOPE_NET_PROM at a writable folder of your own (node_exporter's textfile directory)"},
    {"net.too_many_connects", S::Error, "Too many connects in progress",
     "more connect() calls are in progress in this process than railscope keeps (4096): connects "
     "that NCCL started and never finished",
     "Report it with NCCL_DEBUG=INFO output"},

    // --- progress, peers, async events
    {"progress.stalled", S::Error, "No progress on a connection",
     "posted work has not completed for longer than the QP's retry budget (timeout × retries): the "
     "peer is dead or the path drops packets (MTU, link down, routing)",
     "Check the peer process and the link; `railscope doctor` on both nodes"},
    {"peer.closed", S::Error, "Peer closed the connection", "the remote process exited or closed its end",
     "Look at the peer's log for its first error"},
    {"peer.connection_flood", S::Warning, "Connection flood at a listener",
     "more connections reached one of railscope's listeners than any NCCL peer opens, none of them with a "
     "valid hello (a port scanner, a load balancer's health checks, or clients retrying a stale address); "
     "the oldest unverified ones are closed to make room (at most 256 held, 128 per source address), so "
     "the process keeps its file descriptors and the real peer still gets in",
     "Find the source address in the log line and stop it, or firewall the ephemeral port range on the "
     "interface NCCL uses"},
    {"peer.bad_handshake", S::Error, "Invalid handshake from the peer",
     "a connection handle or handshake message failed validation (wrong magic/version/size or "
     "out-of-range fields): a different railscope version, a truncated handle, or a stray connection",
     "Run the same railscope build on every node"},
    {"async.port_error", S::Error, "Port went down", "the RDMA port reported IBV_EVENT_PORT_ERR",
     "Check the cable/switch/netdev; connections on this port fail, except those whose virtual NIC has "
     "another live port: they move their traffic there (link.failover)"},
    {"async.device_fatal", S::Error, "Device fatal error", "the RDMA device reported a fatal error",
     "Reset the NIC/driver; check dmesg"},
    {"async.gid_change", S::Warning, "GID table changed",
     "the port's GID table changed (IP address or port change); cached GID indices may be stale",
     "Restart the job if connections fail after this"},
    {"async.qp_fatal", S::Error, "QP fatal event", "a QP went to the error state asynchronously",
     "Look for the first error on this connection"},

    // --- GPUDirect RDMA
    {"gdr.no_peermem", S::Warning, "GPUDirect RDMA off: no peer-memory client",
     "neither nvidia-peermem nor nv_peer_mem is loaded and DMA-BUF is unavailable; GPU buffers go "
     "through host memory (about half the bandwidth)",
     "`modprobe nvidia-peermem` (GPU Operator: driver.rdma.enabled=true) or use a DMA-BUF capable stack"},
    {"gdr.nic_virtual", S::Info, "GPUDirect RDMA off: virtual RDMA device",
     "the RDMA device is not a PCI device (soft-RoCE rxe, siw): it cannot reach GPU memory, so the net "
     "plugin offers host memory only and NCCL stages GPU buffers through host memory",
     "Use a physical RDMA NIC (NCCL_IB_HCA) for GPUDirect RDMA; nothing to do on a test bed"},
    {"gdr.distance", S::Info, "GPUDirect RDMA off: NIC too far from the GPU",
     "the PCIe path between GPU and NIC is longer than NCCL_NET_GDR_LEVEL allows",
     "Place the job on the GPU next to the NIC, or raise NCCL_NET_GDR_LEVEL if the platform is known good"},
    {"gdr.acs", S::Warning, "ACS redirect on the GPU↔NIC path",
     "a PCIe switch port between GPU and NIC has ACS redirect enabled; peer-to-peer traffic goes "
     "through the root complex or fails (completion error 4)",
     "Disable ACS on the switch ports (setpci), or enable ATS"},
    {"gdr.dmabuf_unsupported", S::Info, "DMA-BUF unavailable",
     "the kernel, the CUDA driver or libibverbs lacks DMA-BUF support",
     "Use the open GPU kernel module with a kernel ≥ 5.12 and rdma-core ≥ 34, or load nvidia-peermem"},
    {"gdr.cuda_reg_efault", S::Error, "GPU memory registration failed (EFAULT)",
     "ibv_reg_mr on GPU memory failed: no peer-memory client is loaded", "`modprobe nvidia-peermem`"},
    {"gdr.acs_unknown", S::Info, "ACS state on the GPU↔NIC path unknown",
     "the PCIe ports between GPU and NIC could not be checked for ACS redirect (config space beyond "
     "64 bytes needs root)",
     "Run `railscope doctor` as root to check ACS"},
    {"gdr.gpu_unsupported", S::Warning, "GPU does not support GPUDirect RDMA",
     "the CUDA driver reports CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED=0 for this GPU",
     "Use a data-centre GPU and a current driver for GPUDirect RDMA"},
    {"gdr.iommu_translated", S::Info, "IOMMU translates GPU DMA",
     "the IOMMU is in translating mode for the GPU; NIC→GPU peer-to-peer traffic needs ATS or is routed "
     "through the root complex (slower, or local protection errors)",
     "Boot with iommu=pt (bare metal), or enable ATS on the NIC and GPU (VMs)"},
    {"gdr.read_off", S::Info, "GPUDirect RDMA used for receives only",
     "NCCL does not let the NIC read GPU memory for sends here (NCCL_NET_GDR_READ=0, or a GPU older "
     "than compute capability 8.0 without NVLink peers)",
     "Unset NCCL_NET_GDR_READ (or set 1) if sends should read GPU memory directly"},
    {"gdr.no_cuda_driver", S::Info, "No CUDA driver",
     "libcuda.so.1 could not be loaded or initialised (no GPU driver on this host, or a container "
     "without the driver mounted)",
     "On GPU nodes install the NVIDIA driver / run the container with the NVIDIA runtime"},
    {"gdr.no_gpu", S::Info, "No NVIDIA GPU found", "neither the PCI topology nor the CUDA driver shows a GPU",
     "Nothing to do on a host without GPUs"},
    {"gdr.no_rdma_nic", S::Info, "No RDMA NIC",
     "the PCI topology shows no RDMA-capable NIC, so GPUDirect RDMA does not apply",
     "Nothing to do on a host without RDMA NICs; else load the NIC driver (mlx5_ib)"},
    {"gdr.topology", S::Warning, "PCI topology unavailable",
     "the hwloc topology could not be loaded (bad RAILSCOPE_TOPO_FILE / --topo file) or misses a device",
     "Fix the topology file path (an `lstopo --of xml` export) or unset RAILSCOPE_TOPO_FILE"},

    // --- environment hygiene
    {"env.tuning_override", S::Warning, "NCCL tuning variable set",
     "a variable that pins NCCL's tuning is set; NCCL advises against leaving it in production",
     "Unset it unless a measurement shows it helps on this cluster"},

    // --- RoCE QoS: doctor's qos section (lib/node/qos_verdict.cpp, docs/roce-qos.md)
    {"qos.pfc_off_for_roce", S::Warning, "RoCE traffic not on a PFC-enabled priority",
     "NCCL's traffic class (NCCL_IB_TC, default 0) maps through the port's trust mode and DSCP map to a "
     "priority without PFC, so a congested switch drops RoCE packets and every drop costs a retransmission "
     "timeout (info only when no priority has PFC and ECN is on: semi-lossless by design)",
     "Set NCCL_IB_TC to the DSCP×4 of the lossless priority (e.g. 106 for DSCP 26 → priority 3), or enable "
     "PFC on NCCL's priority on every NIC (`dcb pfc set dev <if> prio-pfc <p>:on`) and switch"},
    {"qos.ecn_off_for_roce", S::Warning, "ECN off for the RoCE priority",
     "ECN for RoCE (DCQCN) is disabled on NCCL's priority at the notification or the reaction point: "
     "congestion is never signalled, so it ends in PFC pause storms or drops",
     "echo 1 > /sys/class/net/<if>/ecn/roce_np/enable/<p> and .../roce_rp/enable/<p>, and ECN marking on "
     "the switches"},
    {"qos.tc_mismatch", S::Warning, "The two ends of a connection have different traffic classes",
     "the sender's NCCL_IB_TC / NCCL_IB_SL (or communicator traffic class) differs from the receiver's: "
     "the connection carries the sender's, as NCCL's does, so each direction between the two nodes lands "
     "on its own priority and one of them may miss the lossless class",
     "Set the same NCCL_IB_TC and NCCL_IB_SL on every node of the job (e.g. NCCL_IB_TC=106 for DSCP 26); "
     "only NCCL_IB_FIFO_TC may differ"},
    {"qos.ports_disagree", S::Warning, "RoCE ports of this node have different QoS",
     "the node's RoCE ports differ in trust mode, PFC priorities, NCCL's priority or rdma_cm's default ToS: "
     "traffic that is lossless on one rail is not on another",
     "Apply one QoS configuration to every RoCE port (same trust, DSCP map and PFC priorities)"},
    // --- net plugin in the running job: fabric health of the ports it uses (docs/fabric-health-net.md)
    {"fabric.packet_loss", S::Warning, "The fabric drops packets",
     "a port's retransmission and sequence-error counters rose while it moved traffic: packets are lost on "
     "the path (on RoCE: no PFC on the RoCE priority, or a congested or faulty link; on InfiniBand: a bad "
     "cable or optic)",
     "RoCE: PFC on the RoCE priority end to end, ECN on; InfiniBand: find the link with errors and replace "
     "its cable/optic"},
    {"fabric.congestion", S::Warning, "Congestion on the fabric",
     "ECN marks and congestion notification packets rose: switch queues on the path fill",
     "Look for an oversubscribed uplink, incast or a slower rail; check the RoCE priority and ECN "
     "thresholds"},
    {"fabric.pause", S::Warning, "PFC pause frames",
     "the port sent or received many PFC pause frames: a receiver or switch on the path cannot keep up",
     "Find where the pauses start (switch counters per priority); enable ECN so senders slow down first"},
    {"fabric.link_errors", S::Warning, "Link errors",
     "the port's physical-layer counters rose (symbol errors, link recovery, link downed)",
     "Re-seat or replace the cable/optic of the port and check the switch side"},
    {"fabric.discards", S::Warning, "Packets discarded",
     "the port or the switch dropped packets (no buffer, no posted receive, closed priority)",
     "Check PFC on the RoCE priority and the switch's drop counters"},
    {"mtu.changed", S::Error, "MTU lowered under live connections",
     "a port's active MTU fell below the path MTU its QPs were set up with (the netdev MTU was lowered "
     "after the connections were made): every larger packet is dropped",
     "Set the netdev MTU back on both ends, or restart the job; keep MTUs equal everywhere"},
    {"link.down", S::Warning, "Link down",
     "the port reported IBV_EVENT_PORT_ERR; connections keep their QPs and retransmit for the retry budget",
     "Check the cable/switch/netdev; if the link comes back within the budget, the job goes on"},
    {"link.failover", S::Warning, "Traffic moved off a failed port",
     "a port of a virtual NIC failed (went down, or its QPs exceeded their retry budget) and the "
     "connection moved its traffic to its other ports; the job goes on at their bandwidth (a process "
     "warns once per port and outage; its other connections on the port say it at INFO)",
     "Check the cable/optic/switch port of the failed port; once it is ACTIVE again and passes a probe, "
     "traffic returns to it (link.recovered), unless it failed RAILSCOPE_NET_FAILOVER_LIMIT times"},
    {"link.recovered", S::Warning, "Link back after going down",
     "the port is ACTIVE again and receiving after a link-down: the link flapped; connections over a "
     "virtual NIC that had moved their traffic off it (link.failover) probed it and moved traffic back",
     "Nothing for the job; a port that flaps again needs its cable/optic or switch port looked at"},

    // --- tuner, profiler (filled by their issues)
    // `railscope preflight`: the cluster before a job.
    {"preflight.node_missing", S::Error, "Node never joined the preflight",
     "a rank did not connect to rank 0 before --timeout: the process did not start (launcher, container, "
     "node down), cannot resolve or reach rank 0's address, or crashed",
     "Check that rank's node and launcher log; check it can reach the rendezvous address and port"},
    {"preflight.node_refused", S::Error, "Node report refused",
     "an authenticated, well-formed node report named a rank outside the world (a process of another job "
     "with the same secret, or started with another world size), a rank other than its frame's, or a rank "
     "that had already joined (the launcher gave two processes one rank)",
     "Check that every process of the job runs with the same world size and its own rank, and that no "
     "other job uses this rendezvous address, port and secret"},
    {"preflight.connection_dropped", S::Info, "Connections that sent no node report",
     "connections to the rendezvous port closed, sent something that is not an authenticated, valid node "
     "report (another job's secret or none included), or stayed silent past their 10 s: a port scanner, "
     "a load balancer's health check, another program; they were logged and closed and counted as no rank",
     "Nothing, if every rank joined; if a rank is missing too, check that it holds the job's secret "
     "(--token-file or RAILSCOPE_PREFLIGHT_TOKEN) and runs the same railscope version (rank 0's stderr "
     "names each connection and why)"},
    {"preflight.node_lost", S::Error, "Node stopped answering during the link tests",
     "a rank that joined did not take or answer a link step (process killed or crashed, its network to "
     "rank 0 gone, or a reply of another shape); its later link tests are failed without running",
     "Check that rank's node and its preflight stderr (killed by OOM or the launcher's time limit?), and "
     "its network to rank 0"},
    {"preflight.open_files", S::Error, "Rank 0 ran out of open files",
     "rank 0 holds up to 512 rank connections beside its own descriptors and raises its open-file "
     "limit (RLIMIT_NOFILE) to the hard limit at start; the limit still left no descriptor for a "
     "connection, which was closed",
     "Raise the hard open-file limit of rank 0's process to 1,024 or more: ulimit -Hn, LimitNOFILE= in a "
     "systemd unit, nofile in /etc/security/limits.conf, or the container runtime's ulimits"},
    {"preflight.rail_count", S::Error, "Nodes have different numbers of rails",
     "a node selects more or fewer RDMA ports than the others (a NIC missing, down in the driver, or "
     "NCCL_IB_HCA differing)",
     "Compare `railscope doctor` on the odd node with a good one; fix the NIC, driver or NCCL_IB_HCA"},
    {"preflight.rail_link_layer", S::Error, "Rail mixes InfiniBand and Ethernet",
     "NIC i of one node runs another link layer than NIC i of the others: they cannot talk to each other",
     "Set the port's link type (mlxconfig LINK_TYPE_P1) like the other nodes' and reboot the NIC"},
    {"preflight.rail_mtu", S::Error, "Rail MTU differs between nodes",
     "the active MTU of NIC i differs between nodes (netdev MTU, switch or subnet manager setting): a QP "
     "uses the smaller, and a peer configured like the larger loses every large packet silently",
     "Set the same netdev MTU on every node's NIC of this rail (e.g. 9000 for RoCE); check the switch ports"},
    {"preflight.rail_gid_type", S::Error, "Rail GID type differs between nodes",
     "the GID NCCL selects is RoCE v1 on some nodes and v2 on others: the two cannot connect",
     "Use RoCE v2 everywhere (NCCL_IB_ROCE_VERSION_NUM=2, cma_roce_mode); see `railscope doctor` gids"},
    {"preflight.rail_gid_family", S::Error, "Rail GID address family differs between nodes",
     "the GID NCCL selects is IPv4 on some nodes and IPv6 on others (missing IPv4 address on a netdev)",
     "Give every node's NIC of this rail an address of the same family, or set NCCL_IB_ADDR_FAMILY"},
    {"preflight.rail_rate", S::Error, "Rail link rate differs between nodes",
     "NIC i of a node trained at a lower speed or width than the others (cable, transceiver, switch port, "
     "PCIe): every collective through it runs at its rate",
     "Check the port's rate (`ibstat`, `ethtool`), reseat or replace the cable/transceiver"},
    {"preflight.rail_firmware", S::Warning, "Rail firmware differs between nodes",
     "NIC i of a node runs another firmware version than the others",
     "Update the odd NICs to the cluster's firmware version (mlxfwmanager)"},
    {"preflight.rail_misaligned", S::Error, "NIC on the wrong rail",
     "NIC i of a node is in another subnet than NIC i of the others: on a rail-optimised fabric it hangs "
     "off another leaf switch (cabling, or NIC names/order differ), so rail-local traffic crosses the spine "
     "or does not route at all",
     "Check the node's cabling and NIC order (PCI address → name) against the others; fix udev naming or "
     "NCCL_IB_HCA order"},
    {"preflight.nccl_env", S::Warning, "NCCL environment differs between nodes",
     "an NCCL_* variable is set differently (or only) on some nodes: NCCL ranks must agree on many of "
     "them, and a stale job script or container image shows here",
     "Set the same NCCL_* environment on every node (job script, container image, /etc/nccl.conf)"},
    {"preflight.nccl_ib_tc", S::Error, "NCCL_IB_TC differs between nodes",
     "RoCE traffic class differs between nodes: their packets land in different switch queues, one of them "
     "possibly lossy (no PFC), which drops and slows every collective",
     "Set the same NCCL_IB_TC on every node, matching the lossless class of the switches"},
    {"link.slow", S::Error, "Slow link",
     "a link measured well below the median of its rail or below its line rate (cable, transceiver, "
     "switch port, congestion, a rate limit, PCIe or NUMA placement of the NIC)",
     "Check the link's counters (symbol errors, link downed), the switch port and the cable; rerun with "
     "`railscope netbench` between the two nodes"},
    {"link.failed", S::Error, "Link measurement failed",
     "two nodes could not connect or exchange data on this rail through the net plugin",
     "Run `railscope netbench` between the two nodes on that NIC; check routes, GIDs and firewalls"},
    {"link.high_latency", S::Warning, "High-latency link",
     "a link's latency is several times the median of its rail (extra switch hops, congestion)",
     "Check the route between the two nodes (switch hops, ECMP) and the ports' counters"},
    {"tuner.config", S::Error, "Tuner configuration error", "the tuner rules file has an error",
     "Fix the file at the line and column given"},
    {"tuner.calibration_other_shape", S::Info, "Calibration measured another shape",
     "the tuner's calibration has no point for this communicator's ranks and nodes (a sub-communicator, or "
     "profiles of another job), so the cost model decides for it",
     "Calibrate with profiles of a run of this shape (railscope tuner calibrate)"},
    {"tuner.calibration_other_cluster", S::Warning, "Calibration from another cluster",
     "the calibration's cluster line names NICs other than the ones this node has: its measurements do not "
     "describe this cluster and are not used",
     "Calibrate on this cluster (railscope tuner calibrate), or unset RAILSCOPE_TUNER_CALIBRATION"},
    {"coll.hang", S::Error, "Collective hang",
     "a collective has been in flight longer than RAILSCOPE_HANG_SECONDS",
     "See which peers/channels are still waiting; check those ranks' logs and links"},
    // --- the whole job, from every rank's profile (`railscope report`, docs/profiler.md "A hung job")
    {"job.rank_absent", S::Error, "A rank never entered the collective the others wait in",
     "the other ranks of the communicator entered a collective this rank never called: it is stuck or busy "
     "elsewhere (a data loader, a checkpoint, another communicator's collective, a rank-dependent branch "
     "that skipped the call), or its process died",
     "Look at that rank's process on its host: its stack (`py-spy dump --pid PID`, or `gdb -p PID`), its log "
     "(an exception, an out-of-memory kill), and whether its code calls the same collectives in the same "
     "order as the other ranks"},
    {"job.call_mismatch", S::Error, "Ranks called different collectives at the same place",
     "at the same position in a communicator's order of collectives, ranks called a different op, element "
     "count or datatype: NCCL requires every rank to call the same collective with the same count and type, "
     "and a mismatch hangs the job or corrupts its data",
     "Make every rank call the same op with the same count and datatype in the same order: check tensor "
     "shapes that depend on the rank (an uneven last batch, padding), and rank-dependent branches around "
     "collectives"},
    {"job.rank_no_profile", S::Warning, "No profile of some ranks",
     "the communicator has ranks of which no profile holds any record: their node's profile directory was "
     "not collected, or the process died before it wrote one",
     "Collect RAILSCOPE_PROFILE_DIR of every node of the job; if those ranks' processes died, read their "
     "logs (an out-of-memory kill, a signal)"},
    {"coll.slow", S::Warning, "Slow collectives",
     "bus bandwidth stayed well below what this communicator's shape and ports lead to expect for "
     "consecutive operations; the process knows no cause",
     "Check in order: GPUDirect RDMA (peer memory, DMA-BUF: `railscope doctor`), rails down, the GPU-NIC "
     "PCIe distance and the protocol choice; set RAILSCOPE_EXPECTED_BUSBW when the derived figure does not "
     "fit the job"},
    {"coll.slow.rail_down", S::Warning, "Slow collectives: one rail down",
     "busbw sits near (k-1)/k of the expected busbw of k NICs: one NIC/port/link of the node is down or "
     "unused",
     "Check every NIC's port state and link (`railscope doctor`, `ibv_devinfo`), NCCL_IB_HCA, and the "
     "switch port of the missing rail"},
    {"coll.slow.gdr_off", S::Warning, "Slow collectives: GPUDirect RDMA off",
     "busbw below the expected and the net plugin reported that a port of this communicator offers no GPU "
     "memory, so NCCL stages the traffic through host memory",
     "Fix what the net plugin named (gdr.no_peermem: load nvidia-peermem; gdr.dmabuf_unsupported: a kernel "
     "and driver with DMA-BUF); `railscope doctor` shows the GPUDirect section"},
    {"coll.slow.protocol", S::Warning, "Slow collectives: low-bandwidth protocol for large messages",
     "LL or LL128 was chosen for large messages (a tuner rule or NCCL_PROTO), capping bandwidth",
     "Unset NCCL_PROTO / fix the tuner rule so large messages use SIMPLE"},
    {"profile.dropped", S::Info, "Profiler dropped events",
     "a fixed event pool of the profiler was full, so some events were not recorded",
     "Raise RAILSCOPE_PROFILE_POOL_COLLS / RAILSCOPE_PROFILE_POOL_PROXY"},
    {"profile.write_failed", S::Warning, "Profile cannot be written",
     "the profile directory or Prometheus textfile is not writable (permissions, full disk), or the name is "
     "taken by a symbolic link or another user's file, or the folder is writable by every user without the "
     "sticky bit (such files are never written through)",
     "Point RAILSCOPE_PROFILE_DIR / RAILSCOPE_PROFILE_PROM at a writable folder of your own"},
    {"profile.records_lost", S::Warning, "Profile records were lost",
     "the profile could not be written for a while (typically a full disk): the records of that time were "
     "dropped whole (the file holds no torn line) and counted",
     "Free space where RAILSCOPE_PROFILE_DIR points (or point it elsewhere); the profile lacks the records "
     "counted"},

    // --- profiler: the node's rails as the job starts (plugin/profiler/core/fabric_sampler.cpp)
    {"fabric.rail_down", S::Warning, "An RDMA rail is down when the job starts",
     "a port of the node (one NCCL_IB_HCA selects, or one like the active ports) is not ACTIVE: NCCL runs "
     "on the remaining rails, so inter-node bandwidth falls by that port's share",
     "Check the port's cable, optics and switch port (`ibstat`, `ip link`, `railscope doctor`); if the port "
     "is not meant to carry NCCL traffic, leave it out with NCCL_IB_HCA"},
    {"fabric.rail_degraded", S::Warning, "An RDMA rail runs slower than its siblings",
     "an active port trained at a lower speed or width than the fastest port of the same link layer on this "
     "node (a bad cable or optic, a port fallen back to fewer lanes, a mismatched switch port)",
     "Reseat or replace the cable/optic and check the switch port's speed settings; compare `ibstat` or "
     "`ethtool <netdev>` with the sibling ports"},
    // --- net plugin: one rail slower than the others while the job runs (docs/fabric-health.md, step 3;
    //     include/railscope/node/rail_skew.h, plugin/net/verbs/watch/fabric_watch.cpp) ---
    {"fabric.rail_skew", S::Warning, "One rail is slower than the others",
     "the port's large transfers ran at well under the rate of the other rails (the process's own and, "
     "through the node's rail board, the other processes' on the node) over the same "
     "window, long enough to cost at least a tenth of it: collectives drive the rails in lockstep, so "
     "every rail waits for the slowest (a bad cable or "
     "optic, a switch port trained slower or erroring, a congested leaf switch on that rail)",
     "Check that rail's link, cable and switch port: `railscope doctor` (link section) on this node, "
     "`railscope preflight` across the nodes to find whether the rail is slow on every node (its leaf "
     "switch) or on this one (its cable/NIC), and the switch port's counters"},
    // --- net plugin: the node's rail board (rail skew across processes; include/railscope/node/rail_board.h,
    //     plugin/net/verbs/watch/fabric_watch.cpp) ---
    {"fabric.rail_board_refused", S::Info, "Node rail board not used",
     "the file through which the processes of a node compare their rails' rates "
     "(/dev/shm/railscope-rails-<uid>[-job-<id>]) is a symlink, another user's, open to others, of the "
     "wrong size or layout, cannot be laid out (a full /dev/shm), or has slots that fail the checks: it (or "
     "those slots) is left out and rail skew is judged on what remains (a board that cannot be used is "
     "named at WARN, refused slots at INFO)",
     "Remove the file when no railscope job of this user runs on the node (it is recreated, 0600); a "
     "file of another user at that path is worth a look; RAILSCOPE_NET_RAIL_BOARD=0 (the default) keeps the "
     "board off"},
    // --- plugin loading (`railscope doctor`'s plugins section; docs/compatibility.md) ---
    {"pcie.link_degraded", S::Warning, "PCIe link below capability",
     "the device's PCIe link trained narrower or slower than the device and its slot can do (lspci's LnkSta "
     "below LnkCap): an x16 NIC at x8, or at 8 GT/s where it can do 16, moves at most half the bytes, so "
     "its rail runs at half speed whatever the network does; a GPU at x8 halves its copies to and from host "
     "memory and its GPUDirect RDMA traffic with the NICs (a GPU's speed is not judged: it drops when idle)",
     "Reseat the card, or move it to a slot wired for its full width and speed; check the BIOS's PCIe "
     "settings (a slot forced to a lower generation, bifurcation) and the riser; `lspci -vv -s <address>` "
     "shows LnkCap and LnkSta"},
    {"plugin.load_failed", S::Error, "Plugin would not load",
     "the dynamic loader refuses the plugin library: a library it needs is missing, this image's glibc "
     "or libstdc++ is older than the build's (\"version `GLIBC_2.xx' not found\"), or it was built for "
     "another architecture; NCCL then runs without it, logging the reason only at INFO level",
     "Read the loader's message in the finding: install the missing library, or use a build made for "
     "this image (docs/compatibility.md lists what each .so needs)"},
    {"plugin.not_found", S::Error, "Plugin not found",
     "NCCL_NET_PLUGIN / NCCL_TUNER_PLUGIN / NCCL_PROFILER_PLUGIN names a library that is neither an "
     "existing path nor found on the loader's search path (LD_LIBRARY_PATH, ld.so.cache) under NCCL's "
     "names for it; NCCL then runs without it",
     "Give the variable an absolute path (e.g. /opt/railscope/lib/libnccl-net-railscope.so) or add the "
     "plugin's folder to LD_LIBRARY_PATH in the job's environment"},
    {"plugin.net_ref_count_unset", S::Warning, "Net plugin dropped after the last communicator",
     "NCCL 2.28 and 2.29 start an external net plugin's reference count at 0 (NCCL_NET_PLUGIN_REF_COUNT's "
     "default, 1 up to 2.27): when the last communicator is destroyed NCCL unloads the plugin and clears "
     "its name, so the next communicator (a second process group, an elastic restart) silently runs on "
     "NCCL's own IB or Socket transport. NCCL 2.30 keeps the name",
     "Set NCCL_NET_PLUGIN_REF_COUNT=1 in the job's environment: the plugin then stays loaded for the life "
     "of the process"},
};

}  // namespace

std::span<const Entry> catalogue_entries() {
  static const std::vector<Entry> sorted = [] {
    std::vector<Entry> v(std::begin(kEntries), std::end(kEntries));
    std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.id < b.id; });
    return v;
  }();
  return sorted;
}

}  // namespace railscope::diag::detail
