// SPDX-License-Identifier: Apache-2.0
// Incomplete traces are said by every command that reads them, and streaming outputs check
// every input before their first byte; -q says nothing but errors.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A whole trace of a short run, and two copies: one without its EXIT record (qprof SIGKILLed)
// and one cut in the middle of its last line (a copy cut short).
struct Traces {
  std::string whole, killed, cut;
};

Traces make_traces(const std::string& dir) {
  Traces t{dir + "/whole.dat", dir + "/killed.dat", dir + "/cut.dat"};
  const Result r = qprof({"run", "-q", "-o", t.whole, "--", "sh", "-c", "sleep 0.3"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string text = read_file(t.whole);
  std::istringstream lines(text);
  std::string line, killed;
  while (std::getline(lines, line)) {
    if (line.rfind("EXIT ", 0) != 0) killed += line + "\n";
  }
  write_file(t.killed, killed);
  const std::size_t last_mem = killed.rfind("\nMEM ");
  write_file(t.cut, killed.substr(0, last_mem + 8));  // "\nMEM 17…": the line has no end
  return t;
}

TEST(IncompleteTrace, EveryReaderSaysSoInOneLineWithWhy) {
  const std::string dir = temp_dir();
  const Traces t = make_traces(dir);
  const std::vector<std::pair<std::string, std::vector<std::string>>> readers = {
      {"peak", {"peak"}},
      {"report", {"report"}},
      {"compare", {"compare"}},
      {"export", {"export", "--format", "csv", "-o", dir + "/out.csv"}},
      {"plot", {"plot", "-o", "-"}},
  };
  for (const auto& [name, args] : readers) {
    std::vector<std::string> whole = args;
    whole.push_back(t.whole);
    const Result w = qprof(whole);
    EXPECT_FALSE(contains(joined(w.err), "incomplete")) << name << ": a whole trace is whole\n" << w.err;

    std::vector<std::string> killed = args;
    killed.push_back(t.killed);
    const Result k = qprof(killed);
    EXPECT_TRUE(contains(joined(k.err), "killed.dat: incomplete trace: no end record (EXIT)")) << name << "\n" << k.err;

    std::vector<std::string> cut = args;
    cut.push_back(t.cut);
    const Result c = qprof(cut);
    EXPECT_TRUE(contains(joined(c.err), "cut.dat:")) << name << "\n" << c.err;
    EXPECT_TRUE(contains(joined(c.err), "is cut and was ignored")) << name << "\n" << c.err;
    // One line: the cut and the missing end record are said together.
    std::size_t said = 0;
    for (std::size_t at = joined(c.err).find("incomplete trace"); at != std::string::npos;
         at = joined(c.err).find("incomplete trace", at + 1)) {
      ++said;
    }
    EXPECT_EQ(said, 1u) << name << "\n" << c.err;
  }
}

// The report itself says it, not only stderr: YAML in progress with no End record made up,
// text, md and json a fact.
TEST(IncompleteTrace, TheReportSaysSoInEveryFormat) {
  const std::string dir = temp_dir();
  const Traces t = make_traces(dir);
  const std::string checks =
      "import sys, yaml\n"
      "d = yaml.safe_load(sys.stdin)\n"
      "steps = [r['step'] for r in d['memory_usage']]\n"
      "if sys.argv[1] == 'killed':\n"
      "  assert d['qprof']['in_progress'] is True, d['qprof']\n"
      "  assert 'End' not in steps, steps\n"
      "  assert d['qprof']['incomplete'].startswith('no end record (EXIT)'), d['qprof']\n"
      "else:\n"
      "  assert d['qprof']['in_progress'] is False and steps[-1] == 'End', (d['qprof'], steps)\n"
      "  assert 'incomplete' not in d['qprof']\n";
  for (const auto& [name, path] : {std::pair{"killed", t.killed}, std::pair{"whole", t.whole}}) {
    const Result yaml = qprof({"report", "--format", "yaml", path});
    ASSERT_EQ(yaml.status, 0) << yaml.err;
    const Result py = run({debian_python(), "-c", checks, name}, yaml.out);
    EXPECT_EQ(py.status, 0) << name << "\n" << py.err << yaml.out;
    for (const std::string format : {"text", "md", "json"}) {
      const Result r = qprof({"report", "--format", format, path});
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(contains(r.out, "no end record (EXIT)"), std::string(name) == "killed") << format << "\n" << r.out;
    }
  }
}

TEST(IncompleteTrace, ExportToStdoutWritesNothingWhenAnInputIsBad) {
  const std::string dir = temp_dir();
  const Traces t = make_traces(dir);
  write_file(dir + "/bad.dat", "MEM 1.0 2.0\nMEM oops\n");
  for (const std::string format : {"json", "csv", "perfetto"}) {
    const Result missing = qprof({"export", "--format", format, t.whole, dir + "/missing.dat"});
    EXPECT_EQ(missing.status, 2) << format << "\n" << missing.err;
    EXPECT_EQ(missing.out, "") << format << ": nothing is written before every input is checked";
    const Result bad = qprof({"export", "--format", format, t.whole, dir + "/bad.dat"});
    EXPECT_EQ(bad.status, 2) << format << "\n" << bad.err;
    EXPECT_EQ(bad.out, "") << format;
    EXPECT_TRUE(contains(joined(bad.err), "bad.dat:2:")) << bad.err;
  }
}

// attach -q printed "Σ VmHWM is not an upper bound" for a process its own parent reaps.
TEST(IncompleteTrace, AttachQuietSaysNothingButTheMarkerFifo) {
  const std::string dir = temp_dir();
  Process target({"sleep", "0.6"});
  const Result r = qprof({"attach", "-q", "-o", dir + "/a.dat", std::to_string(target.pid())});
  target.wait(30);
  EXPECT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.err);
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_EQ(line.rfind("qprof: markers: QPROF_MARK_PATH=", 0), 0u) << "-q: " << line;
  }
}

// Attached, the process's children are reaped by their parent, never by qprof: that Σ VmHWM is
// then no bound is the normal case, kept in the trace and not said on stderr.
TEST(IncompleteTrace, AttachKeepsTheReapedParentNoteInTheTrace) {
  const std::string dir = temp_dir();
  Process target({"sh", "-c", "sleep 0.3; sleep 0.3"});
  const Result r = qprof({"attach", "-o", dir + "/a.dat", std::to_string(target.pid())});
  target.wait(30);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err).find("never reaped"), std::string::npos) << r.err;
  const std::string trace = read_file(dir + "/a.dat");
  if (trace.find("never reaped") == std::string::npos) GTEST_SKIP() << "qprof saw no reaped child this time";
  EXPECT_NE(trace.find("NOTE"), std::string::npos);
}

}  // namespace
}  // namespace qprof::test
