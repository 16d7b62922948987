// SPDX-License-Identifier: Apache-2.0
// DeviceCalls against real files and FIFOs: a write to a FIFO nobody reads blocks in
// open(2) as a write to a wedged driver blocks on its device lock, and opening the
// other end lets it return. No root needed.
#include "vfready/host/device_calls.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "temp_dir.hpp"

namespace {

using vfready::host::DeviceCalls;
using vfready::host::DeviceOp;
using vfready::host::kStuck;
using Kind = DeviceOp::Kind;
using std::chrono::milliseconds;
namespace fs = std::filesystem;

class DeviceCallsTest : public ::testing::Test {
 protected:
  [[nodiscard]] std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void put(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
  }
  [[nodiscard]] std::string got(const std::string& name) const {
    std::ifstream in(path(name));
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // File `name` as one call reads it.
  [[nodiscard]] std::string read(DeviceCalls& calls, const std::string& name) const {
    return calls
        .run("0000:18:00.0", std::vector<DeviceOp>{{Kind::kRead, path(name), {}}},
             milliseconds(5000))
        .back()
        .text;
  }
  static std::string got_file(const std::string& file) {
    std::ifstream in(file);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // Waits until a call left behind returns, at most `bound`.
  static std::vector<vfready::host::ReturnedCall> returned(DeviceCalls& calls, milliseconds bound) {
    const auto until = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < until) {
      if (auto r = calls.collect(); !r.empty()) {
        return r;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    return {};
  }

  vfready::testing::TempDir temp_{"vfready-device-calls"};
  const std::string& dir_ = temp_.path();
};

TEST_F(DeviceCallsTest, ReadsAndWritesInAHelperWithTheKernelsErrno) {
  DeviceCalls calls;
  put("sriov_numvfs", "8\n");
  put("node", "");  // an attribute is there to write; a write never creates a file
  const std::vector<DeviceOp> ops = {{Kind::kRead, path("sriov_numvfs"), {}},
                                     {Kind::kWrite, path("node"), "00:11"},
                                     {Kind::kRead, path("absent"), {}}};
  const auto r = calls.run("0000:18:00.0", ops, milliseconds(5000));
  ASSERT_EQ(r.size(), 3U);
  EXPECT_EQ(r[0].err, 0);
  EXPECT_EQ(r[0].text, "8");
  EXPECT_EQ(r[1].err, 0);
  EXPECT_EQ(got("node"), "00:11");
  EXPECT_EQ(r[2].err, ENOENT);  // a failed read does not stop the batch
}

// A write flagged keep_open (drivers_probe) goes to the file the helper opened for the
// first one: replaced under its name, the file still gets the next write through the
// old descriptor, where a write without the flag opens the name again.
// A file named under a root is opened there; an empty root is "/" (as RootedSysfs joins
// it); without one, the path is taken as it is.
TEST_F(DeviceCallsTest, OpensAFileUnderTheRootItIsGiven) {
  DeviceCalls calls;
  put("a", "under");
  const auto read = [&](const std::string& file, std::optional<std::string_view> root) {
    const std::vector<DeviceOp> ops = {{Kind::kRead, file, {}}};
    const auto r = calls.run("0000:18:00.0", ops, milliseconds(5000), root);
    return r.back().err == 0 ? r.back().text : "errno " + std::to_string(r.back().err);
  };
  EXPECT_EQ(read("a", dir_), "under");
  EXPECT_EQ(read(dir_.substr(1) + "/a", ""), "under");
  EXPECT_EQ(read(path("a"), std::nullopt), "under");
  EXPECT_NE(read("a", std::nullopt), "under") << "a relative path is not taken under a root";
}

TEST_F(DeviceCallsTest, KeepsAFileWrittenAgainAndAgainOpen) {
  DeviceCalls calls;  // one thread: each call takes the helper the last one gave back
  put("drivers_probe", "");
  const auto write = [&](const std::string& value, bool keep_open) {
    const std::vector<DeviceOp> ops = {{Kind::kWrite, path("drivers_probe"), value, keep_open}};
    return calls.run("0000:18:00.0", ops, milliseconds(5000)).back().err;
  };
  ASSERT_EQ(write("0000:18:00.2", true), 0);
  EXPECT_EQ(got("drivers_probe"), "0000:18:00.2");
  fs::rename(path("drivers_probe"), path("replaced"));
  put("drivers_probe", "");
  ASSERT_EQ(write("0000:18:00.3", true), 0);
  EXPECT_EQ(got("replaced"), "0000:18:00.3");  // at offset 0, as a new open would
  EXPECT_EQ(got("drivers_probe"), "");
  ASSERT_EQ(write("0000:18:00.4", false), 0);
  EXPECT_EQ(got("drivers_probe"), "0000:18:00.4");
  EXPECT_EQ(got("replaced"), "0000:18:00.3");
}

TEST_F(DeviceCallsTest, StopsAfterTheFirstWriteThatFails) {
  DeviceCalls calls;
  put("node", "");
  put("policy", "Down");
  const std::vector<DeviceOp> ops = {{Kind::kWrite, path("node"), "1"},
                                     {Kind::kWrite, path("no/such/port"), "2"},
                                     {Kind::kWrite, path("policy"), "Up"}};
  const auto r = calls.run("0000:18:00.0", ops, milliseconds(5000));
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].err, 0);
  EXPECT_EQ(r[1].err, ENOENT);
  EXPECT_EQ(got("node"), "1");
  EXPECT_EQ(got("policy"), "Down");
}

TEST_F(DeviceCallsTest, AnswersEveryCallOfABatchLargerThanOneMessage) {
  DeviceCalls calls;
  std::vector<DeviceOp> ops;
  for (int i = 0; i < 40; ++i) {
    put("a" + std::to_string(i), std::to_string(i) + "\n");
    ops.push_back({Kind::kRead, path("a" + std::to_string(i)), {}});
  }
  const auto r = calls.run("0000:18:00.0", ops, milliseconds(5000));
  ASSERT_EQ(r.size(), 40U);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(r[i].text, std::to_string(i));
  }
}

TEST_F(DeviceCallsTest, ACallPastItsDeadlineLeavesItsDeviceStuckUntilItReturns) {
  DeviceCalls calls;
  ASSERT_EQ(mkfifo(path("sriov_numvfs").c_str(), 0600), 0);
  put("other", "1\n");
  const std::vector<DeviceOp> hang = {{Kind::kWrite, path("sriov_numvfs"), "8"}};
  const auto first = calls.run("0000:18:00.0", hang, milliseconds(200));
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(first[0].err, kStuck);
  const auto stuck = calls.stuck("0000:18:00.0");
  ASSERT_TRUE(stuck.has_value());
  EXPECT_THAT(stuck->call, ::testing::HasSubstr("write 8 to " + path("sriov_numvfs")));
  EXPECT_EQ(stuck->deadline, milliseconds(200));
  // Every later call for the device answers at once, even one that would not block.
  const std::vector<DeviceOp> read = {{Kind::kRead, path("other"), {}}};
  EXPECT_EQ(calls.run("0000:18:00.0", read, milliseconds(60000)).back().err, kStuck);
  // Another device is not held up.
  EXPECT_EQ(calls.run("0000:19:00.0", read, milliseconds(5000)).back().text, "1");
  EXPECT_FALSE(calls.stuck("0000:19:00.0").has_value());

  // The "driver" returns: the reader end of the FIFO lets the helper's open and write go.
  const int reader = ::open(path("sriov_numvfs").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  const auto back = returned(calls, milliseconds(10000));
  ::close(reader);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].stuck.device, "0000:18:00.0");
  EXPECT_EQ(back[0].err, 0);
  EXPECT_FALSE(calls.stuck("0000:18:00.0").has_value());
  EXPECT_EQ(calls.run("0000:18:00.0", read, milliseconds(5000)).back().text, "1");
}

