// Enumerates verbs devices, resolves their PCI path and runs the DMA-BUF probe on a short-lived PD.
#include "railscope/gpu/verbs_inventory.h"

#include <infiniband/verbs.h>

#include <filesystem>
#include <memory>
#include <system_error>

#include "railscope/ibv/ibv.h"

namespace railscope::gpu {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv::api()->free_device_list(l); }
};
struct ContextDeleter {
  void operator()(ibv_context* c) const { ibv::api()->close_device(c); }
};
struct PdDeleter {
  void operator()(ibv_pd* p) const { ibv::api()->dealloc_pd(p); }
};

}  // namespace

std::vector<VerbsNic> probe_verbs_nics(const SysfsRoot& fs) {
  std::vector<VerbsNic> out;
  if (ibv::api() == nullptr) return out;  // no libibverbs: no NIC to pair with a GPU
  int n = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv::api()->get_device_list(&n));
  if (!list) return out;
  for (int i = 0; i < n; ++i) {
    ibv_device* dev = list.get()[i];
    VerbsNic nic;
    nic.name = ibv::api()->get_device_name(dev);
    std::error_code ec;
    auto real = std::filesystem::canonical(fs.path("/sys/class/infiniband/" + nic.name + "/device"), ec);
    if (!ec) nic.pci_path = real.string();
    std::unique_ptr<ibv_context, ContextDeleter> ctx(ibv::api()->open_device(dev));
    if (!ctx) {
      nic.error = "ibv_open_device failed";
    } else if (std::unique_ptr<ibv_pd, PdDeleter> pd(ibv::api()->alloc_pd(ctx.get())); !pd) {
      nic.error = "ibv_alloc_pd failed";
    } else {
      nic.dmabuf = probe_verbs_dmabuf(pd.get());
    }
    out.push_back(std::move(nic));
  }
  return out;
}

void add_verbs_nics(ReportOptions& options, const std::vector<VerbsNic>& nics) {
  for (const auto& nic : nics) {
    options.nic_hints.push_back({nic.name, nic.pci_path});
    options.verbs_dmabuf[nic.name] = nic.dmabuf.result;
  }
}

}  // namespace railscope::gpu
