// SPDX-License-Identifier: Apache-2.0
// Opening a device by the name lib/node reported (see handles.h).
#include "railscope/ibv/handles.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace railscope::ibv {

UniqueContext open_device(std::string_view name, std::string* error) {
  const Api* v = api();
  if (v == nullptr) {
    *error = load_error();
    return {};
  }
  int n = 0;
  errno = 0;
  DeviceListPtr list(v->get_device_list(&n));
  if (!list) {
    *error = fmt::format("ibv_get_device_list: {}", std::strerror(errno));
    return {};
  }
  for (int i = 0; i < n; ++i) {
    const char* listed = v->get_device_name(list.get()[i]);
    if (listed == nullptr || name != listed) continue;
    errno = 0;
    UniqueContext ctx(v->open_device(list.get()[i]));
    if (!ctx) *error = fmt::format("ibv_open_device: {}", std::strerror(errno));
    return ctx;
  }
  *error = "libibverbs does not list it";
  return {};
}

}  // namespace railscope::ibv
