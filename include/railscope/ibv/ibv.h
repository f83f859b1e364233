// SPDX-License-Identifier: Apache-2.0
// libibverbs, opened with dlopen on first use instead of linked: a plugin that carries RDMA code must
// still load on a host without rdma-core (Ethernet-only clusters run the net plugin's TCP engine; the
// tuner and profiler need no verbs at all). NCCL treats libibverbs the same way.
//
// Only the functions railscope calls through a symbol are here. The data-path calls (ibv_post_send,
// ibv_post_recv, ibv_poll_cq) and the extended queries are inline in verbs.h and go through the
// provider's function table, so they need no symbol and are used as they are.
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace railscope::ibv {

struct Api {
  ibv_device** (*get_device_list)(int* num_devices);
  void (*free_device_list)(ibv_device** list);
  const char* (*get_device_name)(ibv_device* device);
  ibv_context* (*open_device)(ibv_device* device);
  int (*close_device)(ibv_context* context);
  int (*query_device)(ibv_context* context, ibv_device_attr* attr);
  // The pre-1.1 entry point the inline ibv_query_port falls back to; use ibv::query_port().
  int (*query_port_compat)(ibv_context* context, uint8_t port, _compat_ibv_port_attr* attr);
  ssize_t (*query_gid_table)(ibv_context* context, ibv_gid_entry* entries, size_t max_entries, uint32_t flags,
                             size_t entry_size);
  ibv_pd* (*alloc_pd)(ibv_context* context);
  int (*dealloc_pd)(ibv_pd* pd);
  ibv_mr* (*reg_mr)(ibv_pd* pd, void* addr, size_t length, int access);
  // nullptr when the installed rdma-core predates DMA-BUF registration (< v34).
  ibv_mr* (*reg_dmabuf_mr)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access);
  int (*dereg_mr)(ibv_mr* mr);
  ibv_cq* (*create_cq)(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                       int comp_vector);
  int (*destroy_cq)(ibv_cq* cq);
  ibv_qp* (*create_qp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modify_qp)(ibv_qp* qp, ibv_qp_attr* attr, int mask);
  int (*destroy_qp)(ibv_qp* qp);
  int (*get_async_event)(ibv_context* context, ibv_async_event* event);
  void (*ack_async_event)(ibv_async_event* event);
  const char* (*event_type_str)(ibv_event_type type);
  const char* (*wc_status_str)(ibv_wc_status status);
  const char* (*port_state_str)(ibv_port_state state);
};

// The loaded library (RAILSCOPE_IBVERBS_LIB, default libibverbs.so.1), opened once per process and
// never closed; nullptr when it cannot be opened or lacks a required symbol. Thread-safe.
const Api* api();
// Why api() is nullptr (the library and dlopen/dlsym's words; the fix is catalogue entry
// device.no_libibverbs), "" when it is not.
const std::string& load_error();

// ibv_query_port as verbs.h's inline does it: the provider's query_port when it has one, else the
// compat entry point. Same return convention (0 or an errno value).
int query_port(const Api& api, ibv_context* context, uint8_t port, ibv_port_attr* attr);

// ibv_wc_status_str / ibv_event_type_str / ibv_port_state_str without a loaded library ("status N").
std::string wc_status_text(ibv_wc_status status);
std::string event_type_text(ibv_event_type type);
std::string port_state_text(ibv_port_state state);

}  // namespace railscope::ibv
