// SPDX-License-Identifier: Apache-2.0
// Rank 0's exchanges with a bounded number of open connections (see rank0_desk.h).
#include "rank0_desk.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace railscope::preflight {

Desk::Desk(int listen_fd, JobSecret key, size_t max_held, int come_back_ms)
    : listen_fd_(listen_fd), key_(key), max_held_(max_held), come_back_ms_(come_back_ms) {}

std::optional<Caller> Desk::next(Clock::time_point accept_by, Clock::time_point until) {
  std::string peer;
  Fd fd = socket::accept_until(listen_fd_, accept_by, &peer, &spare_).fd;
  if (!fd) return std::nullopt;
  // A caller gets at most 10 s for its hello and frame, so a silent connection cannot hold the others
  // up long. The frame binds the connection to its rank (its tag covers the rank).
  const auto by = std::min(until, Clock::now() + std::chrono::seconds(10));
  Caller c{std::move(fd), FrameAuth(key_, true, -1), std::nullopt, std::move(peer), {}};
  if (exchange_hellos(c.fd.get(), c.auth, by, &c.error))
    c.frame = receive_frame(c.fd.get(), c.auth, by, &c.error);
  return c;
}

bool Desk::answer(Caller& c, FrameType type, const std::string& payload, std::string* error) {
  const bool sent =
      send_frame(c.fd.get(), c.auth, type, payload, Clock::now() + std::chrono::seconds(10), error);
  c.fd = Fd();
  return sent;
}

void Desk::hold_or_defer(int rank, Caller&& c) {
  if (const auto it = held_.find(rank); it != held_.end()) {
    it->second = std::move(c);
    return;
  }
  if (held_.size() < max_held_) {
    held_.emplace(rank, std::move(c));
    peak_held_ = std::max(peak_held_, held_.size());
    return;
  }
  // The rank polls again; a failed send only means it is gone, which its next step finds out.
  std::string ignored;
  ++deferred_;
  answer(c, FrameType::Later, nlohmann::json{{"ms", come_back_ms_}}.dump(), &ignored);
}

std::vector<std::pair<int, Caller>> Desk::release(const std::function<bool(int rank)>& ready) {
  std::vector<std::pair<int, Caller>> out;
  for (auto it = held_.begin(); it != held_.end();) {
    if (ready(it->first)) {
      out.emplace_back(it->first, std::move(it->second));
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

int come_back_ms_for(size_t waiting) { return static_cast<int>(std::min<size_t>(250 + waiting, 5000)); }

int come_back_ms_from(const std::string& payload) {
  const auto j = nlohmann::json::parse(payload, nullptr, false);
  if (!j.is_object() || !j.contains("ms") || !j["ms"].is_number_integer()) return 1000;
  return static_cast<int>(std::clamp<int64_t>(j["ms"].get<int64_t>(), 10, 10000));
}

}  // namespace railscope::preflight
