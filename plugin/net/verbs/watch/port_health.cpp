// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/verbs/watch/port_health.h"

#include <fmt/format.h>

#include <ctime>

namespace railscope::net::verbs {
namespace {

int64_t to_ns(PortHealth::Clock::time_point t) {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  return ns == 0 ? 1 : ns;  // 0 means "up"
}

PortHealth::Clock::time_point from_ns(int64_t ns) {
  return PortHealth::Clock::time_point(std::chrono::nanoseconds(ns));
}

}  // namespace

// "01:02:03.456 UTC": when a line says "the link went down at", the reader compares it with other logs.
std::string wall_clock_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{:02}:{:02}:{:02}.{:03} UTC", tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void PortHealth::fail(diag::Finding f) {
  {
    std::lock_guard lock(mutex_);
    last_ = std::move(f);
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

diag::Finding PortHealth::last() const {
  std::lock_guard lock(mutex_);
  return last_;
}

bool PortHealth::link_down(Clock::time_point at) {
  int64_t expected = 0;
  const int64_t ns = to_ns(at);
  if (!down_since_ns_.compare_exchange_strong(expected, ns, std::memory_order_acq_rel)) return false;
  std::lock_guard lock(mutex_);
  last_down_text_ = wall_clock_now();
  last_down_ns_.store(ns, std::memory_order_release);
  recovered_ = false;
  outage_findings_.link_went_down();
  return true;
}

PortHealth::Clock::duration PortHealth::link_up(Clock::time_point at) {
  const int64_t since = down_since_ns_.exchange(0, std::memory_order_acq_rel);
  if (since == 0) return Clock::duration::zero();
  const auto down_for = at - from_ns(since);
  last_up_ns_.store(to_ns(at), std::memory_order_release);
  std::lock_guard lock(mutex_);
  recovered_ = true;
  recovered_after_ = down_for;
  return down_for;
}

PortHealth::Clock::time_point PortHealth::down_since() const {
  return from_ns(down_since_ns_.load(std::memory_order_acquire));
}

PortHealth::Clock::time_point PortHealth::last_down() const {
  return from_ns(last_down_ns_.load(std::memory_order_acquire));
}

bool PortHealth::down_within(Clock::time_point now, Clock::duration d) const {
  if (is_down()) return true;
  const int64_t ns = last_up_ns_.load(std::memory_order_acquire);
  return ns != 0 && now - from_ns(ns) < d;
}

std::string PortHealth::last_down_text() const {
  std::lock_guard lock(mutex_);
  return last_down_text_;
}

bool PortHealth::first_failure_of_outage() {
  const int64_t since = down_since_ns_.load(std::memory_order_acquire);
  if (since == 0) return false;
  return failed_outage_ns_.exchange(since, std::memory_order_acq_rel) != since;
}

bool PortHealth::take_recovered(Clock::duration* down_for) {
  std::lock_guard lock(mutex_);
  if (!recovered_) return false;
  recovered_ = false;
  *down_for = recovered_after_;
  return true;
}

bool PortHealth::first_failover_finding(Clock::time_point now) {
  const Clock::time_point down = last_down();
  std::lock_guard lock(mutex_);
  return outage_findings_.first_failover(now, down);
}

bool PortHealth::first_recovery_finding() {
  std::lock_guard lock(mutex_);
  return outage_findings_.first_recovery();
}

bool PortHealth::port_recovery_finding() {
  std::lock_guard lock(mutex_);
  return outage_findings_.port_recovery();
}

void PortHealth::attach(int path_mtu, int timeout, int retry_cnt, std::chrono::microseconds budget) {
  int cur = path_mtu_.load(std::memory_order_acquire);
  while (path_mtu > cur && !path_mtu_.compare_exchange_weak(cur, path_mtu, std::memory_order_acq_rel)) {
  }
  std::function<void()> hook;
  {
    std::lock_guard lock(mutex_);
    if (budget > budget_) {
      budget_ = budget;
      timeout_ = timeout;
      retry_cnt_ = retry_cnt;
    }
    if (users_.fetch_add(1, std::memory_order_acq_rel) == 0) hook = attach_hook_;
  }
  if (hook) hook();
}

void PortHealth::set_attach_hook(std::function<void()> hook) {
  std::lock_guard lock(mutex_);
  attach_hook_ = std::move(hook);
}

void PortHealth::detach() {
  if (users_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // The last connection left: the next ones set the path MTU and budget afresh.
    std::lock_guard lock(mutex_);
    if (users_.load(std::memory_order_acquire) == 0) {
      path_mtu_.store(0, std::memory_order_release);
      budget_ = std::chrono::microseconds{0};
    }
  }
}

std::chrono::microseconds PortHealth::budget(int* timeout, int* retry_cnt) const {
  std::lock_guard lock(mutex_);
  *timeout = timeout_;
  *retry_cnt = retry_cnt_;
  return budget_;
}

void PortHealth::add_totals(const CategoryTotals& delta) {
  for (size_t i = 0; i < kCounterCategories; ++i)
    if (delta[i] != 0) totals_[i].fetch_add(delta[i], std::memory_order_relaxed);
}

CategoryTotals PortHealth::totals() const {
  CategoryTotals out{};
  for (size_t i = 0; i < kCounterCategories; ++i) out[i] = totals_[i].load(std::memory_order_relaxed);
  return out;
}

}  // namespace railscope::net::verbs
