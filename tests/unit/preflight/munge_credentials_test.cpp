// SPDX-License-Identifier: Apache-2.0
// MUNGE as the job's secret, through a real munged (started here with a key and socket of its own):
// the handshake of frame_auth.h with real credentials, munged's refusal of a replayed one, and a node
// without munged named as such.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "frame_auth.h"
#include "frame_delivery.h"
#include "munge_credentials.h"

namespace railscope::preflight {
namespace {

constexpr const char* kMunged = "/usr/sbin/munged";

class MungeDaemon : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kMunged, X_OK) != 0) GTEST_SKIP() << kMunged << " is not installed (Debian package munge)";
    char tmpl[] = "/tmp/railscope-munge.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(::chmod(dir_.c_str(), 0711), 0);  // munged wants its socket's folder searchable by all
    {
      std::ofstream key(dir_ + "/key", std::ios::binary);
      std::ifstream rnd("/dev/urandom", std::ios::binary);
      std::string bytes(1024, '\0');
      rnd.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      key << bytes;
    }
    ASSERT_EQ(::chmod((dir_ + "/key").c_str(), 0400), 0);
    socket_ = dir_ + "/socket";
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      ::freopen("/dev/null", "w", stderr);  // munged's log lines go to its --log-file
      const std::string args[] = {"--key-file=" + dir_ + "/key", "--socket=" + socket_,
                                  "--pid-file=" + dir_ + "/pid", "--seed-file=" + dir_ + "/seed",
                                  "--log-file=" + dir_ + "/log"};
      ::execl(kMunged, kMunged, "-F", "--force", "--origin=127.0.0.1", args[0].c_str(), args[1].c_str(),
              args[2].c_str(), args[3].c_str(), args[4].c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 100 && ::access(socket_.c_str(), F_OK) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(::access(socket_.c_str(), F_OK), 0) << "munged made no socket in 5 s (see " << dir_ << "/log)";
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string dir_, socket_;
  pid_t pid_ = -1;
};

TEST_F(MungeDaemon, RealCredentialsKeyAConnectionAndAreNotOpenedTwice) {
  std::string e;
  const auto svc = open_munge(socket_, &e);
  ASSERT_TRUE(svc) << e;
  EXPECT_STREQ(svc->name(), "munge");
  const JobSecret secret(svc, "97");
  FrameAuth rank0(secret, true, -1), rank1(secret, false, 1);
  ASSERT_TRUE(rank1.ok()) << rank1.error();
  const std::string hello = rank1.seal(FrameType::Hello, {});
  ASSERT_TRUE(deliver(rank1, rank0.seal(FrameType::Hello, {}), &e)) << e;
  ASSERT_TRUE(deliver(rank0, hello, &e)) << e;
  EXPECT_EQ(rank0.rank(), 1);
  ASSERT_TRUE(deliver(rank0, rank1.seal(FrameType::Report, "{}"), &e)) << e;
  ASSERT_TRUE(deliver(rank1, rank0.seal(FrameType::Verdict, "{}"), &e)) << e;
  // The same hello on a second connection: munged refuses the credential it decoded once.
  FrameAuth again(secret, true, -1);
  EXPECT_FALSE(deliver(again, hello, &e));
  EXPECT_NE(e.find("the rank's credential was refused (munge: "), std::string::npos) << e;
  EXPECT_NE(e.find("eplay"), std::string::npos) << e;
}

TEST_F(MungeDaemon, ANodeWithoutMungedIsNamed) {
  std::string e;
  EXPECT_FALSE(open_munge(dir_ + "/no-such-socket", &e));
  EXPECT_NE(e.find("munge: "), std::string::npos) << e;
  EXPECT_NE(e.find("ocket"), std::string::npos) << e;
}

}  // namespace
}  // namespace railscope::preflight
