// SPDX-License-Identifier: Apache-2.0
// The configuration's reader process (host::ConfigReader): what it reads is what the
// daemon reads itself, a file larger than a message included. No root needed.
#include <poll.h>

#include <chrono>
#include <fstream>

#include "gtest/gtest.h"
#include "temp_dir.hpp"
#include "vfready/host/config_texts.hpp"

namespace {

using vfready::Result;
using vfready::host::ConfigReader;
using vfready::host::ConfigTexts;

std::vector<std::pair<std::string, std::string>> pairs(
    const std::vector<vfready::model::ConfigSource>& sources) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : sources) {
    out.emplace_back(s.path, s.text);
  }
  return out;
}

// Waits (5 s at most) until the reader answers or ends; the answer, if it came.
std::optional<Result<ConfigTexts>> answer_of(ConfigReader& reader) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{reader.fd(), POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      if (auto answer = reader.take()) {
        return answer;
      }
    }
  }
  return std::nullopt;
}

TEST(AConfigReader, AnswersWhatTheCallerWouldReadItself) {
  vfready::testing::TempDir dir("vfready-config-reader");
  const auto path = dir.path() + "/vfready.json";
  std::filesystem::create_directory(dir.path() + "/vfready.d");
  std::ofstream(path) << "{\"pfs\": []}\n";
  std::ofstream(dir.path() + "/vfready.d/20-b.json") << std::string(200000, ' ') << "{}";
  std::ofstream(dir.path() + "/vfready.d/10-a.json") << "{}";
  std::ofstream(dir.path() + "/table.json") << "{\"rows\": []}";
  const std::vector<std::string> tables{dir.path() + "/none.json", dir.path() + "/table.json"};

  auto reader = ConfigReader::start(path, tables);
  ASSERT_TRUE(reader) << reader.error().message;
  const auto answer = answer_of(*reader.value());
  ASSERT_TRUE(answer) << "no answer within 5 s";
  ASSERT_TRUE(*answer) << answer->error().message;
  const auto here = vfready::host::read_config_texts(path, tables);
  ASSERT_TRUE(here);
  EXPECT_EQ(pairs(answer->value().config), pairs(here->config));
  EXPECT_EQ(pairs(answer->value().tables), pairs(here->tables));
  EXPECT_EQ(answer->value().config.size(), 3U);
  EXPECT_EQ(answer->value().tables.size(), 1U);

  // A file it refuses: the same error as the caller's own read.
  std::filesystem::create_directory(dir.path() + "/vfready.d/30-dir.json");
  auto refusing = ConfigReader::start(path, tables);
  ASSERT_TRUE(refusing);
  const auto refused = answer_of(*refusing.value());
  ASSERT_TRUE(refused);
  ASSERT_FALSE(*refused);
  EXPECT_EQ(refused->error().message,
            vfready::host::read_config_texts(path, tables).error().message);
}

}  // namespace
