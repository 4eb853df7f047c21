// SPDX-License-Identifier: Apache-2.0
// The escaping promise checked against the real gnuplot: a string made by gp_string() comes back
// from gnuplot exactly as it went in (control characters aside), and never runs anything.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "qprof/common/find_program.hpp"
#include "qprof/plot/plot.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/gnuplot.hpp"

namespace qprof::plot {
namespace {

std::filesystem::path temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "qprof-plot-unit-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
  return tmpl;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(PlotGnuplot, EscapedStringsRoundTripThroughGnuplotAndRunNothing) {
  const std::string gnuplot = find_program("gnuplot");
  ASSERT_FALSE(gnuplot.empty()) << "the tests need gnuplot (gnuplot-nox)";
  const auto dir = temp_dir();
  const std::string sentinel = (dir / "pwned").string();
  const std::vector<std::string> hostile = {
      "a\"; system(\"touch " + sentinel + "\"); \"",
      "`touch " + sentinel + "`",
      "x' . system('touch " + sentinel + "') . '",
      "'; system('touch " + sentinel + "'); print '",
      "'''a' '''' 'x''''y'",
      "`1@0 \\140 \\100",
      "@qprof_x @ARG0 $0 ${x}",
      "\\",
      "ends with a backslash \\",
      "\\n \\t \\\" \\140",
      "<script>&amp;</script> {/Symbol a}^2_x ~ %s %d",
      "é 中 😀",
      "line1\nline2\"; system(\"touch " + sentinel + "\")",
  };
  std::string commands = "qprof_x = 'expanded'\nset print '/dev/fd/3'\n";
  for (const std::string& h : hostile) commands += "print " + gp_string(h) + "\n";
  commands += "set print\n";
  Script script;
  script.chunks.push_back({commands, {}, {}});

  const std::string out_path = (dir / "printed").string();
  const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  std::vector<std::string> warnings;
  EXPECT_TRUE(run_gnuplot(gnuplot, script, fd, [&](const std::string& w) { warnings.push_back(w); }));
  ::close(fd);

  EXPECT_FALSE(std::filesystem::exists(sentinel));
  std::string expected;
  for (const std::string& h : hostile) {
    std::string shown = h;
    for (char& c : shown) {
      if (c == '\n') c = ' ';
    }
    expected += shown + "\n";
  }
  EXPECT_EQ(slurp(out_path), expected);
  EXPECT_TRUE(warnings.empty());
  std::filesystem::remove_all(dir);
}

TEST(PlotGnuplot, AFailingScriptReportsGnuplotsMessage) {
  const std::string gnuplot = find_program("gnuplot");
  ASSERT_FALSE(gnuplot.empty());
  Script script;
  script.chunks.push_back({"print 1\nthis is not gnuplot\nprint 2\n", {}, {}});
  const Result<void> drawn = run_gnuplot(gnuplot, script, -1, {});
  ASSERT_FALSE(drawn) << "no error";
  const std::string& why = drawn.failure().message;
  EXPECT_NE(why.find("gnuplot failed"), std::string::npos) << why;
  EXPECT_NE(why.find("invalid command"), std::string::npos) << why;
}

TEST(PlotGnuplot, AGnuplotThatStopsEarlyDoesNotKillUs) {
  // gnuplot exits at once while qprof still has megabytes to send: EPIPE, not SIGPIPE.
  const std::string gnuplot = find_program("gnuplot");
  ASSERT_FALSE(gnuplot.empty());
  Script script;
  ScriptChunk c;
  c.commands = "exit status 3\n";
  c.plot.push_back({"using 1:2 with lines", 0});
  c.data.emplace_back();
  for (int i = 0; i < 400000; ++i) c.data.back().emplace_back(i, i);
  script.chunks.push_back(std::move(c));
  EXPECT_FALSE(run_gnuplot(gnuplot, script, -1, {}));
}

// A saved script carries its data as gnuplot-iostream's send1d writes it: one "x y" line a
// point, ten significant digits, "nan" for any NaN, "e" after each set.
TEST(PlotGnuplot, ASavedScriptHoldsItsDataAsText) {
  Script script;
  ScriptChunk c;
  c.commands = "set title 'x'\n";
  c.plot = {{"using 1:2 with lines", 0}, {"NaN notitle", -1}, {"using 1:2 with points", 1}};
  c.data = {{{1, 2.5}, {1.0 / 3, -std::nan("")}}, {{1e-7, 123456789012.0}}};
  script.chunks.push_back(c);
  const auto dir = temp_dir();
  const std::string path = (dir / "saved.gp").string();
  EXPECT_TRUE(save_script(script, path));
  EXPECT_EQ(slurp(path),
            "set title 'x'\n"
            "plot '-' using 1:2 with lines, \\\n     NaN notitle, \\\n     '-' using 1:2 with points\n"
            "1 2.5\n0.3333333333 nan\ne\n"
            "1e-07 1.23456789e+11\ne\n");
  EXPECT_FALSE(save_script(script, (dir / "no-such-folder" / "saved.gp").string()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qprof::plot
