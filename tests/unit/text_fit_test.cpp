// SPDX-License-Identifier: Apache-2.0
// Output that fits its width (text_wrap), and one unit down a column of rates (report/trend).
#include <gtest/gtest.h>

#include <sstream>

#include "qprof/common/text_wrap.hpp"
#include "qprof/report/trend.hpp"

namespace qprof {
namespace {

std::size_t widest(const std::string& text) {
  std::istringstream in(text);
  std::size_t w = 0;
  for (std::string line; std::getline(in, line);) w = std::max(w, text_columns(line));
  return w;
}

TEST(TextWrap, WrapsAtSpacesWithItsIndents) {
  EXPECT_EQ(wrap_text("one two three four", 9), "one two\nthree\nfour\n");
  EXPECT_EQ(wrap_text("one two three", 9, 2, 4), "  one two\n    three\n");
  EXPECT_EQ(wrap_text("", 9), "");
  EXPECT_EQ(wrap_text("unbreakable-word ok", 5), "unbreakable-word\nok\n") << "a long word stays whole";
  // Σ and ² are one column each, though two bytes.
  EXPECT_EQ(text_columns("Σ RSS R²"), 8u);
  EXPECT_EQ(wrap_text("Σ RSS R² 0.91", 8), "Σ RSS R²\n0.91\n");
}

TEST(TextWrap, FitLinesKeepsWhatFitsAndBreaksTheRest) {
  const std::string table = "  limit       outcome      duration\n  none        completed    1.00 s\n";
  EXPECT_EQ(fit_lines(table, 80), table) << "aligned columns that fit are untouched";
  const std::string wide = "  512.0 MiB   oom-killed   0.20 s  the kernel killed it at its limit, twice over the run";
  const std::string fitted = fit_lines(wide, 40);
  EXPECT_LE(widest(fitted), 40u) << fitted;
  EXPECT_TRUE(fitted.starts_with("  512.0 MiB   oom-killed   0.20 s  the\n")) << fitted;
  EXPECT_NE(fitted.find("\n      kernel"), std::string::npos) << "continued under its indent plus 4: " << fitted;
  for (std::size_t w : {20u, 60u, 80u}) EXPECT_LE(widest(fit_lines(wide + "\n" + wide, w)), w);
}

TEST(TextWrap, FitLinesKeepsAPrefixWithItsFirstWord) {
  EXPECT_EQ(fit_lines("qprof peak: averyveryverylongword tail", 20, 12),
            "qprof peak: averyveryverylongword\n    tail\n");
  EXPECT_EQ(fit_lines("qprof peak: averyveryverylongword tail", 20),
            "qprof peak:\n    averyveryverylongword\n    tail\n")
      << "without it, the prefix is a line of its own";
  EXPECT_EQ(fit_lines("peak 12.5 MiB at 3 s", 11), "peak\n    12.5 MiB\n    at 3 s\n") << "a number keeps its unit";
  EXPECT_EQ(wrap_text("held 1.00 GiB then", 10), "held\n1.00 GiB\nthen\n");
}

TEST(TextWrap, CutToColumnsKeepsWholeCharacters) {
  EXPECT_EQ(cut_to_columns("python3 train.py", 16), "python3 train.py") << "what fits is kept";
  EXPECT_EQ(cut_to_columns("python3 train.py", 10), "python3...");
  EXPECT_EQ(cut_to_columns("ΣΣΣΣΣΣ", 5), "ΣΣ...") << "one column per character, never half of one";
  EXPECT_EQ(cut_to_columns("abcdef", 2), "..");
  EXPECT_EQ(cut_to_columns("", 0), "");
}

TEST(RateColumn, OneUnitDownTheColumn) {
  const double mib = 1024.0 * 1024.0;
  // The largest rate, 20 MiB/s, sets it: a slow stage reads in MiB/s too, not in B/min.
  const report::RateUnit u = report::rate_unit(20 * mib);
  EXPECT_TRUE(u.per_second);
  EXPECT_EQ(report::rate_in(20 * mib, u, true), "+20.0 MiB/s");
  EXPECT_EQ(report::rate_in(0.001 * mib, u, true), "0.00 MiB/s") << "no sign on what prints as zero";
  EXPECT_EQ(report::rate_in(-2 * mib, u, true), "-2.00 MiB/s");
  const report::RateUnit slow = report::rate_unit(100 * 1024.0 / 60);  // 100 KiB a minute
  EXPECT_FALSE(slow.per_second);
  EXPECT_EQ(report::rate_in(100 * 1024.0 / 60, slow, false), "100.0 KiB/min");
  EXPECT_EQ(report::rate_in(10.0 / 60, slow, false), "0.01 KiB/min");
}

}  // namespace
}  // namespace qprof
