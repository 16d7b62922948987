// SPDX-License-Identifier: Apache-2.0
// DeviceCalls with its helpers made by a spawner process (host/helper_spawner.hpp): a
// real one, one that is gone, and one that cannot make the helper it is asked for (a
// socket end of the test's, which takes the descriptor and closes it). No root needed.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gtest/gtest.h"
#include "temp_dir.hpp"
#include "vfready/host/device_calls.hpp"

namespace {

using vfready::host::DeviceCalls;
using vfready::host::DeviceOp;
using Kind = DeviceOp::Kind;
using std::chrono::milliseconds;
namespace fs = std::filesystem;

class ASpawner : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir_ + "/x") << "1\n"; }

  // One call: a read of `name` (then the result's errno and text).
  [[nodiscard]] vfready::host::DeviceOpResult read(DeviceCalls& calls, const std::string& name,
                                                   milliseconds deadline = milliseconds(5000)) {
    return calls
        .run("0000:18:00.0", std::vector<DeviceOp>{{Kind::kRead, dir_ + "/" + name, {}}}, deadline)
        .back();
  }

  // A spawner that cannot fork: takes each message off `socket` and closes the descriptor
  // it carries (a recv without room for it has the kernel close it), until the caller
  // closes its end.
  static void fail_every_spawn(int socket) {
    char byte = 0;
    while (::recv(socket, &byte, 1, 0) > 0) {
    }
  }

  vfready::testing::TempDir temp_{"vfready-spawner"};
  const std::string& dir_ = temp_.path();
};

TEST_F(ASpawner, MakesHelpersThatServeCalls) {
  DeviceCalls calls;
  ASSERT_TRUE(calls.start_spawner());
  const auto got = read(calls, "x");
  EXPECT_EQ(got.err, 0);
  EXPECT_EQ(got.text, "1");
  EXPECT_EQ(read(calls, "missing").err, ENOENT);
  const std::vector<DeviceOp> write = {{Kind::kWrite, dir_ + "/x", "2"}};
  EXPECT_EQ(calls.run("0000:18:00.0", write, milliseconds(5000)).back().err, 0);
  EXPECT_EQ(read(calls, "x").text, "2");
}

// The spawner is forked from the caller as it is when it starts: it keeps none of its
// descriptors, and neither do the helpers it forks.
TEST_F(ASpawner, HoldsNoDescriptorOfTheCallerNorDoItsHelpers) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  {
    DeviceCalls calls;
    ASSERT_TRUE(calls.start_spawner());  // while the pipe is open
    ASSERT_EQ(read(calls, "x").err, 0);  // a helper, idle after the call
    ::close(pipe_fds[1]);
    pollfd p{pipe_fds[0], POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1);
    EXPECT_NE(p.revents & POLLHUP, 0);
  }
  ::close(pipe_fds[0]);
}

TEST_F(ASpawner, GoneLeavesTheCallerToForkItsHelpers) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  DeviceCalls calls;
  calls.use_spawner(sv[0]);
  ::close(sv[1]);  // the spawner exited
  const auto got = read(calls, "x");
  EXPECT_EQ(got.err, 0);
  EXPECT_EQ(got.text, "1");
}

// A spawner whose forks fail closes each end it is sent: the call on it answers soon
// that its helper is gone (the errno of a helper that died), after the fresh helpers it
// asks for instead (two) fail too, and never waits out its deadline for nobody. (Whether
// the request is sent before the first end is closed, and the answer is its hangup, or
// after, and the send fails, is the scheduler's: both end so.)
TEST_F(ASpawner, AHelperItCouldNotMakeFailsItsCallAtOnce) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  std::thread failing([&] { fail_every_spawn(sv[1]); });
  {
    DeviceCalls calls;
    calls.use_spawner(sv[0]);  // closed with `calls`: the spawner's recv then ends
    const auto start = std::chrono::steady_clock::now();
    const int err = read(calls, "x", milliseconds(60000)).err;
    EXPECT_EQ(err, vfready::host::kHelperGone);  // as when a helper is killed
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  }
  failing.join();
  ::close(sv[1]);
}

}  // namespace
