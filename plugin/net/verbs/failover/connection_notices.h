// SPDX-License-Identifier: Apache-2.0
// The failover notices (failover_message.h) on a connection's out-of-band channel, and the findings a
// connection logs about a port it moved off or back to: what both protocols' failovers
// (eager/eager_failover.cpp, receiver_driven/receiver_driven_failover.cpp) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "plugin/net/verbs/connection.h"
#include "plugin/net/verbs/failover/failover_message.h"

namespace railscope::net::verbs::failover {

// A notice that breaks the exchange's rules: the connection fails with peer.bad_handshake.
Status bad_notice(std::string text);
// Sends n; what the socket does not take at once goes with the next flush.
void send_notice(Connection& c, const Notice& n);
// The sender's next notice from the receiver, decoded once (*out; nullopt when none came yet). An answer
// to a PROBE older than `epoch` is dropped. `due` names what was expected, for the error.
Status next_notice(Connection& c, uint32_t epoch, const char* due, std::optional<Notice>* out);
// The receiver's next notice from the sender, decoded once (*out; nullopt when none came). A peer gone
// is no error here: the liveness check reports it, in its words.
Status next_sender_notice(Connection& c, std::optional<Notice>* out);
// How long a sender's exchange may take, from the failure to HELD (or from RESTORED to its answer):
// what was posted drains within the QPs' retry budget, and the receiver answers at its liveness checks
// (the retry budget, at least 10 s, as for a probe's answer). The messages it holds wait on it, not on
// their stall budget.
Connection::Clock::duration exchange_budget(const Connection& c);
// progress.stalled when the exchange started at `since` is past exchange_budget: `waiting_for` says at
// which step it stands ("the receiver's HELD"). Called at each poll of an exchange: nothing is built
// while it is within its budget.
Status exchange_check(Connection& c, Connection::Clock::time_point since, Connection::Clock::time_point now,
                      const char* waiting_for);
// The first QP of `mask`, for naming its port.
size_t first_qp(uint64_t mask);
// The QP (its index) of completion wc, polled from the lane now drained, and in *path the QPs that share
// its local port and peer device: what a completion in error takes down. c.qps().size() when it names
// no QP of the connection, or one beyond a notice's mask.
size_t completion_path(const Connection& c, const ibv_wc& wc, uint64_t* path);
// The sender's link.failover up to what follows for its protocol: "port P of connection C failed (cause)
// at T: its QPs M stopped; traffic moves to the ports left (their share), K <messages> in flight checked
// with the receiver". `failed`: every QP moved so far, M among them.
std::string moved_off_text(const Connection& c, uint64_t mask, uint64_t failed, const std::string& cause,
                           size_t in_flight, const char* messages);
// When the port of QP q failed, for a finding: "at 01:02:03.456 UTC", and when its link went down if it
// is down ("... (its link went down at ...)").
std::string failure_time(const Connection& c, size_t q);

// A connection's link.failover or link.recovered about the port of QP q: at WARN when it is the first of
// this process's connections to say it for the outage (PortHealth's outage findings), at INFO otherwise,
// so that a port under many connections warns once.
enum class PortNews { kFailover, kRecovered };
void log_port_finding(const Connection& c, size_t q, PortNews news, const char* id, std::string text);
// The end of a sender's link.failover: the port's failures on this connection, and whether it is kept
// out or comes back after a probe.
std::string failures_text(bool kept_out, int failures);
// link.recovered: the sender's, once the probe of QPs `mask` passed (`out_for` seconds after the traffic
// left their port); the receiver's, once the sender said so. `failed`: the QPs still out.
void log_sender_recovered(const Connection& c, uint64_t mask, double out_for, uint64_t failed);
void log_receiver_recovered(const Connection& c, uint64_t qps, uint64_t failed);

}  // namespace railscope::net::verbs::failover
