// SPDX-License-Identifier: Apache-2.0
// The helpers every output stage shares (common/): the default label of a trace, numbers at any
// magnitude, CSV cells, a path's last component and a temporary trace. Each was written twice or
// more before and the copies had drifted.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "qprof/common/csv_cell.hpp"
#include "qprof/common/number_text.hpp"
#include "qprof/common/path_name.hpp"
#include "qprof/common/temporary_trace.hpp"
#include "qprof/common/trace_label.hpp"
#include "qprof/fit/report.hpp"
#include "temp_files.hpp"

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

TEST(TraceLabel, DatSuffixRuleIsOneForLabelsAndSweepValues) {
  EXPECT_EQ(without_dat_suffix("batch=4.dat"), "batch=4");
  EXPECT_EQ(without_dat_suffix("batch=4"), "batch=4");
  EXPECT_EQ(without_dat_suffix("b.c.dat"), "b.c");
  EXPECT_EQ(without_dat_suffix(".dat"), ".dat");
  EXPECT_EQ(without_dat_suffix("x.DAT"), "x.DAT");
}

// The names of traces shown together, plot's and compare's: files of one name by their paths,
// equal names by their place, a label kept as given.
TEST(TraceLabel, TracesShownTogetherNeverReadAlike) {
  EXPECT_EQ(trace_names({"d1/x.dat", "d2/x.dat", "y.dat"}, {}), (std::vector<std::string>{"d1/x", "d2/x", "y"}));
  EXPECT_EQ(trace_names({"d1/x.dat", "d2/x.dat"}, {"", "mine"}), (std::vector<std::string>{"x", "mine"}));
  std::vector<std::string> same = trace_names({"a.dat", "a.dat", "b.dat"}, {});
  EXPECT_EQ(same, (std::vector<std::string>{"a", "a", "b"}));
  mark_equal_names(same);
  EXPECT_EQ(same, (std::vector<std::string>{"a #1", "a #2", "b"}));
  // One file given twice keeps its name, not its (longer) path; beside another file of its name,
  // both go by their paths.
  EXPECT_EQ(trace_names({"/t/d1/x.dat", "/t/d1/x.dat"}, {}), (std::vector<std::string>{"x", "x"}));
  EXPECT_EQ(trace_names({"d1/x.dat", "d1/x.dat", "d2/x.dat"}, {}), (std::vector<std::string>{"d1/x", "d1/x", "d2/x"}));
  std::vector<std::string> fitted{"long", "long"};
  mark_equal_names(fitted, [](const std::string& name, std::size_t mark) { return name.substr(0, 5 - mark); });
  EXPECT_EQ(fitted, (std::vector<std::string>{"lo #1", "lo #2"}));
}

TEST(PathName, LastComponentIgnoresTrailingSlashes) {
  EXPECT_EQ(last_component("/scratch/run/cache"), "cache");
  EXPECT_EQ(last_component("/scratch/run/cache//"), "cache");
  EXPECT_EQ(last_component("cache"), "cache");
  EXPECT_EQ(last_component("/"), "/");
  EXPECT_EQ(last_component("//"), "/");
  EXPECT_EQ(last_component(""), "");
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

TEST(YamlFloat, FixedTextWithYamlsWordsForNoDigits) {
  EXPECT_EQ(yaml_float(1523.4000000000001, 3), "1523.4");
  EXPECT_EQ(yaml_float(0, 4), "0.0");
  // trend's copy wrote "inf.0" and "nan.0", which no YAML reader takes for a number.
  EXPECT_EQ(yaml_float(std::numeric_limits<double>::infinity(), 3), ".inf");
  EXPECT_EQ(yaml_float(-std::numeric_limits<double>::infinity(), 3), "-.inf");
  EXPECT_EQ(yaml_float(std::nan(""), 4), ".nan");
  EXPECT_EQ(yaml_float(1e300, 3).size(), 301u + 2u);
}

TEST(PrintfNumber, TheCallersFormatWholeAtAnyMagnitude) {
  EXPECT_EQ(printf_number("%.2f s", 1.5), "1.50 s");
  EXPECT_EQ(printf_number("%g", 0.25), "0.25");
  EXPECT_EQ(printf_number("%.1f%%", 12.345), "12.3%");
  // Four copies wrote into 32 or 64 bytes: 1e300 in fixed notation was cut at the buffer's end.
  const std::string big = printf_number("%.1f", 1e300);
  EXPECT_EQ(big.size(), 301u + 2u);
  EXPECT_EQ(read_back(big), 1e300);
}

// TMPDIR set for one scope, then as it was.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& dir) {
    if (const char* was = std::getenv("TMPDIR")) was_ = was;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (was_)
      ::setenv("TMPDIR", was_->c_str(), 1);
    else
      ::unsetenv("TMPDIR");
  }

 private:
  std::optional<std::string> was_;
};

TEST(TemporaryTrace, ANewPrivateFileInTmpdir) {
  const std::string dir = test::unit_temp_file("tmpdir");
  std::filesystem::create_directory(dir);
  const Result<TemporaryTrace> t = [&] {
    const ScopedTmpdir in(dir);
    return create_temporary_trace("qprof-test");
  }();
  ASSERT_TRUE(t.ok());
  EXPECT_GE(t->fd, 0);
  EXPECT_TRUE(t->path.starts_with(dir + "/qprof-test-")) << t->path;
  EXPECT_TRUE(t->path.ends_with(".dat")) << t->path;
  struct stat st {};
  ASSERT_EQ(::fstat(t->fd, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 0);
  ::close(t->fd);
  std::filesystem::remove_all(dir);
}

TEST(TemporaryTrace, FailsNamingTheDirectory) {
  const Result<TemporaryTrace> t = [] {
    const ScopedTmpdir in("/nonexistent-qprof-dir");
    return create_temporary_trace("qprof-test");
  }();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.failure().message, "cannot create a temporary trace in /nonexistent-qprof-dir");
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

TEST(CsvCell, FitsCsvIsMadeOfThem) {
  // fit quoted with its own copy, which guarded formulas but wrote a newline raw: one record
  // became two for `cut` and for a terminal.
  fit::FitReport r;
  r.command = "=cmd 'two\nlines'";
  r.message = "stopped, early";
  const std::string csv = fit::csv_report(r);
  const std::string second = csv.substr(csv.find('\n') + 1);
  EXPECT_EQ(second, "command," + csv_cell(r.command) + ",,,,,,,," + csv_cell(r.message) + "\n");
  EXPECT_EQ(second, "command,'=cmd 'two\\nlines',,,,,,,,\"stopped, early\"\n");
}

}  // namespace
}  // namespace qprof
