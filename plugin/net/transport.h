// SPDX-License-Identifier: Apache-2.0
// The one internal interface between the net plugin's ABI adapters (plugin/net/abi/net_vN.cpp) and
// a transport engine (verbs and TCP; chosen by RAILSCOPE_TRANSPORT). The adapters only convert and
// check arguments. Two paths lead from them into a transport:
// - the control path (devices, listen, connect, accept, memory registration, close) goes through
//   Engine, looked up once per call;
// - the data path (isend, irecv, iflush, test) goes through the functions each comm and request
//   carries (SendFn, RecvFn, FlushFn, TestFn below), which the adapters call with no engine lookup
//   and no virtual dispatch. Engine has no data-path call.
// Engine-neutral: no verbs or socket types appear here.
//
// Errors are values: every call returns a Status carrying NCCL's result code and, for failures, a
// diagnosis Finding (catalogue id + the facts of this case). The ABI edge logs the finding's one
// line and returns the code (a data-path function logs its own: it returns the code); nothing
// inside throws across it, exits or aborts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "railscope/core/diagnosis.h"
#include "railscope/nccl/common.h"

namespace railscope::net {

// --- results
// A success is one word: the finding of a failure lives on the heap, so the status every call on
// the data path returns and tests costs nothing to build, move or destroy. What a failure needs (its
// strings, the heap, the copy of a finding) is built in out-of-line functions, so that a function
// that can fail keeps no string temporaries on its success path.
class Status {
 public:
  ncclResult_t code = ncclSuccess;

