// SPDX-License-Identifier: Apache-2.0
#include "railscope/ibv/ibv.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstring>

#include "railscope/core/params.h"

namespace railscope::ibv {
namespace {

struct Loaded {
  Api api{};
  bool ok = false;
  std::string error;
};

// Resolves `name` (the default version of a versioned symbol, as the linker would bind it) into `*fn`.
template <typename Fn>
bool bind(void* lib, const char* name, Fn** fn, std::string* missing) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr) {
    if (missing != nullptr && missing->empty()) *missing = name;
    return false;
  }
  static_assert(sizeof(sym) == sizeof(*fn));
  std::memcpy(static_cast<void*>(fn), &sym, sizeof sym);  // object pointer to function pointer, POSIX-style
  return true;
}

Loaded load() {
  Loaded l;
  const std::string path = params::get_string("RAILSCOPE_IBVERBS_LIB");
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    l.error = fmt::format("cannot load {}: {}", path, why != nullptr ? why : "unknown error");
    return l;
  }
  std::string missing;
  Api& a = l.api;
  bool ok = true;
  ok &= bind(lib, "ibv_get_device_list", &a.get_device_list, &missing);
  ok &= bind(lib, "ibv_free_device_list", &a.free_device_list, &missing);
  ok &= bind(lib, "ibv_get_device_name", &a.get_device_name, &missing);
  ok &= bind(lib, "ibv_open_device", &a.open_device, &missing);
  ok &= bind(lib, "ibv_close_device", &a.close_device, &missing);
  ok &= bind(lib, "ibv_query_device", &a.query_device, &missing);
  ok &= bind(lib, "ibv_query_port", &a.query_port_compat, &missing);
  ok &= bind(lib, "_ibv_query_gid_table", &a.query_gid_table, &missing);
  ok &= bind(lib, "ibv_alloc_pd", &a.alloc_pd, &missing);
  ok &= bind(lib, "ibv_dealloc_pd", &a.dealloc_pd, &missing);
  ok &= bind(lib, "ibv_reg_mr", &a.reg_mr, &missing);
  ok &= bind(lib, "ibv_dereg_mr", &a.dereg_mr, &missing);
  ok &= bind(lib, "ibv_create_cq", &a.create_cq, &missing);
  ok &= bind(lib, "ibv_destroy_cq", &a.destroy_cq, &missing);
  ok &= bind(lib, "ibv_create_qp", &a.create_qp, &missing);
  ok &= bind(lib, "ibv_modify_qp", &a.modify_qp, &missing);
  ok &= bind(lib, "ibv_destroy_qp", &a.destroy_qp, &missing);
  ok &= bind(lib, "ibv_get_async_event", &a.get_async_event, &missing);
  ok &= bind(lib, "ibv_ack_async_event", &a.ack_async_event, &missing);
  ok &= bind(lib, "ibv_event_type_str", &a.event_type_str, &missing);
  ok &= bind(lib, "ibv_wc_status_str", &a.wc_status_str, &missing);
  ok &= bind(lib, "ibv_port_state_str", &a.port_state_str, &missing);
  bind(lib, "ibv_reg_dmabuf_mr", &a.reg_dmabuf_mr, nullptr);  // optional: rdma-core >= v34
  if (!ok) {
    l.error = fmt::format("{} lacks {} (an rdma-core older than v32?)", path, missing);
    dlclose(lib);
    return l;
  }
  l.ok = true;  // the library stays loaded for the life of the process
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Api* api() { return loaded().ok ? &loaded().api : nullptr; }

const std::string& load_error() { return loaded().error; }

int query_port(const Api& api, ibv_context* context, uint8_t port, ibv_port_attr* attr) {
  if (verbs_context* vctx = verbs_get_ctx_op(context, query_port); vctx != nullptr)
    return vctx->query_port(context, port, attr, sizeof(*attr));
  std::memset(attr, 0, sizeof(*attr));
  return api.query_port_compat(context, port, reinterpret_cast<_compat_ibv_port_attr*>(attr));
}

std::string wc_status_text(ibv_wc_status status) {
  if (const Api* a = api()) return a->wc_status_str(status);
  return fmt::format("status {}", static_cast<int>(status));
}

std::string event_type_text(ibv_event_type type) {
  if (const Api* a = api()) return a->event_type_str(type);
  return fmt::format("event {}", static_cast<int>(type));
}

std::string port_state_text(ibv_port_state state) {
  if (const Api* a = api()) return a->port_state_str(state);
  return fmt::format("state {}", static_cast<int>(state));
}

}  // namespace railscope::ibv