// A call left behind names the helper that makes it, forked by the caller or by a
// spawner, and says its state as it is when asked: here waiting in open(2) of a FIFO
// ('S'), then stopped ('T').
TEST_F(DeviceCallsTest, ACallLeftBehindNamesItsHelperAndItsStateNow) {
  for (const bool spawner : {false, true}) {
    SCOPED_TRACE(spawner ? "a spawner's helper" : "a helper of the caller's own");
    DeviceCalls calls;
    ASSERT_TRUE(!spawner || calls.start_spawner());
    const auto fifo = path(spawner ? "numvfs-spawned" : "numvfs-forked");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const std::vector<DeviceOp> hang = {{Kind::kWrite, fifo, "8"}};
    ASSERT_EQ(calls.run("0000:18:00.0", hang, milliseconds(200)).back().err, kStuck);
    const auto stuck = calls.stuck("0000:18:00.0");
    ASSERT_TRUE(stuck.has_value());
    ASSERT_GT(stuck->helper_pid, 0);
    EXPECT_EQ(got_file("/proc/" + std::to_string(stuck->helper_pid) + "/comm"), "vfready-call\n");
    EXPECT_EQ(stuck->helper_state, 'S');
    ASSERT_EQ(::kill(stuck->helper_pid, SIGSTOP), 0);
    const auto until = std::chrono::steady_clock::now() + milliseconds(10000);
    while (calls.stuck("0000:18:00.0")->helper_state != 'T' &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_EQ(calls.stuck("0000:18:00.0")->helper_state, 'T');
    ASSERT_EQ(::kill(stuck->helper_pid, SIGCONT), 0);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(reader, 0);
    EXPECT_EQ(returned(calls, milliseconds(10000)).size(), 1U);
    ::close(reader);
  }
}

// Waits until `fd` is readable, at most `bound`.
bool readable(int fd, milliseconds bound) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(bound.count())) == 1;
}

