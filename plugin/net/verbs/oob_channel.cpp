#include "plugin/net/verbs/oob_channel.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace railscope::net::verbs {
SocketAddress handle_address(const ListenHandle& h) { return SocketAddress{h.family, h.addr, h.port}; }

Status Channel::connected(bool* ready) { return connect_finished(fd_.get(), peer_, ready); }

void Channel::send(const Message& m) {
  auto bytes = encode_message(m);
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

Status Channel::closed(const char* during) {
  return Status::fail(ncclRemoteError, "peer.closed",
                      fmt::format("{} closed the connection {}", peer_, during));
}

Status Channel::flush(bool* done) {
  while (out_off_ < out_.size()) {
    ssize_t n =
        ::send(fd_.get(), out_.data() + out_off_, out_.size() - out_off_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
      if (errno == EPIPE || errno == ECONNRESET) return closed("during the handshake");
      return io_failure("send", -1, errno, peer_, 0);
    }
    out_off_ += static_cast<size_t>(n);
  }
  if (out_off_ == out_.size()) {
    out_.clear();
    out_off_ = 0;
  }
  *done = out_.empty();
  return Status::success();
}

Status Channel::receive(std::optional<Message>* out) {
  out->reset();
  auto read_some = [&](std::byte* dst, size_t want, size_t* got) -> Status {
    while (*got < want) {
      ssize_t n = ::recv(fd_.get(), dst + *got, want - *got, MSG_DONTWAIT);
      if (n == 0) return closed("during the handshake");
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Status::success();
        if (errno == ECONNRESET) return closed("during the handshake (reset)");
        return io_failure("recv", -1, errno, peer_, 0);
      }
      *got += static_cast<size_t>(n);
    }
    return Status::success();
  };
  if (!have_header_) {
    if (Status st = read_some(header_.data(), header_.size(), &header_got_); !st.ok()) return st;
    if (header_got_ < header_.size()) return Status::success();
    std::string why;
    auto len = decode_header(header_, &type_, &why);
    const uint16_t version = header_version(header_);
    other_version_ = version != 0 && version != kProtocolVersion;
    if (!len)
      return Status::fail(ncclRemoteError, "peer.bad_handshake", fmt::format("from {}: {}", peer_, why),
                          other_version_ ? kSameReleaseFix : "");
    body_.assign(*len, std::byte{0});
    body_got_ = 0;
    have_header_ = true;
  }
  if (Status st = read_some(body_.data(), body_.size(), &body_got_); !st.ok()) return st;
  if (body_got_ < body_.size()) return Status::success();
  have_header_ = false;
  header_got_ = 0;
  std::string why;
  auto m = decode_body(type_, body_, &why);
  if (!m) return Status::fail(ncclRemoteError, "peer.bad_handshake", fmt::format("from {}: {}", peer_, why));
  *out = std::move(m);
  return Status::success();
}

Status Channel::alive() { return peer_alive(fd_.get(), peer_); }

}  // namespace railscope::net::verbs
