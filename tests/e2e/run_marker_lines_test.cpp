// SPDX-License-Identifier: Apache-2.0
// What a marker line on stderr is, as a terminal shows lines: found past any length of line, after
// a progress bar's '\r', on the last line without its '\n'; what cannot be kept whole is said.
#include <gtest/gtest.h>

#include <algorithm>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

std::vector<std::string> labels_of(const Trace& t) {
  std::vector<std::string> labels;
  for (const trace::Marker& m : t.markers) labels.push_back(m.label);
  return labels;
}

bool has_note(const Trace& t, const std::string& text) {
  return std::any_of(t.notes.begin(), t.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(RunMarkerLines, AMarkerAfterALongStartOfLineKeepsItsWholeLabel) {
  // Main's tee kept a line's first 4096 bytes: L4080 became "L40" and L4100 was lost, unsaid.
  for (const int before : {4000, 4080, 4100, 100000}) {
    const std::string out = temp_dir() + "/long" + std::to_string(before) + ".dat";
    const std::string label = "L" + std::to_string(before);
    const Result r = qprof({"run", "-q", "-o", out, "--", "sh", "-c",
                            "printf '%0" + std::to_string(before) + "d QPROF_MARK: " + label + "\\n' 0 >&2"});
    ASSERT_EQ(r.status, 0) << before;
    const Trace t = trace::read_trace(out);
    EXPECT_EQ(labels_of(t), std::vector<std::string>{label}) << before;
    EXPECT_FALSE(has_note(t, "cut there")) << before;
  }
}

TEST(RunMarkerLines, AStageStartedAfter4080BytesIsEndedByItsEnd) {
  const std::string out = temp_dir() + "/long_stage.dat";
  const Result r = qprof({"run", "-o", out, "--", "sh", "-c",
                          "printf '%04080d QPROF_MARK: Load Start\\n' 0 >&2; printf 'QPROF_MARK: Load End\\n' >&2"});
  ASSERT_EQ(r.status, 0) << r.err.substr(4081);
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_EQ(t.stages[0].name, "Load");
  EXPECT_TRUE(t.stages[0].closed);
  EXPECT_EQ(joined(r.err).find("never"), std::string::npos) << r.err.substr(4081);
}

TEST(RunMarkerLines, AProgressBarsCarriageReturnsEndLines) {
  // As tqdm draws: 300 redraws after '\r' and no '\n' (13 KB), then the End after a last '\r'.
  const std::string out = temp_dir() + "/progress.dat";
  const Result r =
      qprof({"run", "-o", out, "--", debian_python(), "-c",
             "import sys\n"
             "print('QPROF_MARK: T Start', file=sys.stderr, flush=True)\n"
             "for i in range(300):\n"
             "    sys.stderr.write('\\rprogress %5d/300 |%s|' % (i, '#' * (i // 10))); sys.stderr.flush()\n"
             "sys.stderr.write('\\r'); print('QPROF_MARK: T End', file=sys.stderr, flush=True)\n"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels_of(t), (std::vector<std::string>{"T Start", "T End"}));
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_TRUE(t.stages[0].closed);
  EXPECT_EQ(joined(r.err).find("never ended"), std::string::npos) << r.err;
}

TEST(RunMarkerLines, TheLastLineWithoutItsNewlineIsAMarkerWhenStderrCloses) {
  const std::string out = temp_dir() + "/unended.dat";
  const Result r = qprof({"run", "-q", "-o", out, "--", "sh", "-c",
                          "printf 'QPROF_MARK: A Start\\n' >&2; sleep 0.2; printf 'QPROF_MARK: A End' >&2; sleep 0.3"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels_of(t), (std::vector<std::string>{"A Start", "A End"}));
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_TRUE(t.stages[0].closed);
  // The End was printed 0.2 s after the Start; it is taken when stderr closes, 0.3 s later.
  EXPECT_GT(t.stages[0].t_end - t.stages[0].t_start, 0.15);
}

TEST(RunMarkerLines, TheLastLineWithoutItsNewlineIsAMarkerWhenADaemonHoldsStderr) {
  // qprof stops reading when the command ends (--no-wait-daemons); the sleep still holds stderr.
  const std::string out = temp_dir() + "/unended_daemon.dat";
  const Result r = qprof({"run", "-q", "--no-wait-daemons", "-o", out, "--", "sh", "-c",
                          "printf 'QPROF_MARK: D Start\n' >&2; printf 'QPROF_MARK: D End' >&2; (sleep 3 &)"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels_of(t), (std::vector<std::string>{"D Start", "D End"}));
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_TRUE(t.stages[0].closed);
}

TEST(RunMarkerLines, AnEndWithoutItsStartIsSaidAsAStartWithoutItsEndIs) {
  const std::string out = temp_dir() + "/orphan.dat";
  const Result r = qprof({"run", "-o", out, "--", "sh", "-c",
                          "printf 'QPROF_MARK: B End\\nQPROF_MARK: C Start\\nQPROF_MARK: B End\\n' >&2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(joined(r.err).find("qprof: stage 'C' was started but never ended"), std::string::npos) << r.err;
  const std::string said = "stage 'B' was ended but never started";
  ASSERT_NE(joined(r.err).find("qprof: " + said), std::string::npos) << r.err;
  EXPECT_EQ(joined(r.err).find(said, joined(r.err).find(said) + 1), std::string::npos) << "said once a name";
  const Trace t = trace::read_trace(out);
  EXPECT_TRUE(has_note(t, said));
  EXPECT_EQ(labels_of(t), (std::vector<std::string>{"B End", "C Start", "B End"}));  // still checkpoints
}

TEST(RunMarkerLines, ALabelLongerThanItsBoundIsCutThereAndSaid) {
  const std::string out = temp_dir() + "/long_label.dat";
  const Result r = qprof({"run", "-o", out, "--", "sh", "-c", "printf 'QPROF_MARK: %05000d\\n' 0 >&2"});
  ASSERT_EQ(r.status, 0);
  const std::string said = "stderr: 1 marker label longer than 4096 bytes, cut there";
  EXPECT_NE(joined(r.err).find("qprof: " + said), std::string::npos) << r.err.substr(5000);
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels_of(t), std::vector<std::string>{std::string(4096, '0')});
  EXPECT_TRUE(has_note(t, said));
}

TEST(RunMarkerLines, AMarkerRegexSeesTheLinesCarriageReturnsEnd) {
  const std::string out = temp_dir() + "/regex_cr.dat";
  const Result r = qprof({"run", "-o", out, "--marker-regex", "^\\[stage\\] (.*)$", "--", "sh", "-c",
                          "printf '[stage] W Start\\r\\n 10%%\\r 50%%\\r[stage] W End\\r\\n' >&2; "
                          "printf '%070000d [stage] Unsearched\\n' 0 >&2"});
  ASSERT_EQ(r.status, 0);
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels_of(t), (std::vector<std::string>{"W Start", "W End"}));
  ASSERT_EQ(t.stages.size(), 1u);
  const std::string said = "stderr: 1 line longer than 65536 bytes, not searched for --marker-regex's markers";
  EXPECT_TRUE(has_note(t, said));
  EXPECT_NE(joined(r.err).find("qprof: " + said), std::string::npos) << r.err.substr(70000);
}

// A line longer than qprof may hold (1.5 GB of stderr without a newline) passes through under an
// address-space limit of 1 GiB, with the default scanner and with --marker-regex, and the marker
// after it is found: the scanners keep a bounded part of a line, never the line. (Under the
// sanitizers the limit cannot be set, and a shorter line keeps the test's time.)
TEST(RunMarkerLines, ALineLongerThanQprofsMemoryLimitPassesAndTheNextMarkerIsFound) {
  const std::string bytes = sanitized() ? "100000000" : "1500000000";
  const std::string script = temp_dir() + "/long_line.sh";
  write_file(script, "head -c " + bytes + " /dev/zero | tr '\\000' x >&2; printf '\\nQPROF_MARK: after\\n' >&2\n");
  for (const bool regex : {false, true}) {
    SCOPED_TRACE(regex ? "--marker-regex" : "QPROF_MARK:");
    const std::string out = temp_dir() + "/long_line" + (regex ? "_regex" : "") + ".dat";
    std::vector<std::string> argv = {
        "sh", "-c", "exec \"$0\" \"$@\" 2>/dev/null", "prlimit", as_limit("1073741824"), "--", qprof_bin(), "run", "-q",
        "-o", out};
    if (regex) argv.insert(argv.end(), {"--marker-regex", "^QPROF_MARK: (.*)$"});
    argv.insert(argv.end(), {"--", "sh", script});
    const Result r = run(argv, "", 120);
    ASSERT_EQ(r.status, 0) << r.err;
    const Trace t = trace::read_trace(out);
    EXPECT_EQ(labels_of(t), std::vector<std::string>{"after"});
    if (regex) {
      EXPECT_TRUE(has_note(t, "stderr: 1 line longer than 65536 bytes, not searched"));
    }
  }
}

// The warnings of a stage left open or ended unopened name it as every other place does: its
// control characters shown, never acted upon (a clear screen, a window title).
TEST(RunMarkerLines, StageNamesInTheWarningsAreEscaped) {
  const std::string out = temp_dir() + "/escaped_stage.dat";
  const Result r = qprof({"run", "-o", out, "--", "sh", "-c",
                          "printf 'QPROF_MARK: Z\\033[2JZ End\\nQPROF_MARK: U\\033]0;T\\007 Start\\n' >&2"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string printed = joined(r.err.substr(r.err.find("Start\n") + 6));  // after the job's own stderr
  EXPECT_EQ(printed.find('\033'), std::string::npos) << printed;
  EXPECT_EQ(printed.find('\007'), std::string::npos) << printed;
  EXPECT_NE(printed.find("stage 'Z\\x1b[2JZ' was ended but never started"), std::string::npos) << printed;
  EXPECT_NE(printed.find("stage 'U\\x1b]0;T\\x07' was started but never ended"), std::string::npos) << printed;
}

TEST(RunMarkerLines, StderrReachesTheTerminalByteForByte) {
  const std::string script =
      "printf 'QPROF_MARK: P Start\\r\\n 1%%\\r 2%%\\r\\rQPROF_MARK: P End\\r' >&2; "
      "printf '%05000d QPROF_MARK: far\\n\\001\\377' 0 >&2; printf 'QPROF_MARK: last' >&2";
  const Result direct = run({"sh", "-c", script});
  const Result profiled = qprof({"run", "-q", "-o", temp_dir() + "/bytes.dat", "--", "sh", "-c", script});
  ASSERT_EQ(profiled.status, 0);
  EXPECT_EQ(profiled.err, direct.err);
  EXPECT_EQ(direct.err, "QPROF_MARK: P Start\r\n 1%\r 2%\r\rQPROF_MARK: P End\r" + std::string(5000, '0') +
                            " QPROF_MARK: far\n\001\377QPROF_MARK: last");
}

}  // namespace
}  // namespace qprof::test
