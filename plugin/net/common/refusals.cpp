// SPDX-License-Identifier: Apache-2.0
#include "plugin/net/common/refusals.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "railscope/core/log.h"

namespace railscope::net {
namespace {

constexpr std::array<std::string_view, 6> kKindNames = {refusal::kSilent,    refusal::kClosed,
                                                        refusal::kMalformed, refusal::kWrongListener,
                                                        refusal::kVersion,   refusal::kEvicted};

size_t kind_index(std::string_view kind) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == kind) return i;
  return 2;  // an unnamed kind is counted as malformed
}

}  // namespace

Status connection_flood(const std::string& peer, const std::string& listener, size_t held, size_t from_source,
                        std::chrono::milliseconds age) {
  return Status::fail(
      ncclRemoteError, "peer.connection_flood",
      fmt::format("listener {} holds {} connections that sent no valid hello yet, {} of them "
                  "from {}'s address; closed the oldest, from {}, {:.1f} s after it connected",
                  listener, held, from_source, peer, peer, static_cast<double>(age.count()) / 1e3));
}

RefusalLog::Entry* RefusalLog::find(const std::string& source, Group group, Clock::time_point now) {
  for (Entry& e : entries_)
    if (e.source == source && e.group == group) return &e;
  if (entries_.size() >= kMaxSources) {
    // Forget sources with nothing to log whose interval is over; else count under "other sources".
    std::erase_if(entries_, [&](const Entry& e) {
      return now - e.last_line >= kInterval &&
             std::all_of(e.unlogged.begin(), e.unlogged.end(), [](uint32_t n) { return n == 0; });
    });
    if (entries_.size() >= kMaxSources) {
      const std::string other = "other sources";
      for (Entry& e : entries_)
        if (e.source == other && e.group == group) return &e;
      emit(&entries_.back(), now, true);  // the last slot is given up to the aggregate
      entries_.back().source = other;
      entries_.back().group = group;
      return &entries_.back();
    }
  }
  Entry e;
  e.source = source;
  e.group = group;
  e.last_line = now - kInterval;  // the first refusal is logged at once
  entries_.push_back(std::move(e));
  return &entries_.back();
}

void RefusalLog::note(const std::string& source, std::string_view kind, const Status& why,
                      Clock::time_point now) {
  const Group group = kind == refusal::kEvicted   ? Group::Flood
                      : kind == refusal::kVersion ? Group::Version
                                                  : Group::Stray;
  Entry* e = find(source, group, now);
  ++e->unlogged[kind_index(kind)];
  e->last_why = diag::one_line(why.finding());
  if (now - e->last_line >= kInterval) emit(e, now, false);
}

void RefusalLog::flush(Clock::time_point now) {
  for (Entry& e : entries_)
    if (now - e.last_line >= kInterval) emit(&e, now, true);
}

void RefusalLog::flush_all() {
  const auto now = Clock::now();
  for (Entry& e : entries_) emit(&e, now, true);
}

void RefusalLog::emit(Entry* e, Clock::time_point now, bool more) {
  const uint32_t total = std::accumulate(e->unlogged.begin(), e->unlogged.end(), uint32_t{0});
  if (total == 0) return;
  std::string counts;
  for (size_t i = 0; i < kKinds; ++i)
    if (e->unlogged[i] != 0)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", kKindNames[i], e->unlogged[i]);
  std::string what;
  if (!more && total == 1) {
    const std::string_view kind = std::string_view(counts).substr(0, counts.rfind(' '));
    what = e->group == Group::Flood     ? "closed an unverified connection to make room (flood)"
           : e->group == Group::Version ? "refused a peer of another railscope release"
                                        : fmt::format("dropped a stray connection ({})", kind);
    what += fmt::format(" from {}", e->source);
  } else {
    const char* again = more ? " more" : "";
    what = e->group == Group::Flood
               ? fmt::format("closed {}{} unverified connections to make room (flood)", total, again)
           : e->group == Group::Version
               ? fmt::format("refused {}{} peers of another railscope release", total, again)
               : fmt::format("dropped {}{} stray connections", total, again);
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - e->last_line).count();
    what += fmt::format(" from {} in the last {} s ({})", e->source, secs, counts);
  }
  const char* waiting = more ? "" : ", still waiting for its peer";
  if (e->group == Group::Stray)
    RS_INFO(NCCL_NET, "NET/railscope : listener {} {}{}; the last: {}", listener_, what, waiting,
            e->last_why);
  else
    RS_WARN("NET/railscope : listener {} {}{}; the last: {}", listener_, what, waiting, e->last_why);
  e->unlogged.fill(0);
  e->last_line = now;
}

}  // namespace railscope::net
