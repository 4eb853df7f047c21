// SPDX-License-Identifier: Apache-2.0
// qprof plot end to end: the built binary, the real gnuplot, files checked as files (the
// --metric overlays and sparse series are in plot_metrics_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "e2e_util.hpp"
#include "plot_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::ChildSeries;
using trace::Trace;

namespace {

using namespace plot_files;  // NOLINT: the fixtures are this file's vocabulary
namespace fs = std::filesystem;

TEST(Plot, PngHasTheRequestedSize) {
  const std::string out = test_dir() + "/full.png";
  const Result r = qprof({"plot", plot_data("full.dat"), "-o", out, "--size", "900x500"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err), "");
  expect_png(out, 900, 500);
}

// The C locale of a fresh machine or a CI runner (no LANG): gnuplot reads the UTF-8 script
// without its "iconv failed to convert degree sign" warning, which qprof would relay.
TEST(Plot, NoWarningUnderTheCLocale) {
  const std::string out = test_dir() + "/c_locale.png";
  const Result r = run({"env", "-u", "LANG", "-u", "LC_CTYPE", "LC_ALL=C", qprof_bin(), "plot", plot_data("full.dat"),
                        "-o", out, "--size", "900x500"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err), "");
  expect_png(out, 900, 500);
}

TEST(Plot, SvgParsesAndHoldsMarkersStagesAndThePeak) {
  const std::string out = test_dir() + "/full.svg";
  const Result r = qprof({"plot", plot_data("full.dat"), "-o", out, "--panels", "memory,gpu,cpu,io", "--children"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = svg_text(out);
  for (const char* want :
       {"python3 quantize.py --calib-method minmax --model llama-7b", "Load", "Calibration", "Quantization",
        "Export (no End)", "checkpoint: batch 100", "saved weights to /tmp/out", "killed by SIGKILL",
        "peak 5.40 GiB at 6 s", "cgroup charge peak (includes page cache): 5.66 GiB",
        "largest process, kernel peak (lower bound): 2.90 GiB", "pid 4242, peak 2.70 GiB", "CPU (% of one core)",
        "I/O (MiB/s)", "GPU0: tree, peak 20.0 GiB"}) {
    EXPECT_TRUE(has(text, want)) << want;
  }
}

TEST(Plot, PdfAndTheUnitOption) {
  const std::string out = test_dir() + "/full.pdf";
  const Result r = qprof({"plot", plot_data("full.dat"), "-o", out, "--unit", "GiB"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string pdf = read_file(out);
  ASSERT_GT(pdf.size(), 1000u);
  EXPECT_EQ(pdf.substr(0, 5), "%PDF-");
  EXPECT_TRUE(has(pdf.substr(pdf.size() - 64), "%%EOF"));
}

TEST(Plot, MprofTracesWithFuncAndChildren) {
  const std::string dir = test_dir();
  Result r = qprof({"plot", data_file("mprof/func.dat"), "-o", dir + "/func.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = svg_text(dir + "/func.svg");
  EXPECT_TRUE(has(text, "__main__.load"));
  EXPECT_TRUE(has(text, "__main__.calibrate"));
  EXPECT_TRUE(has(text, "peak 141.8 MiB"));
  r = qprof({"plot", data_file("mprof/children.dat"), "-o", dir + "/children.svg", "--children"});
  ASSERT_EQ(r.status, 0) << r.err;
  text = svg_text(dir + "/children.svg");
  EXPECT_TRUE(has(text, "pid 5585"));
  EXPECT_TRUE(has(text, "pid 5586"));
}

// A real recording with -M: each process's line is named by its command and PID, the root's
// own line says so; a trace without per-process lines gets a note, not an empty legend.
TEST(Plot, ChildrenAreNamedByCommandAndPidOrANoteSaysWhyNot) {
  const std::string dir = test_dir();
  Result r = qprof({"run", "-q", "-M", "-o", dir + "/m.dat", "--", "sh", "-c", "sleep 0.4 & sleep 0.4; wait"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(dir + "/m.dat");
  std::set<std::string> recorded;
  for (const ChildSeries& c : t.children) recorded.insert(std::to_string(c.pid));
  r = qprof({"plot", dir + "/m.dat", "-o", dir + "/m.svg", "--children"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = svg_text(dir + "/m.svg");
  std::set<std::string> sleeps;
  const std::regex sleep_title(R"(sleep \((\d+)\), peak [0-9.]+ [KM]iB)");
  for (std::sregex_iterator it(text.begin(), text.end(), sleep_title), end; it != end; ++it) sleeps.insert((*it)[1]);
  EXPECT_EQ(sleeps.size(), 2u) << text;
  for (const std::string& pid : sleeps) EXPECT_TRUE(recorded.count(pid)) << pid << " is not a CHLD pid of the trace";
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(sh \(\d+\), root, peak)"))) << text;

  r = qprof({"run", "-q", "-o", dir + "/n.dat", "--", "sh", "-c", "sleep 0.2"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = qprof({"plot", dir + "/n.dat", "-o", dir + "/n.svg", "--children"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(svg_text(dir + "/n.svg"), "no per-process samples (CHLD lines; record with qprof run -M)"));
}

TEST(Plot, OverlayAndFacetLegendsNameEachTraceAndItsPeak) {
  const std::string dir = test_dir();
  Result r = qprof({"plot", plot_data("full.dat"), data_file("mprof/func.dat"), "-o", dir + "/overlay.svg", "--label",
                    "minmax", "--label", "percentile"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = svg_text(dir + "/overlay.svg");
  EXPECT_TRUE(has(text, "minmax, peak 5.40 GiB at 6 s"));
  EXPECT_TRUE(has(text, "percentile, peak 141.8 MiB"));
  r = qprof({"plot", plot_data("full.dat"), data_file("mprof/func.dat"), "-o", dir + "/facet.png", "--facet", "--size",
             "1000x900"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_png(dir + "/facet.png", 1000, 900);
  // Three files, labels as a comma list before them: no file is taken for a label.
  r = qprof({"plot", "--label", "A,B", "--label", "C", plot_data("full.dat"), data_file("mprof/func.dat"),
             data_file("mprof/children.dat"), "-o", dir + "/three.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  text = svg_text(dir + "/three.svg");
  EXPECT_TRUE(has(text, "A, peak 5.40 GiB")) << text;
  EXPECT_TRUE(has(text, "B, peak 141.8 MiB")) << text;
  EXPECT_TRUE(has(text, "C, peak")) << text;
  r = qprof({"plot", plot_data("full.dat"), "-o", dir + "/x.png", "--label", "a", "--label", "b"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "2 labels (--label) for 1 trace")) << r.err;
}

TEST(Plot, HostileStringsAreShownAndNeverRun) {
  const std::string dir = test_dir();
  const std::string s = dir + "/pwned";  // gnuplot running any of these would create it
  const std::string trace =
      "QPROF 1 version=0.1.0 interval=0.01 start=1700000000\n"
      "CMDLINE sh -c 'touch " +
      s + "1'; \"; system(\"touch " + s + "2\"); \" `touch " + s +
      "3`\n"
      "MEM 10.0 1700000000.0000\n"
      "MARK 1700000000.1000 a\"; system(\"touch " +
      s +
      "4\"); \"\n"
      "MEM 20.0 1700000000.2000\n"
      "MARK 1700000000.3000 `touch " +
      s +
      "5`\n"
      "MEM 25.0 1700000000.4000\n"
      "MARK 1700000000.5000 x' . system('touch " +
      s +
      "6') . '\n"
      "MEM 30.0 1700000000.6000\n"
      "MARK 1700000000.7000 two\\nlines\"; system(\"touch " +
      s +
      "7\"); \\\\\n"
      "MEM 35.0 1700000000.8000\n"
      "MARK 1700000000.9000 @qprof_format <b>&amp;</b> {/Symbol a}^2_x \\xff\\xfe\n"
      "MEM 30.0 1700000001.0000\n"
      "MARK 1700000001.1000 `touch " +
      s +
      "8` Start\n"
      "MEM 20.0 1700000001.2000\n"
      "MARK 1700000001.3000 `touch " +
      s +
      "8` End\n"
      "MEM 10.0 1700000001.4000\n"
      "GPUDEV 0 GPU-x 1000 dev'; system('touch " +
      s +
      "9'); '\n"
      "GPU 1700000001.4000 0 100 200\n";
  // The file's own name is hostile too (it becomes the label of an overlay); a name holds no '/',
  // so its command would touch a file in the current directory.
  const std::string named = dir + "/it's \"`touch pwned10`\"; system('touch pwned11').dat";
  write(dir + "/hostile.dat", trace);
  write(named, trace);
  const std::string title = "T'; system('touch " + s + "11'); '`touch " + s + "12`\"; system(\"touch " + s + "14\")";
  Result r = qprof({"plot", dir + "/hostile.dat", "-o", dir + "/one.svg", "--title", title, "--panels", "memory,gpu",
                    "--size", "2400x1000"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = qprof({"plot", dir + "/hostile.dat", named, "-o", dir + "/two.png", "--label", "L\"`touch " + s + "13`"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = qprof({"plot", named, "-o", "-", "--size", "100x30"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = qprof({"plot", named, "-o", dir + "/three.pdf", "--facet"});
  ASSERT_EQ(r.status, 0) << r.err;

  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".dat") continue;  // the traces themselves
    EXPECT_EQ(e.path().filename().string().find("pwned"), std::string::npos) << e.path();
  }
  EXPECT_FALSE(fs::exists("pwned10"));
  EXPECT_FALSE(fs::exists("pwned11"));
  // Shown as they are (long ones shortened with "…").
  const std::string text = svg_text(dir + "/one.svg");
  EXPECT_TRUE(has(text, "a\"; system(\"touch /")) << text;
  EXPECT_TRUE(has(text, "`touch /"));
  EXPECT_TRUE(has(text, "x' . system('touch /"));
  EXPECT_TRUE(has(text, "T'; system('touch /"));
  EXPECT_TRUE(has(text, "two lines\"; system(\"touch /"));  // the newline shown as a space
  EXPECT_TRUE(has(text, "@qprof_format"));
}

// A million samples: streamed, downsampled, and the one spike is still the peak.
TEST(Plot, AMillionSampleTraceKeepsItsPeak) {
  const std::string dir = test_dir();
  const std::string path = dir + "/million.dat";
  {
    std::ofstream out(path);
    out << "QPROF 1 version=0.1.0 interval=0.001 start=1700000000\nCMDLINE ./long-job\n";
    std::mt19937 rng(11);
    char line[64];
    for (int i = 0; i < 1'000'000; ++i) {
      const double mib = i == 612'345 ? 9000.0 : 500.0 + (rng() % 10000) / 100.0;
      std::snprintf(line, sizeof line, "MEM %.6f %.4f\n", mib, 1700000000.0 + i * 0.001);
      out << line;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  Result r = qprof({"plot", path, "-o", dir + "/million.png", "--script", dir + "/million.gp"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.status, 0) << r.err;
  expect_png(dir + "/million.png", 1280, static_cast<std::uint32_t>(be32(read_file(dir + "/million.png"), 20)));
  EXPECT_LT(seconds, 60.0);  // loose: a loaded machine; bench/ measures the speed
  // The data qprof sent holds the spike's exact value, and only a few thousand points.
  const std::string script = read_file(dir + "/million.gp");
  EXPECT_LT(script.size(), 2'000'000u);
  double top = 0;
  std::size_t points = 0;
  std::istringstream lines(script);
  for (std::string line; std::getline(lines, line);) {
    double t = 0, v = 0;
    char rest = 0;
    if (std::sscanf(line.c_str(), "%lf %lf %c", &t, &v, &rest) == 2) {
      top = std::max(top, v);
      ++points;
    }
  }
  EXPECT_EQ(top, 9000.0) << "the spike is not in the data";
  EXPECT_LT(points, 30000u);
  r = qprof({"plot", path, "-o", dir + "/million.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(svg_text(dir + "/million.svg"), "peak 8.79 GiB at 10 min 12 s"));
}

TEST(Plot, TextChartOnStdout) {
  const Result r = qprof({"plot", plot_data("full.dat"), "-o", "-", "--size", "120x36"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "python3 quantize.py"));
  EXPECT_TRUE(has(r.out, "Calibration"));
  EXPECT_TRUE(has(r.out, "time from start (s)"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);  // no colours into a pipe
  std::size_t lines = 0;
  for (char c : r.out) lines += c == '\n';
  EXPECT_LE(lines, 37u);
  // Whole lines, as a shell expects of a program's text: the last ends with its newline, none
  // with the dumb terminal's padding, no blank line after the chart.
  ASSERT_FALSE(r.out.empty());
  EXPECT_TRUE(r.out.ends_with("\n")) << r.out.substr(r.out.size() - std::min<std::size_t>(r.out.size(), 100));
  EXPECT_FALSE(r.out.ends_with("\n\n"));
  EXPECT_EQ(r.out.find(" \n"), std::string::npos) << "a line ends with padding";
}

// A note longer than the chart is wide wraps (its end is its point), and plot --sum's note counts
// the files given, not its own sum among them. Time labels never run into each other.
TEST(Plot, TextChartNotesWrapAndCountTheFilesGiven) {
  const Result r = qprof({"plot", "--sum", data_file("mprof/func.dat"), data_file("report/minmax.dat")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "no footprint in 2 of the 2 traces")) << r.out;
  EXPECT_TRUE(has(r.out, "the\nfigures are Σ RSS") || has(r.out, "figures are Σ RSS\n")) << r.out;
  EXPECT_FALSE(has(r.out, "…\n")) << "a note cut: " << r.out;
  // The axis of a 7-hour job in h:min: labels apart by at least one space.
  const std::size_t axis = r.out.find("time from start (h:min)");
  ASSERT_NE(axis, std::string::npos) << r.out;
  const std::size_t line_start = r.out.rfind('\n', r.out.rfind('\n', axis) - 1) + 1;
  const std::string labels = r.out.substr(line_start, r.out.rfind('\n', axis) - line_start);
  ASSERT_NE(labels.find(":00"), std::string::npos) << labels;
  for (std::size_t at = labels.find(":00"); at != std::string::npos; at = labels.find(":00", at + 3)) {
    EXPECT_TRUE(at + 3 == labels.size() || labels[at + 3] == ' ') << "labels run together: " << labels;
  }
}

// mprof plot's habit: no -o. Into a pipe that is the text chart, 80 columns wide, as with -o -.
TEST(Plot, WithoutOutputIntoAPipeIsTheTextChart) {
  const Result r = qprof({"plot", plot_data("full.dat")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "time from start (s)")) << r.out;
  std::size_t widest = 0, column = 0;
  for (unsigned char c : r.out) {
    if (c == '\n') {
      widest = std::max(widest, column);
      column = 0;
    } else if ((c & 0xC0) != 0x80) {
      ++column;
    }
  }
  EXPECT_LE(widest, 80u) << r.out;
}

TEST(Plot, ErrorsSayFileAndLine) {
  const std::string dir = test_dir();
  Result r = qprof({"plot", plot_data("malformed.dat"), "-o", dir + "/m.png"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "malformed.dat:5: MEM: memory (MiB) '1O.5' is not a number")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/m.png"));

  r = qprof({"plot", plot_data("empty.dat"), "-o", dir + "/e.png"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "empty.dat: no memory samples (MEM lines): the trace is empty")) << r.err;

  r = qprof({"plot", dir + "/missing.dat", "-o", dir + "/x.png"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "missing.dat: No such file or directory")) << r.err;

  // A trace whose writer was killed: drawn, with a warning.
  r = qprof({"plot", plot_data("truncated.dat"), "-o", dir + "/t.png"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(joined(r.err), "qprof: warning: ")) << r.err;
  EXPECT_TRUE(has(joined(r.err), "truncated.dat:23: incomplete trace: ")) << r.err;
  EXPECT_TRUE(has(joined(r.err), "its last line (23) is cut")) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/t.png"));
}

TEST(Plot, UsageErrors) {
  const std::string dir = test_dir();
  const std::string f = plot_data("full.dat");
  const std::vector<std::vector<std::string>> bad = {
      {"plot", f, "-o", dir + "/x.jpg"},
      {"plot", f, "-o", dir + "/x.png", "--size", "big"},
      {"plot", f, "-o", dir + "/x.png", "--window", "5,2"},
      {"plot", f, "-o", dir + "/x.png", "--unit", "KiB"},
      {"plot", f, "-o", dir + "/x.png", "--panels", "memory,disks"},
      {"plot", "-o", dir + "/x.png"},
      {"plot", f, "-o", dir + "/x.png", "--window", "100,200"},  // nothing in it
      {"plot", f, "-o", dir + "/no/such/folder/x.png"},
  };
  for (const auto& args : bad) {
    const Result r = qprof(args);
    EXPECT_EQ(r.status, 2) << args.back() << ": " << r.err;
    EXPECT_TRUE(has(joined(r.err), "qprof plot: ")) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/x.png"));
  // The reason names what is wrong: the window past the trace's end, the size's range.
  Result r = qprof({"plot", f, "-o", dir + "/x.png", "--window", "100,200"});
  EXPECT_TRUE(has(joined(r.err), "full.dat: no samples inside --window (its last is at ")) << r.err;
  r = qprof({"plot", f, "-o", dir + "/x.png", "--size", "10x10"});
  EXPECT_TRUE(has(joined(r.err), "--size 10x10: expected WIDTHxHEIGHT from 20x10 to 20000x20000")) << r.err;
}

TEST(Plot, MissingGnuplotNamesThePackage) {
  const std::string dir = test_dir();
  fs::create_directories(dir + "/empty-path");
  const Result r = run({"/usr/bin/env", "PATH=" + dir + "/empty-path", qprof_bin(), "plot", plot_data("full.dat"), "-o",
                        dir + "/x.png"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "gnuplot-nox")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.png"));
  // A path is no name looked up on PATH: said as the path it is.
  const Result path = qprof({"plot", plot_data("full.dat"), "-o", dir + "/x.png", "--gnuplot", dir + "/no/gnuplot"});
  EXPECT_EQ(path.status, 2);
  EXPECT_TRUE(has(joined(path.err), "there is no program at '" + dir + "/no/gnuplot': install")) << path.err;
}

TEST(Plot, StyleFileChangesTheLookAndItsErrorsAreReported) {
  const std::string dir = test_dir();
  write(dir + "/red.gp", "qprof_title_color = '#ff0000'\nset style line 10 lc rgb '#00ff00' lw 3\n");
  Result r = qprof({"plot", plot_data("full.dat"), "-o", dir + "/red.svg", "--style", dir + "/red.gp"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = read_file(dir + "/red.svg");
  EXPECT_TRUE(has(svg, "fill=\"rgb(255,0,0)\"")) << "title colour";
  EXPECT_TRUE(has(svg, "stroke=\"rgb(  0, 255,   0)\"")) << "tree line colour";

  // A broken style: gnuplot's message, exit 2, and an older chart is left as it was.
  write(dir + "/broken.gp", "set this is not gnuplot\n");
  write(dir + "/keep.svg", "old chart");
  r = qprof({"plot", plot_data("full.dat"), "-o", dir + "/keep.svg", "--style", dir + "/broken.gp"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "gnuplot failed")) << r.err;
  // Its words as lines, not one line of "\n" escapes.
  EXPECT_TRUE(has(joined(r.err), "\n  ")) << r.err;
  EXPECT_FALSE(has(joined(r.err), "\\n")) << r.err;
  EXPECT_EQ(read_file(dir + "/keep.svg"), "old chart");
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().extension(), e.path().extension() == ".tmp" ? ".none" : e.path().extension()) << e.path();
  }
  r = qprof({"plot", plot_data("full.dat"), "-o", dir + "/y.png", "--style", dir + "/no-such-style.gp"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "no-such-style.gp")) << r.err;
}

TEST(Plot, TheDarkStyleRenders) {
  const std::string dir = test_dir();
  const std::string dark = data_file("../../plot/dark.gp");
  for (const char* ext : {".png", ".svg", ".pdf"}) {
    const Result r = qprof({"plot", plot_data("full.dat"), "-o", dir + "/dark" + ext, "--style", dark});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(joined(r.err), "") << ext;  // not even a gnuplot warning
  }
  EXPECT_TRUE(has(read_file(dir + "/dark.svg"), "fill=\"#1e1f24\""));  // the background
}

TEST(Plot, SavedScriptRendersOnItsOwn) {
  const std::string dir = test_dir();
  Result r = qprof({"plot", plot_data("full.dat"), "-o", dir + "/chart.png", "--size", "640x400", "--script",
                    dir + "/chart.gp", "--window", "2,8"});
  ASSERT_EQ(r.status, 0) << r.err;
  fs::remove(dir + "/chart.png");
  r = run({"gnuplot", dir + "/chart.gp"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_png(dir + "/chart.png", 640, 400);
}

}  // namespace
}  // namespace qprof::test
