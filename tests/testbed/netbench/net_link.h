// SPDX-License-Identifier: Apache-2.0
// Test-bed helper: one process holding both ends of net-plugin connections (rxe0 <-> rxe1), driven
// through the plugin's ABI exactly as NCCL drives it (dlopen, listen, handle, polled connect/accept).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net_api.h"

namespace railscope::netbench::testbed {

// The railscope plugin built in this tree, initialised with the harness's capturing logger.
struct Plugin {
  OpenedPlugin opened;
  bool inited = false;
  Plugin();
  ~Plugin();
  NetApi& api() { return *opened.api; }
  int device(const std::string& name);
};

// A send comm on `send_dev` connected to a receive comm on `recv_dev`.
struct Link {
  NetApi* api = nullptr;
  void* listen_comm = nullptr;
  void* send_comm = nullptr;
  void* recv_comm = nullptr;
  Link() = default;
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;
  ~Link();
  void close();
};
// Establishes a link, polling connect and accept in turn; fails the test on error or after `limit`.
std::unique_ptr<Link> make_link(NetApi& api, int send_dev, int recv_dev,
                                std::chrono::seconds limit = std::chrono::seconds(30));

// Registered page-aligned host memory.
struct Mr {
  NetApi* api = nullptr;
  void* comm = nullptr;
  std::vector<unsigned char> storage;
  unsigned char* data = nullptr;
  size_t size = 0;
  void* mh = nullptr;
  Mr(NetApi& a, void* c, size_t bytes);
  ~Mr();
  Mr(const Mr&) = delete;
  Mr& operator=(const Mr&) = delete;
};

// Polls a request to completion (fails the test after `limit`); returns the sizes test() reported.
std::vector<int> wait_request(NetApi& api, void* request, int n,
                              std::chrono::seconds limit = std::chrono::seconds(60));
// Polls several requests round robin until all are done, as NCCL's proxy does (a large send under the
// eager protocol needs its receive tested to be answered); returns each one's sizes (ns[i] entries).
std::vector<std::vector<int>> wait_requests(NetApi& api, const std::vector<void*>& requests,
                                            const std::vector<int>& ns,
                                            std::chrono::seconds limit = std::chrono::seconds(60));
void* post_isend(NetApi& api, void* comm, void* data, size_t size, int tag, void* mh);
void* post_irecv(NetApi& api, void* comm, int n, void** data, size_t* sizes, int* tags, void** mhs);

// The process's open file descriptors, number -> what /proc/self/fd/<n> links to.
std::map<int, std::string> open_fds();
// Waits up to `limit` for the descriptor set to have `expected` entries again (a background thread,
// such as the port-counter sampler reading sysfs, holds one for a moment), then returns those open
// that were not in `before`: empty unless something leaked.
std::string fds_left_open(const std::map<int, std::string>& before,
                          std::chrono::milliseconds limit = std::chrono::milliseconds(2000));
// "pd 1 cq 2 qp 1 ..." of `rdma resource show` for a device, as name -> count.
std::string rdma_resources(const std::string& dev);

}  // namespace railscope::netbench::testbed
