// SPDX-License-Identifier: Apache-2.0
// The helpers every output stage shares (common/): the default label of a trace, numbers at any
// magnitude, and CSV cells. Each was written twice before and the copies had drifted.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "qprof/common/csv_cell.hpp"
#include "qprof/common/number_text.hpp"
#include "qprof/common/trace_label.hpp"

namespace qprof {
namespace {

TEST(TraceLabel, StripsADatSuffixOnly) {
  EXPECT_EQ(default_label("runs/minmax.dat"), "minmax");
  EXPECT_EQ(default_label("/a/b.c.dat"), "b.c");
  EXPECT_EQ(default_label("percentile"), "percentile");
  // plot used to strip any extension ("run.v2" → "run"), export only .dat: one trace, two names.
  EXPECT_EQ(default_label("runs/run.v2"), "run.v2");
  EXPECT_EQ(default_label("notes.txt"), "notes.txt");
  EXPECT_EQ(default_label("x,\"y\".dat"), "x,\"y\"");
  EXPECT_EQ(default_label(".dat"), ".dat");
  EXPECT_EQ(default_label("dir/"), "dir/");
}

double read_back(const std::string& s) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  EXPECT_EQ(r.ec, std::errc()) << s;
  EXPECT_EQ(r.ptr, s.data() + s.size()) << s;
  return v;
}

TEST(NumberText, WholeNumbersInPlainDigitsAndExactBack) {
  EXPECT_EQ(number_text(961000000, ""), "961000000");
  EXPECT_EQ(number_text(0, ""), "0");
  EXPECT_EQ(number_text(-5, ""), "-5");
  EXPECT_EQ(number_text(0.5, ""), "0.5");
  EXPECT_EQ(number_text(1e-7, ""), "1e-07");
  // One copy switched to the shortest form at 1e15, the other at 1e18: bytes up to 2^64 are digits.
  EXPECT_EQ(number_text(1e16, ""), "10000000000000000");
  EXPECT_EQ(number_text(9223372036854775808.0, ""), "9223372036854775808");
  EXPECT_EQ(number_text(1e21, ""), "1e+21");
  EXPECT_EQ(number_text(1e300, ""), "1e+300");
  for (double v : {1e300, -1e300, std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(),
                   123456.789, 1e20, 0.1}) {
    EXPECT_EQ(read_back(number_text(v, "")), v) << v;
  }
}

TEST(NumberText, NotFiniteIsTheCallersWord) {
  // One copy wrote 0 for NaN (a value the trace never had), the other "nan" (not a number to JSON).
  EXPECT_EQ(number_text(std::nan(""), "null"), "null");
  EXPECT_EQ(number_text(std::numeric_limits<double>::infinity(), ""), "");
  EXPECT_EQ(fixed_text(-std::numeric_limits<double>::infinity(), 3, ".nan"), ".nan");
}

TEST(FixedText, AnyMagnitudeWholeAndTrimmed) {
  EXPECT_EQ(fixed_text(1523.4000000000001, 3, ""), "1523.4");
  EXPECT_EQ(fixed_text(0, 6, ""), "0.0");
  EXPECT_EQ(fixed_text(-0.0, 6, ""), "0.0");
  EXPECT_EQ(fixed_text(-0.0000001, 3, ""), "0.0");
  EXPECT_EQ(fixed_text(2, 0, ""), "2.0");
  EXPECT_EQ(fixed_text(-1e-300, 0, ""), "0.0");
  // A 64-byte buffer ended at about 1e57 (6 decimals), and what followed was the stack's bytes.
  for (double v : {1e57, 1e300, -std::numeric_limits<double>::max()}) {
    const std::string s = fixed_text(v, 6, "");
    EXPECT_EQ(s.substr(s.size() - 2), ".0") << s;
    EXPECT_EQ(s.find_first_not_of("-0123456789."), std::string::npos) << s;
    EXPECT_EQ(read_back(s), v) << s;
  }
  EXPECT_EQ(fixed_text(1e300, 6, "").size(), 301u + 2u);
}

TEST(CsvCell, QuotesGuardsAndShowsControls) {
  EXPECT_EQ(csv_cell("Load"), "Load");
  EXPECT_EQ(csv_cell("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_cell(" padded "), "\" padded \"");
  EXPECT_EQ(csv_cell("-36.2"), "-36.2");
  EXPECT_EQ(csv_cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(csv_cell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv_cell("+1+2"), "'+1+2");
  // A leading tab is guarded as the formula's way in it is, then shown, not written raw.
  EXPECT_EQ(csv_cell("\t=1"), "'\\t=1");
  // report's CSV passed ESC through: a label that colours or clears the terminal it is shown on.
  EXPECT_EQ(csv_cell("st\x1b[2Jage"), "st\\x1b[2Jage");
  EXPECT_EQ(csv_cell("two\nlines\r"), "two\\nlines\\r");
  EXPECT_EQ(csv_cell("\xC2\x9b"
                     "31m"),
            "\\u009b31m");
  EXPECT_EQ(csv_cell("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace qprof
