// SPDX-License-Identifier: Apache-2.0
// How a listener (both engines) logs the connections it refused before they proved they were meant for
// it: one line per source address and kind group per interval, with counts, instead of one per
// connection (a flood must not flood NCCL's log either). A single stray (a port scanner's probe, a
// health check) is INFO: nothing is wrong with the job. A flood (the listener had to close unverified
// connections to make room) and a peer of another railscope release are WARN.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/net/transport.h"

namespace railscope::net {

// The kinds of refusal; the names appear in the log lines.
namespace refusal {
inline constexpr std::string_view kSilent = "silent";                 // no hello within the deadline
inline constexpr std::string_view kClosed = "closed";                 // closed or reset before its hello
inline constexpr std::string_view kMalformed = "malformed";           // not railscope's handshake
inline constexpr std::string_view kWrongListener = "wrong_listener";  // a hello for another listener
inline constexpr std::string_view kVersion = "version";               // railscope of another release
inline constexpr std::string_view kEvicted = "evicted";               // closed to make room (flood)
}  // namespace refusal

// The finding for an unverified connection closed to make room for a newer one.
Status connection_flood(const std::string& peer, const std::string& listener, size_t held, size_t from_source,
                        std::chrono::milliseconds age);

class RefusalLog {
 public:
  using Clock = std::chrono::steady_clock;
  // At most one line per source and kind group in this interval.
  static constexpr Clock::duration kInterval = std::chrono::seconds(10);
  // Sources remembered at once; refusals from further ones are counted under "other sources".
  static constexpr size_t kMaxSources = 32;

  explicit RefusalLog(std::string listener) : listener_(std::move(listener)) {}
  RefusalLog(const RefusalLog&) = delete;
  RefusalLog& operator=(const RefusalLog&) = delete;
  ~RefusalLog() { flush_all(); }

  const std::string& listener() const { return listener_; }
  // Counts a refusal of kind (one of refusal::*) from source (an address without port); logs it now
  // when nothing was logged for this source and group within the interval.
  void note(const std::string& source, std::string_view kind, const Status& why, Clock::time_point now);
  // Logs the counts of every source whose interval is over (call it on every accept()).
  void flush(Clock::time_point now);
  // Logs every count not logged yet (the listener closes).
  void flush_all();

 private:
  enum class Group : uint8_t { Stray, Flood, Version };
  static constexpr size_t kKinds = 6;
  struct Entry {
    std::string source;
    Group group = Group::Stray;
    Clock::time_point last_line{};
    std::array<uint32_t, kKinds> unlogged{};
    std::string last_why;
  };
  Entry* find(const std::string& source, Group group, Clock::time_point now);
  // more: a line of counts after an earlier one (flush), not a first line.
  void emit(Entry* e, Clock::time_point now, bool more);

  std::string listener_;
  std::vector<Entry> entries_;
};

}  // namespace railscope::net
