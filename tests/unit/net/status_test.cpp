// SPDX-License-Identifier: Apache-2.0
// The engine interface's Status: a success is one word and free to pass around (the data path
// returns one from every call); a failure carries its finding through copies and moves intact.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "plugin/net/transport.h"
#include "railscope/core/log.h"

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
// set up fails as an internal error instead of being called through a null pointer. A tester returns
// NCCL's code and logs its failure's one line itself (the ABI adapter's test() only tail-calls it).
std::vector<std::string>& warnings() {
  static std::vector<std::string> w;
  return w;
}

TEST(NetRequest, TestCallsTheTesterAndAnUnsetOneIsAnError) {
  warnings().clear();
  log::set_extra_sink([](log::Level level, std::string_view line) {
    if (level == log::Level::Warn) warnings().emplace_back(line);
  });
  Request unset;
  int done = 1;
  EXPECT_EQ(test(&unset, &done, nullptr), ncclInternalError);
  ASSERT_EQ(warnings().size(), 1u);
  EXPECT_NE(warnings()[0].find("NET/railscope test: "), std::string::npos) << warnings()[0];
  EXPECT_NE(warnings()[0].find("internal.bad_argument"), std::string::npos) << warnings()[0];
  EXPECT_NE(warnings()[0].find("no engine set up"), std::string::npos) << warnings()[0];

  struct Counted : Request {
    int calls = 0;
  } r;
  r.tester = [](Request* req, int* d, int* sizes) {
    ++static_cast<Counted*>(req)->calls;
    *d = 1;
    if (sizes != nullptr) *sizes = 8;
    return ncclSuccess;
  };
  int size = 0;
  done = 0;
  EXPECT_EQ(test(&r, &done, &size), ncclSuccess);
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(size, 8);

  // tested_result: a success passes silently, a failure is logged once with its code.
  EXPECT_EQ(tested_result(Status::success()), ncclSuccess);
  EXPECT_EQ(warnings().size(), 1u);
  EXPECT_EQ(tested_result(Status::fail(ncclRemoteError, "peer.closed", "the peer went away")),
            ncclRemoteError);
  ASSERT_EQ(warnings().size(), 2u);
  EXPECT_NE(warnings()[1].find("the peer went away"), std::string::npos) << warnings()[1];
  log::set_extra_sink(nullptr);
}

}  // namespace
}  // namespace railscope::net
