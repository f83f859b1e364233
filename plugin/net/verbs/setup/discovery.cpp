// SPDX-License-Identifier: Apache-2.0
// The verbs engine's ports: lib/node's inventory, the selection of port_policy.h, then the device
// context, PD, port attributes and device limits of each selected port.
#include "plugin/net/verbs/setup/discovery.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "plugin/net/verbs/setup/port_policy.h"
#include "railscope/core/log.h"
#include "railscope/core/params.h"
#include "railscope/ibv/handles.h"
#include "railscope/node/inventory.h"
#include "railscope/node/mtu.h"

namespace railscope::net::verbs {
namespace {

const node::HcaFilter& hca_filter() {
  static const node::HcaFilter filter = [] {
    auto f = node::parse_hca_filter(params::get_string("NCCL_IB_HCA"));
    for (const auto& w : f.warnings) RS_WARN("NET/railscope : NCCL_IB_HCA: {}", w);
    return f;
  }();
  return filter;
}

// One device as the engine holds it open: context, PD (allocated with the first port used) and limits.
struct OpenDevice {
  bool tried = false;
  ibv::ContextPtr ctx;
  ibv::PdPtr pd;
  bool pd_failed = false;
  ibv_device_attr attr{};
};

void open_device(const ibv::Api& v, const std::string& name, OpenDevice* d) {
  d->tried = true;
  std::string error;
  ibv::ContextPtr ctx(ibv::open_device(name, &error));
  if (!ctx) {
    RS_WARN("NET/railscope : cannot open {}: {}", name, error);
    return;
  }
  if (v.query_device(ctx.get(), &d->attr) != 0) return;
  d->ctx = std::move(ctx);
}

}  // namespace

Status discover_ports(std::vector<NetPort>* out) {
  out->clear();
  const ibv::Api* v = ibv::api();
  if (v == nullptr) return Status::fail(ncclSystemError, "device.no_libibverbs", ibv::load_error());
  const node::Inventory inventory = node::discover();
  std::vector<diag::Finding> problems;
  const node::GidPolicy policy = node::gid_policy_from_env(&problems);
  for (const auto& f : problems) RS_WARN("NET/railscope : {}", diag::one_line(f));
  PortSelection selection = select_ports(inventory, hca_filter(), policy);
  for (const auto& f : selection.findings) RS_WARN("NET/railscope : {}", diag::one_line(f));
  if (selection.ports.empty()) return std::move(selection.failure);

  std::map<std::string, OpenDevice> devices;
  for (node::PortRecord& record : selection.ports) {
    OpenDevice& d = devices[record.dev_name];
    if (!d.tried) open_device(*v, record.dev_name, &d);
    if (!d.ctx || d.pd_failed) continue;
    ibv_port_attr pattr{};
    if (ibv::query_port(*v, d.ctx.get(), static_cast<uint8_t>(record.port), &pattr) != 0) continue;
    if (!d.pd) {
      d.pd = ibv::UniquePd(v->alloc_pd(d.ctx.get()));
      if (!d.pd) {
        RS_WARN("NET/railscope : ibv_alloc_pd on {} failed: {}", record.dev_name, std::strerror(errno));
        d.pd_failed = true;
        continue;
      }
    }
    NetPort np;
    static_cast<node::PortRecord&>(np) = std::move(record);
    // The QPs are set up with what the port says now, not what the inventory read a moment earlier.
    np.active_mtu = node::ib_mtu_bytes(static_cast<int>(pattr.active_mtu));
    np.lid = pattr.lid;
    np.ctx = d.ctx;
    np.pd = d.pd;
    np.guid = d.attr.sys_image_guid;
    np.max_qp = d.attr.max_qp;
    np.max_qp_wr = d.attr.max_qp_wr;
    np.max_cqe = d.attr.max_cqe;
    out->push_back(std::move(np));
  }
  if (!out->empty()) return Status::success();
  return Status::fail(
      ncclSystemError, "device.none",
      fmt::format("no selected RDMA port could be opened ({} selected)", selection.ports.size()));
}

std::vector<PortLogLine> port_mtu_log(const std::string& where, int active_mtu_bytes,
                                      const std::string& netdev, int netdev_mtu) {
  std::vector<PortLogLine> lines;
  for (const auto& f : node::check_port_mtu(where, active_mtu_bytes, netdev, netdev_mtu))
    lines.push_back(
        {f.severity == diag::Severity::Error || f.severity == diag::Severity::Warning, diag::one_line(f)});
  return lines;
}

}  // namespace railscope::net::verbs
