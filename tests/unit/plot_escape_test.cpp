// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/escape.hpp"

#include <gtest/gtest.h>

namespace qprof::plot {
namespace {

TEST(PlotEscape, DoubleQuotedLiteralWithoutBackquoteOrAt) {
  EXPECT_EQ(gp_string("abc"), R"("abc")");
  EXPECT_EQ(gp_string(""), R"("")");
  EXPECT_EQ(gp_string("it's ''"), R"("it's ''")");
  EXPECT_EQ(gp_string("a\"b"), R"("a\"b")");
  EXPECT_EQ(gp_string("a\\b\\"), R"("a\\b\\")");
  EXPECT_EQ(gp_string("`touch x`"), R"("\140touch x\140")");
  EXPECT_EQ(gp_string("@macro"), R"("\100macro")");
  EXPECT_EQ(gp_string("`1@2"), R"("\1401\1002")");
  EXPECT_EQ(gp_string("#not a comment; $x"), R"("#not a comment; $x")");
  for (const char* hostile : {"a\"; system(\"touch x\"); \"", "`rm -rf ~`", "@ARG0", "\\", "x\\\""}) {
    const std::string s = gp_string(hostile);
    EXPECT_EQ(s.find_first_of("`@"), std::string::npos) << s;
    // The only unescaped double quotes are the first and the last.
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
        continue;
      }
      EXPECT_NE(s[i], '"') << s;
    }
  }
}

TEST(PlotEscape, NoLineBreakOrControlCharacterSurvives) {
  const std::string s = gp_string(std::string("a\nb\rc\td\0e\x1b[31mf\x7fg", 17));
  EXPECT_EQ(s.find('\n'), std::string::npos);
  EXPECT_EQ(s.find('\r'), std::string::npos);
  for (char c : s) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << s;
  EXPECT_EQ(s,
            "\"a b c d\xEF\xBF\xBD"
            "e\xEF\xBF\xBD[31mf\xEF\xBF\xBDg\"");
  // C1 controls (U+0080–U+009F) too.
  EXPECT_EQ(gp_string("\xC2\x85x"), "\"\xEF\xBF\xBDx\"");
}

TEST(PlotEscape, InvalidUtf8IsReplaced) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(gp_string("\xff\xfe"), "\"" + r + r + "\"");
  EXPECT_EQ(gp_string("\xC0\xAF"), "\"" + r + r + "\"");          // overlong '/'
  EXPECT_EQ(gp_string("\xED\xA0\x80"), "\"" + r + r + r + "\"");  // a surrogate
  EXPECT_EQ(gp_string("\xE2\x82"), "\"" + r + r + "\"");          // cut short
  EXPECT_EQ(gp_string("é中😀"), "\"é中😀\"");                       // valid stays
}

TEST(PlotEscape, DisplayTextTrimsAndShortens) {
  EXPECT_EQ(display_text("  Calibration  "), "Calibration");
  EXPECT_EQ(display_text("abcdefghij", 5), "abcd…");
  EXPECT_EQ(display_text("abc def ghij", 5), "abc…");  // no blank before the ellipsis
  EXPECT_EQ(display_text("ééééé", 5), "ééééé");
  EXPECT_EQ(display_text("éééééé", 5), "éééé…");
  EXPECT_EQ(display_text("a\nb"), "a b");
  EXPECT_EQ(display_text("   "), "");
  EXPECT_EQ(display_text("abc", 0), "");
}

TEST(PlotEscape, Utf8Helpers) {
  EXPECT_EQ(utf8_length("aé中😀"), 4u);
  EXPECT_EQ(utf8_prefix("aé中😀", 2), "aé");
  EXPECT_EQ(utf8_prefix("ab", 5), "ab");
  EXPECT_NEAR(text_width_em("M"), 0.863, 1e-9);
  EXPECT_NEAR(text_width_em("ii"), 0.556, 1e-9);
  EXPECT_NEAR(text_width_em("中"), 1.0, 1e-9);
  EXPECT_GT(text_width_em("Calibration Start"), text_width_em("Calibration"));
}

}  // namespace
}  // namespace qprof::plot
