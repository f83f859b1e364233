// SPDX-License-Identifier: Apache-2.0
// The socket layer both engines share, over railscope/socket/ (descriptors, listen/accept/connect,
// deadlines): non-blocking listen/accept/connect on a handle's address, the options
// every connection socket gets (TCP_NODELAY, buffer sizes, keepalive and TCP_USER_TIMEOUT so a dead
// peer turns into an error within the configured bound), a liveness check that unread bytes cannot
// fool, and the mapping of socket errors to the diagnosis catalogue (peer.closed for EOF/reset,
// progress.stalled for a timed-out peer, net.listen_failed when no listener can be opened).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "plugin/net/transport.h"
#include "railscope/socket/fd.h"

namespace railscope::net {

using railscope::socket::Fd;

// An address as both engines' handles carry it: family 4 (IPv4 in bytes 0..3) or 6.
struct SocketAddress {
  int family = 4;
  std::array<uint8_t, 16> addr{};
  uint16_t port = 0;
};

// "10.0.0.2:41234" / "[fe80::1]:41234".
std::string address_text(const SocketAddress& a);

// A non-blocking listener bound to a.addr (port 0: the kernel picks); *port receives the port.
Status open_listener(const SocketAddress& a, Fd* out, uint16_t* port);
// Non-blocking accept: an empty Fd when nobody waits.
Status accept_one(const Fd& listener, Fd* out);
// Starts a non-blocking connect to a.
Status start_connect(const SocketAddress& a, Fd* out);
// Whether a non-blocking connect finished (*ready), or why it failed.
Status connect_finished(int fd, const std::string& peer, bool* ready);

// Per-connection options: NODELAY; SO_SNDBUF/SO_RCVBUF when sockbuf > 0; keepalive probes and
// TCP_USER_TIMEOUT so a silent peer (host gone, link down) is noticed within ~timeout_s (see
// allow_slow_reader for a connection whose receiver may not read for long).
void tune_socket(int fd, int timeout_s, int sockbuf = 0);

// Linux ends a connection whose zero window (a live receiver that does not read) lasts longer than
// TCP_USER_TIMEOUT, as if the peer were gone (tcp(7); reproduced by the TCP engine's ABI test
// AReceiverLaterThanTheTimeoutIsNoFailure). A connection whose receiver may legitimately not read for
// a long time (NCCL's: the receiving rank is busy elsewhere, in a checkpoint, a long kernel) drops it
// after the handshake: keepalive still notices a silent peer while idle, and peer_unresponsive()
// below while data waits for an acknowledgement.
void allow_slow_reader(int fd);

// What the kernel knows of a connection's acknowledgements (TCP_INFO).
struct AckState {
  uint32_t unacked = 0;       // segments sent and not acknowledged
  uint32_t probes = 0;        // zero-window probes sent and not answered
  uint32_t ms_since_ack = 0;  // since the last acknowledgement arrived
};
std::optional<AckState> ack_state(int fd);
// Whether the peer's kernel stopped answering: data or two zero-window probes unanswered, and no
// acknowledgement for timeout_s. A receiver that is alive but does not read answers every probe
// (probes returns to 0) and has nothing unacknowledged, whatever the time since its last answer.
bool peer_unresponsive(const AckState& a, int timeout_s);

// Whether the peer has closed or reset the connection, without consuming bytes it sent
// (poll with POLLRDHUP: a peer that wrote and then closed is seen as gone though its bytes are
// unread). success while it is connected; peer.closed otherwise.
Status peer_alive(int fd, const std::string& peer);

// Failure of a read/write: n == 0 on a read is an orderly close by the peer; otherwise err is errno.
Status io_failure(const char* op, ssize_t n, int err, const std::string& peer, int timeout_s);

// The other end of a connected socket as address_text writes it, "?" when unknown.
std::string peer_of(int fd);
// Its address alone, without the port ("10.0.0.2", "fe80::1"): what a listener limits per source.
std::string source_of(int fd);

// The IPv4 address a listener advertises when nothing better is known: the first non-loopback IPv4
// interface address, else 127.0.0.1 (bytes a.b.c.d in out[0..3]).
void fallback_address(std::array<uint8_t, 16>* out);

}  // namespace railscope::net
