// SPDX-License-Identifier: Apache-2.0
// A worker process (host::fork_worker) and the daemon's DeviceCalls: what the worker
// leaves behind is handed to the daemon, which then hears it return; what the daemon had
// left behind stays stuck in the worker. A write to a FIFO nobody reads blocks in open(2)
// as a write to a wedged driver blocks on its device lock. No root needed.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "gtest/gtest.h"
#include "temp_dir.hpp"
#include "vfready/host/device_calls.hpp"
#include "vfready/host/worker_process.hpp"

namespace {

using std::chrono::milliseconds;
using vfready::host::DeviceCalls;
using vfready::host::DeviceOp;
using vfready::host::kStuck;
using vfready::host::Record;

constexpr const char* kHeld = "0000:18:00.0";  // stuck in the daemon before the fork
constexpr const char* kHung = "0000:40:00.0";  // stuck in the worker

bool readable(int fd, milliseconds bound) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(bound.count())) == 1;
}

// The records of the worker at `fd` up to its end, 10 s at most, by kind.
std::multimap<char, Record> records_of(int fd) {
  vfready::host::RecordReader reader;
  std::multimap<char, Record> out;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!reader.ended() && std::chrono::steady_clock::now() < until) {
    if (readable(fd, milliseconds(100))) {
      for (auto& r : reader.read(fd)) {
        out.emplace(r.kind, std::move(r));
      }
    }
  }
  return out;
}

TEST(AWorker, HandsTheCallsItLeftBehindToTheDaemonWhichHearsThemReturn) {
  vfready::testing::TempDir dir("vfready-worker");
  const auto held = dir.path() + "/held";
  const auto hung = dir.path() + "/hung";
  ASSERT_EQ(::mkfifo(held.c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(hung.c_str(), 0600), 0);
  // Whatever the outcome, both FIFOs are opened at the end: no helper stays in open(2).
  struct Release {
    explicit Release(std::vector<std::string> f) : fifos(std::move(f)) {}
    std::vector<std::string> fifos;
    Release(const Release&) = delete;
    Release& operator=(const Release&) = delete;
    ~Release() {
      for (const auto& f : fifos) {
        const int fd = ::open(f.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
          ::close(fd);
        }
      }
    }
  } release({held, hung});
  DeviceCalls calls;
  const std::vector<DeviceOp> hold = {{DeviceOp::Kind::kWrite, held, "1"}};
  ASSERT_EQ(calls.run(kHeld, hold, milliseconds(100)).back().err, kStuck);
  const int returns = calls.returns_fd();
  ASSERT_GE(returns, 0);

  int err = 0;
  const int worker = vfready::host::fork_worker(&err, "vfready-test", [&](int socket) {
    calls.forked();
    // The daemon's call is not this worker's to hear of: its device answers stuck.
    const auto again = calls.run(kHeld, hold, milliseconds(5000)).back().err;
    vfready::host::send_record(socket, 'a', std::to_string(again));
    const std::vector<DeviceOp> hang = {{DeviceOp::Kind::kWrite, hung, "8"}};
    const auto own = calls.run(kHung, hang, milliseconds(100)).back().err;
    vfready::host::send_record(socket, 'o', std::to_string(own));
    // The driver lets it go before it is handed over: what the helper wrote is read
    // here, so its answer is on its way; this copy still calls the device stuck, and
    // the daemon is the one to hear the answer.
    const int reader = ::open(hung.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    char wrote[2] = {};
    const bool read = reader >= 0 && readable(reader, milliseconds(10000)) &&
                      ::read(reader, wrote, 1) == 1 && wrote[0] == '8';
    vfready::host::send_record(socket, 'q', read && calls.stuck(kHung) ? "stuck" : "not");
    for (auto& handed : calls.hand_over()) {
      vfready::host::send_record(socket, 's', vfready::host::encode_stuck(handed.call), handed.fd);
    }
  });
  ASSERT_GE(worker, 0) << err;
  auto records = records_of(worker);
  ::close(worker);
  ASSERT_EQ(records.count('a'), 1U);
  EXPECT_EQ(records.find('a')->second.bytes, std::to_string(kStuck));
  ASSERT_EQ(records.count('o'), 1U);
  EXPECT_EQ(records.find('o')->second.bytes, std::to_string(kStuck));
  ASSERT_EQ(records.count('q'), 1U);
  EXPECT_EQ(records.find('q')->second.bytes, "stuck") << "returned, and not heard in the worker";
  ASSERT_EQ(records.count('s'), 1U) << "the worker's one call left behind";
  auto& handed = records.find('s')->second;
  ASSERT_GE(handed.fd, 0);
  auto call = vfready::host::decode_stuck(handed.bytes);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->device, kHung);
  EXPECT_NE(call->call.find(hung), std::string::npos) << call->call;
  EXPECT_GT(call->helper_pid, 0);
  calls.adopt({std::exchange(handed.fd, -1), *call});

  // The worker's call returned: the daemon hears it through its returns fd.
  EXPECT_TRUE(readable(returns, milliseconds(10000)));
  const auto back = calls.collect();
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].stuck.device, kHung);
  EXPECT_EQ(back[0].stuck.helper_pid, call->helper_pid);
  EXPECT_EQ(back[0].err, 0);
  EXPECT_FALSE(calls.stuck(kHung));
  EXPECT_TRUE(calls.stuck(kHeld)) << "the daemon's own call is still its own";
}

