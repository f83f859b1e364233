// SPDX-License-Identifier: Apache-2.0
// Owning handles for the libibverbs objects railscope creates (lib/node, lib/gpu, the net plugin's
// verbs engine): each releases its object exactly once, through the dlopen'ed library (ibv.h), in the
// destructor. The device context and the PD are shared by the objects built on them (ContextPtr,
// PdPtr: made from a UniqueContext / UniquePd, which carries the deleter over).
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>
#include <string_view>

#include "railscope/ibv/ibv.h"

namespace railscope::ibv {

struct FreeDeviceList {
  void operator()(ibv_device** l) const { api()->free_device_list(l); }
};
struct CloseDevice {
  void operator()(ibv_context* c) const { api()->close_device(c); }
};
struct DeallocPd {
  void operator()(ibv_pd* p) const { api()->dealloc_pd(p); }
};
struct DestroyCq {
  void operator()(ibv_cq* c) const { api()->destroy_cq(c); }
};
struct DestroyQp {
  void operator()(ibv_qp* q) const { api()->destroy_qp(q); }
};
struct DeregMr {
  void operator()(ibv_mr* m) const { api()->dereg_mr(m); }
};

using DeviceListPtr = std::unique_ptr<ibv_device*, FreeDeviceList>;
using UniqueContext = std::unique_ptr<ibv_context, CloseDevice>;
using UniquePd = std::unique_ptr<ibv_pd, DeallocPd>;
using CqPtr = std::unique_ptr<ibv_cq, DestroyCq>;
using QpPtr = std::unique_ptr<ibv_qp, DestroyQp>;
using MrPtr = std::unique_ptr<ibv_mr, DeregMr>;
using ContextPtr = std::shared_ptr<ibv_context>;  // from a UniqueContext (deleter CloseDevice)
using PdPtr = std::shared_ptr<ibv_pd>;            // from a UniquePd (deleter DeallocPd)

// Opens the device libibverbs lists under `name` (lib/node names the devices; this is for the
// callers that then need a context of their own). Empty, with *error saying why, when it cannot.
UniqueContext open_device(std::string_view name, std::string* error);

}  // namespace railscope::ibv
