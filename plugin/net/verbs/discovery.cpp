#include "plugin/net/verbs/discovery.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "plugin/net/verbs/port_policy.h"
#include "railscope/core/log.h"
#include "railscope/ibv/ibv.h"

namespace railscope::net::verbs {
namespace {

int read_netdev_mtu(const std::string& netdev) {
  if (netdev.empty()) return 0;
  std::ifstream f("/sys/class/net/" + netdev + "/mtu");
  int mtu = 0;
  if (!(f >> mtu)) return 0;
  return mtu;
}

std::string pci_path_of(const std::string& dev) {
  std::string link = "/sys/class/infiniband/" + dev + "/device";
  char buf[PATH_MAX];
  if (realpath(link.c_str(), buf) == nullptr) return {};  // rxe/siw: no PCI device behind it
  return buf;
}

}  // namespace

int port_speed_mbps(uint8_t active_width, uint8_t active_speed) {
  int lanes = 0;
  switch (active_width) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: lanes = 0;
  }
  int rate = 0;
  switch (active_speed) {
    case 1: rate = 2500; break;
    case 2: rate = 5000; break;
    case 4: rate = 10000; break;
    case 8: rate = 10000; break;
    case 16: rate = 14000; break;
    case 32: rate = 25000; break;
    case 64: rate = 50000; break;
    case 128: rate = 100000; break;
    default: rate = 0;
  }
  return lanes * rate;
}

DeviceInfo NetPort::info() const {
  DeviceInfo d;
  d.name = dev_name;
  d.netdev = netdev;
  d.port = static_cast<uint8_t>(port);
  d.link_layer = link_layer;
  d.gid = gid;
  d.gid_index = static_cast<uint16_t>(gid_index);
  d.gid_type = gid_type;
  d.active_mtu = static_cast<uint8_t>(attr.active_mtu);
  d.lid = attr.lid;
  d.netdev_mtu = static_cast<uint32_t>(netdev_mtu);
  d.speed_mbps = static_cast<uint32_t>(speed_mbps);
  return d;
}

Status discover_ports(std::vector<NetPort>* out) {
  out->clear();
  if (ibv::api() == nullptr) return Status::fail(ncclSystemError, "device.no_libibverbs", ibv::load_error());
  int ndev = 0;
  errno = 0;
  DeviceListPtr list(ibv::api()->get_device_list(&ndev));
  if (!list || ndev <= 0)
    return Status::fail(ncclSystemError, "device.none",
                        fmt::format("libibverbs lists no RDMA device ({})",
                                    list ? std::string("0 devices") : std::string(std::strerror(errno))));
  int seen = 0, filtered = 0, down = 0;
  std::string down_names;
  for (int i = 0; i < ndev; ++i) {
    ibv_device* dev = list.get()[i];
    std::string name = ibv::api()->get_device_name(dev);
    ibv_context* raw = ibv::api()->open_device(dev);
    if (raw == nullptr) {
      RS_WARN("NET/railscope : cannot open {}: {}", name, std::strerror(errno));
      continue;
    }
    ContextPtr ctx(raw, CloseDevice{});
    ibv_device_attr dattr{};
    if (ibv::api()->query_device(raw, &dattr) != 0) continue;
    PdPtr pd;
    for (int p = 1; p <= dattr.phys_port_cnt; ++p) {
      ++seen;
      if (!hca_selects(name, p)) {
        ++filtered;
        continue;
      }
      ibv_port_attr pattr{};
      if (ibv::query_port(*ibv::api(), raw, static_cast<uint8_t>(p), &pattr) != 0) continue;
      if (pattr.state != IBV_PORT_ACTIVE ||
          (pattr.link_layer != IBV_LINK_LAYER_ETHERNET && pattr.link_layer != IBV_LINK_LAYER_INFINIBAND)) {
        ++down;
        down_names += fmt::format(" {}:{}", name, p);
        continue;
      }
      GidPick gid = pick_gid(raw, name, p, pattr);
      for (const auto& f : gid.findings) RS_WARN("NET/railscope : {}", diag::one_line(f));
      if (!gid.usable) continue;
      if (!pd) {
        ibv_pd* rawpd = ibv::api()->alloc_pd(raw);
        if (rawpd == nullptr) {
          RS_WARN("NET/railscope : ibv_alloc_pd on {} failed: {}", name, std::strerror(errno));
          break;
        }
        pd = PdPtr(rawpd, DeallocPd{});
      }
      NetPort np;
      np.dev_name = name;
      np.port = p;
      np.ctx = ctx;
      np.pd = pd;
      np.attr = pattr;
      np.link_layer =
          pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? WireLinkLayer::Ethernet : WireLinkLayer::InfiniBand;
      np.gid_index = gid.index;
      np.gid = gid.gid;
      np.gid_type = gid.type;
      np.netdev = gid.netdev;
      np.netdev_mtu = read_netdev_mtu(gid.netdev);
      np.speed_mbps = port_speed_mbps(pattr.active_width, pattr.active_speed);
      np.guid = dattr.sys_image_guid;
      np.pci_path = pci_path_of(name);
      np.max_qp = dattr.max_qp;
      np.max_qp_wr = dattr.max_qp_wr;
      np.max_cqe = dattr.max_cqe;
      out->push_back(std::move(np));
    }
  }
  if (!out->empty()) return Status::success();
  if (seen > 0 && filtered == seen)
    return Status::fail(ncclSystemError, "device.filtered_out",
                        fmt::format("NCCL_IB_HCA selects none of the {} RDMA ports present", seen));
  if (down > 0)
    return Status::fail(ncclSystemError, "port.down",
                        fmt::format("no active RDMA port; inactive:{}", down_names));
  return Status::fail(ncclSystemError, "device.none", "no usable RDMA port (no usable GID on any port)");
}

}  // namespace railscope::net::verbs
