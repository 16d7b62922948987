// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/json_document.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vfready/model/config.hpp"
#include "vfready/model/printable.hpp"
#include "vfready/model/status.hpp"

using testing::HasSubstr;
using vfready::model::parse_json_document;

TEST(AJsonDocument, NamesTheFileThePathAndTheValueOfANumberThatDoesNotFit) {
  const auto r = parse_json_document("/etc/vfready/vfready.json", R"({"pfs": [{"vfs": 1e400}]})");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("/etc/vfready/vfready.json: $.pfs[0].vfs: "));
  EXPECT_THAT(r.error().message, HasSubstr("1e400"));
}

TEST(AJsonDocument, RefusesNestingBeyondItsLimitBeforeAnythingRecurses) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const auto r = parse_json_document("x.json", deep);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("nested deeper than 32 levels"));
  EXPECT_TRUE(parse_json_document("x.json", std::string(32, '[') + std::string(32, ']')));
}

TEST(AJsonDocument, RefusesAKeyGivenTwice) {
  const auto r =
      parse_json_document("x.json", R"({"outcome": {"degraded": "ready", "degraded": "fail"}})");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("x.json: $.outcome.degraded: appears twice"));
  EXPECT_TRUE(parse_json_document("x.json", R"([{"a": 1}, {"a": 2}])"));
}

TEST(AJsonDocument, TellsWhereASyntaxErrorStopped) {
  const auto r = parse_json_document("x.json", R"({"pfs": [1, 2, }])");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("x.json: $.pfs[2]: not valid JSON"));
}

TEST(AConfig, EscapesWhatItEchoesOfAnUnknownKey) {
  const auto c =
      vfready::model::parse_config({{"v.json", "{\"pfs\": [], \"\\u001b[31mred\\n\": 1}"}});
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, HasSubstr("$.\\x1b[31mred\\x0a: unknown key"));
  EXPECT_EQ(c.error().message.find('\x1b'), std::string::npos);
}

TEST(PrintableText, KeepsValidUtf8AndEscapesTheRest) {
  using vfready::model::printable;
  EXPECT_EQ(printable("ibs0v1"), "ibs0v1");
  EXPECT_EQ(printable("gr\xc3\xbc\xc3\x9f"), "gr\xc3\xbc\xc3\x9f");  // valid UTF-8 stays
  EXPECT_EQ(printable("ib\xff\xfe"), "ib\\xff\\xfe");
  EXPECT_EQ(printable("a\nb\x7f"), "a\\x0ab\\x7f");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");           // cut short
}

TEST(PrintableText, IsKnownPrintableExactlyWhenPrintableKeepsIt) {
  for (const std::string s : {"ibs0v1", "gr\xc3\xbc\xc3\x9f", "", "ib\xff", "a\nb", "x\x7f",
                              "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82"}) {
    EXPECT_EQ(vfready::model::is_printable(s), vfready::model::printable(s) == s) << s;
  }
}

// U+009B (CSI) is valid UTF-8, and xterm takes it as ESC [: escaped as the C0 controls.
TEST(PrintableText, EscapesC1ControlsTooButKeepsTheRestOfLatin1) {
  EXPECT_EQ(vfready::model::printable("a\xc2\x9b"
                                      "31mb"),
            "a\\xc2\\x9b31mb");
  EXPECT_EQ(vfready::model::printable("caf\xc3\xa9 \xc2\xa0"), "caf\xc3\xa9 \xc2\xa0");
  EXPECT_FALSE(vfready::model::is_printable("\xc2\x85"));
  EXPECT_TRUE(vfready::model::is_printable("\xc2\xa0"));
}

TEST(PrintableText, EchoesAtMostItsHeadAndSaysHowLongItWas) {
  using vfready::model::printable_head;
  EXPECT_EQ(printable_head("ibs0"), "ibs0");
  EXPECT_EQ(printable_head(std::string(64, 'a')), std::string(64, 'a'));
  EXPECT_EQ(printable_head(std::string(65, 'a')), std::string(64, 'a') + "... (65 bytes)");
  const auto huge = printable_head(std::string(8 << 20, '\x01'), 4);
  EXPECT_EQ(huge, "\\x01\\x01\\x01\\x01... (8388608 bytes)");
}

TEST(APrintableStatus, IsTheStatusItselfUnlessATextIsNotPrintable) {
  vfready::model::DaemonStatus status;
  status.pfs.resize(2);
  status.pfs[1].vfs.resize(3);
  status.pfs[1].vfs[2].altnames = {"ok", "still-ok"};
  EXPECT_TRUE(vfready::model::is_printable(status));
  // Any one text, however deep, makes a copy necessary; the copy has it escaped.
  status.pfs[1].vfs[2].altnames[1] = "bad\x1b";
  EXPECT_FALSE(vfready::model::is_printable(status));
  const auto shown = vfready::model::printable(status);
  EXPECT_EQ(shown.pfs[1].vfs[2].altnames[1], "bad\\x1b");
  EXPECT_EQ(shown.pfs[1].vfs[2].altnames[0], "ok");
  EXPECT_TRUE(vfready::model::is_printable(shown));
  status.pfs[1].vfs[2].altnames[1] = "fine";
  status.pfs[1].vfs[0].problems.push_back({});
  status.pfs[1].vfs[0].problems[0].remedy = "\xff";
  EXPECT_FALSE(vfready::model::is_printable(status));
}

// nlohmann's reader stops at a NUL as at the end of the text: whatever follows one
// would be ignored. A JSON text has none.
TEST(AJsonDocument, RefusesANulAndWhatFollowsIt) {
  const std::string text("{\"pfs\": []}\0{\"garbage\"", 22);
  const auto doc = vfready::model::parse_json_document("/etc/vfready/vfready.json", text);
  ASSERT_FALSE(doc);
  EXPECT_THAT(doc.error().message,
              testing::HasSubstr("/etc/vfready/vfready.json: not valid JSON: a NUL byte at "
                                 "offset 11"));
}
