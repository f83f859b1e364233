// Owning handles for every libibverbs object the verbs engine creates: each releases its object
// exactly once, in the destructor. Shared ones (device context, PD) are shared_ptr so the objects
// built on them keep them alive.
#pragma once

#include <infiniband/verbs.h>

#include <memory>

#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {

struct CloseDevice {
  void operator()(ibv_context* c) const { ibv::api()->close_device(c); }
};
struct DeallocPd {
  void operator()(ibv_pd* p) const { ibv::api()->dealloc_pd(p); }
};
struct DestroyCq {
  void operator()(ibv_cq* c) const { ibv::api()->destroy_cq(c); }
};
struct DestroyQp {
  void operator()(ibv_qp* q) const { ibv::api()->destroy_qp(q); }
};
struct DeregMr {
  void operator()(ibv_mr* m) const { ibv::api()->dereg_mr(m); }
};
struct FreeDeviceList {
  void operator()(ibv_device** l) const { ibv::api()->free_device_list(l); }
};

using CqPtr = std::unique_ptr<ibv_cq, DestroyCq>;
using QpPtr = std::unique_ptr<ibv_qp, DestroyQp>;
using MrPtr = std::unique_ptr<ibv_mr, DeregMr>;
using DeviceListPtr = std::unique_ptr<ibv_device*, FreeDeviceList>;
using ContextPtr = std::shared_ptr<ibv_context>;  // deleter CloseDevice
using PdPtr = std::shared_ptr<ibv_pd>;            // deleter DeallocPd

}  // namespace railscope::net::verbs
