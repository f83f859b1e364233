// The engine interface's Status: a success is one word and free to pass around (the data path
// returns one from every call); a failure carries its finding through copies and moves intact.
#include <gtest/gtest.h>

#include <type_traits>
#include <utility>

#include "plugin/net/transport.h"

namespace railscope::net {
namespace {

TEST(NetStatus, SuccessIsSmallAndHasAnEmptyFinding) {
  static_assert(sizeof(Status) <= 2 * sizeof(void*));
  static_assert(std::is_nothrow_move_constructible_v<Status>);
  const Status st = Status::success();
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.finding().entry, nullptr);
  EXPECT_TRUE(st.finding().detail.empty());
}

TEST(NetStatus, FailureKeepsCodeAndFindingThroughCopyAndMove) {
  Status st =
      Status::fail(ncclRemoteError, "peer.bad_handshake", "bad magic from 10.0.0.2", "check versions");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.finding().id(), "peer.bad_handshake");

  Status copy = st;  // a deep copy: changing one does not change the other
  copy.finding().detail += "; connection x";
  EXPECT_EQ(copy.code, ncclRemoteError);
  EXPECT_EQ(copy.finding().detail, "bad magic from 10.0.0.2; connection x");
  EXPECT_EQ(st.finding().detail, "bad magic from 10.0.0.2");

  Status moved = std::move(st);
  EXPECT_EQ(moved.code, ncclRemoteError);
  EXPECT_EQ(moved.finding().effective_fix(), "check versions");

  Status assigned;
  assigned = copy;
  EXPECT_EQ(assigned.finding().detail, copy.finding().detail);
  assigned = assigned;  // self-assignment keeps it
  EXPECT_EQ(assigned.finding().id(), "peer.bad_handshake");
}

TEST(NetStatus, UnknownIdStillNamesADiagnosis) {
  const Status st = Status::fail(ncclInternalError, "no.such.id", "x");
  EXPECT_EQ(st.finding().id(), "internal.unknown_diagnosis");
}

}  // namespace
}  // namespace railscope::net
