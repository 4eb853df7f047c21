// SPDX-License-Identifier: Apache-2.0
// qprof fit's text read from fabricated runs' tables: it never says a limit was completed in where
// no run completed, it never contradicts the table (noise and non-monotone runs are said), it says
// when no limited run was made, and every line fits the width it is given.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "qprof/fit/report.hpp"
#include "qprof/fit/text_width.hpp"

namespace qprof::fit {
namespace {

constexpr Bytes MiB = Bytes{1} << 20;

Probe probe(Bytes limit, Outcome outcome, double seconds) {
  Probe p;
  p.limit = limit;
  p.outcome = outcome;
  p.seconds = seconds;
  p.detail = outcome == Outcome::completed  ? "exit status 0"
             : outcome == Outcome::too_slow ? "running when stopped"
                                            : "OOM killer: 1 process";
  return p;
}

// The report the search makes of these runs, the baseline taking 1 s.
FitReport report_of(Bytes unreclaimable, Bytes charge, const std::vector<Probe>& probes) {
  FitReport r;
  r.command = "job --input data.bin";
  r.cgroup = "v1";
  Baseline b;
  b.run = probe(0, Outcome::completed, 1.0);
  b.unreclaimable_peak = unreclaimable;
  b.charge_peak = charge;
  r.baseline = b;
  r.max_slowdown = 4;
  r.full_speed_margin = 0.10;
  r.cutoff_s = 4;
  LimitSearch search(b, r.resolution, r.full_speed_margin);
  for (const Probe& p : probes) search.add(p);
  r.probes = probes;
  r.findings = search.findings();
  r.reference_s = search.reference_seconds();
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Columns on a terminal: UTF-8 code points ("…" is three bytes, one column).
std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::string finding(const FitReport& r, const std::string& title) {
  for (const std::string& l : finding_lines(r)) {
    if (l.starts_with("qprof fit: " + title + ": ")) return l;
  }
  return "";
}

// The smallest limit tried was still running at the cutoff: it was not OOM-killed there, and no
// run completed there.
TEST(FitText, ARunStoppedAtTheCutoffIsNeverSaidToComplete) {
  const FitReport r = report_of(100 * MiB, 250 * MiB,
                                {probe(175 * MiB, Outcome::completed, 1.4), probe(118 * MiB, Outcome::completed, 3.2),
                                 probe(114 * MiB, Outcome::too_slow, 4.07), probe(104 * MiB, Outcome::too_slow, 4.08)});
  const std::string runs = finding(r, "smallest limit not OOM-killed");
  EXPECT_TRUE(has(runs, ": 104.0 MiB (still running at 4.08x when stopped, not seen to complete; ")) << runs;
  EXPECT_FALSE(has(runs, "completed")) << runs;
  EXPECT_TRUE(has(runs, "nothing was tried at or below the unreclaimable peak, 100.0 MiB")) << runs;
  const std::string within = finding(r, "smallest limit it completes in within 4x");
  EXPECT_TRUE(has(within,
                  ": 118.0 MiB (completed in 3.20 s (3.20x); at 114.0 MiB it was still running at 4.07x when "
                  "stopped)"))
      << within;
  const std::string full = finding(r, "smallest limit at full speed (within 10 % of the fastest run, 1.00 s)");
  EXPECT_TRUE(has(full,
                  ": none measured below the unlimited run's peak charge, 250.0 MiB (at 175.0 MiB it "
                  "completed in 1.40 s, 1.40x the fastest run's 1.00 s)"))
      << full;
}

// The noisy job: within 4x at 157.8, 170.3 and 220.6 MiB; at 308.4 MiB one run of two took
// 4.12x. The answer is the table's 157.8 MiB, the noise said beside it.
TEST(FitText, NoiseAboveTheAnswerIsSaidAndDoesNotMoveIt) {
  const FitReport r = report_of(100 * MiB, 330 * MiB,
                                {probe(150 * MiB, Outcome::too_slow, 4.05), probe(157 * MiB, Outcome::completed, 3.0),
                                 probe(170 * MiB, Outcome::completed, 2.0), probe(220 * MiB, Outcome::completed, 1.5),
                                 probe(308 * MiB, Outcome::too_slow, 4.12), probe(308 * MiB, Outcome::completed, 1.3)});
  const std::vector<std::string> lines = finding_lines(r);
  const std::string within = finding(r, "smallest limit it completes in within 4x");
  EXPECT_TRUE(within.starts_with("qprof fit: smallest limit it completes in within 4x: 157.0 MiB (completed in 3.00 s"))
      << within;
  const auto at = std::find(lines.begin(), lines.end(), within);
  ASSERT_NE(at, lines.end());
  ASSERT_NE(at + 1, lines.end());
  EXPECT_EQ(*(at + 1), "qprof fit:   at 308.0 MiB one run of two was still running at 4.12x when stopped: noisy");
  // Nothing in the text says a limit above 157 MiB is the smallest within 4x.
  for (const std::string& l : lines) EXPECT_FALSE(has(l, "within 4x: 3")) << l;
}

TEST(FitText, ASuccessBelowARepeatedShortfallIsSaidNotMonotone) {
  const FitReport r = report_of(100 * MiB, 330 * MiB,
                                {probe(200 * MiB, Outcome::completed, 2.0), probe(260 * MiB, Outcome::oom_killed, 0.5),
                                 probe(260 * MiB, Outcome::oom_killed, 0.5), probe(200 * MiB, Outcome::completed, 2.1),
                                 probe(295 * MiB, Outcome::completed, 1.05)});
  const std::string runs = finding(r, "smallest limit not OOM-killed");
  EXPECT_TRUE(has(runs,
                  ": 295.0 MiB (completed in 1.05 s (1.05x); at 260.0 MiB two runs of two fell short (the "
                  "first was OOM-killed))"))
      << runs;
  bool said = false;
  for (const std::string& l : finding_lines(r))
    said |= l == "qprof fit:   below it, at 200.0 MiB, two runs of two completed in 2.00 s (2.00x): not monotone";
  EXPECT_TRUE(said);
}

TEST(FitText, NoRunCompletedUnderALimit) {
  const FitReport r = report_of(100 * MiB, 200 * MiB,
                                {probe(150 * MiB, Outcome::too_slow, 4.1), probe(125 * MiB, Outcome::oom_killed, 1)});
  const std::string text = text_report(r);
  EXPECT_TRUE(has(finding(r, "smallest limit it completes in within 4x"),
                  ": none measured below the unlimited run's peak charge, 200.0 MiB (at 150.0 MiB it was still "
                  "running at 4.10x when stopped)"))
      << text;
  EXPECT_TRUE(has(finding(r, "smallest limit not OOM-killed"),
                  ": 150.0 MiB (still running at 4.10x when stopped, not "
                  "seen to complete; at 125.0 MiB it was OOM-killed)"))
      << text;
}

// The charge was all anonymous memory (the input cached by another group): one run, no limit.
TEST(FitText, NoLimitedRunIsSaidInsteadOfAnAnswer) {
  FitReport r = report_of(100 * MiB, 104 * MiB, {});
  InputReport in;
  in.files = 1;
  in.size = 150 * MiB;
  in.cached_outside = 150 * MiB;
  r.input = in;
  const std::vector<std::string> lines = finding_lines(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "qprof fit: no limited run was made, so no limit was measured: the unlimited run's peak charge, 104.0 MiB, "
            "is within the resolution of its unreclaimable peak, 100.0 MiB: there was nothing between them to search; "
            "the request below is made from the unlimited run's peak charge, 104.0 MiB, not from a measured limit");
  const std::string text = text_report(r, 1000);
  // One request, named for what it rests on: no "smallest limit" that was never run.
  EXPECT_TRUE(has(text,
                  "qprof fit: request: --mem=120M, resources: {requests: {memory: 120Mi}, limits: {memory: 120Mi}}, "
                  "--memory=120m, MemoryMax=120M (no limit measured: the unlimited run's peak charge 104.0 MiB + "
                  "15 % margin)\n"))
      << text;
  EXPECT_FALSE(has(text, "smallest limit")) << text;
  EXPECT_FALSE(has(text, "full-speed limit")) << text;
  // JSON and CSV say the same: a limit from the unlimited run, nothing that fell short below it.
  const auto j = nlohmann::json::parse(json_report(r));
  for (const char* key : {"smallest_running", "smallest_within_slowdown", "full_speed"}) {
    EXPECT_EQ(j["findings"][key]["limit_bytes"], 104 * MiB) << key;
    EXPECT_TRUE(j["findings"][key]["probe"].is_null()) << key;
    EXPECT_TRUE(j["findings"][key]["short_of_bytes"].is_null()) << key << ": nothing ran below it";
  }
  EXPECT_TRUE(has(j["request"]["smallest_running"]["rule"].get<std::string>(), "no limit measured")) << j.dump();
  const std::string csv = csv_report(r);
  EXPECT_TRUE(has(csv,
                  "finding,full_speed,109051904,,,,,,,\"the unlimited run's peak charge, no limited run: not "
                  "measured\"\n"))
      << csv;
  EXPECT_TRUE(has(text,
                  "  input: 1 file open or mapped, 150.0 MiB; cached outside the job's group after its run: "
                  "150.0 MiB\n"))
      << text;
  EXPECT_TRUE(has(text, "qprof fit: note: 150.0 MiB of the job's input was in page cache charged to another cgroup"))
      << text;
  EXPECT_TRUE(has(text, "--cold evicts it before each run")) << text;
  r.end = FitEnd::interrupted;
  EXPECT_TRUE(has(finding_lines(r)[0], "the search stopped before the first")) << finding_lines(r)[0];
}

// A short_of_bytes in the JSON is a limit some run fell short at; the assumed floor is null.
TEST(FitText, ShortOfIsALimitThatWasRun) {
  const FitReport r = report_of(100 * MiB, 250 * MiB,
                                {probe(175 * MiB, Outcome::completed, 1.0), probe(118 * MiB, Outcome::too_slow, 4.1)});
  const auto j = nlohmann::json::parse(json_report(r));
  EXPECT_TRUE(j["findings"]["smallest_running"]["short_of_bytes"].is_null()) << j.dump();
  EXPECT_EQ(j["findings"]["smallest_within_slowdown"]["short_of_bytes"], 118 * MiB) << j.dump();
  EXPECT_TRUE(has(finding(r, "smallest limit not OOM-killed"), "nothing was tried at or below the unreclaimable peak"));
}

// Full speed is judged against the fastest run: a run faster than a slow unlimited one (0.84x of
// it) can fall short, and its words give the fastest run's time, never "slower (0.84x)".
TEST(FitText, FullSpeedIsSaidAgainstTheFastestRun) {
  const FitReport r = report_of(100 * MiB, 250 * MiB,
                                {probe(175 * MiB, Outcome::completed, 0.60), probe(150 * MiB, Outcome::completed, 0.84),
                                 probe(150 * MiB, Outcome::completed, 0.62)});
  ASSERT_DOUBLE_EQ(r.reference_s, 0.60);
  const std::vector<std::string> lines = finding_lines(r);
  const std::string full = finding(r, "smallest limit at full speed (within 10 % of the fastest run, 0.60 s)");
  EXPECT_TRUE(has(full, ": 150.0 MiB (completed in 0.62 s, 1.03x the fastest run's 0.60 s; nothing was tried")) << full;
  const auto at = std::find(lines.begin(), lines.end(), full);
  ASSERT_NE(at, lines.end());
  ASSERT_NE(at + 1, lines.end());
  EXPECT_EQ(*(at + 1),
            "qprof fit:   at 150.0 MiB one run of two completed in 0.84 s, 1.40x the fastest run's 0.60 s: "
            "noisy");
  for (const std::string& l : lines) EXPECT_FALSE(has(l, "slower")) << l;
}

// --cold that found no file to evict says so, in the text and in the JSON (zero files, not null).
TEST(FitText, ColdWithNoFileSeenSaysItEvictedNothing) {
  FitReport r = report_of(100 * MiB, 250 * MiB, {probe(175 * MiB, Outcome::completed, 1.0)});
  InputReport in;
  in.cold = true;
  r.input = in;
  const std::string text = text_report(r, 1000);
  EXPECT_TRUE(has(text,
                  "  input: no file was seen open or mapped during the unlimited run, so --cold evicted "
                  "nothing"))
      << text;
  EXPECT_TRUE(has(text, "/proc/sys/vm/drop_caches")) << text;
  const auto j = nlohmann::json::parse(json_report(r));
  EXPECT_EQ(j["input"]["files"], 0) << j.dump();
  EXPECT_TRUE(j["input"]["cold"].get<bool>()) << j.dump();
  r.input->cold = false;  // without --cold no file is no news
  EXPECT_FALSE(has(text_report(r, 1000), "input:")) << text_report(r, 1000);
}

TEST(FitText, ColdSaysWhatStayedCached) {
  FitReport r = report_of(100 * MiB, 250 * MiB, {probe(175 * MiB, Outcome::completed, 1.0)});
  InputReport in;
  in.files = 2;
  in.size = 150 * MiB;
  in.cached_outside = 150 * MiB;
  in.cold = true;
  in.baseline_again = true;
  in.left_after_eviction = 4 * MiB;
  r.input = in;
  const std::string text = text_report(r, 1000);
  EXPECT_TRUE(has(text,
                  "evicted before each run (--cold), what stayed cached: at most 4.0 MiB; the unlimited run "
                  "was made again with it evicted"))
      << text;
  EXPECT_FALSE(has(text, "note: 150.0 MiB")) << "evicted: the limits count it";
}

TEST(FitText, EveryLineFitsTheWidth) {
  FitReport r = report_of(100 * MiB, 330 * MiB,
                          {probe(150 * MiB, Outcome::too_slow, 4.05), probe(157 * MiB, Outcome::completed, 3.0),
                           probe(308 * MiB, Outcome::too_slow, 4.12), probe(308 * MiB, Outcome::completed, 1.3),
                           probe(120 * MiB, Outcome::failed, 0.2)});
  r.probes.back().detail = "exit status 1, no OOM kill";
  r.command = "/very/long/path/to/some/python/interpreter/bin/python3 -m a.module.with.a.long.name --option value " +
              std::string(200, 'x');
  r.notes.push_back("swap cannot be limited here (no memory.swap.max), and this machine has no swap in use now");
  for (std::size_t width : {80u, 60u, 132u}) {
    const std::string text = text_report(r, width);
    for (const std::string& l : lines_of(text)) {
      // A word wider than the line (the 200 x's) stays whole, alone on its line.
      const bool one_word = l.find(' ', l.find_first_not_of(' ')) == std::string::npos;
      if (!one_word) {
        EXPECT_LE(columns(l), width) << width << ": " << l;
      }
    }
    EXPECT_TRUE(has(text, "\n    " + std::string(200, 'x') + "\n")) << text;
    EXPECT_TRUE(has(text, "qprof fit:   at 308.0 MiB one run of two")) << text;
    // The requests to paste (host fit only) are among the lines that fit.
    EXPECT_TRUE(has(text, "qprof fit: request for full speed: --mem=")) << text;
    EXPECT_TRUE(has(text, "qprof fit: request at the smallest limit: --mem=")) << text;
  }
  // The table's rows are whole at 80 (units in the headers): majflt goes to leave room for how
  // the last run ended, and is named; nothing of the table wraps.
  std::string text = text_report(r, 80);
  EXPECT_TRUE(has(text, "\n  limit MiB  outcome   time s slowdown read MiB  how it ended\n")) << text;
  EXPECT_TRUE(has(text, "\n  120.0      failed      0.20    0.20x        ?  exit status 1, no OOM kill\n")) << text;
  EXPECT_TRUE(has(text, "\n  left out to fit 80 columns: majflt; qprof fit --json has it\n")) << text;
  // Wide enough: every column, no note.
  text = text_report(r, 132);
  EXPECT_TRUE(has(text, "\n  limit MiB  outcome   time s slowdown majflt read MiB  how it ended\n")) << text;
  EXPECT_FALSE(has(text, "left out")) << text;
  // At 60, read goes too, and the text of how a run ended is cut (said).
  text = text_report(r, 60);
  EXPECT_TRUE(has(text, "\n  limit MiB  outcome   time s slowdown  how it ended\n")) << text;
  EXPECT_TRUE(has(text, "\n  left out to fit 60 columns: majflt, read MiB; \"how it\n")) << text;
  EXPECT_TRUE(has(text, "\n    ended\" cut to fit; qprof fit --json has them\n")) << text;
  EXPECT_TRUE(has(text, "  exit status 1, no...\n")) << text;
}

TEST(FitTextWidth, BreaksAtSpacesAndNeverInsideACharacter) {
  EXPECT_EQ(wrap_line("one two three", 80, 4), "one two three\n");
  EXPECT_EQ(wrap_line("one two three", 9, 2), "one two\n  three\n");
  EXPECT_EQ(wrap_line("abcdefghijkl", 10, 2), "abcdefghijkl\n") << "a word too long stays whole";
  // A refusal naming a cgroup path: the path whole on a line of its own, as --help and report keep it.
  EXPECT_EQ(wrap_line("qprof fit: cannot write /sys/fs/cgroup/system.slice/qprof-fit.scope/memory.max here", 30, 4),
            "qprof fit: cannot write\n    /sys/fs/cgroup/system.slice/qprof-fit.scope/memory.max\n    here\n");
  EXPECT_EQ(wrap_line("abcdefghijkl 1.5 MiB", 10, 2), "abcdefghijkl\n  1.5 MiB\n");
  EXPECT_EQ(wrap_line("at 104.8 MiB in 1.2 s", 11, 2), "at\n  104.8 MiB\n  in 1.2 s\n") << "a unit stays by its number";
  EXPECT_EQ(wrap_line("took 0.93 s)", 10, 2), "took\n  0.93 s)\n");
  // 'é' is two bytes, one column: ten columns hold ten of them and a space, not five.
  std::string e;
  for (int i = 0; i < 10; ++i) e += "\xc3\xa9";
  EXPECT_EQ(wrap_line(e + " ab", 13, 0), e + " ab\n");
  EXPECT_EQ(wrap_line(e + " ab", 12, 0), e + "\nab\n");
  EXPECT_EQ(wrap_line(e + e, 10, 0), e + e + "\n") << "a long word of them stays whole too";
  EXPECT_EQ(wrap_text("a\n  b c d e f g h\n", 14), "a\n  b c d e f g\n      h\n");
  EXPECT_EQ(wrap_text("  b c d e f g h\n", 9), "  b c d e\n  f g h\n") << "no room for the indent: 2";
}

}  // namespace
}  // namespace qprof::fit