// The descriptor the daemon's loop watches turns readable when a call left behind
// returns, and not before; collect() takes what it tells.
TEST_F(DeviceCallsTest, TheReturnsDescriptorTurnsReadableWhenACallLeftBehindReturns) {
  DeviceCalls calls;
  const int returns = calls.returns_fd();
  ASSERT_GE(returns, 0);
  EXPECT_EQ(calls.returns_fd(), returns);
  ASSERT_EQ(mkfifo(path("sriov_numvfs").c_str(), 0600), 0);
  const std::vector<DeviceOp> hang = {{Kind::kWrite, path("sriov_numvfs"), "8"}};
  ASSERT_EQ(calls.run("0000:18:00.0", hang, milliseconds(200)).back().err, kStuck);
  EXPECT_FALSE(readable(returns, milliseconds(0)));
  const int reader = ::open(path("sriov_numvfs").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  EXPECT_TRUE(readable(returns, milliseconds(10000)));
  const auto back = calls.collect();
  ::close(reader);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].err, 0);
  EXPECT_FALSE(readable(returns, milliseconds(0)));
  EXPECT_FALSE(calls.stuck("0000:18:00.0").has_value());
}

TEST_F(DeviceCallsTest, AStartedCallAnswersThroughItsDescriptor) {
  DeviceCalls calls;
  put("uevent", "DRIVER=mlx5_core\n");
  put("drivers_probe", "");
  const std::vector<DeviceOp> ops = {{Kind::kWrite, path("drivers_probe"), "0000:18:00.1"},
                                     {Kind::kRead, path("uevent"), {}}};
  auto started = calls.start("0000:18:00.0", ops, milliseconds(5000));
  ASSERT_TRUE(started.pending.has_value());
  EXPECT_TRUE(started.answer.empty());
  ASSERT_TRUE(readable(started.pending->fd(), milliseconds(10000)));
  const auto got = calls.finish(std::move(*started.pending));
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].err, 0);
  EXPECT_EQ(got[1].text, "DRIVER=mlx5_core");
  EXPECT_EQ(this->got("drivers_probe"), "0000:18:00.1");
}

