// SPDX-License-Identifier: Apache-2.0
// hwloc-based GPU/NIC discovery and NCCL's distance classes.
//
// NCCL builds its PCI graph from sysfs by walking from a device two levels up at a time: device ->
// switch downstream port -> switch upstream port. So one NCCL "PCI switch" node is a switch's
// upstream port, root ports vanish, and a device below a root port hangs directly off the CPU. We
// apply the same rule to hwloc's tree (whose bridges are those same ports), then classify like
// NCCL's path search: GPU-switch-NIC = PIX; any switch-to-switch hop = PXB; through a CPU = PHB;
// between CPUs (NUMA nodes) = SYS. Broadcom PEX Gen4/Gen5 two-level switches are flattened as NCCL
// does (ncclTopoFlattenBcmSwitches).
#include "railscope/gpu/pci_topology.h"

#include <hwloc.h>

#include <fmt/format.h>
#include <algorithm>
#include <set>

#include "railscope/core/params.h"
#include "railscope/gpu/cuda_driver.h"

namespace railscope::gpu {
namespace {

constexpr uint16_t kVendorNvidia = 0x10de;
constexpr uint16_t kVendorMellanox = 0x15b3;
constexpr uint16_t kClassVga = 0x0300;
constexpr uint16_t kClass3d = 0x0302;
constexpr uint16_t kClassEthernet = 0x0200;
constexpr uint16_t kClassInfiniband = 0x0207;

bool is_pci_bridge(hwloc_obj_t o) {
  return o && o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

const hwloc_obj_attr_u::hwloc_pcidev_attr_s* pci_attr(hwloc_obj_t o) {
  if (o->type == HWLOC_OBJ_PCI_DEVICE) return &o->attr->pcidev;
  if (is_pci_bridge(o)) return &o->attr->bridge.upstream.pci;
  return nullptr;
}

std::string bdf_of(hwloc_obj_t o) {
  const auto* a = pci_attr(o);
  if (!a) return {};
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a->domain, a->bus, a->dev, a->func);
}

// NCCL's 64-bit PCI "device" id: vendor, device, subsystem vendor, subsystem device.
uint64_t nccl_device_id(hwloc_obj_t o) {
  const auto* a = pci_attr(o);
  if (!a) return 0;
  return static_cast<uint64_t>(a->vendor_id) << 48 | static_cast<uint64_t>(a->device_id) << 32 |
         static_cast<uint64_t>(a->subvendor_id) << 16 | a->subdevice_id;
}

int bcm_gen(uint64_t id, uint64_t level) {
  if ((id & 0xfffffffffffff000ull) == 0x1000c0101000a000ull) return 4;
  if ((id & 0xfffffffffffff000ull) == (0x1000c03010000000ull | level * 0x1000ull)) return 5;
  return 0;
}

// The NCCL switch nodes above a device, nearest first (see the file comment).
std::vector<hwloc_obj_t> switch_chain(hwloc_obj_t dev) {
  std::vector<hwloc_obj_t> chain;
  for (hwloc_obj_t cur = dev;;) {
    hwloc_obj_t port = cur->parent;
    if (!is_pci_bridge(port)) break;
    hwloc_obj_t upstream = port->parent;
    if (!is_pci_bridge(upstream)) break;
    chain.push_back(upstream);
    cur = upstream;
  }
  // Flatten Broadcom two-level switches: a level-1 sub-switch under a level-0 switch of the same
  // generation disappears, its devices hang off the parent switch.
  for (size_t i = 0; i + 1 < chain.size();) {
    int gen = bcm_gen(nccl_device_id(chain[i + 1]), 0);
    if (gen != 0 && bcm_gen(nccl_device_id(chain[i]), 1) == gen)
      chain.erase(chain.begin() + static_cast<std::ptrdiff_t>(i));
    else
      ++i;
  }
  return chain;
}

int numa_of(hwloc_obj_t anchor) {
  if (!anchor || !anchor->nodeset || hwloc_bitmap_weight(anchor->nodeset) != 1) return -1;
  return hwloc_bitmap_first(anchor->nodeset);
}

std::string numa_phrase(int numa) { return numa < 0 ? std::string("NUMA ?") : fmt::format("NUMA {}", numa); }

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};

}  // namespace

struct PciTopology::Impl {
  std::unique_ptr<hwloc_topology, TopologyDeleter> topo;
  std::string source;
  std::vector<PciDevice> gpus, nics;
  std::vector<hwloc_obj_t> gpu_objs, nic_objs;
};

