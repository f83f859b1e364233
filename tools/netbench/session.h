// SPDX-License-Identifier: Apache-2.0
// One end of a netbench run: a send comm to the peer and a receive comm from it (NCCL's net comms are
// one-directional), each with one registered host region, set up as NCCL does it: listen, ship the
// handle out of band, then poll connect/accept until both return a comm.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "net_api.h"
#include "oob.h"

namespace railscope::netbench {

// Page-aligned host memory, registered with one comm for its whole life (NCCL registers once).
class Region {
 public:
  Region() = default;
  Region(NetApi* api, void* comm, size_t bytes);
  Region(Region&& o) noexcept;
  Region& operator=(Region&& o) noexcept;
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region();

  unsigned char* data() const { return data_; }
  size_t size() const { return bytes_; }
  void* mhandle() const { return mh_; }

 private:
  void reset();
  NetApi* api_ = nullptr;
  void* comm_ = nullptr;
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;
  void* mh_ = nullptr;
};

class Session {
 public:
  Session(NetApi& api, int dev, std::chrono::seconds timeout) : api_(api), dev_(dev), timeout_(timeout) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  // Listens, exchanges handles over `oob`, polls connect/accept until both comms exist.
  void connect(OobSocket& oob);
  // Registers `bytes` of host memory on each comm.
  void register_regions(size_t bytes);
  // Closes the comms (idempotent); errors are reported, not thrown.
  void close();

  NetApi& api() { return api_; }
  void* send_comm() const { return send_comm_; }
  void* recv_comm() const { return recv_comm_; }
  Region& send_region() { return send_region_; }
  Region& recv_region() { return recv_region_; }
  std::chrono::seconds timeout() const { return timeout_; }
  // Whether waiting loops give the CPU away after a pass that completed nothing (NCCL's proxy thread
  // does; on a host where the transport itself needs CPU time, soft-RoCE, spinning starves it).
  // What a waiting loop does after a pass that completed nothing (--poll).
  enum class Idle { Yield, Spin, Sleep };
  void set_idle(Idle idle) { idle_ = idle; }
  Idle idle() const { return idle_; }

 private:
  NetApi& api_;
  int dev_;
  std::chrono::seconds timeout_;
  Idle idle_ = Idle::Yield;
  void* listen_comm_ = nullptr;
  void* send_comm_ = nullptr;
  void* recv_comm_ = nullptr;
  Region send_region_;
  Region recv_region_;
};

// Throws BenchError naming the call when `r` is not ncclSuccess.
void check(ncclResult_t r, const char* call);

}  // namespace railscope::netbench