TEST_F(DeviceCallsTest, AStartedCallNotAnsweredByItsDeadlineLeavesItsDeviceStuck) {
  DeviceCalls calls;
  ASSERT_EQ(mkfifo(path("sriov_numvfs").c_str(), 0600), 0);
  const std::vector<DeviceOp> hang = {{Kind::kWrite, path("sriov_numvfs"), "8"}};
  auto started = calls.start("0000:18:00.0", hang, milliseconds(100));
  ASSERT_TRUE(started.pending.has_value());
  // The caller's loop watches the descriptor until `until`; nothing comes.
  const auto left =
      std::chrono::ceil<milliseconds>(started.pending->until() - vfready::host::Clock::now());
  EXPECT_FALSE(readable(started.pending->fd(), std::max(left, milliseconds(0))));
  const auto got = calls.finish(std::move(*started.pending));
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].err, kStuck);
  ASSERT_TRUE(calls.stuck("0000:18:00.0").has_value());
  EXPECT_EQ(calls.stuck("0000:18:00.0")->deadline, milliseconds(100));
  // A call started for a stuck device answers at once, without a helper.
  const auto again = calls.start("0000:18:00.0", hang, milliseconds(100));
  EXPECT_FALSE(again.pending.has_value());
  ASSERT_EQ(again.answer.size(), 1U);
  EXPECT_EQ(again.answer[0].err, kStuck);
  const int reader = ::open(path("sriov_numvfs").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  const auto back = returned(calls, milliseconds(10000));
  ::close(reader);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].err, 0);
}

TEST_F(DeviceCallsTest, AStartedCallTakesOneMessagesWorthOfOps) {
  DeviceCalls calls;
  put("a", "1\n");
  const std::vector<DeviceOp> many(DeviceCalls::kMaxOps + 1, {Kind::kRead, path("a"), {}});
  const auto started = calls.start("0000:18:00.0", many, milliseconds(5000));
  EXPECT_FALSE(started.pending.has_value());
  ASSERT_EQ(started.answer.size(), 1U);
  EXPECT_EQ(started.answer[0].err, EINVAL);
}

TEST_F(DeviceCallsTest, HelpersHoldNoDescriptorOfTheDaemon) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  {
    DeviceCalls calls;
    put("x", "1");
    // A helper is made while the pipe is open, and stays idle after the call.
    ASSERT_EQ(calls
                  .run("0000:18:00.0", std::vector<DeviceOp>{{Kind::kRead, path("x"), {}}},
                       milliseconds(5000))
                  .back()
                  .err,
              0);
    ::close(pipe_fds[1]);
    // The read end sees the hang-up only if no helper holds a copy of the write end.
    pollfd p{pipe_fds[0], POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1);
    EXPECT_NE(p.revents & POLLHUP, 0);
  }
  ::close(pipe_fds[0]);
}

// close_idle ends the idle helpers: one that keeps a FIFO open (a keep_open write opens
// it; pwrite on a FIFO fails, the descriptor stays) lets it go only when it exits.
TEST_F(DeviceCallsTest, ClosingTheIdleHelpersEndsThem) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  const int reader = ::open(path("fifo").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  DeviceCalls calls;
  const std::vector<DeviceOp> ops = {{Kind::kWrite, path("fifo"), "x", /*keep_open=*/true}};
  EXPECT_EQ(calls.run("0000:18:00.0", ops, milliseconds(5000)).back().err, ESPIPE);
  pollfd p{reader, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 0), 0);  // the idle helper holds the write end
  calls.close_idle();
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  EXPECT_NE(p.revents & POLLHUP, 0);
  ::close(reader);
  // The next call spawns a helper anew.
  put("x", "1");
  EXPECT_EQ(read(calls, "x"), "1");
}

TEST_F(DeviceCallsTest, ServesManyThreadsAtOnce) {
  DeviceCalls calls;
  put("v", "42\n");
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const auto r =
            calls.run("0000:1" + std::to_string(t) + ":00.0",
                      std::vector<DeviceOp>{{Kind::kRead, path("v"), {}}}, milliseconds(10000));
        right += r.size() == 1 && r[0].text == "42" ? 1 : 0;
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(right.load(), 400);
}

}  // namespace
