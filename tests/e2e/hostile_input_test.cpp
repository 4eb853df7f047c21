// SPDX-License-Identifier: Apache-2.0
// Input that would take a machine down or a reader over: endless and huge files, overlong lines,
// hostile labels. Each qprof runs inside an address-space limit of its own (prlimit --as) and a
// timeout, so that a regression fails the test instead of the machine.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

// 256 MiB of address space: qprof needs a few tens; the old reader grew to 16 GB.
const std::string kAsLimit = as_limit("268435456");

Result limited_qprof(const std::vector<std::string>& args, int timeout_s = 60) {
  std::vector<std::string> argv{"prlimit", kAsLimit, "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", timeout_s);
}

std::string test_dir() {
  const std::string dir = temp_dir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(dir);
  return dir;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

TEST(BoundedReading, ReportOfDevZeroStopsAtOneMebibyte) {
  const Result r = limited_qprof({"report", "/dev/zero"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(joined(r.err).find("/dev/zero:1: line longer than 1 MiB"), std::string::npos) << r.err;
}

TEST(BoundedReading, SparseTwoGigabyteFile) {
  const std::string path = test_dir() + "/sparse.dat";
  ASSERT_EQ(run({"truncate", "-s", "2G", path}).status, 0);  // a hole: no disk used
  const Result r = limited_qprof({"report", path});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(joined(r.err).find(path + ":1: line longer than 1 MiB"), std::string::npos) << r.err;
  const Result p = limited_qprof({"peak", path});
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_NE(joined(p.err).find("line longer than 1 MiB"), std::string::npos) << p.err;
}

// A FIFO whose writer never sends a newline and never stops.
TEST(BoundedReading, PeakOfAFifoThatNeverEnds) {
  const std::string dir = test_dir();
  const std::string script = "cd '" + dir +
                             "' && rm -f f && mkfifo f && "
                             "(tr '\\000' x < /dev/zero > f 2>/dev/null &) ; "
                             "prlimit " +
                             kAsLimit + " -- '" + qprof_bin() + "' peak f; echo \"status $?\" >&2";
  const Result r = run({"sh", "-c", script}, "", 60);
  EXPECT_NE(joined(r.err).find("f:1: line longer than 1 MiB"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("status 2"), std::string::npos) << r.err;
}

TEST(BoundedReading, APipeOfValidLinesForEverStopsAtOneGibibyte) {
  if (sanitized()) GTEST_SKIP() << "the Trace of 1 GiB of lines is about 1 GiB: over the sanitized build's RSS bound";
  // 1 GiB of MEM lines holds about 0.9 GiB as a Trace: a 2.5 GiB address space is room enough,
  // and the old reader (no bound on what a pipe sends) failed it.
  const std::string script = "yes 'MEM 1.000000 2.0000' | prlimit " + as_limit("2684354560") + " -- '" + qprof_bin() +
                             "' report /dev/stdin; echo \"status $?\" >&2";
  const Result r = run({"sh", "-c", script}, "", 120);
  EXPECT_NE(joined(r.err).find("/dev/stdin: more than 1024 MiB from a pipe or device"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("status 2"), std::string::npos) << r.err;
}

TEST(BoundedReading, AnOverlongLineIsRefusedAShorterOneRead) {
  const std::string dir = test_dir();
  const std::string head = "QPROF 1 start=100\nMEM 1.0 100.0\nMEM 2.0 101.0\n";
  write(dir + "/long.dat", head + "NOTE " + std::string(trace::kMaxLineBytes, 'n') + "\n");
  const Result r = limited_qprof({"report", dir + "/long.dat"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find(dir + "/long.dat:4: line longer than 1 MiB"), std::string::npos) << r.err;
  write(dir + "/fits.dat", head + "NOTE " + std::string(trace::kMaxLineBytes - 5, 'n') + "\n");
  const Result ok = limited_qprof({"report", "--format", "json", dir + "/fits.dat"});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// Labels as a hostile program could print them: terminal escapes (CSI, OSC), DEL, C0 and C1
// controls, invalid and overlong UTF-8, quotes and newlines, YAML/JSON/CSV specials, formulas.
const std::vector<std::string> kHostile = {"\x1b[2J\x1b[31mred",
                                           "\x1b]0;owned\x07title",
                                           "\x7F"
                                           "del",
                                           "bell\x07\x01\x02\x1f",
                                           "\xC2\x9B"
                                           "31mcsi",
                                           "over\xC0\xAFlong",
                                           "bad\xFF\xFE",
                                           "quote \" ' \\ back",
                                           "new\nline",
                                           "key: value",
                                           "- [a, {b: c}]",
                                           "=HYPERLINK(\"http://x\",\"y\")",
                                           "+SUM(1)",
                                           "-2+3",
                                           "@cmd",
                                           "\tTAB",
                                           "\rCR",
                                           "\xE2\x80\xAEright-to-left",
                                           "a,b;c|d",
                                           "`uname`",
                                           "\xEF\xBF\xBE\xEF\xBF\xBF"};

std::string hostile_trace(const std::string& dir) {
  std::string dat = "QPROF 1 start=100 host=h\nCMDLINE run \x1b[31m\x7F\xC0\xAF\nMEM 10.0 100.0\n";
  double t = 100.1;
  for (const std::string& label : kHostile) {
    // Each label as a stage (the stage tables, CSV included, show stage names) and checkpoints.
    dat += "MARK " + std::to_string(t) + " " + trace::escape_text(label + " Start") + "\nMEM 20.0 " +
           std::to_string(t + 0.01) + "\n";
    dat += "MARK " + std::to_string(t + 0.05) + " " + trace::escape_text(label + " End") + "\n";
    t += 0.1;
  }
  // Raw bytes too, as a writer other than qprof could leave them (no escaping at all).
  dat += "MARK " + std::to_string(t) +
         " raw \x1b]52;c;AAAA\x07 \x7F \xC0\xAF \x9B"
         "1m Start\n";
  dat += "NOTE note \x1b[5m\xFF\nMEM 5.0 " + std::to_string(t + 1) + "\n";
  // Whole (its EXIT record): the YAML then ends with its End record.
  dat += "EXIT " + std::to_string(t + 1) + " status=0 signal=0 timed_out=0\n";
  const std::string path = dir + "/hostile.dat";
  write(path, dat);
  return path;
}

TEST(HostileLabels, YamlParsesBackWithPyYamlAndKeepsEveryLabel) {
  const std::string dir = test_dir();
  const std::string trace = hostile_trace(dir);
  const Result r = limited_qprof({"report", trace, "--yaml", dir + "/out.yaml"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string check =
      "import sys, yaml\n"
      "d = yaml.safe_load(open(sys.argv[1], encoding='utf-8'))\n"
      "steps = [r['step'] for r in d['memory_usage']]\n"
      "assert len(steps) == 2 * int(sys.argv[2]) + 3, steps\n"
      "assert steps[1] == '\\x1b[2J\\x1b[31mred Start', repr(steps[1])\n"
      "assert steps[11] == 'over\\ufffd\\ufffdlong Start', steps[11]\n"
      "assert '=HYPERLINK(\"http://x\",\"y\") End' in steps, steps\n"
      "assert 'new\\nline Start' in steps, steps\n"
      "assert [s['name'] for s in d['qprof']['stages']][:2] == ['\\x1b[2J\\x1b[31mred', '\\x1b]0;owned\\x07title']\n"
      "assert '\\x7f' not in ''.join(steps)\n"
      "assert d['qprof']['command'].startswith('run \\x1b[31m'), d['qprof']['command']\n"
      "print('ok')\n";
  const Result py = run({debian_python(), "-c", check, dir + "/out.yaml", std::to_string(kHostile.size())});
  EXPECT_EQ(py.status, 0) << py.err << py.out;
  EXPECT_EQ(py.out, "ok\n");
}

TEST(HostileLabels, JsonParsesBackWithPythonJson) {
  const std::string dir = test_dir();
  const Result r = limited_qprof({"report", "--format", "json", hostile_trace(dir)});
  ASSERT_EQ(r.status, 0) << r.err;
  write(dir + "/out.json", r.out);
  const std::string check =
      "import sys, json\n"
      "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
      "s = json.dumps(d, ensure_ascii=False)\n"
      "assert d['command'] == 'run \\x1b[31m\\x7f\\ufffd\\ufffd', d['command']\n"
      "names = [s['stage'] for s in d['stages']]\n"
      "assert '\\x1b[2J\\x1b[31mred' in names and 'over\\ufffd\\ufffdlong' in names, names\n"
      "assert '-2+3' in names and 'key: value' in names, names\n"
      "print('ok')\n";
  const Result py = run({debian_python(), "-c", check, dir + "/out.json"});
  EXPECT_EQ(py.status, 0) << py.err << py.out;
}

TEST(HostileLabels, CsvCellsAreNeutralisedForSpreadsheets) {
  const std::string dir = test_dir();
  const Result r = limited_qprof({"report", "--format", "csv", hostile_trace(dir)});
  ASSERT_EQ(r.status, 0) << r.err;
  write(dir + "/out.csv", r.out);
  // Python's csv module reads it; no cell starts a formula unless it is a plain number.
  const std::string check =
      "import sys, csv\n"
      "rows = list(csv.reader(open(sys.argv[1], encoding='utf-8', newline='')))\n"
      "width = len(rows[0])\n"
      "cells = [c for row in rows for c in row]\n"
      "assert all(len(row) == width for row in rows), rows\n"
      "def number(c):\n"
      "  try: float(c); return True\n"
      "  except ValueError: return False\n"
      "bad = [c for c in cells if c[:1] in ('=', '+', '-', '@', '\\t', '\\r') and not number(c)]\n"
      "assert not bad, bad\n"
      "assert any(c.startswith(\"'-2+3\") for c in cells), cells\n"
      "assert any(c.startswith(\"'=HYPERLINK\") for c in cells), cells\n"
      "assert any(number(c) and float(c) < 0 for c in cells), cells  # deltas stay numbers\n"
      "print('ok')\n";
  const Result py = run({debian_python(), "-c", check, dir + "/out.csv"});
  EXPECT_EQ(py.status, 0) << py.err << py.out;
}

// What reaches a terminal: no ESC, no DEL, no C1 control, valid UTF-8; escapes visible instead.
void expect_terminal_safe(const std::string& out) {
  for (unsigned char c : out) {
    EXPECT_FALSE((c < 0x20 && c != '\n') || c == 0x7F) << "raw control byte " << int(c);
  }
  EXPECT_EQ(out.find("\xC2\x9B"), std::string::npos);
  EXPECT_EQ(out.find("\xE2\x80\xAE"), std::string::npos);
  const Result py = run({debian_python(), "-c", "import sys; sys.stdin.buffer.read().decode('utf-8')"}, out);
  EXPECT_EQ(py.status, 0) << "not valid UTF-8: " << py.err;
}

TEST(HostileLabels, TextAndMarkdownShowControlsInsteadOfRunningThem) {
  const std::string dir = test_dir();
  const std::string trace = hostile_trace(dir);
  for (const char* format : {"text", "md"}) {
    const Result r = limited_qprof({"report", "--format", format, trace});
    ASSERT_EQ(r.status, 0) << r.err;
    expect_terminal_safe(r.out);
    EXPECT_NE(r.out.find("\\x1b"), std::string::npos) << r.out;
  }
  const Result p = limited_qprof({"peak", "--stage", "\x1b[2Jmissing", trace});  // lists the stage names
  expect_terminal_safe(p.out);
  expect_terminal_safe(p.err);
}

TEST(HostileFileNames, ErrorsAndTheSummaryShowControlsInsteadOfRunningThem) {
  // A file name is untrusted text too: an OSC title and a clear-screen in it reach the terminal
  // as visible escapes, in an error message and in the run's summary.
  const std::string evil = test_dir() + "/evil\x1b]0;owned\x07\x1b[2J";
  write(evil + ".dat", "not a trace\n");
  const Result bad = limited_qprof({"report", evil + ".dat"});
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_EQ(joined(bad.err).find('\x1b'), std::string::npos) << bad.err;
  EXPECT_NE(joined(bad.err).find("evil\\x1b]0;owned\\x07\\x1b[2J.dat"), std::string::npos) << bad.err;
  const Result run = limited_qprof({"run", "-o", evil + "-run.dat", "--", "true"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(joined(run.err).find('\x1b'), std::string::npos) << run.err;
  EXPECT_NE(joined(run.err).find("evil\\x1b]0;owned\\x07\\x1b[2J-run.dat"), std::string::npos) << run.err;
}

TEST(HostileFileNames, ACommandNotFoundIsNamedWithoutItsEscapes) {
  const Result r = limited_qprof({"run", "-q", "-o", test_dir() + "/t.dat", "--", "no\x1b]0;owned\x07such"});
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_EQ(joined(r.err).find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("qprof: no\\x1b]0;owned\\x07such: command not found"), std::string::npos) << r.err;
}

// 64 MiB of address space, under the traces below: `peak` reads them as a stream of maxima.
const std::string kSmallAsLimit = as_limit("67108864");

double json_mib(const nlohmann::json& j) { return j.at("bytes").get<double>() / (1024.0 * 1024.0); }

TEST(BoundedReading, PeakStreamsATraceLargerThanItsAddressSpace) {
  // 3 M samples and 3 M CHLD lines (145 MB; 96 MB as a whole Trace): the old reader failed with
  // bad_alloc. Known by construction: the tree peaks at 9 MiB outside stage S, at 5 MiB in it;
  // child 7 peaks at 3 MiB in S and 4 MiB outside.
  const std::string path = test_dir() + "/large.dat";
  {
    std::ofstream out(path);
    out << "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=1000.000000 metric=rss\nCMDLINE big\n";
    constexpr int kSamples = 3000000;
    char line[128];
    for (int i = 0; i < kSamples; ++i) {
      const double t = 1000.0 + 0.01 * (i + 1);
      if (i == 2000000) {
        std::snprintf(line, sizeof line, "MARK %.6f S Start\n", t);
        out << line;
      }
      const double mem = i == 1500000 ? 9.0 : i == 2200000 ? 5.0 : 1.0;
      const double child = i == 2300000 ? 3.0 : i == 100 ? 4.0 : 0.5;
      std::snprintf(line, sizeof line, "MEM %.6f %.4f\nCHLD 7 %.6f %.4f\n", mem, t, child, t);
      out << line;
      if (i + 1 == 2500000) {
        std::snprintf(line, sizeof line, "MARK %.6f S End\n", t);
        out << line;
      }
    }
  }
  ASSERT_GT(std::filesystem::file_size(path), std::uintmax_t{140} << 20);
  Result r = run({"prlimit", kSmallAsLimit, "--", qprof_bin(), "peak", "--json", path}, "", 300);
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(json_mib(j.at(0)), 9.0) << r.out;
  EXPECT_NEAR(j.at(0).at("relative_time_s").get<double>(), 15000.01, 0.001) << r.out;
  r = run({"prlimit", kSmallAsLimit, "--", qprof_bin(), "peak", "--json", "--stage", "S", "--children", path}, "", 300);
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(json_mib(j.at(0)), 5.0) << r.out;
  EXPECT_EQ(j.at(0).at("stage"), "S") << r.out;
  ASSERT_EQ(j.at(0).at("children").size(), 1u) << r.out;
  EXPECT_DOUBLE_EQ(json_mib(j.at(0).at("children").at(0)), 3.0) << r.out;
  r = run(
      {"prlimit", kSmallAsLimit, "--", qprof_bin(), "peak", "--children", "--unit", "B", "--max-peak", "8MiB", path},
      "", 300);
  EXPECT_EQ(r.status, 3) << r.err;  // over the budget: 9 MiB
  EXPECT_NE(r.out.find("\t9437184 B\n  Child 7\t\t\t4194304 B\n"), std::string::npos) << r.out;
}

TEST(BoundedReading, PeakOfAFifoFedForAWhileThenClosedReadsItAllInFlatMemory) {
  // 8 M lines (160 MB) through a FIFO, the peak among the last: the old reader held them all
  // (128 MB of samples) and failed inside 64 MiB.
  const std::string dir = test_dir();
  const std::string script = "cd '" + dir +
                             "' && rm -f f && mkfifo f && "
                             "({ yes 'MEM 1.000000 2.0000' | head -n 8000000; echo 'MEM 7.500000 3.0000'; "
                             "yes 'MEM 2.000000 4.0000' | head -n 1000; } > f &) ; "
                             "prlimit " +
                             kSmallAsLimit + " -- '" + qprof_bin() + "' peak --unit B f; echo \"status $?\" >&2";
  const Result r = run({"sh", "-c", script}, "", 300);
  EXPECT_NE(joined(r.err).find("status 0"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "f\t7864320 B\n") << r.err;
}

TEST(BoundedReading, PeakOfAFifoOfMarkersAndStagesReadsItInFlatMemory) {
  // 3 M lines through a FIFO: a million one-sample stages and their two million markers, then the
  // peak inside the stage Late. The old reader kept every marker with its snapshot (about 400 MB).
  const std::string dir = test_dir();
  const std::string script =
      "cd '" + dir +
      "' && rm -f f && mkfifo f && "
      "({ awk 'BEGIN { for (i = 1; i <= 1000000; i++) "
      "printf \"MARK %d.1 S Start\\nMEM 1.000000 %d.2\\nMARK %d.3 S End\\n\", i, i, i }'; "
      "printf 'MARK 2000000.1 Late Start\\nMEM 9.000000 2000000.2\\nMARK 2000000.3 Late End\\n'; } > f &) ; "
      "prlimit " +
      kSmallAsLimit + " -- '" + qprof_bin() + "' peak --json f; echo \"status $?\" >&2";
  const Result r = run({"sh", "-c", script}, "", 300);
  ASSERT_NE(joined(r.err).find("status 0"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(json_mib(j.at(0)), 9.0) << r.out;
  EXPECT_EQ(j.at(0).at("stages"), nlohmann::json::array({"Late"})) << r.out;
}

}  // namespace
}  // namespace qprof::test
