// SPDX-License-Identifier: Apache-2.0
// Marker lines on stderr: checkpoints with the memory of that moment, stages, FUNC brackets.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Marker;
using trace::MemSample;
using trace::Stage;
using trace::Trace;

namespace {

TEST(RunMarkers, CheckpointsCarryTheMemoryOfTheirMoment) {
  const std::string out = temp_dir() + "/markers.dat";
  // Regular samples every 2 s: only the sample taken at each marker can know its memory.
  const Result r = qprof({"run", "-o", out, "--interval", "2", "--", workload("markers")});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  std::vector<std::string> labels;
  for (const Marker& m : t.markers) labels.push_back(m.label);
  EXPECT_EQ(labels,
            (std::vector<std::string>{"Load Start", "Load End", "Calibration Start", "Calibration End", "Export"}));
  ASSERT_EQ(t.markers.size(), 5u);
  const double base = mib(*t.markers[0].at.rss);
  EXPECT_LT(base, 10.0);
  // Load End: +40 MiB; Calibration End: +40 +80 MiB (each taken by the immediate sample).
  EXPECT_NEAR(mib(*t.markers[1].at.rss) - base, 40.0, 2.0);
  EXPECT_NEAR(mib(*t.markers[3].at.rss) - base, 120.0, 3.0);
  EXPECT_NEAR(mib(*t.markers[4].at.rss) - base, 40.0, 2.0);
  // Each marker's time is that of the sample taken for it.
  for (const Marker& m : t.markers) {
    const bool has_sample =
        std::any_of(t.mem.begin(), t.mem.end(), [&](const MemSample& s) { return std::abs(s.t - m.t) < 1e-4; });
    EXPECT_TRUE(has_sample) << m.label;
  }
}

TEST(RunMarkers, StagesPairStartAndEndAndBecomeFuncLines) {
  const std::string out = temp_dir() + "/stages.dat";
  const Result r = qprof({"run", "-o", out, "--", workload("markers")});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.stages.size(), 2u);
  EXPECT_EQ(t.stages[0].name, "Load");
  EXPECT_EQ(t.stages[1].name, "Calibration");
  for (const Stage& s : t.stages) {
    EXPECT_TRUE(s.closed);
    // Each stage sleeps 180 ms besides touching memory; a busy machine only makes it longer.
    EXPECT_GT(s.t_end - s.t_start, 0.15) << s.name;
    EXPECT_LT(s.t_end - s.t_start, 3.0) << s.name;
  }
  const std::string text = read_file(out);
  EXPECT_NE(text.find("\nFUNC Load "), std::string::npos);
  EXPECT_NE(text.find("\nFUNC Calibration "), std::string::npos);
  // The stage table follows the summary.
  EXPECT_NE(r.err.find("\nqprof: Load "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\nqprof: Calibration "), std::string::npos) << r.err;
}

TEST(RunMarkers, MarkerLinesStillReachStderrUnchanged) {
  const std::string out = temp_dir() + "/passthrough.dat";
  const Result direct = run({workload("markers")});
  const Result profiled = qprof({"run", "-q", "-o", out, "--", workload("markers")});
  EXPECT_EQ(profiled.err, direct.err);
  EXPECT_NE(direct.err.find("QPROF_MARK: Load Start\n"), std::string::npos);
}

TEST(RunMarkers, CustomPatternWithOneCaptureGroup) {
  const std::string out = temp_dir() + "/regex.dat";
  const Result r = qprof({"run", "-q", "-o", out, "--marker-regex", "^\\[stage\\] (.*)$", "--", "sh", "-c",
                          "echo '[stage] Warmup Start' >&2; sleep 0.1; echo 'QPROF_MARK: ignored' >&2; "
                          "echo '[stage] Warmup End' >&2"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 2u);
  EXPECT_EQ(t.markers[0].label, "Warmup Start");
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_EQ(t.stages[0].name, "Warmup");
}

TEST(RunMarkers, MarkersStillInThePipeWhenTheTreeEndsAreAllKeptAtOnce) {
  const std::string out = temp_dir() + "/burst.dat";
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = qprof({"run", "-q", "-o", out, "--", "sh", "-c",
                          "i=0; while [ $i -lt 300 ]; do echo \"QPROF_MARK: S$i Start\" >&2; "
                          "echo \"QPROF_MARK: S$i End\" >&2; i=$((i+1)); done"});
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0);
  EXPECT_LT(elapsed, 10.0) << "no marker waits for a sampler that has stopped";
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(t.markers.size(), 600u);
  EXPECT_EQ(t.stages.size(), 300u);
}

TEST(RunMarkers, PatternWithoutExactlyOneGroupIsAUsageError) {
  for (const char* bad : {"no group", "(a)(b)", "(unclosed"}) {
    const Result r = qprof({"run", "--marker-regex", bad, "--", "true"});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("--marker-regex"), std::string::npos) << r.err;
  }
}

TEST(RunMarkers, HostileLabelsAreStoredEscapedAndReadBackExactly) {
  const std::string out = temp_dir() + "/hostile.dat";
  // A label with a tab, a backslash, quotes, a backquote and an invalid UTF-8 byte.
  const Result r = qprof(
      {"run", "-q", "-o", out, "--", "sh", "-c",
       "printf 'QPROF_MARK: a\\tb\\\\c \"q\" `x` \\377 Start\\nQPROF_MARK: a\\tb\\\\c \"q\" `x` \\377 End\\n' >&2"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string label = "a\tb\\c \"q\" `x` \xff Start";
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 2u);
  EXPECT_EQ(t.markers[0].label, label);
  ASSERT_EQ(t.stages.size(), 1u);
  // Every line of the file is valid UTF-8 without control characters (mprof decodes UTF-8).
  const std::string text = read_file(out);
  EXPECT_EQ(text.find('\xff'), std::string::npos);
  EXPECT_EQ(text.find('\t'), std::string::npos);
}

// A flood of stderr markers (1 M lines): qprof drops them past the queue's 256 instead of
// holding the job's stderr until the sampler took each one (3 700 a second: 1 M took > 100 s).
// What was dropped and what was taken add up to what was written; the drop is said once, and
// counted, in the trace's notes.
TEST(RunMarkers, AFloodOfStderrMarkersNeverHoldsTheJobBack) {
  const std::string out = temp_dir() + "/flood_stderr.dat";
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = run({"timeout", "-s", "KILL", "90", "prlimit", as_limit("4294967296"), "--", qprof_bin(), "run",
                        "-q", "-o", out, "--", "sh", "-c", "yes 'QPROF_MARK: x' | head -n 1000000 >&2"},
                       "", 100);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0);
  EXPECT_LT(took, 30.0);   // about as fast as without qprof; the old tee needed minutes
  std::size_t copied = 0;  // the marker lines still reach stderr
  for (std::size_t at = r.err.find("QPROF_MARK: x\n"); at != std::string::npos;
       at = r.err.find("QPROF_MARK: x\n", at + 14)) {
    ++copied;
  }
  EXPECT_GE(copied, 1000000u - 2);  // qprof's own notice may land inside a line of the job's
  const Trace t = trace::read_trace(out);
  std::size_t flood_notes = 0;
  std::optional<std::uint64_t> dropped;
  for (const std::string& n : t.notes) {
    flood_notes += n.find("stderr is flooded with markers") != std::string::npos;
    const std::string counted = "stderr's marker lines: dropped ";
    if (n.find(counted) == 0) dropped = std::stoull(n.substr(counted.size()));
  }
  EXPECT_EQ(flood_notes, 1u);
  ASSERT_TRUE(dropped);
  EXPECT_GT(*dropped, 0u);
  EXPECT_EQ(*dropped + t.markers.size(), 1000000u);
}

// '^(?:a|a)*X(.*)$' backtracks 2^31 times on 31 a's and no X after them: std::regex took 26 s of
// CPU a line, holding stderr. PCRE2 gives up on each such line within its step bound; the
// lines are no markers, counted in the summary and the trace; a real marker after them counts.
TEST(RunMarkers, APatternThatBacktracksCatastrophicallyGivesUpOnItsLines) {
  const std::string out = temp_dir() + "/backtrack.dat";
  const std::string bad = std::string(31, 'a') + "bX";
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = run({"timeout", "-s", "KILL", "60", "prlimit", as_limit("1073741824"), "--", qprof_bin(), "run",
                        "-o", out, "--marker-regex", "^(?:a|a)*X(.*)$", "--", "sh", "-c",
                        "for i in 1 2 3; do echo " + bad + " >&2; done; echo 'X done' >&2"},
                       "", 70);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(took, 20.0);
  EXPECT_NE(r.err.find("--marker-regex gave up on 3 lines"), std::string::npos) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 1u);
  EXPECT_EQ(t.markers[0].label, "done");
  EXPECT_TRUE(std::any_of(t.notes.begin(), t.notes.end(),
                          [](const std::string& n) { return n.find("--marker-regex gave up on 3 lines") == 0; }));
}

}  // namespace
}  // namespace qprof::test
