// Socket plumbing of the TCP engine: an owning fd, non-blocking listen/connect/accept, the options
// every connection socket gets (TCP_NODELAY, buffer sizes, keepalive and TCP_USER_TIMEOUT so a dead
// peer turns into an error within the configured bound), and the mapping of socket errors to the
// diagnosis catalogue (peer.closed for EOF/reset, progress.stalled for a timed-out peer).
#pragma once

#include <sys/types.h>

#include <string>

#include "plugin/net/fd.h"
#include "plugin/net/tcp/options.h"
#include "plugin/net/tcp/wire.h"
#include "plugin/net/transport.h"

namespace railscope::net::tcp {

// A non-blocking listener bound to addr (family 4/6, port 0); *port receives the port chosen.
Status open_listener(int family, const std::array<uint8_t, 16>& addr, Fd* out, uint16_t* port);
// Non-blocking accept: an empty Fd when nobody waits.
Status accept_one(const Fd& listener, Fd* out);
// Starts a non-blocking connect to the handle's address.
Status start_connect(const ListenHandle& h, Fd* out);
// Whether a non-blocking connect finished (*ready), or why it failed.
Status connect_finished(int fd, const std::string& peer, bool* ready);
// Applies the per-connection options (NODELAY, buffers, keepalive, user timeout).
void tune_socket(int fd, const TcpOptions& o);

// Failure of a read/write: n == 0 on a read is an orderly close by the peer; otherwise err is errno.
Status io_failure(const char* op, ssize_t n, int err, const std::string& peer, int timeout_s);

std::string peer_of(int fd);

}  // namespace railscope::net::tcp
