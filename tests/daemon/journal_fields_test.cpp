// SPDX-License-Identifier: Apache-2.0
// The journal sink at the sd_journal seam: what vfreadyd hands sd_journal_sendv.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <mutex>
#include <regex>
#include <set>

#include "log.hpp"

namespace vfready::daemon {
namespace {

using ::testing::Contains;
using ::testing::Not;

class RecordingJournal final : public host::Journal {
 public:
  bool send(const std::vector<std::string>& fields) override {
    std::lock_guard lock(mu);
    entries.push_back(fields);
    return true;
  }
  std::mutex mu;
  std::vector<std::vector<std::string>> entries;
};

class JournalFields : public ::testing::Test {
 protected:
  void SetUp() override {
    journal = std::make_shared<RecordingJournal>();
    previous = spdlog::default_logger();
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("test", log::make_journal_sink(journal, "vfreadyd")));
  }
  void TearDown() override { spdlog::set_default_logger(previous); }
  std::shared_ptr<RecordingJournal> journal;
  std::shared_ptr<spdlog::logger> previous;
};

TEST_F(JournalFields, AVfLineCarriesStepPfVfInterfaceAndItsEvent) {
  log::error({.step = "names",
              .pf = "0000:18:00.0",
              .vf = "0000:18:00.4",
              .interface = "ibs0v3",
              .event = model::EventKind::kNameConflict},
             "name ibs0v3 is held by eth9");
  ASSERT_EQ(journal->entries.size(), 1U);
  const auto& e = journal->entries.front();
  EXPECT_THAT(e, Contains("MESSAGE=[0000:18:00.4] name ibs0v3 is held by eth9"));
  EXPECT_THAT(e, Contains("PRIORITY=3"));
  EXPECT_THAT(e, Contains("SYSLOG_IDENTIFIER=vfreadyd"));
  EXPECT_THAT(e, Contains("VFREADY_STEP=names"));
  EXPECT_THAT(e, Contains("VFREADY_PF=0000:18:00.0"));
  EXPECT_THAT(e, Contains("VFREADY_VF=0000:18:00.4"));
  EXPECT_THAT(e, Contains("INTERFACE=ibs0v3"));
  EXPECT_THAT(e, Contains("MESSAGE_ID=2707339803614861ba48d31a0e361b17"));
  EXPECT_THAT(e, Contains("VFREADY_EVENT=name-conflict"));
}

TEST_F(JournalFields, FieldsThatDoNotApplyAreLeftOut) {
  log::info({.pf = "0000:40:00.0"}, "ready in 80 ms");
  spdlog::info("a line without fields");
  ASSERT_EQ(journal->entries.size(), 2U);
  const auto& first = journal->entries[0];
  EXPECT_THAT(first, Contains("PRIORITY=6"));
  EXPECT_THAT(first, Contains("VFREADY_PF=0000:40:00.0"));
  for (const auto& f : first) {
    EXPECT_FALSE(f.starts_with("VFREADY_VF=") || f.starts_with("INTERFACE=") ||
                 f.starts_with("MESSAGE_ID=") || f.starts_with("VFREADY_STEP="))
        << f;
  }
  // Fields of one line do not stick to the next.
  for (const auto& f : journal->entries[1]) {
    EXPECT_FALSE(f.starts_with("VFREADY_PF=")) << f;
  }
  EXPECT_THAT(journal->entries[1], Contains("MESSAGE=a line without fields"));
}

TEST_F(JournalFields, WarningsAreWarnings) {
  log::warn({.event = model::EventKind::kDegraded}, "degraded: 7/8 PFs ready");
  ASSERT_EQ(journal->entries.size(), 1U);
  EXPECT_THAT(journal->entries[0], Contains("PRIORITY=4"));
  EXPECT_THAT(journal->entries[0], Contains("MESSAGE_ID=000ba400a11b45e5b06312b99feaa586"));
}

// Every event has a catalog entry, and the catalog has no entry for an unknown event.
TEST(JournalCatalog, HasAnEntryForEachEventAndNoOther) {
  std::ifstream in(VFREADY_CATALOG);
  ASSERT_TRUE(in) << VFREADY_CATALOG;
  std::set<std::string> in_catalog;
  const std::regex header("^-- ([0-9a-f]{32})$");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, header)) {
      in_catalog.insert(m[1]);
    }
  }
  std::set<std::string> events;
  for (const auto& e : model::kEvents) {
    events.insert(std::string(e.message_id));
  }
  EXPECT_EQ(in_catalog, events);
  EXPECT_EQ(events.size(), model::kEvents.size()) << "two events share a MESSAGE_ID";
}

// The operator's table of codes (docs/systemd.md) lists every event by code and id.
TEST(JournalCatalog, IsListedInTheDocsByCodeAndMessageId) {
  std::ifstream in(VFREADY_SYSTEMD_DOC);
  ASSERT_TRUE(in) << VFREADY_SYSTEMD_DOC;
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& e : model::kEvents) {
    EXPECT_NE(doc.find("| `" + std::string(e.name) + "` | `" + std::string(e.message_id) + "` |"),
              std::string::npos)
        << e.name;
  }
}

}  // namespace
}  // namespace vfready::daemon
