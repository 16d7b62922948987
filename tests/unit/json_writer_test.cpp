// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/json_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>

using vfready::model::JsonWriter;

namespace {

std::string written(std::string_view text) {
  std::string out;
  JsonWriter(out).value(text);
  return out;
}

// Code point `cp` as UTF-8.
std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

}  // namespace

TEST(AJsonWriter, EscapesEveryAsciiCharacterAsNlohmannDoes) {
  for (int c = 0; c < 0x80; ++c) {
    const std::string s = "a" + std::string(1, static_cast<char>(c)) + "b";
    EXPECT_EQ(written(s), nlohmann::json(s).dump()) << "character " << c;
  }
}

TEST(AJsonWriter, WritesValidUtf8AsNlohmannDoes) {
  std::mt19937 random(15);
  // Every length of sequence, the edges of each range, and random text.
  std::string edges;
  for (uint32_t cp :
       {0x7FU, 0x80U, 0x7FFU, 0x800U, 0xD7FFU, 0xE000U, 0xFFFDU, 0xFFFFU, 0x10000U, 0x10FFFFU}) {
    edges += utf8(cp);
  }
  EXPECT_EQ(written(edges), nlohmann::json(edges).dump());
  std::uniform_int_distribution<uint32_t> any(0, 0x10FFFF);
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (int n = 0; n < 8; ++n) {
      uint32_t cp = any(random);
      if (cp >= 0xD800 && cp <= 0xDFFF) {
        cp = 0x41;  // a surrogate is no code point of UTF-8
      }
      s += utf8(i % 2 == 0 ? cp % 0x100 : cp);  // half of them mostly ASCII and Latin-1
    }
    ASSERT_EQ(written(s), nlohmann::json(s).dump());
  }
}

TEST(AJsonWriter, ReplacesBytesThatAreNotUtf8AndTheRestParses) {
  // A stray continuation byte, 0xFF, a sequence cut short, an overlong '/', a surrogate,
  // and a code point past U+10FFFF.
  const std::string fffd = "\xEF\xBF\xBD";
  const std::pair<std::string, std::string> cases[] = {
      {"a\x80z", "a" + fffd + "z"},         {"a\xFFz", "a" + fffd + "z"},
      {"a\xE2\x82", "a" + fffd + fffd},     {"\xC0\xAF", fffd + fffd},
      {"\xED\xA0\x80", fffd + fffd + fffd}, {"\xF4\x90\x80\x80", fffd + fffd + fffd + fffd},
      {"ok\xE2\x82\xAC", "ok\xE2\x82\xAC"},  // the euro sign, kept
  };
  for (const auto& [in, out] : cases) {
    const auto text = written(in);
    const auto parsed = nlohmann::json::parse(text);  // throws on invalid UTF-8
    EXPECT_EQ(parsed.get<std::string>(), out) << text;
  }
}

TEST(AJsonWriter, WritesContainersNumbersAndNullsThatParseToWhatWasMeant) {
  std::string out;
  JsonWriter w(out);
  w.begin_object()
      .field("min", std::numeric_limits<int64_t>::min())
      .field("max", std::numeric_limits<uint64_t>::max())
      .field("zero", 0)
      .field("yes", true)
      .field("no", false)
      .key("unknown")
      .text_or_null("")
      .key("known")
      .text_or_null("x")
      .key("empty_list")
      .begin_array()
      .end_array()
      .key("empty_object")
      .begin_object()
      .end_object()
      .key("list")
      .begin_array()
      .value(1)
      .null()
      .begin_object()
      .field("a", "b")
      .end_object()
      .begin_array()
      .end_array()
      .raw(R"({"made":"elsewhere"})")
      .end_array()
      .key("strings")
      .strings({"p", "q"})
      .end_object();
  const nlohmann::json expected = {
      {"min", std::numeric_limits<int64_t>::min()},
      {"max", std::numeric_limits<uint64_t>::max()},
      {"zero", 0},
      {"yes", true},
      {"no", false},
      {"unknown", nullptr},
      {"known", "x"},
      {"empty_list", nlohmann::json::array()},
      {"empty_object", nlohmann::json::object()},
      {"list", {1, nullptr, {{"a", "b"}}, nlohmann::json::array(), {{"made", "elsewhere"}}}},
      {"strings", {"p", "q"}}};
  EXPECT_EQ(nlohmann::json::parse(out), expected) << out;
  EXPECT_EQ(out.find(' '), std::string::npos) << "compact, as dump() is: " << out;
}

TEST(AJsonWriter, PutsCommasRightInContainersNestedDeepAndRefusesMoreThanSixtyFourLevels) {
  std::string out;
  JsonWriter w(out);
  for (int i = 0; i < 64; ++i) {
    w.begin_array().value(i);
  }
  for (int i = 0; i < 64; ++i) {
    w.end_array();
  }
  auto parsed = nlohmann::json::parse(out);
  for (int i = 0; i < 63; ++i) {
    ASSERT_EQ(parsed.size(), 2U) << i;
    EXPECT_EQ(parsed[0], i);
    parsed = nlohmann::json(parsed[1]);
  }
  EXPECT_EQ(parsed, nlohmann::json::array({63}));
  std::string deeper;
  JsonWriter too_deep(deeper);
  for (int i = 0; i < 64; ++i) {
    too_deep.begin_object().key("k");
  }
  const auto before = deeper;
  EXPECT_THROW(too_deep.begin_array(), std::length_error);
  EXPECT_EQ(deeper, before) << "nothing written by the container refused";
  std::string listed;
  JsonWriter in_array(listed);
  for (int i = 0; i < 64; ++i) {
    in_array.begin_array().value(i);
  }
  EXPECT_THROW(in_array.begin_array(), std::length_error);
  EXPECT_EQ(listed.back(), '3') << "no comma before the container refused: " << listed;
}
