// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/setup/qos_agreement.h"

#include <fmt/format.h>

#include <mutex>
#include <set>

#include "railscope/core/log.h"

namespace railscope::net::verbs {
namespace {

std::string setting_text(int traffic_class, int service_level, bool roce) {
  if (!roce) return fmt::format("service level {}", service_level);
  return fmt::format("traffic class {} (DSCP {}), service level {}", traffic_class, traffic_class >> 2,
                     service_level);
}

std::optional<diag::Finding> mismatch(const std::string& sender_host, int sender_tc, int sender_sl,
                                      const std::string& receiver_host, int receiver_tc, int receiver_sl,
                                      bool roce) {
  const bool differs = sender_sl != receiver_sl || (roce && sender_tc != receiver_tc);
  if (!differs) return std::nullopt;
  return diag::make(
      "qos.tc_mismatch",
      fmt::format(
          "the sender {} uses {} but the receiver {} is set to {}: this connection carries the "
          "sender's, so traffic between the two nodes lands on a different priority in each direction",
          sender_host, setting_text(sender_tc, sender_sl, roce), receiver_host,
          setting_text(receiver_tc, receiver_sl, roce)),
      fmt::format("Set the same NCCL_IB_TC and NCCL_IB_SL (or the same trafficClass in every rank's "
                  "communicator config) on every node of the job, the lossless class's (e.g. "
                  "NCCL_IB_TC=106 for DSCP 26); NCCL_IB_FIFO_TC alone may differ (the class of the "
                  "receiver's clear-to-sends)"));
}

}  // namespace

QosAgreement agree_qos_at_receiver(const LinkParams& own, const std::string& own_host, const EndInfo& sender,
                                   bool roce) {
  QosAgreement a;
  a.traffic_class = roce && own.fifo_traffic_class >= 0 ? own.fifo_traffic_class : sender.traffic_class;
  a.service_level = sender.service_level;
  if (own.qos_known)
    a.mismatch = mismatch(sender.host, sender.traffic_class, sender.service_level, own_host,
                          own.traffic_class, own.service_level, roce);
  return a;
}

void reply_qos(const LinkParams& own, const EndInfo& sender, EndInfo* reply) {
  reply->traffic_class = static_cast<uint8_t>(own.qos_known ? own.traffic_class : sender.traffic_class);
  reply->service_level = static_cast<uint8_t>(own.qos_known ? own.service_level : sender.service_level);
}

std::optional<diag::Finding> check_qos_at_sender(const EndInfo& own, const EndInfo& receiver, bool roce) {
  return mismatch(own.host, own.traffic_class, own.service_level, receiver.host, receiver.traffic_class,
                  receiver.service_level, roce);
}

void warn_qos_mismatch_once(const diag::Finding& f) {
  // Bounded: one entry per peer node and setting; past the bound every further line is logged.
  constexpr size_t kMaxRemembered = 4096;
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::string line = diag::one_line(f);
  {
    std::lock_guard lock(mutex);
    if (seen.contains(line)) return;
    if (seen.size() < kMaxRemembered) seen.insert(line);
  }
  RS_WARN("NET/railscope : {}", line);
}

}  // namespace railscope::net::verbs