PciTopology::PciTopology(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PciTopology::PciTopology(PciTopology&&) noexcept = default;
PciTopology& PciTopology::operator=(PciTopology&&) noexcept = default;
PciTopology::~PciTopology() = default;

const std::string& PciTopology::source() const { return impl_->source; }
const std::vector<PciDevice>& PciTopology::gpus() const { return impl_->gpus; }
const std::vector<PciDevice>& PciTopology::nics() const { return impl_->nics; }

std::string topology_file_from(const std::string& explicit_file) {
  if (!explicit_file.empty()) return explicit_file;
  return params::raw("RAILSCOPE_TOPO_FILE").value_or(std::string());
}

std::optional<PciTopology> PciTopology::load(const std::string& xml_file, const std::vector<NicHint>& hints,
                                             std::string* error) {
  auto impl = std::make_unique<Impl>();
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    if (error) *error = "hwloc_topology_init failed";
    return std::nullopt;
  }
  impl->topo.reset(raw);
  hwloc_topology_set_type_filter(raw, HWLOC_OBJ_BRIDGE, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_type_filter(raw, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_type_filter(raw, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (!xml_file.empty()) {
    if (hwloc_topology_set_xml(raw, xml_file.c_str()) != 0) {
      if (error) *error = fmt::format("cannot use topology file '{}' (missing or not hwloc XML)", xml_file);
      return std::nullopt;
    }
    impl->source = xml_file;
  } else {
    impl->source = "system";
  }
  if (hwloc_topology_load(raw) != 0) {
    if (error) *error = fmt::format("cannot load the topology from {}", impl->source);
    return std::nullopt;
  }

  std::set<std::string> hinted;
  for (const auto& h : hints) {
    auto slash = h.pci_path.find_last_of('/');
    auto bdf = normalize_bdf(slash == std::string::npos ? h.pci_path : h.pci_path.substr(slash + 1));
    if (!bdf.empty()) hinted.insert(bdf);
  }
  for (hwloc_obj_t o = hwloc_get_next_pcidev(raw, nullptr); o; o = hwloc_get_next_pcidev(raw, o)) {
    const auto& a = o->attr->pcidev;
    PciDevice d;
    d.bdf = bdf_of(o);
    d.vendor = a.vendor_id;
    d.device = a.device_id;
    d.class_id = a.class_id;
    d.numa = numa_of(hwloc_get_non_io_ancestor_obj(raw, o));
    bool openfabrics = false;
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
      if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name) continue;
      if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
        openfabrics = true;
        d.name += (d.name.empty() ? "" : ",") + std::string(c->name);
      } else if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
        d.netdevs.emplace_back(c->name);
      }
    }
    bool gpu = a.vendor_id == kVendorNvidia && (a.class_id == kClass3d || a.class_id == kClassVga);
    bool hint = hinted.count(d.bdf) != 0;
    bool nic = openfabrics || hint || a.class_id == kClassInfiniband ||
               (a.class_id == kClassEthernet && a.vendor_id == kVendorMellanox);
    if (gpu) {
      d.kind = DeviceKind::Gpu;
      impl->gpus.push_back(d);
      impl->gpu_objs.push_back(o);
    } else if (nic) {
      d.kind = DeviceKind::Nic;
      if (d.name.empty()) {
        for (const auto& h : hints) {
          if (h.pci_path.size() >= d.bdf.size() &&
              h.pci_path.compare(h.pci_path.size() - d.bdf.size(), d.bdf.size(), d.bdf) == 0)
            d.name = h.name;
        }
      }
      if (d.name.empty()) d.name = d.bdf;
      impl->nics.push_back(d);
      impl->nic_objs.push_back(o);
    }
  }
  return PciTopology(std::move(impl));
}

PciPath PciTopology::path(size_t gpu, size_t nic) const {
  PciPath out;
  hwloc_obj_t g = impl_->gpu_objs.at(gpu);
  hwloc_obj_t n = impl_->nic_objs.at(nic);
  auto gc = switch_chain(g);
  auto nc = switch_chain(n);
  for (size_t i = 0; i < gc.size(); ++i) {
    auto it = std::find(nc.begin(), nc.end(), gc[i]);
    if (it == nc.end()) continue;
    size_t j = static_cast<size_t>(it - nc.begin());
    out.type = (i == 0 && j == 0) ? PathType::Pix : PathType::Pxb;
    out.via = fmt::format("switch {}", bdf_of(gc[i]));
    // Every PCIe port below the shared switch's upstream port, on both sides.
    std::vector<std::string> ports;
    for (hwloc_obj_t side : {g, n}) {
      for (hwloc_obj_t o = side->parent; o && o != gc[i]; o = o->parent)
        if (is_pci_bridge(o)) ports.push_back(bdf_of(o));
    }
    ports.push_back(bdf_of(gc[i]));
    std::sort(ports.begin(), ports.end());
    ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
    out.switch_ports = std::move(ports);
    return out;
  }
  hwloc_topology_t t = impl_->topo.get();
  hwloc_obj_t ga = hwloc_get_non_io_ancestor_obj(t, g);
  hwloc_obj_t na = hwloc_get_non_io_ancestor_obj(t, n);
  int gn = numa_of(ga), nn = numa_of(na);
  bool same =
      ga == na || (ga && na && ga->nodeset && na->nodeset && hwloc_bitmap_isequal(ga->nodeset, na->nodeset) &&
                   hwloc_bitmap_weight(ga->nodeset) == 1);
  if (same) {
    out.type = PathType::Phb;
    out.via = fmt::format("host bridge, {}", numa_phrase(gn));
  } else {
    out.type = PathType::Sys;
    out.via = fmt::format("{} <-> {}", numa_phrase(gn), numa_phrase(nn));
  }
  return out;
}

}  // namespace railscope::gpu
