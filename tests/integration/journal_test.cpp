// SPDX-License-Identifier: Apache-2.0
// What vfreadyd sends the journal, read from a journal socket of the test's own: the
// daemon runs in a mount namespace where /run/systemd is the test's directory, so
// sd_journal_sendv delivers to the test's socket at /run/systemd/journal/socket.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "daemon_run.hpp"
#include "notify_socket.hpp"
#include "root_only.hpp"
#include "vfready/model/events.hpp"

using namespace vfready::testing;

namespace {

using Entry = std::map<std::string, std::string>;

// The native journal protocol: "KEY=value\n", or "KEY\n" + 64-bit LE size + value + "\n"
// for values with newlines.
Entry parse_entry(const std::string& d) {
  Entry e;
  std::size_t at = 0;
  while (at < d.size()) {
    const auto nl = d.find('\n', at);
    const auto line = d.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    const auto eq = line.find('=');
    if (eq != std::string::npos) {
      e[line.substr(0, eq)] = line.substr(eq + 1);
      at = nl == std::string::npos ? d.size() : nl + 1;
      continue;
    }
    uint64_t size = 0;
    for (int i = 0; i < 8 && nl + 1 + i < d.size(); ++i) {
      size |= uint64_t{static_cast<unsigned char>(d[nl + 1 + i])} << (8 * i);
    }
    e[line] = d.substr(nl + 9, size);
    at = nl + 9 + size + 1;
  }
  return e;
}

std::vector<Entry> entries_where(const std::vector<Entry>& all, const Entry& match) {
  std::vector<Entry> out;
  for (const auto& e : all) {
    bool ok = true;
    for (const auto& [k, v] : match) {
      auto it = e.find(k);
      ok = ok && it != e.end() && it->second == v;
    }
    if (ok) {
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace

TEST(VfreadydJournal, EntriesCarryStepPfVfInterfaceAndMessageIds) {
  VFREADY_REQUIRE_ROOT();
  auto topology = TopologyBuilder::reference().probe_ms(5);
  topology.function("0000:40:00.0")["infiniband"]["ports"][0]["link_layer"] = "Ethernet";
  topology.function("0000:4f:00.0")["faults"] = {{"probe_fail_vfs", {2}}};
  FakeHost host(topology);
  NotifySocket journal("journal/socket");
  const auto run = sh(
      vfreadyd_command(host, write_degraded_fail_config(host), "--once --log-target journal", "",
                       "mkdir -p /run/systemd && mount --bind " + journal.dir() + " /run/systemd"),
      120s);
  EXPECT_EQ(run.exit_code, 1) << run.err;  // degraded, and the config says fail
  // The last entry is the outcome; the socket's reader may still be taking it in.
  ASSERT_TRUE(journal.wait_for("MESSAGE_ID=000ba400a11b45e5b06312b99feaa586", 10s));
  std::vector<Entry> entries;
  for (const auto& d : journal.received()) {
    entries.push_back(parse_entry(d));
  }

  EXPECT_FALSE(
      entries_where(entries, {{"VFREADY_PF", "0000:18:00.0"}, {"VFREADY_STEP", "vfs"}}).empty());
  const auto fallback =
      entries_where(entries, {{"MESSAGE_ID", "22631b6c3b494f8c90bbb39e2e7b6b71"}});
  ASSERT_EQ(fallback.size(), 1U);
  EXPECT_EQ(fallback[0].at("VFREADY_PF"), "0000:40:00.0");
  EXPECT_EQ(fallback[0].at("PRIORITY"), "3");
  EXPECT_EQ(fallback[0].at("SYSLOG_IDENTIFIER"), "vfreadyd");
  EXPECT_THAT(fallback[0].at("MESSAGE"), testing::HasSubstr("LINK_TYPE_P1=1"));
  // The VF that failed to probe: its own entry names it and its PF, with the MESSAGE_ID
  // and code of its kind of problem (it may have other entries: a warning, say).
  const auto& probe = vfready::model::event_info(vfready::model::EventKind::kVfProbeFailed);
  ASSERT_FALSE(entries_where(entries, {{"VFREADY_VF", "0000:4f:00.3"}}).empty());
  const auto vf = entries_where(
      entries, {{"VFREADY_VF", "0000:4f:00.3"}, {"VFREADY_EVENT", std::string(probe.name)}});
  ASSERT_EQ(vf.size(), 1U);
  EXPECT_EQ(vf[0].at("VFREADY_PF"), "0000:4f:00.0");
  EXPECT_EQ(vf[0].at("MESSAGE_ID"), probe.message_id);
  EXPECT_THAT(vf[0].at("MESSAGE"), testing::HasSubstr("is not bound to mlx5_core after its probe"));
  // A ready PF's line names its interface.
  EXPECT_FALSE(
      entries_where(entries, {{"VFREADY_PF", "0000:dc:00.0"}, {"INTERFACE", "ibs7"}}).empty());
  EXPECT_EQ(entries_where(entries, {{"MESSAGE_ID", "000ba400a11b45e5b06312b99feaa586"}}).size(),
            1U);
}
