// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/tcp/zerocopy.h"

#include <fmt/format.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "plugin/net/common/socket.h"
#include "railscope/core/log.h"

#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

namespace railscope::net::tcp {

void ZeroCopyShared::kernel_copied(uint64_t n) {
  add(copied, n);
  bool turn_off = mode == ZeroCopyMode::Auto;
  if (turn_off) active.store(false, std::memory_order_relaxed);
  if (told.exchange(true, std::memory_order_relaxed)) return;
  if (turn_off)
    RS_INFO(NCCL_NET,
            "NET/railscope : TCP zero-copy to {}: the kernel copied the data anyway (loopback, veth or a "
            "device without scatter-gather), so it cannot pay; this connection goes back to copy sends "
            "(RAILSCOPE_TCP_ZEROCOPY=auto)",
            peer);
  else
    RS_INFO(NCCL_NET,
            "NET/railscope : TCP zero-copy to {}: the kernel copies the data anyway (loopback, veth or a "
            "device without scatter-gather); zero-copy sends continue as RAILSCOPE_TCP_ZEROCOPY=on asks",
            peer);
}

std::string ZeroCopyShared::json() const {
  return fmt::format(R"({{"mode":"{}","active":{},"sends":{},"bytes":{},"kernel_copied":{},"enobufs":{}}})",
                     zerocopy_mode_name(mode), active.load(std::memory_order_relaxed) ? "true" : "false",
                     sends.load(std::memory_order_relaxed), bytes.load(std::memory_order_relaxed),
                     copied.load(std::memory_order_relaxed), enobufs.load(std::memory_order_relaxed));
}

bool enable_zerocopy(int fd) {
  int one = 1;
  return ::setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) == 0;
}

void ZeroCopyIds::release(uint32_t lo, uint32_t hi) {
  if (static_cast<int32_t>(hi - lo) < 0) return;  // not a range the kernel writes
  for (uint32_t id = lo;; ++id) {
    if (static_cast<int32_t>(id - released_) >= 0 && static_cast<int32_t>(next_ - id) > 0)
      done_.set(id % kWindow);
    if (id == hi) break;
  }
  while (released_ != next_ && done_.test(released_ % kWindow)) {
    done_.reset(released_ % kWindow);
    ++released_;
  }
}

Status ZeroCopyIds::drain(int fd, ZeroCopyShared* shared, const std::string& peer, bool* drained) {
  *drained = false;
  for (;;) {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(sock_extended_err) + sizeof(sockaddr_in6))];
    msghdr msg{};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::success();
      return io_failure("recvmsg (zero-copy completions)", n, errno, peer, 0);
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      bool recverr = (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
                     (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR);
      if (!recverr) continue;
      sock_extended_err ee{};
      std::memcpy(&ee, CMSG_DATA(c), sizeof ee);
      if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee.ee_errno != 0) continue;
      *drained = true;
      release(ee.ee_info, ee.ee_data);
      if ((ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) != 0) shared->kernel_copied(ee.ee_data - ee.ee_info + 1u);
    }
  }
}

}  // namespace railscope::net::tcp
