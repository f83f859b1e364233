// SPDX-License-Identifier: Apache-2.0
// The TCP rendezvous at rank 0: every other rank connects, sends its node report and waits for the
// verdict. The port is reachable by anything on the network, so rank 0 treats every byte as hostile:
// frames are length-prefixed with a magic and a cap and, with the job's secret, authenticated
// (frame_auth.h); every read has a deadline, a frame is copied once into a bounded buffer and parsed from
// that copy (railscope/socket/frame_reader.h); anything malformed or unauthenticated is refused, logged
// and closed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "frame_auth.h"
#include "railscope/socket/endpoints.h"

namespace railscope::preflight {

using socket::Clock;
using socket::Fd;
using socket::listen_on;
using socket::SpareFd;

// Sends one frame sealed by the connection's auth; false with *error on failure (peer gone, deadline).
bool send_frame(int fd, FrameAuth& auth, FrameType type, const std::string& payload,
                Clock::time_point deadline, std::string* error);
// Receives one frame opened by the connection's auth; nullopt with *error on a bad magic, an unknown
// type, a length over kMaxFrame, a tag or rank that does not match, EOF or the deadline.
std::optional<Frame> receive_frame(int fd, FrameAuth& auth, Clock::time_point deadline, std::string* error);
// The hellos that start a connection: each end sends its own, then reads the peer's. false with *error
// (the peer's mode differs: one end has no secret).
bool exchange_hellos(int fd, FrameAuth& auth, Clock::time_point deadline, std::string* error);

// Whether the socket's own address (local) or its peer's is a loopback address (127.0.0.0/8, ::1,
// ::ffff:127.0.0.0/104).
bool on_loopback(int fd, bool local);

// Connects to rank 0 at host:port, retrying (rank 0 may start later) until the deadline; invalid Fd with
// *error ("cannot reach rank 0 at …").
Fd connect_until(const std::string& host, uint16_t port, Clock::time_point deadline, std::string* error);

}  // namespace railscope::preflight