TEST(AStuckCall, GoesAsBytesAndComesBackWhole) {
  vfready::host::StuckCall call;
  call.device = "0000:18:00.0";
  call.call = "write 8 to /sys/bus/pci/devices/0000:18:00.0/sriov_numvfs";
  call.deadline = milliseconds(1234);
  call.since = vfready::host::Clock::now();
  call.untaken = true;
  call.helper_pid = 4321;
  const auto bytes = vfready::host::encode_stuck(call);
  const auto back = vfready::host::decode_stuck(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->device, call.device);
  EXPECT_EQ(back->call, call.call);
  EXPECT_EQ(back->deadline, call.deadline);
  EXPECT_EQ(back->since, call.since);
  EXPECT_TRUE(back->untaken);
  EXPECT_EQ(back->helper_pid, 4321);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(vfready::host::decode_stuck(bytes.substr(0, cut))) << "cut at " << cut;
  }
  EXPECT_FALSE(vfready::host::decode_stuck(bytes + "x"));
}

}  // namespace

// Records over a socket pair: a long one comes whole from many messages, with its one
// descriptor; messages of two records interleaved (two threads sending long records at
// once) end the reading instead of gluing them; the end is seen.
TEST(ARecordReader, TakesLongRecordsWholeAndEndsOnInterleavedOnes) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  const std::string long_bytes(100000, 'x');
  std::thread sender([&] {
    vfready::host::send_record(sv[1], 'h', long_bytes, sv[1]);
    vfready::host::send_record(sv[1], 'p', {});
  });
  vfready::host::RecordReader reader;
  std::vector<vfready::host::Record> got;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (got.size() < 2 && std::chrono::steady_clock::now() < until) {
    pollfd p{sv[0], POLLIN, 0};
    ASSERT_GE(::poll(&p, 1, 100), 0);
    for (auto& r : reader.read(sv[0])) {
      got.push_back(std::move(r));
    }
  }
  sender.join();
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].kind, 'h');
  EXPECT_EQ(got[0].bytes, long_bytes);
  EXPECT_GE(got[0].fd, 0) << "the descriptor sent with it";
  ::close(got[0].fd);
  EXPECT_EQ(got[1].kind, 'p');
  EXPECT_GT(reader.messages(), 2U) << "the long one came in several";
  EXPECT_FALSE(reader.ended());

  // The first message of a long 'h', then a message of another kind: not a record.
  const std::string first{'h', 0, 'a'};
  const std::string other{'e', 1, 'b'};
  ASSERT_EQ(::send(sv[1], first.data(), first.size(), 0), 3);
  ASSERT_EQ(::send(sv[1], other.data(), other.size(), 0), 3);
  EXPECT_TRUE(reader.read(sv[0]).empty());
  EXPECT_TRUE(reader.ended());
  ::close(sv[0]);
  ::close(sv[1]);
}