  Status() = default;
  Status(ncclResult_t c, diag::Finding f) : code(c), finding_(own(std::move(f))) {}
  Status(const Status& o) : code(o.code), finding_(o.finding_ ? copy(*o.finding_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  bool ok() const { return code == ncclSuccess; }
  // The failure's finding (an empty one, whose entry is null, on success).
  const diag::Finding& finding() const { return finding_ ? *finding_ : none(); }
  diag::Finding& finding() {
    if (!finding_) finding_ = own(diag::Finding{});
    return *finding_;
  }

  static Status success() { return {}; }
  static Status fail(ncclResult_t c, diag::Finding f) { return Status{c, std::move(f)}; }
  static Status fail(ncclResult_t c, std::string_view id, std::string detail, std::string fix = {}) {
    return Status{c, diag::make(id, std::move(detail), std::move(fix))};
  }
  // The same for a detail without formatting: the caller builds no string.
  static Status fail(ncclResult_t c, std::string_view id, const char* detail) {
    return Status{c, diag::make(id, std::string(detail))};
  }

 private:
  struct Delete {
    void operator()(diag::Finding* f) const { delete f; }
  };
  using Owned = std::unique_ptr<diag::Finding, Delete>;
  static Owned own(diag::Finding&& f) { return Owned(new diag::Finding(std::move(f))); }
  static Owned copy(const diag::Finding& f) { return Owned(new diag::Finding(f)); }
  static const diag::Finding& none() {
    static const diag::Finding f;
    return f;
  }
  Owned finding_;
};

// --- opaque objects handed out to NCCL. Each engine derives its own; the adapters pass them
// through as void* and give them back unchanged.
struct ListenComm {
  virtual ~ListenComm() = default;
};
struct Comm {  // a send or receive connection
  virtual ~Comm() = default;
};
struct SendComm;
struct RecvComm;
struct MemHandle {
  virtual ~MemHandle() = default;
};
struct Request;
// The data path of a connection: functions its engine sets on the comm before handing the comm to
// NCCL (a verbs comm once its protocol is agreed, a TCP comm when it is made), which the ABI adapter
// calls after checking NCCL's arguments. Each returns NCCL's result code and logs a failure's finding
// itself (report_failure). *out == nullptr with success: "cannot post now, call again" (isend,
// irecv), "nothing to flush" (iflush). A comm reaching the adapter without them is an internal error
// (internal.no_data_path), never a call through null.
using SendFn = ncclResult_t (*)(SendComm* comm, void* data, size_t size, int tag, MemHandle* mhandle,
                                void* phandle, Request** out);
struct RecvBuffer;
using RecvFn = ncclResult_t (*)(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out);
// Makes received data visible to the GPU (GPUDirect).
using FlushFn = ncclResult_t (*)(RecvComm* comm, std::span<const RecvBuffer> bufs, Request** out);
struct SendComm : Comm {
  SendFn sender = nullptr;
};
struct RecvComm : Comm {
  RecvFn receiver = nullptr;
  FlushFn flusher = nullptr;
};
// A failure's one line logged (WARN, naming the NCCL function `fn`) and its code returned: the ABI
// edge's conversion of a Status into NCCL's result code, and a sender's, receiver's or tester's.
ncclResult_t report_failure(const char* fn, const Status& status);
// NCCL's code for the Status of NCCL's function `fn`, a failure logged (report_failure); success passes
// through silently. Inline: on the paths where the compiler sees a success, no Status is built at all.
inline ncclResult_t reported_result(const char* fn, const Status& status) {
  return status.ok() ? ncclSuccess : report_failure(fn, status);
}
// How test() tests a request. NCCL's proxy thread calls test() in a loop, on requests that are
// mostly not done yet: the ABI adapter's test() is a tail call into the request's own tester, which
// the engine set for its kind and protocol, with no engine lookup and no dispatch on the way
// (bench/net_instructions). The tester returns NCCL's result code, and logs a failure's finding
// itself (tested_result), so that nothing is left to do once it returns: no Status travels back through
// memory to be checked again by the caller on every idle call.
// On done, sizes (may be null) receives one int for a send, n ints for a grouped receive.
using TestFn = ncclResult_t (*)(Request* request, int* done, int* sizes);
// A tester's result from its protocol's Status.
inline ncclResult_t tested_result(const Status& st) { return reported_result("test", st); }
// The tester of a request no engine set up: an error, never a test.
inline ncclResult_t test_unset(Request* /*request*/, int* /*done*/, int* /*sizes*/) {
  return report_failure(
      "test", Status::fail(ncclInternalError, "internal.bad_argument", "test of a request no engine set up"));
}
// A request belongs to its comm from the irecv or isend that made it until the test() that reports it
// done, which releases it: no engine keeps a request past that (so NCCL's irecvConsumed, called
// after a done receive, has nothing left to release, and the adapter answers it alone).
struct Request {
  virtual ~Request() = default;
  TestFn tester = &test_unset;
};
inline ncclResult_t test(Request* request, int* done, int* sizes) {
  return request->tester(request, done, sizes);
}

// The largest message isend takes, each engine's maxP2pBytes: test() reports sizes to NCCL as int, and
// the verbs engine carries them in 31-bit immediates and int32 records. The ABI adapter refuses a
// larger isend as an invalid argument before any engine sees it (NCCL itself never posts one).
inline constexpr size_t kMaxMessageBytes = size_t{1} << 30;

// The listen handle NCCL ships to the peer through its bootstrap (NCCL_NET_HANDLE_MAXSIZE bytes).
inline constexpr size_t kHandleSize = 128;
using HandleBytes = std::span<std::byte, kHandleSize>;

// --- properties, in a version-independent form; adapters copy what their version has.
// name and pci_path point into storage the engine keeps until it is destroyed (NCCL keeps the
// pointers it is given).
struct DeviceProps {
  const char* name = "";
  const char* pci_path = nullptr;  // nullptr: not backed by a PCI device
  uint64_t guid = 0;
  int ptr_support = 0x1;  // NCCL_PTR_* bits
  int reg_is_global = 0;
  int force_flush = 0;
  int speed_mbps = 0;
  int port = 0;
  float latency_us = 0.0f;
  int max_comms = 0;
  int max_recvs = 1;
  std::vector<int> vdevs;  // physical children; a physical device lists itself
  size_t max_p2p_bytes = kMaxMessageBytes;
  size_t max_coll_bytes = size_t{512} << 20;
  int max_multi_request_size = 1;
  int rail_id = -1;
  int plane_id = -1;
};

// What init receives. The logger is installed by the ABI layer before the engine is created.
struct InitArgs {
  ncclProfilerCallback_t profiler = nullptr;  // v10+: may be null
};

// Per-communicator settings (v11+: from init's config; v10: from connect's config).
struct CommConfig {
  int traffic_class = -1;  // NCCL_NET_TRAFFIC_CLASS_UNDEF
  uint64_t comm_id = 0;
};

// setNetAttr hints (v11+). -1 / all-ones = undefined.
struct FlowAttr {
  int32_t max_concurrent_peers = -1, min_concurrent_peers = -1, max_flows_per_peer = -1,
          min_flows_per_peer = -1;
};
struct NetAttr {
  FlowAttr send, recv;
  uint32_t op = ~0u, algo = ~0u, proto = ~0u;
};

// One receive slot of a (grouped) irecv.
struct RecvBuffer {
  void* data = nullptr;
  size_t size = 0;
  int tag = 0;
  MemHandle* mr = nullptr;
  void* phandle = nullptr;  // NCCL's profiler handle for this buffer (v10+), may be null
};

// --- the engine: the control path only (the data path is the comm's: SendFn, RecvFn, FlushFn, TestFn
// above). All methods may be called from several threads at once (NCCL's proxy threads); an engine
// serialises what must be serialised. Connect/accept never block: they return success with a null
// *out until the connection is ready, and are called again with the same arguments. A comm they
// hand out has its data-path functions set.
class Engine {
 public:
  virtual ~Engine() = default;

  virtual const char* name() const = 0;  // "verbs", "tcp" — for logs
  virtual Status devices(int* ndev) = 0;
  virtual Status properties(int dev, DeviceProps* props) = 0;

  // config: the listening communicator's settings; null where NCCL does not give them at listen (v10
  // passes them to connect only).
  virtual Status listen(int dev, const CommConfig* config, HandleBytes handle, ListenComm** out) = 0;
  virtual Status connect(int dev, const CommConfig& config, HandleBytes handle, SendComm** out) = 0;
  virtual Status accept(ListenComm* listen, RecvComm** out) = 0;

  // type is NCCL_PTR_HOST or NCCL_PTR_CUDA.
  virtual Status reg_mr(Comm* comm, void* data, size_t size, int type, MemHandle** out) = 0;
  virtual Status reg_mr_dmabuf(Comm* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                               MemHandle** out) = 0;
  virtual Status dereg_mr(Comm* comm, MemHandle* mr) = 0;

  virtual Status close_send(SendComm* comm) = 0;
  virtual Status close_recv(RecvComm* comm) = 0;
  virtual Status close_listen(ListenComm* listen) = 0;

  // Fuse physical devices into a virtual one; *d receives its index.
  virtual Status make_vdevice(std::span<const int> devs, int* d) = 0;
  virtual Status set_net_attr(const NetAttr& attr) = 0;
};

}  // namespace railscope::net
