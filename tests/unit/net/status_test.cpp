// The engine interface's Status: a success is one word and free to pass around (the data path
// returns one from every call); a failure carries its finding through copies and moves intact.
#include <gtest/gtest.h>

#include <string>
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
  const Status& same = assigned;  // through a reference: clang's -Wself-assign-overloaded otherwise
  assigned = same;                // self-assignment keeps it
  EXPECT_EQ(assigned.finding().id(), "peer.bad_handshake");
}

// A detail given as a C string (the out-of-line overload the data path's checks call) makes the same
// finding as one given as a std::string.
TEST(NetStatus, CStringDetailMakesTheSameFinding) {
  const char* detail = "test of a finished receive";
  const Status a = Status::fail(ncclInternalError, "internal.bad_argument", detail);
  const Status b = Status::fail(ncclInternalError, "internal.bad_argument", std::string(detail));
  EXPECT_EQ(a.code, ncclInternalError);
  EXPECT_EQ(a.finding().id(), b.finding().id());
  EXPECT_EQ(a.finding().detail, b.finding().detail);
  EXPECT_EQ(a.finding().effective_fix(), b.finding().effective_fix());
  Status filled;  // finding() on a success creates an empty one to fill
  filled.finding().detail = "x";
  EXPECT_TRUE(filled.ok());
  EXPECT_EQ(filled.finding().detail, "x");
}

TEST(NetStatus, UnknownIdStillNamesADiagnosis) {
  const Status st = Status::fail(ncclInternalError, "no.such.id", "x");
  EXPECT_EQ(st.finding().id(), "internal.unknown_diagnosis");
}

// test() calls the request's tester: an engine sets it when it hands the request out; one it never
// set up fails as an internal error instead of being called through a null pointer.
TEST(NetRequest, TestCallsTheTesterAndAnUnsetOneIsAnError) {
  Request unset;
  int done = 1;
  const Status st = test(&unset, &done, nullptr);
  EXPECT_EQ(st.code, ncclInternalError);
  EXPECT_EQ(st.finding().id(), "internal.bad_argument");

  struct Counted : Request {
    int calls = 0;
  } r;
  r.tester = [](Request* req, int* d, int* sizes) {
    ++static_cast<Counted*>(req)->calls;
    *d = 1;
    if (sizes != nullptr) *sizes = 8;
    return Status::success();
  };
  int size = 0;
  done = 0;
  EXPECT_TRUE(test(&r, &done, &size).ok());
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(size, 8);
}

}  // namespace
}  // namespace railscope::net
